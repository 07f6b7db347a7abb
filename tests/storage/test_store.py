"""The store's guarantees, on whichever database is configured (SQLite by default; the test
command runs this module a second time with DATABASE_URL pointing at PostgreSQL)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.db import connection, transaction

from control import config, errors
from control.clock import FakeClock
from control.storage import store

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


def pod(name: str, namespace: str = "default", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": str(uuid.uuid4()), "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_runs_on_postgres_when_required():
    if config.given("KK_REQUIRE_POSTGRES") == "1":
        assert connection.vendor == "postgresql", "the PostgreSQL run of the store suite did not use PostgreSQL"


def test_create_takes_the_next_revision_and_logs_the_snapshot():
    before = store.current_revision()
    created = store.object_create(resource="/pods", obj=pod("a"), actor="kubectl")
    assert created["metadata"]["resourceVersion"] == str(before + 1)
    [change] = store.events_since(before)
    assert (change.revision, change.type, change.name, change.actor) == (before + 1, "ADDED", "a", "kubectl")
    assert json.loads(change.body)["metadata"]["resourceVersion"] == str(before + 1)


def test_create_twice_is_already_exists_and_takes_no_revision():
    store.object_create(resource="/pods", obj=pod("a"), actor="t")
    revision = store.current_revision()
    with pytest.raises(errors.AlreadyExists) as info:
        store.object_create(resource="/pods", obj=pod("a"), actor="t")
    assert info.value.message == 'pods "a" already exists'
    assert store.current_revision() == revision


def test_update_writes_once_and_a_no_op_takes_no_revision():
    store.object_create(resource="apps/deployments", obj={**pod("d"), "kind": "Deployment"}, actor="t")

    def relabel(obj):
        obj["metadata"]["labels"] = {"x": "1"}
        return obj

    first = store.object_update(resource="apps/deployments", namespace="default", name="d", mutate=relabel, actor="t")
    revision = store.current_revision()
    assert first["metadata"]["resourceVersion"] == str(revision)
    again = store.object_update(resource="apps/deployments", namespace="default", name="d", mutate=relabel, actor="t")
    assert store.current_revision() == revision
    assert again["metadata"]["resourceVersion"] == str(revision)


def test_a_refusing_mutation_changes_nothing():
    store.object_create(resource="/pods", obj=pod("a"), actor="t")
    revision = store.current_revision()

    def refuse(obj):
        raise errors.conflict("/pods", "a")

    with pytest.raises(errors.Conflict):
        store.object_update(resource="/pods", namespace="default", name="a", mutate=refuse, actor="t")
    assert store.current_revision() == revision
    assert store.object_get(resource="/pods", namespace="default", name="a")["metadata"]["resourceVersion"] == str(revision)


def test_delete_logs_the_final_state_at_a_new_revision():
    store.object_create(resource="/pods", obj=pod("a"), actor="t")
    revision = store.current_revision()
    final = store.object_delete(resource="/pods", namespace="default", name="a", actor="kubelet/node-1")
    assert final["metadata"]["resourceVersion"] == str(revision + 1)
    [change] = store.events_since(revision)
    assert (change.type, change.actor) == ("DELETED", "kubelet/node-1")
    with pytest.raises(errors.NotFound):
        store.object_get(resource="/pods", namespace="default", name="a")


def test_listeners_hear_only_committed_writes():
    heard: list[int] = []
    unsubscribe = store.subscribe(lambda changes: heard.extend(c.revision for c in changes))
    try:
        with pytest.raises(RuntimeError):
            with transaction.atomic():
                store.object_create(resource="/pods", obj=pod("rolled-back"), actor="t")
                assert heard == []
                raise RuntimeError("abort")
        assert heard == []
        created = store.object_create(resource="/pods", obj=pod("kept"), actor="t")
        assert heard == [int(created["metadata"]["resourceVersion"])]
    finally:
        unsubscribe()


def test_list_is_one_snapshot_with_its_revision():
    for name in ("b", "a", "c"):
        store.object_create(resource="/pods", obj=pod(name), actor="t")
    store.object_create(resource="/pods", obj=pod("z", namespace="other"), actor="t")
    bodies, revision = store.object_list(resource="/pods", namespace="default")
    assert [json.loads(b)["metadata"]["name"] for b in bodies] == ["a", "b", "c"]
    assert revision == store.current_revision()
    assert store.object_list(resource="/pods", name="z")[0] and len(store.object_list(resource="/pods")[0]) == 4


def test_compaction_by_count_and_age_then_expired():
    clock = FakeClock(1000.0)
    original = store.clock
    store.clock = clock
    try:
        for i in range(10):
            store.object_create(resource="/configmaps", obj={**pod(f"c{i}"), "kind": "ConfigMap"}, actor="t")
            clock.t += 10
        latest = store.current_revision()
        through = store.log_compact(max_entries=5, max_age=10_000, now=clock.t)
        assert through == latest - 5
        assert [c.revision for c in store.events_since(through)] == list(range(latest - 4, latest + 1))
        with pytest.raises(errors.Gone) as info:
            store.events_since(through - 1)
        assert info.value.code == 410 and "too old resource version" in info.value.message
        # by age: entries written more than 25 s before "now" go
        through = store.log_compact(max_entries=1000, max_age=25, now=clock.t)
        assert through == latest - 2
        assert store.compacted_revision() == through
    finally:
        store.clock = original


def test_invariant_list_at_revision_plus_events_equals_fresh_list():
    rng = random.Random(7)
    names = [f"p{i}" for i in range(12)]
    live: set[str] = set()

    def random_write():
        name = rng.choice(names)
        if name not in live:
            store.object_create(resource="/pods", obj=pod(name), actor="t")
            live.add(name)
        elif rng.random() < 0.4:
            store.object_delete(resource="/pods", namespace="default", name=name, actor="t")
            live.discard(name)
        else:
            store.object_update(resource="/pods", namespace="default", name=name, actor="t",
                                mutate=lambda o: {**o, "metadata": {**o["metadata"], "labels": {"n": str(rng.random())}}})

    for _ in range(40):
        random_write()
    bodies, revision = store.object_list(resource="/pods")
    state = {json.loads(b)["metadata"]["name"]: json.loads(b) for b in bodies}
    for _ in range(60):
        random_write()
    for change in store.events_since(revision, limit=10_000):
        if change.type == "DELETED":
            state.pop(change.name)
        else:
            state[change.name] = change.obj()
    fresh = {json.loads(b)["metadata"]["name"]: json.loads(b) for b in store.object_list(resource="/pods")[0]}
    assert state == fresh


WRITER = """
import os, sys, uuid, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")
django.setup()
from control.storage import store
prefix, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": f"{prefix}-{i}", "namespace": "default", "uid": str(uuid.uuid4())}}
    store.object_create(resource="/configmaps", obj=obj, actor=prefix)
    store.object_update(resource="/configmaps", namespace="default", name=f"{prefix}-{i}", actor=prefix,
                        mutate=lambda o: {**o, "data": {"n": str(i)}})
"""


def _database_url() -> dict[str, str]:
    settings = connection.settings_dict
    if connection.vendor == "postgresql":
        url = f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"
        return {"DATABASE_URL": url}
    return {"KK_SQLITE_PATH": settings["NAME"], "DATABASE_URL": ""}


def test_concurrent_writer_processes_get_gapless_revisions_in_commit_order():
    if connection.vendor == "sqlite" and (not connection.settings_dict["NAME"] or "memory" in str(connection.settings_dict["NAME"])):
        pytest.skip("in-memory SQLite cannot be shared with other processes")
    start = store.current_revision()
    env = {**os.environ, **_database_url()}
    if not env["DATABASE_URL"]:
        env.pop("DATABASE_URL")
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, f"w{n}", "40"], cwd=ROOT, env=env) for n in range(4)]
    assert all(w.wait(timeout=120) == 0 for w in writers)
    changes = store.events_since(start, limit=10_000)
    revisions = [c.revision for c in changes]
    assert revisions == list(range(start + 1, start + 1 + 4 * 40 * 2)), "gaps or reordering in the log"
    for change in changes:
        assert change.obj()["metadata"]["resourceVersion"] == str(change.revision)
    # each object's own history is ADDED then MODIFIED, in that order
    seen: dict[str, str] = {}
    for change in changes:
        assert seen.get(change.name) == (None if change.type == "ADDED" else "ADDED")
        seen[change.name] = change.type


def test_an_object_over_etcds_request_limit_is_refused_and_nothing_changes():
    big = pod("big")
    big["metadata"]["annotations"] = {"blob": "x" * (store.MAX_OBJECT_BYTES + 1)}
    before = store.current_revision()
    with pytest.raises(errors.RequestEntityTooLarge) as refused:
        store.object_create(resource="/pods", obj=big, actor="kubectl")
    assert refused.value.message == "etcdserver: request is too large" and refused.value.code == 413
    assert store.current_revision() == before and store.events_since(before) == []
    store.object_create(resource="/pods", obj=pod("grows"), actor="kubectl")

    def grow(current):
        current["metadata"]["annotations"] = {"blob": "x" * store.MAX_OBJECT_BYTES}
        return current

    with pytest.raises(errors.RequestEntityTooLarge):
        store.object_update(resource="/pods", namespace="default", name="grows", mutate=grow, actor="kubectl")
    assert "annotations" not in store.object_get(resource="/pods", namespace="default", name="grows")["metadata"]



def test_the_limit_counts_bytes_as_utf8_as_etcd_does():
    """Characters beyond ASCII are stored as themselves: 3 bytes each for Hangul, so an object of
    fewer characters than the limit can still be over it."""
    big = pod("hangul")
    big["metadata"]["annotations"] = {"blob": "한" * (store.MAX_OBJECT_BYTES // 3 + 1)}
    assert len(json.dumps(big, ensure_ascii=False)) < store.MAX_OBJECT_BYTES
    with pytest.raises(errors.RequestEntityTooLarge):
        store.object_create(resource="/pods", obj=big, actor="kubectl")
    fits = pod("hangul")
    fits["metadata"]["annotations"] = {"blob": "한" * (store.MAX_OBJECT_BYTES // 4)}
    created, text = store.object_create_as_stored(resource="/pods", obj=fits, actor="kubectl")
    assert "한" in text and created["metadata"]["annotations"] == fits["metadata"]["annotations"]

def test_the_as_stored_writes_give_the_stored_text_and_share_the_object_only_when_asked():
    heard: list[store.Change] = []
    unsubscribe = store.subscribe(heard.extend)
    try:
        created, text = store.object_create_as_stored(resource="/pods", obj=pod("s"), actor="t")
        assert text == json.dumps(created, separators=(",", ":")) == store.events_since(0)[-1].body

        def relabel(obj):
            obj["metadata"]["labels"] = {"x": "1"}
            return obj

        updated, text = store.object_update_as_stored(resource="/pods", namespace="default", name="s",
                                                      mutate=relabel, actor="t")
        assert text == json.dumps(updated, separators=(",", ":")) == store.events_since(0)[-1].body
        assert store.object_update_as_stored(resource="/pods", namespace="default", name="s", mutate=relabel,
                                             actor="t") == (updated, None)  # nothing written, no text
        plain = store.object_update(resource="/pods", namespace="default", name="s",
                                    mutate=lambda obj: {**obj, "metadata": {**obj["metadata"], "labels": {}}},
                                    actor="t")
    finally:
        unsubscribe()
    # The watchers get the very objects the shared writes stored (no decode); the plain write's
    # change parses its own copy, so a caller changing what it got back cannot reach a watcher.
    assert [change.obj() is obj for change, obj in zip(heard, (created, updated, plain))] == [True, True, False]
    assert [change.obj() for change in heard] == [json.loads(change.body) for change in heard]
