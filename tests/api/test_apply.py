"""Server-side apply tracks field owners in managedFields the way Kubernetes does."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control.api.apply import (
    ApplyConflict,
    decode_fields,
    encode_fields,
    path_string,
    server_side_apply,
)
from control.api.updates import record_update
from control.api.smp import PatchMeta
from control.errors import Conflict

APPS, V1, META = "io.k8s.api.apps.v1.", "io.k8s.api.core.v1.", "io.k8s.apimachinery.pkg.apis.meta.v1."


def ref(name: str) -> dict:
    return {"allOf": [{"$ref": f"#/components/schemas/{name}"}]}


def merge_list(name: str, key: str | None) -> dict:
    out = {"type": "array", "items": ref(name) if key else {"type": "string"}, "x-kubernetes-patch-strategy": "merge"}
    if key:
        out["x-kubernetes-patch-merge-key"] = key
    return out


DEFS = {
    APPS + "Deployment": {"properties": {"metadata": ref(META + "ObjectMeta"), "spec": ref(APPS + "DeploymentSpec")}},
    META + "ObjectMeta": {"properties": {"finalizers": merge_list("", None),
                                         "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
    APPS + "DeploymentSpec": {"properties": {"replicas": {"type": "integer"}, "template": ref(V1 + "PodTemplateSpec")}},
    V1 + "PodTemplateSpec": {"properties": {"spec": ref(V1 + "PodSpec")}},
    V1 + "PodSpec": {"properties": {"containers": merge_list(V1 + "Container", "name"),
                                    "tolerations": {"type": "array", "items": {"type": "object"}}}},
    V1 + "Container": {"properties": {"env": merge_list(V1 + "EnvVar", "name"),
                                      "ports": merge_list(V1 + "ContainerPort", "containerPort")}},
    V1 + "EnvVar": {"properties": {"name": {"type": "string"}}},
    V1 + "ContainerPort": {"properties": {"containerPort": {"type": "integer"}}},
}
META_D = PatchMeta.from_openapi(DEFS, APPS + "Deployment")
T0, T1, T2 = "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z"


def deployment(replicas: int = 2, containers: list | None = None, **meta) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default", **meta},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": containers if containers is not None else [
            {"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80}]}]}}},
    }


def apply(live, applied, manager="kubectl", force=False, now=T1):
    return server_side_apply(live, applied, manager=manager, force=force, meta=META_D, now=now,
                             api_version="apps/v1")


def update(old, new, manager="kube-controller-manager", now=T1, api_version="apps/v1"):
    return record_update(old, new, manager=manager, now=now, api_version=api_version, meta=META_D)


def entry(obj: dict, manager: str) -> dict:
    return next(e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)


def owned(obj: dict, manager: str) -> set[str]:
    return {path_string(p) for p in decode_fields(entry(obj, manager)["fieldsV1"])}


# --- create and the FieldsV1 encoding --------------------------------------------------------

def test_apply_creates_and_records_ownership_in_fields_v1() -> None:
    applied = deployment(labels={"app": "web"})
    out = apply(None, applied)
    assert {k: v for k, v in out["metadata"].items() if k != "managedFields"} == applied["metadata"]
    assert out["spec"] == applied["spec"]
    assert out["metadata"]["managedFields"] == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1", "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {},
                                     "f:ports": {'k:{"containerPort":80}': {".": {}, "f:containerPort": {}}}},
            }}}},
        },
    }]


def test_server_managed_and_status_fields_are_not_owned() -> None:
    applied = deployment(uid="u", resourceVersion="5", generation=2, creationTimestamp=T0)
    applied["status"] = {"replicas": 1}
    fields = entry(apply(None, applied), "kubectl")["fieldsV1"]
    assert set(fields) == {"f:spec"}  # not apiVersion, kind, metadata.name/namespace/uid/..., status


def test_sets_are_owned_by_value_and_other_lists_whole() -> None:
    applied = deployment(finalizers=["a", "b"])
    applied["spec"]["template"]["spec"]["tolerations"] = [{"key": "k"}]
    paths = owned(apply(None, applied), "kubectl")
    assert {'.metadata.finalizers[="a"]', '.metadata.finalizers[="b"]', ".spec.template.spec.tolerations"} <= paths


def test_nulls_in_the_applied_object_mean_absent() -> None:
    applied = deployment(labels=None)
    out = apply(None, applied)
    assert "labels" not in out["metadata"]
    assert not any("labels" in p for p in owned(out, "kubectl"))


# --- re-applying -----------------------------------------------------------------------------

def test_reapplying_the_same_configuration_changes_nothing_not_even_the_time() -> None:
    # Kubernetes treats such an apply as a no-op: no write, no new resourceVersion, no event.
    first = apply(None, deployment(labels={"app": "web"}))
    again = apply(first, deployment(labels={"app": "web"}), now=T2)
    assert again == first and entry(again, "kubectl")["time"] == T1


def test_fields_dropped_from_the_configuration_are_removed() -> None:
    containers = [{"name": "web", "image": "nginx:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                  {"name": "side", "image": "s:1"}]
    first = apply(None, deployment(containers=containers, labels={"app": "web", "tier": "x"}))
    second = apply(first, deployment(containers=[{"name": "web", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}],
                                     labels={"app": "web"}))
    assert second["metadata"]["labels"] == {"app": "web"}
    assert second["spec"]["template"]["spec"]["containers"] == [
        {"name": "web", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}]
    assert '.spec.template.spec.containers[name="side"]' not in owned(second, "kubectl")


def test_fields_still_owned_by_someone_else_survive_removal() -> None:
    first = apply(None, deployment(labels={"app": "web", "shared": "x"}))
    touched = copy.deepcopy(first)
    touched["metadata"]["labels"]["shared"] = "y"
    touched = update(first, touched, manager="kubectl-edit")
    second = apply(touched, deployment(labels={"app": "web"}))
    assert second["metadata"]["labels"] == {"app": "web", "shared": "y"}


def configmap(data: dict) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": data}


def apply_cm(live, data: dict) -> dict:
    return server_side_apply(live, configmap(data), manager="lightkube", force=False, meta=PatchMeta.empty(),
                             now=T1, api_version="v1")


def test_an_applied_empty_map_then_keys_keeps_the_keys() -> None:
    # lightkube's test_apply: create, change keys, clear them all, then apply one key again.
    live = apply_cm(None, {"key1": "value1", "key2": "value2"})
    live = apply_cm(live, {"key2": "new value", "key3": "value3"})
    assert live["data"] == {"key2": "new value", "key3": "value3"}
    live = apply_cm(live, {})
    assert not live["data"]
    assert {path_string(p) for p in decode_fields(live["metadata"]["managedFields"][0]["fieldsV1"])} == {".data"}
    live = apply_cm(live, {"key1": "new value"})
    assert live["data"] == {"key1": "new value"}
    assert {path_string(p) for p in decode_fields(live["metadata"]["managedFields"][0]["fieldsV1"])} == {".data.key1"}


def test_a_map_given_up_as_a_whole_still_loses_its_other_keys() -> None:
    # data was owned whole ({} applied); another manager added a key; the applier now owns only key1.
    live = apply_cm(None, {})
    live = record_update(live, {**live, "data": {"other": "x"}}, manager="editor", now=T2, api_version="v1")
    live = apply_cm(live, {"key1": "v"})
    assert live["data"] == {"other": "x", "key1": "v"}


def test_two_appliers_own_their_own_list_items() -> None:
    a = apply(None, deployment(containers=[{"name": "web", "image": "nginx:1"}]), manager="team-a")
    b = apply(a, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"template": {"spec": {"containers": [{"name": "log", "image": "fluent:1"}]}}}},
              manager="team-b")
    assert [c["name"] for c in b["spec"]["template"]["spec"]["containers"]] == ["web", "log"]
    # team-a drops its container; team-b's stays.
    c = apply(b, deployment(containers=[]), manager="team-a")
    assert [c["name"] for c in c["spec"]["template"]["spec"]["containers"]] == ["log"]
    assert owned(c, "team-b") == {'.spec.template.spec.containers[name="log"]',
                                  '.spec.template.spec.containers[name="log"].name',
                                  '.spec.template.spec.containers[name="log"].image'}


# --- conflicts -------------------------------------------------------------------------------

def created_by_client_side_apply(api_version: str = "apps/v1") -> dict:
    return update({}, deployment(replicas=3), manager="kubectl-client-side-apply", api_version=api_version)


def test_changing_another_managers_field_is_a_conflict() -> None:
    live = created_by_client_side_apply("v1")
    with pytest.raises(ApplyConflict) as err:
        apply(live, deployment(replicas=5))
    exc = err.value
    assert isinstance(exc, Conflict) and exc.code == 409 and exc.reason == "Conflict"
    assert exc.message == 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .spec.replicas'
    assert exc.status()["details"]["causes"] == [{
        "reason": "FieldManagerConflict", "message": 'conflict with "kubectl-client-side-apply" using v1',
        "field": ".spec.replicas"}]


def test_conflicts_are_listed_per_manager() -> None:
    live = created_by_client_side_apply()
    with pytest.raises(ApplyConflict) as err:
        apply(live, deployment(replicas=5, containers=[{"name": "web", "image": "nginx:2", "ports": [{"containerPort": 80}]}]))
    assert err.value.message == (
        'Apply failed with 2 conflicts: conflicts with "kubectl-client-side-apply" using apps/v1:\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="web"].image')
    assert len(err.value.details["causes"]) == 2


def test_conflicts_with_another_applier_name_it_without_version() -> None:
    live = apply(None, deployment(replicas=3), manager="helm")
    with pytest.raises(ApplyConflict, match=r'conflict with "helm": \.spec\.replicas$'):
        apply(live, deployment(replicas=4))


def test_agreeing_on_a_value_shares_ownership() -> None:
    live = created_by_client_side_apply()
    out = apply(live, deployment(replicas=3))
    assert ".spec.replicas" in owned(out, "kubectl") and ".spec.replicas" in owned(out, "kubectl-client-side-apply")


def test_force_takes_ownership() -> None:
    live = created_by_client_side_apply()
    out = apply(live, deployment(replicas=5), force=True)
    assert out["spec"]["replicas"] == 5
    assert ".spec.replicas" in owned(out, "kubectl")
    assert ".spec.replicas" not in owned(out, "kubectl-client-side-apply")
    assert '.spec.template.spec.containers[name="web"].image' in owned(out, "kubectl-client-side-apply")


# --- from client-side to server-side apply (kube-apiserver's lastAppliedManager) -------------

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def applied_client_side(config: dict, api_version: str = "apps/v1") -> dict:
    """What `kubectl apply` (client-side) leaves: the config plus its annotation, owned by an Update."""
    annotated = copy.deepcopy(config)
    annotated["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(config) + "\n"}
    return update({}, annotated, manager="kubectl-client-side-apply", api_version=api_version)


NEW_IMAGE = [{"name": "web", "image": "nginx:2", "ports": [{"containerPort": 80}]}]


def test_kubectl_takes_over_what_it_applied_client_side() -> None:
    live = applied_client_side(deployment(replicas=3))
    out = apply(live, deployment(replicas=5, containers=NEW_IMAGE))
    assert out["spec"]["replicas"] == 5
    assert out["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"
    assert {".spec.replicas", '.spec.template.spec.containers[name="web"].image'} <= owned(out, "kubectl")
    assert ".spec.replicas" not in owned(out, "kubectl-client-side-apply")
    # the annotation now records the configuration applied server-side
    recorded = json.loads(out["metadata"]["annotations"][LAST_APPLIED])
    assert recorded == deployment(replicas=5, containers=NEW_IMAGE)
    assert out["metadata"]["annotations"][LAST_APPLIED].endswith("}\n")


def test_only_the_kubectl_manager_takes_over() -> None:
    live = applied_client_side(deployment(replicas=3))
    with pytest.raises(ApplyConflict, match=r"\.spec\.replicas$"):
        apply(live, deployment(replicas=5), manager="my-tool")


def test_a_field_changed_since_the_client_side_apply_stays_a_conflict() -> None:
    live = applied_client_side(deployment(replicas=3))
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:edited"  # by hand, same owner
    with pytest.raises(ApplyConflict) as err:
        apply(live, deployment(replicas=5, containers=NEW_IMAGE))
    # replicas was handed over; only the edited image is reported
    assert [c["field"] for c in err.value.details["causes"]] == ['.spec.template.spec.containers[name="web"].image']


@pytest.mark.parametrize("annotation", ["", "not json", json.dumps(["a list"]),
                                        json.dumps(deployment(replicas=3) | {"apiVersion": "apps/v1beta1"})])
def test_an_unusable_annotation_hands_nothing_over(annotation) -> None:
    live = applied_client_side(deployment(replicas=3))
    live["metadata"]["annotations"][LAST_APPLIED] = annotation
    with pytest.raises(ApplyConflict):
        apply(live, deployment(replicas=5))


def test_the_annotation_is_written_only_where_there_was_one() -> None:
    live = apply(None, deployment(replicas=3))
    out = apply(live, deployment(replicas=4))
    assert "annotations" not in out["metadata"]
    other = apply(applied_client_side(deployment(replicas=3)), deployment(replicas=3), manager="my-tool")
    assert json.loads(other["metadata"]["annotations"][LAST_APPLIED]) == deployment(replicas=3)


def test_html_characters_are_escaped_in_the_annotation_as_go_writes_them() -> None:
    live = applied_client_side(deployment(replicas=3))
    out = apply(live, deployment(replicas=3, labels={"a": "x&y"}))
    text = out["metadata"]["annotations"][LAST_APPLIED]
    assert "x\\u0026y" in text and "&" not in text and json.loads(text)["metadata"]["labels"] == {"a": "x&y"}


# --- ordinary writes -------------------------------------------------------------------------

def test_update_takes_changed_fields_from_the_applier() -> None:
    live = apply(None, deployment(replicas=2, labels={"app": "web"}))
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 7
    scaled["metadata"]["labels"]["extra"] = "1"
    out = update(live, scaled, manager="kubectl-scale", now=T2)
    assert owned(out, "kubectl-scale") == {".spec.replicas", ".metadata.labels.extra"}
    assert ".spec.replicas" not in owned(out, "kubectl")
    assert ".metadata.labels.app" in owned(out, "kubectl")
    assert entry(out, "kubectl-scale") == {**entry(out, "kubectl-scale"), "operation": "Update",
                                           "apiVersion": "apps/v1", "time": T2}
    # The applier may now set replicas again only by force.
    with pytest.raises(ApplyConflict):
        apply(out, deployment(replicas=2, labels={"app": "web"}))


def test_deleted_fields_are_owned_by_nobody() -> None:
    live = apply(None, deployment(labels={"app": "web", "tier": "x"}))
    trimmed = copy.deepcopy(live)
    del trimmed["metadata"]["labels"]["tier"]
    out = update(live, trimmed, manager="editor")
    assert ".metadata.labels.tier" not in owned(out, "kubectl")
    assert all(e["manager"] != "editor" for e in out["metadata"]["managedFields"])  # it owns nothing


def test_an_update_that_changes_nothing_keeps_managed_fields() -> None:
    live = apply(None, deployment())
    out = update(live, copy.deepcopy(live), now=T2)
    assert out["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_clients_may_reset_managed_fields() -> None:
    live = apply(None, deployment())
    reset = copy.deepcopy(live)
    reset["metadata"]["managedFields"] = [{}]
    assert "managedFields" not in update(live, reset)["metadata"]
    untouched = copy.deepcopy(live)
    untouched["metadata"]["managedFields"] = []  # an empty list means "left alone"
    assert update(live, untouched)["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_inputs_are_never_mutated() -> None:
    live = created_by_client_side_apply()
    applied = deployment(replicas=9, labels={"a": "b"})
    live_before, applied_before = copy.deepcopy(live), copy.deepcopy(applied)
    out = apply(live, applied, force=True)
    assert live == live_before and applied == applied_before
    out["spec"]["template"]["spec"]["containers"][0]["image"] = "mutated"
    assert live == live_before and applied == applied_before
    new = copy.deepcopy(out)
    new_before = copy.deepcopy(new)
    update(out, new)
    assert new == new_before


# --- encoding --------------------------------------------------------------------------------

def test_path_strings() -> None:
    assert path_string(("f:spec", "f:containers", 'k:{"name":"a"}', "f:image")) == '.spec.containers[name="a"].image'
    assert path_string(("f:metadata", "f:finalizers", 'v:"x"')) == '.metadata.finalizers[="x"]'


ELEMENTS = st.one_of(
    st.text(alphabet="abc.-/", min_size=1, max_size=4).map(lambda s: f"f:{s}"),
    st.integers(0, 3).map(lambda i: "k:" + json.dumps({"name": str(i)}, separators=(",", ":"))),
    st.text(max_size=3).map(lambda s: "v:" + json.dumps(s)),
)


@settings(max_examples=300, deadline=None)
@given(st.sets(st.lists(ELEMENTS, min_size=1, max_size=4).map(tuple), max_size=8))
def test_fields_v1_round_trips(paths: set[tuple[str, ...]]) -> None:
    assert decode_fields(encode_fields(paths)) == paths
    assert decode_fields(json.loads(json.dumps(encode_fields(paths)))) == paths


def test_ignored_paths_are_exactly_those_under_the_ignored_prefixes():
    from control.api.apply import _IGNORED, _ignored

    def reference(path):
        return any(path[:len(skip)] == skip for skip in _IGNORED)

    heads = ["f:apiVersion", "f:kind", "f:status", "f:metadata", "f:spec", "f:data"]
    seconds = ["f:name", "f:uid", "f:labels", "f:managedFields", "f:annotations", "f:replicas", "k:{\"name\":\"a\"}"]
    paths = [()] + [(h,) for h in heads] + [(h, s) for h in heads for s in seconds] + \
            [(h, s, "f:x") for h in heads for s in seconds]
    assert [_ignored(p) for p in paths] == [reference(p) for p in paths]
    assert _ignored(("f:metadata", "f:managedFields", "f:x")) and not _ignored(("f:metadata", "f:labels", "f:a"))
