"""Reads at a revision, on whichever database is configured (the PostgreSQL run of the Makefile
includes this module): a list at N equals the state replayed up to N, for every N in the window,
also after compaction; older N is Gone, newer N too large."""

from __future__ import annotations

import json
import random
import uuid

import pytest

from control import errors
from control.storage import snapshot, store

pytestmark = pytest.mark.django_db(transaction=True)

NAMESPACES = ("default", "other")


def pod(name: str, namespace: str = "default", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": str(uuid.uuid4()), "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def names(bodies: list[str]) -> list[str]:
    return [json.loads(b)["metadata"]["name"] for b in bodies]


class History:
    """Random creates, updates and deletes of pods (and of a second resource, which a pod list must
    never show), with the expected state of the pods after every revision."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.keys = [(ns, f"p{i}") for ns in NAMESPACES for i in range(8)] + [("default", "a-b"), ("default", "ab")]
        self.live: dict[tuple[str, str], dict] = {}
        self.states: dict[int, dict[tuple[str, str], dict]] = {store.current_revision(): {}}

    def step(self) -> None:
        if self.rng.random() < 0.1:  # another resource's write takes a revision too
            name = f"cm{self.rng.randrange(1_000_000)}"
            store.object_create(resource="/configmaps", obj={**pod(name), "kind": "ConfigMap"}, actor="t")
        else:
            self._write_pod()
        self.states[store.current_revision()] = dict(self.live)

    def _write_pod(self) -> None:
        key = self.rng.choice(self.keys)
        namespace, name = key
        if key not in self.live:
            self.live[key] = store.object_create(resource="/pods", obj=pod(name, namespace), actor="t")
        elif self.rng.random() < 0.35:
            store.object_delete(resource="/pods", namespace=namespace, name=name, actor="t")
            del self.live[key]
        else:
            label = str(self.rng.random())
            self.live[key] = store.object_update(
                resource="/pods", namespace=namespace, name=name, actor="t",
                mutate=lambda o: {**o, "metadata": {**o["metadata"], "labels": {"n": label}}})

    def expected(self, revision: int, namespace: str | None = None) -> list[dict]:
        state = self.states[max(r for r in self.states if r <= revision)]
        return [state[key] for key in sorted(state) if namespace is None or key[0] == namespace]


def at(revision: int | None, namespace: str | None = None, name: str | None = None) -> tuple[list[dict], int]:
    bodies, read_at = snapshot.list_at(resource="/pods", namespace=namespace, name=name, revision=revision)
    return [json.loads(b) for b in bodies], read_at


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_list_at_every_revision_equals_the_state_replayed_up_to_it(seed):
    history = History(seed)
    for _ in range(120):
        history.step()
    start, latest = min(history.states), store.current_revision()
    for revision in range(start, latest + 1):
        assert at(revision) == (history.expected(revision), revision), f"at revision {revision}"
        assert at(revision, namespace="other")[0] == history.expected(revision, "other")
    assert at(None) == (history.expected(latest), latest)


@pytest.mark.parametrize("seed", [4, 5])
def test_after_compaction_every_revision_from_the_compacted_one_is_still_readable(seed):
    history = History(seed)
    for _ in range(60):
        history.step()
    compacted = store.log_compact(max_entries=25, max_age=1e9)
    assert compacted == store.current_revision() - 25
    for _ in range(40):
        history.step()
    compacted = store.log_compact(max_entries=50, max_age=1e9)
    for revision in range(compacted, store.current_revision() + 1):
        assert at(revision)[0] == history.expected(revision), f"at revision {revision} (compacted {compacted})"
    with pytest.raises(errors.Gone) as gone:
        at(compacted - 1)
    assert (gone.value.code, gone.value.message) == (410, "The resourceVersion for the provided list is too old.")


def test_list_at_revision_plus_events_since_equals_a_fresh_list():
    history = History(6)
    for _ in range(50):
        history.step()
    middle = store.current_revision() - 20
    listed, revision = at(middle)
    state = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in listed}
    for change in store.events_since(revision, limit=10_000):
        if change.resource != "/pods":
            continue
        if change.type == store.DELETED:
            state.pop((change.namespace, change.name))
        else:
            state[(change.namespace, change.name)] = change.obj()
    assert [state[key] for key in sorted(state)] == at(None)[0]


def test_an_object_deleted_and_created_again_after_the_revision_shows_its_old_body():
    store.object_create(resource="/pods", obj=pod("x", tier="first"), actor="t")
    revision = store.current_revision()
    store.object_delete(resource="/pods", namespace="default", name="x", actor="t")
    store.object_create(resource="/pods", obj=pod("x", tier="second"), actor="t")
    store.object_create(resource="/pods", obj=pod("y"), actor="t")
    [then], read_at = at(revision)
    assert (then["metadata"]["labels"], then["metadata"]["resourceVersion"], read_at) == (
        {"tier": "first"}, str(revision), revision)
    assert [o["metadata"]["labels"].get("tier") for o in at(None)[0]] == ["second", None]
    assert names(snapshot.list_at(resource="/pods", name="y", revision=revision)[0]) == []


def test_items_are_sorted_by_code_point_whatever_the_database_collation():
    for name in ("ab", "a-b", "a.b", "B"):
        store.object_create(resource="/pods", obj=pod(name), actor="t")
    assert names(snapshot.list_at(resource="/pods")[0]) == ["B", "a-b", "a.b", "ab"]


def test_a_revision_not_yet_written_is_too_large():
    store.object_create(resource="/pods", obj=pod("a"), actor="t")
    latest = store.current_revision()
    with pytest.raises(errors.Timeout) as info:
        at(latest + 5)
    assert info.value.code == 504
    assert info.value.message == f"Too large resource version: {latest + 5}, current: {latest}"


def test_a_log_compacted_without_kept_entries_is_gone_rather_than_wrong():
    store.object_create(resource="/pods", obj=pod("a"), actor="t")
    revision = store.current_revision()
    store.object_update(resource="/pods", namespace="default", name="a", actor="t",
                        mutate=lambda o: {**o, "metadata": {**o["metadata"], "labels": {"x": "1"}}})
    # What compaction did before it kept entries: everything at or below the point removed.
    from control.models import LogEntry

    LogEntry.objects.filter(revision__lte=revision).delete()
    with pytest.raises(errors.Gone):
        at(revision)


def test_compaction_keeps_the_last_entry_of_every_object_that_still_exists():
    for name in ("kept", "unchanged", "deleted"):
        store.object_create(resource="/pods", obj=pod(name), actor="t")
    store.object_update(resource="/pods", namespace="default", name="kept", actor="t",
                        mutate=lambda o: {**o, "metadata": {**o["metadata"], "labels": {"v": "2"}}})
    store.object_delete(resource="/pods", namespace="default", name="deleted", actor="t")
    through = store.current_revision()
    store.object_update(resource="/pods", namespace="default", name="kept", actor="t",
                        mutate=lambda o: {**o, "metadata": {**o["metadata"], "labels": {"v": "3"}}})
    store.object_create(resource="/pods", obj=pod("deleted"), actor="t")
    assert store.log_compact(max_entries=2, max_age=1e9) == through
    from control.models import LogEntry

    kept = list(LogEntry.objects.filter(resource="/pods", revision__lte=through).order_by("name")
                .values_list("name", "event_type"))
    assert kept == [("kept", "MODIFIED"), ("unchanged", "ADDED")]  # a deletion says "absent", as no entry does
    assert [c.revision for c in store.events_since(through)] == [through + 1, through + 2]  # kept ones are no events
    # "unchanged" is written only now, after compaction: a read at `through` still finds it as it was.
    store.object_update(resource="/pods", namespace="default", name="unchanged", actor="t",
                        mutate=lambda o: {**o, "metadata": {**o["metadata"], "labels": {"v": "later"}}})
    assert [(o["metadata"]["name"], o["metadata"]["labels"]) for o in at(through)[0]] == [
        ("kept", {"v": "2"}), ("unchanged", {})]


@pytest.mark.parametrize("seed", [4, 5])
def test_lists_of_several_resources_at_every_revision_equal_each_list_at(seed):
    history = History(seed)
    for _ in range(80):
        history.step()
    store.log_compact(max_entries=50, max_age=10_000)
    start, latest = store.compacted_revision(), store.current_revision()
    resources = ["/pods", "/configmaps", "apps/deployments"]
    for revision in range(start, latest + 1):
        together = snapshot.lists_at(resources, revision)
        assert together == {r: snapshot.list_at(resource=r, revision=revision)[0] for r in resources}, revision
        assert [json.loads(b) for b in together["/pods"]] == history.expected(revision)
    with pytest.raises(errors.Gone):
        snapshot.lists_at(resources, start - 1)
    with pytest.raises(errors.Timeout):
        snapshot.lists_at(resources, latest + 1)
