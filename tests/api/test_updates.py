"""Ordinary writes' field ownership (`control.api.updates`): what the write changed moves to the
writer, and a renewal that changes only the writer's own field costs a retimed entry."""

from __future__ import annotations

import copy
import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from control.api import updates
from control.api.apply import _MISSING, _differs, _lookup, decode_fields, field_set, path_string
from control.api.patching import patch_meta
from control.api.smp import PatchMeta
from control.api.updates import record_update
from tests.api.test_apply import DEFS, META_D, apply, deployment

LEASE_META = patch_meta("io.k8s.api.coordination.v1.Lease")  # ownerReferences merge by uid
T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:03Z", "2026-01-01T00:00:06Z"


def lease(renew: str, **spec) -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "node-1", "namespace": "kube-node-lease", "uid": "u1", "resourceVersion": "7",
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "n1"}]},
            "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 12, "renewTime": renew, **spec}}


def renew(stored: dict, when: str) -> dict:
    """What the kubelet PUTs: the Lease it last read (managedFields included) with a new renewTime."""
    body = copy.deepcopy(stored)
    body["spec"]["renewTime"] = when
    return body


def write(old, new, manager="kubelet", now=T1, meta=LEASE_META, api_version="coordination.k8s.io/v1"):
    return record_update(old, new, manager=manager, now=now, api_version=api_version, meta=meta)


def owned(obj: dict, manager: str) -> set[str]:
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)
    return {path_string(p) for p in decode_fields(entry["fieldsV1"])}


def test_a_lease_renewal_only_retimes_the_writers_entry(monkeypatch) -> None:
    created = write({}, lease("a"), now=T0)
    other = {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "coordination.k8s.io/v1",
             "time": T0, "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:x": {}}}}}
    stored = copy.deepcopy(created)
    stored["metadata"]["labels"] = {"x": "1"}
    stored["metadata"]["managedFields"].append(other)
    # The quick path neither decodes nor encodes: a full recount would encode each entry again.
    monkeypatch.setattr(updates, "_render", lambda entries: (_ for _ in ()).throw(AssertionError("recounted")))
    out = write(stored, renew(stored, "b"), now=T1)
    assert out["spec"]["renewTime"] == "b"
    mine, theirs = out["metadata"]["managedFields"]
    assert mine == {**stored["metadata"]["managedFields"][0], "time": T1}
    assert theirs == other


def test_the_quick_path_and_the_recount_agree(monkeypatch) -> None:
    stored = write({}, lease("a"), now=T0)
    quick = write(stored, renew(stored, "b"), now=T1)
    monkeypatch.setattr(updates, "_retimed", lambda *args, **kwargs: None)
    recounted = write(stored, renew(stored, "b"), now=T1)
    assert quick == recounted
    assert owned(quick, "kubelet") == {".spec.holderIdentity", ".spec.leaseDurationSeconds", ".spec.renewTime",
                                       '.metadata.ownerReferences[uid="n1"]', '.metadata.ownerReferences[uid="n1"].apiVersion',
                                       '.metadata.ownerReferences[uid="n1"].kind', '.metadata.ownerReferences[uid="n1"].name',
                                       '.metadata.ownerReferences[uid="n1"].uid'}


def test_a_renewal_by_another_manager_takes_the_field() -> None:
    stored = write({}, lease("a"), now=T0)
    out = write(stored, renew(stored, "b"), manager="node-lifecycle", now=T1)
    assert owned(out, "node-lifecycle") == {".spec.renewTime"}
    assert ".spec.renewTime" not in owned(out, "kubelet")
    assert next(e for e in out["metadata"]["managedFields"] if e["manager"] == "kubelet")["time"] == T0


def test_an_unchanged_write_keeps_the_time() -> None:
    stored = write({}, lease("a"), now=T0)
    out = write(stored, copy.deepcopy(stored), now=T2)
    assert out["metadata"]["managedFields"] == stored["metadata"]["managedFields"]


def test_a_write_changing_no_tracked_field_keeps_the_stored_entries_without_encoding_them(monkeypatch) -> None:
    monkeypatch.setattr(updates, "_RENDERS_AS_ITSELF", {})
    stored = write({}, lease("a"), now=T0)
    stored["status"] = {"note": "a"}  # status is not tracked (as upstream, on the main resource)
    body = {**copy.deepcopy(stored), "status": {"note": "b"}}
    first = write(stored, body, now=T1)
    assert first["metadata"]["managedFields"] == stored["metadata"]["managedFields"]
    assert first["status"] == {"note": "b"} and stored["status"] == {"note": "a"}
    # The same stored list again: known to render as itself, nothing decoded or encoded.
    monkeypatch.setattr(updates, "_render", lambda entries: (_ for _ in ()).throw(AssertionError("rendered")))
    again = write(stored, {**copy.deepcopy(stored), "status": {"note": "c"}}, now=T2)
    assert again["metadata"]["managedFields"] == stored["metadata"]["managedFields"]


def test_stored_entries_that_would_render_otherwise_are_rendered_as_before() -> None:
    stored = write({}, lease("a"), now=T0)
    entry = stored["metadata"]["managedFields"][0]
    odd = [{"manager": "gone", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {}},  # owns nothing
           {k: entry[k] for k in ("fieldsV1", "manager", "operation", "apiVersion", "time", "fieldsType")}]
    stored["metadata"]["managedFields"] = odd
    out = write(stored, copy.deepcopy(stored), now=T1)
    assert out["metadata"]["managedFields"] == [{**entry}]
    assert list(out["metadata"]["managedFields"][0]) == ["manager", "operation", "apiVersion", "time", "fieldsType",
                                                         "fieldsV1"]


def test_a_value_of_another_json_type_is_a_change() -> None:
    stored = write({}, lease("a", preferred=True), now=T0)
    out = write(stored, {**stored, "spec": {**stored["spec"], "preferred": 1}}, manager="other", now=T1)
    assert owned(out, "other") == {".spec.preferred"}


def test_a_removed_field_is_owned_by_nobody_and_new_ones_by_the_writer() -> None:
    stored = write({}, lease("a", extra="x"), now=T0)
    body = renew(stored, "b")
    del body["spec"]["extra"]
    body["spec"]["added"] = {"deep": [1, 2]}
    out = write(stored, body, now=T1)
    assert ".spec.extra" not in owned(out, "kubelet") and ".spec.added.deep" in owned(out, "kubelet")


def test_inputs_are_not_mutated() -> None:
    stored = write({}, lease("a"), now=T0)
    body = renew(stored, "b")
    before_stored, before_body = copy.deepcopy(stored), copy.deepcopy(body)
    out = write(stored, body, now=T1)
    out["metadata"]["managedFields"][0]["time"] = "changed"
    assert stored == before_stored and body == before_body



def test_an_update_leaves_no_garbage_for_the_cycle_collector() -> None:
    """Everything a write's bookkeeping builds is freed by reference counting: a helper that made a
    reference cycle (a closure calling itself) left both objects and their path sets to the
    collector, a third of what the hub collected while 1,000 pods came up (control.heap)."""
    stored = write({}, lease("a"), now=T0)
    stored["metadata"]["labels"] = {"x": "1"}
    body = renew(stored, "b")
    body["metadata"]["labels"] = {"y": "2"}  # a change the writer does not own yet: the full recount
    gc.collect()
    gc.disable()
    try:
        out = write(stored, body, now=T1, manager="someone-else")
        assert owned(out, "someone-else") >= {".metadata.labels.y", ".spec.renewTime"}
        assert gc.collect() == 0
    finally:
        gc.enable()

# --- the comparison walks only where old and new differ, and finds what a full walk finds --------

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, 1.0, -0.0]),
                    st.sampled_from(["a", "b", ""]))
KEYS = st.sampled_from(["a", "b", "c"])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.dictionaries(KEYS, inner, max_size=3), st.lists(inner, max_size=3),
                            st.lists(st.fixed_dictionaries({"name": st.sampled_from(["x", "y"]), "image": inner}),
                                     max_size=2)),
    max_leaves=8)


def _full_walk(old: dict, new: dict, meta: PatchMeta) -> tuple[set, set]:
    """The definition: every tracked path of `new` whose value differs, every one of `old` gone."""
    before, after = field_set(old, meta), field_set(new, meta)
    return ({p for p in after if _differs(old, new, p)},
            {p for p in before - after if _lookup(new, p) is _MISSING})


def _deployment_like(values: dict) -> dict:
    return {"metadata": {"labels": values.get("a"), "finalizers": values.get("b"), "managedFields": values.get("c")},
            "spec": {"replicas": values.get("a"), "template": {"spec": {"containers": values.get("b"),
                                                                          "tolerations": values.get("c")}}},
            "status": values.get("b"), "data": values}


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=3), st.dictionaries(KEYS, VALUES, max_size=3))
def test_changes_are_those_of_a_full_walk(a: dict, b: dict) -> None:
    meta = PatchMeta.from_openapi(DEFS, "io.k8s.api.apps.v1.Deployment")
    for old, new in ((a, b), (_deployment_like(a), _deployment_like(b)), (_deployment_like(a), _deployment_like(a))):
        assert updates._changes(old, new, meta) == _full_walk(old, new, meta)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.dictionaries(KEYS, st.sampled_from(["1", "2"]), max_size=3), st.booleans())
def test_a_write_after_an_apply_matches_the_full_recount(replicas: int, labels: dict, reset_time: bool) -> None:
    live = apply(None, deployment(replicas=2, labels={"app": "web"}))
    live = record_update(live, {**live, "spec": {**live["spec"], "replicas": 3}}, manager="scaler", now=T1,
                         api_version="apps/v1", meta=META_D)
    new = copy.deepcopy(live)
    new["spec"]["replicas"] = replicas
    new["metadata"]["labels"] = {"app": "web", **labels}
    out = record_update(live, new, manager="scaler", now=T2, api_version="apps/v1", meta=META_D)
    # Against the recount: the same write with the quick path unavailable.
    saved = updates._retimed
    try:
        updates._retimed = lambda *args, **kwargs: None
        full = record_update(live, new, manager="scaler", now=T2, api_version="apps/v1", meta=META_D)
    finally:
        updates._retimed = saved
    assert out == full


# --- _renders_as_itself, entry by entry, against its definition ---------------------------------

_paths = st.sets(st.lists(st.sampled_from(["f:a", "f:b", "k:{\"x\":1}", "v:2", "f:c"]), min_size=1, max_size=3)
                 .map(tuple), max_size=5)


def _field_sets():
    from control.api.apply import encode_fields

    canonical = _paths.map(encode_fields)  # as written: renders as itself unless empty
    reordered = canonical.map(lambda trie: dict(reversed(list(trie.items()))))
    odd = st.sampled_from([{}, {"f:a": {"f:b": {}}, ".": {}}, {"f:a": {}, "f:a2": 1}, None, [], "x"])
    return st.one_of(canonical, reordered, odd)


_entry_lists = st.lists(
    st.fixed_dictionaries({"manager": st.one_of(st.just("kubelet"), st.just(3)), "time": st.just(T0),
                           "fieldsType": st.sampled_from(["FieldsV1", "Other"]), "fieldsV1": _field_sets()},
                          optional={"operation": st.just("Update")})
    .flatmap(lambda entry: st.permutations(list(entry.items())).map(dict))
    .flatmap(lambda entry: st.sampled_from([entry, {k: v for k, v in entry.items() if k != "fieldsType"}])),
    max_size=3)


@settings(max_examples=400, deadline=None)
@given(_entry_lists)
def test_renders_as_itself_says_what_rendering_the_entries_again_gives(managed) -> None:
    from control import jsontext
    from control.api.apply import _entries, _render

    rendered = _render(_entries({"metadata": {"managedFields": managed}}))
    assert updates._renders_as_itself(managed) == (bool(managed) and jsontext.dumps(rendered) == jsontext.dumps(managed))


def test_a_pods_later_status_writes_need_no_rendering_though_the_times_differ(monkeypatch) -> None:
    monkeypatch.setattr(updates, "_RENDERS_AS_ITSELF", {})
    stored = write({}, lease("a"), now=T0)
    stored["status"] = {"note": "a"}
    write(stored, {**copy.deepcopy(stored), "status": {"note": "b"}}, now=T1)  # its field sets, decided once
    monkeypatch.setattr(updates, "_render", lambda entries: (_ for _ in ()).throw(AssertionError("rendered")))
    for entry in stored["metadata"]["managedFields"]:
        entry["time"] = T2  # another write of the same fields by the same managers, later
    again = write(stored, {**copy.deepcopy(stored), "status": {"note": "c"}}, now=T2)
    assert again["metadata"]["managedFields"] == stored["metadata"]["managedFields"]
