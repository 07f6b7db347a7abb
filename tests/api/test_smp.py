"""Strategic merge patch follows Kubernetes' documented semantics for the merge keys it publishes."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control.api.smp import PatchError, PatchMeta, json_merge_patch, strategic_merge_patch

V1 = "io.k8s.api.core.v1."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."


def ref(name: str) -> dict:
    return {"allOf": [{"$ref": f"#/components/schemas/{name}"}], "default": {}}


def array(items: dict, strategy: str | None = None, key: str | None = None) -> dict:
    out: dict = {"type": "array", "items": items}
    if strategy:
        out["x-kubernetes-patch-strategy"] = strategy
    if key:
        out["x-kubernetes-patch-merge-key"] = key
    return out


def obj(**props: dict) -> dict:
    return {"type": "object", "properties": props}


S, I = {"type": "string"}, {"type": "integer"}
STRINGS = {"type": "object", "additionalProperties": S}

# A small copy of Kubernetes' OpenAPI v3 components, merge keys as the real API publishes them.
DEFS = {
    V1 + "Pod": obj(apiVersion=S, kind=S, metadata=ref(META + "ObjectMeta"), spec=ref(V1 + "PodSpec"),
                    status=ref(V1 + "PodStatus")),
    META + "ObjectMeta": obj(
        name=S, labels=STRINGS, annotations=STRINGS,
        finalizers=array(S, "merge"),
        ownerReferences=array(ref(META + "OwnerReference"), "merge", "uid")),
    META + "OwnerReference": obj(uid=S, kind=S, name=S),
    V1 + "PodSpec": obj(
        containers=array(ref(V1 + "Container"), "merge", "name"),
        initContainers=array(ref(V1 + "Container"), "merge", "name"),
        volumes=array(ref(V1 + "Volume"), "merge,retainKeys", "name"),
        tolerations=array(ref(V1 + "Toleration")),
        nodeSelector=STRINGS, nodeName=S),
    V1 + "Container": obj(
        name=S, image=S, args=array(S),
        ports=array(ref(V1 + "ContainerPort"), "merge", "containerPort"),
        env=array(ref(V1 + "EnvVar"), "merge", "name"),
        volumeMounts=array(ref(V1 + "VolumeMount"), "merge", "mountPath")),
    V1 + "ContainerPort": obj(containerPort=I, protocol=S, name=S),
    V1 + "EnvVar": obj(name=S, value=S),
    V1 + "VolumeMount": obj(name=S, mountPath=S),
    V1 + "Volume": obj(name=S, emptyDir=obj(medium=S), configMap=obj(name=S)),
    V1 + "Toleration": obj(key=S, operator=S, effect=S),
    V1 + "PodStatus": obj(phase=S, conditions=array(ref(V1 + "PodCondition"), "merge", "type")),
    V1 + "PodCondition": obj(type=S, status=S),
    V1 + "Service": obj(spec=ref(V1 + "ServiceSpec")),
    V1 + "ServiceSpec": obj(ports=array(ref(V1 + "ServicePort"), "merge", "port"), selector=STRINGS),
    V1 + "ServicePort": obj(port=I, targetPort=I, name=S),
    V1 + "Node": obj(spec=ref(V1 + "NodeSpec"), status=ref(V1 + "NodeStatus")),
    V1 + "NodeSpec": obj(taints=array(ref(V1 + "Taint"))),
    V1 + "Taint": obj(key=S, effect=S),
    V1 + "NodeStatus": obj(addresses=array(ref(V1 + "NodeAddress"), "merge", "type")),
    V1 + "NodeAddress": obj(type=S, address=S),
}
POD_META = PatchMeta.from_openapi(DEFS, V1 + "Pod")


def pod() -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "web", "tier": "front"}, "finalizers": ["a", "b"],
                     "ownerReferences": [{"uid": "u1", "kind": "ReplicaSet", "name": "rs"}]},
        "spec": {
            "containers": [
                {"name": "a", "image": "a:1", "args": ["x", "y"],
                 "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                 "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                {"name": "b", "image": "b:1"},
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "tolerations": [{"key": "k1", "operator": "Exists"}, {"key": "k2", "operator": "Exists"}],
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"},
                                                       {"type": "Initialized", "status": "True"}]},
    }


def patched(patch: dict, original: dict | None = None, meta: PatchMeta = POD_META) -> dict:
    return strategic_merge_patch(original if original is not None else pod(), patch, meta)


def names(items: list[dict], key: str = "name") -> list:
    return [i[key] for i in items]


# --- lists of maps merge by key --------------------------------------------------------------

def test_patching_one_container_keeps_the_others() -> None:
    out = patched({"spec": {"containers": [{"name": "b", "image": "x"}]}})
    assert out["spec"]["containers"][0] == pod()["spec"]["containers"][0]
    assert out["spec"]["containers"][1] == {"name": "b", "image": "x"}


def test_new_keys_are_appended_and_nested_lists_merge_by_their_own_keys() -> None:
    out = patched({"spec": {"containers": [
        {"name": "c", "image": "c:1"},
        {"name": "a", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
         "ports": [{"containerPort": 443}]},
    ]}})
    assert names(out["spec"]["containers"]) == ["a", "b", "c"]
    a = out["spec"]["containers"][0]
    assert a["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}]
    assert names(a["ports"], "containerPort") == [80, 443]
    assert a["image"] == "a:1"


@pytest.mark.parametrize("path, field, key, original, patch_items, expected", [
    ("status", "conditions", "type", None, [{"type": "Ready", "status": "True"}], ["True", "True"]),
])
def test_pod_conditions_merge_by_type(path, field, key, original, patch_items, expected) -> None:
    out = patched({path: {field: patch_items}})
    assert [c["status"] for c in out[path][field]] == expected
    assert names(out[path][field], key) == ["Ready", "Initialized"]


def test_owner_references_merge_by_uid() -> None:
    out = patched({"metadata": {"ownerReferences": [{"uid": "u2", "kind": "Job", "name": "j"}]}})
    assert names(out["metadata"]["ownerReferences"], "uid") == ["u1", "u2"]


def test_service_ports_by_port_and_node_addresses_by_type() -> None:
    svc = {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443, "targetPort": 8443}]}}
    out = strategic_merge_patch(svc, {"spec": {"ports": [{"port": 443, "targetPort": 9443}]}},
                                PatchMeta.from_openapi(DEFS, V1 + "Service"))
    assert out["spec"]["ports"] == [{"port": 80, "targetPort": 8080}, {"port": 443, "targetPort": 9443}]
    node_meta = PatchMeta.from_openapi(DEFS, V1 + "Node")
    node = {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}}
    out = strategic_merge_patch(node, {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]},
                                       "status": {"addresses": [{"type": "Hostname", "address": "n1"}]}},
                                node_meta)
    assert out["spec"]["taints"] == [{"key": "b", "effect": "NoExecute"}]  # taints are replaced whole
    assert names(out["status"]["addresses"], "type") == ["InternalIP", "Hostname"]


def test_lists_without_strategy_are_replaced() -> None:
    out = patched({"spec": {"tolerations": [{"key": "k3", "operator": "Exists"}],
                            "containers": [{"name": "a", "args": ["z"]}]}})
    assert out["spec"]["tolerations"] == [{"key": "k3", "operator": "Exists"}]
    assert out["spec"]["containers"][0]["args"] == ["z"]


# --- deletion --------------------------------------------------------------------------------

def test_null_deletes_a_key_and_absent_nulls_are_harmless() -> None:
    out = patched({"metadata": {"labels": {"tier": None, "ghost": None}}, "status": None})
    assert out["metadata"]["labels"] == {"app": "web"}
    assert "status" not in out


def test_patch_delete_removes_a_list_element_by_key() -> None:
    out = patched({"spec": {"containers": [{"$patch": "delete", "name": "a"},
                                           {"$patch": "delete", "name": "nope"}]}})
    assert names(out["spec"]["containers"]) == ["b"]


def test_patch_delete_on_a_map_removes_it() -> None:
    out = patched({"metadata": {"labels": {"$patch": "delete"}}})
    assert "labels" not in out["metadata"]


def test_delete_from_primitive_list() -> None:
    out = patched({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "zz"], "finalizers": ["c"]}})
    assert out["metadata"]["finalizers"] == ["b", "c"]


# --- replacement, sets, ordering, retainKeys -------------------------------------------------

def test_patch_replace_inside_a_list_replaces_it_whole() -> None:
    out = patched({"spec": {"containers": [{"name": "z", "image": "z:1"}, {"$patch": "replace"}]}})
    assert out["spec"]["containers"] == [{"name": "z", "image": "z:1"}]


def test_patch_replace_on_a_map_replaces_it_whole() -> None:
    out = patched({"metadata": {"labels": {"$patch": "replace", "only": "this"}}})
    assert out["metadata"]["labels"] == {"only": "this"}


def test_patch_merge_on_a_map_is_the_default() -> None:
    out = patched({"metadata": {"labels": {"$patch": "merge", "new": "x"}}})
    assert out["metadata"]["labels"] == {"app": "web", "tier": "front", "new": "x"}


def test_primitive_merge_lists_are_sets_in_original_then_new_order() -> None:
    out = patched({"metadata": {"finalizers": ["c", "a", "c", "d"]}})
    assert out["metadata"]["finalizers"] == ["a", "b", "c", "d"]


def test_set_element_order_reorders_maps_and_primitives() -> None:
    out = patched({"metadata": {"$setElementOrder/finalizers": ["b", "a"]},
                   "spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}})
    assert out["metadata"]["finalizers"] == ["b", "a"]
    assert names(out["spec"]["containers"]) == ["b", "a"]


def test_set_element_order_places_new_elements() -> None:
    out = patched({"spec": {"$setElementOrder/containers": [{"name": "new"}, {"name": "a"}, {"name": "b"}],
                            "containers": [{"name": "new", "image": "n:1"}]}})
    assert names(out["spec"]["containers"]) == ["new", "a", "b"]


def test_retain_keys_clears_the_other_members_of_a_union() -> None:
    out = patched({"spec": {"volumes": [{"name": "data", "$retainKeys": ["configMap", "name"],
                                         "configMap": {"name": "cm"}}]}})
    assert out["spec"]["volumes"] == [{"name": "data", "configMap": {"name": "cm"}}]


def test_retain_keys_on_a_deployment_strategy_drops_the_defaulted_rolling_update() -> None:
    from control.api.patching import patch_meta

    live = {"spec": {"replicas": 1, "strategy": {"type": "RollingUpdate",
                                                 "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}}
    # What kubectl 1.32 sends when the file switches to `strategy: {type: Recreate}`, having read
    # `x-kubernetes-patch-strategy: retainKeys` on DeploymentSpec.strategy from the hub's OpenAPI.
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    out = strategic_merge_patch(live, patch, patch_meta("io.k8s.api.apps.v1.Deployment"))
    assert out["spec"] == {"replicas": 1, "strategy": {"type": "Recreate"}}


# --- kubectl apply's three-way patch ----------------------------------------------------------

def test_kubectl_apply_three_way_patch() -> None:
    live = pod()
    live["metadata"]["labels"]["added-by-controller"] = "yes"
    live["spec"]["containers"].append({"name": "sidecar", "image": "s:1"})
    live["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"  # server-side default
    # What `kubectl apply` sends after the file dropped label `tier`, env B and the sidecar.
    patch = {
        "metadata": {"labels": {"tier": None},
                     "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {
            "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
            "containers": [
                {"name": "a", "image": "a:2", "$setElementOrder/env": [{"name": "A"}],
                 "env": [{"$patch": "delete", "name": "B"}]},
                {"$patch": "delete", "name": "sidecar"},
            ],
        },
    }
    out = patched(patch, live)
    assert out["metadata"]["labels"] == {"app": "web", "added-by-controller": "yes"}
    assert out["metadata"]["annotations"] == {"kubectl.kubernetes.io/last-applied-configuration": "{}"}
    assert names(out["spec"]["containers"]) == ["a", "b"]
    a = out["spec"]["containers"][0]
    assert a["image"] == "a:2" and a["env"] == [{"name": "A", "value": "1"}]
    assert a["imagePullPolicy"] == "IfNotPresent"


# --- cleanliness and purity ------------------------------------------------------------------

def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _has_null(value) -> bool:
    if isinstance(value, dict):
        return any(v is None or _has_null(v) for v in value.values())
    return isinstance(value, list) and any(_has_null(v) for v in value)


def test_directives_and_nulls_never_reach_the_result_even_on_new_fields() -> None:
    out = patched({"spec": {
        "initContainers": [{"name": "i", "image": "i:1", "env": [{"name": "X", "value": None}]},
                           {"$patch": "delete", "name": "gone"}],
        "nodeSelector": {"$patch": "replace", "disk": "ssd", "zone": None},
        "$setElementOrder/initContainers": [{"name": "i"}],
        "$deleteFromPrimitiveList/nothing": ["x"],
    }, "metadata": {"$retainKeys": ["labels", "finalizers", "name", "ownerReferences"], "labels": {"n": "1"}}})
    assert not {k for k in _keys(out) if k.startswith("$")}
    assert not _has_null(out)
    assert out["spec"]["initContainers"] == [{"name": "i", "image": "i:1", "env": [{"name": "X"}]}]
    assert out["spec"]["nodeSelector"] == {"disk": "ssd"}


def test_inputs_are_never_mutated_and_results_share_nothing() -> None:
    original, patch = pod(), {"spec": {"containers": [{"name": "a", "image": "q"}]},
                              "metadata": {"labels": {"x": "1"}}}
    before, patch_before = copy.deepcopy(original), copy.deepcopy(patch)
    out = strategic_merge_patch(original, patch, POD_META)
    assert original == before and patch == patch_before
    out["spec"]["containers"][1]["image"] = "changed"
    out["spec"]["tolerations"].append({})
    out["metadata"]["labels"]["y"] = "2"
    assert original == before


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("patch, message", [
    ({"spec": {"containers": [{"image": "x"}]}}, "does not contain declared merge key \"name\""),
    ({"spec": {"containers": [{"$patch": "delete", "image": "x"}]}}, "merge key \"name\""),
    ({"spec": {"containers": ["a"]}}, "expected a map with merge key"),
    ({"metadata": {"labels": {"$patch": "foo"}}}, "unknown patch type \"foo\""),
    ({"spec": {"containers": [{"$patch": "foo"}]}}, "unknown patch type \"foo\""),
    ({"spec": []}, ".spec: expected a map, got a list"),
    ({"spec": {"containers": {"name": "a"}}}, "expected a list, got a map"),
    ({"metadata": "x"}, "expected a map"),
    ({"metadata": {"name": {"a": 1}}}, "expected a scalar"),
    ({"metadata": {"finalizers": [{"a": 1}]}}, "cannot merge lists without a merge key"),
    ({"spec": {"tolerations": [{"$patch": "delete", "key": "k1"}]}}, "needs a list with a merge key"),
    ({"metadata": {"$retainKeys": "labels"}}, "$retainKeys must be a list"),
    ({"metadata": {"$retainKeys": ["name"], "labels": {}}}, "not in $retainKeys"),
    ({"spec": {"$setElementOrder/containers": "a"}}, "$setElementOrder must be a list"),
    ({"spec": {"$setElementOrder/containers": ["a"]}}, "entries must be maps with merge key"),
    ({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}, "must be a list"),
])
def test_malformed_patches_raise_patch_error(patch: dict, message: str) -> None:
    with pytest.raises(PatchError) as err:
        patched(patch)
    assert message in str(err.value)


def test_patch_must_be_an_object() -> None:
    assert issubclass(PatchError, ValueError)
    with pytest.raises(PatchError):
        strategic_merge_patch(pod(), [{"op": "add"}], POD_META)  # type: ignore[arg-type]


# --- PatchMeta -------------------------------------------------------------------------------

def test_patch_meta_reads_kubernetes_openapi() -> None:
    spec = POD_META.child("spec")
    assert spec.list_strategy("containers") == ("merge", "name")
    assert spec.list_strategy("volumes") == ("merge", "name")  # "merge,retainKeys"
    assert spec.list_strategy("tolerations") == ("replace", None)
    assert POD_META.child("metadata").list_strategy("finalizers") == ("merge", None)
    container = spec.child("containers")  # a list field's child is one element
    assert container.list_strategy("env") == ("merge", "name")
    assert container.list_strategy("volumeMounts") == ("merge", "mountPath")
    assert spec.shape("containers") == "array" and POD_META.shape("spec") == "object"
    assert POD_META.child("metadata").child("labels").shape("anything") == "scalar"
    assert spec.shape("unknown") is None and spec.list_strategy("unknown") == ("replace", None)


def test_unknown_or_missing_metadata_falls_back_to_merge_patch() -> None:
    for meta in (PatchMeta.empty(), PatchMeta.from_openapi(DEFS, "no.such.Kind")):
        out = strategic_merge_patch(pod(), {"spec": {"containers": [{"name": "b"}]},
                                            "metadata": {"labels": {"x": "1"}}}, meta)
        assert out["spec"]["containers"] == [{"name": "b"}]
        assert out["metadata"]["labels"] == {"app": "web", "tier": "front", "x": "1"}


def test_self_referencing_schemas_do_not_hang() -> None:
    defs = {"Props": obj(items=ref("Props"), list=array(ref("Props"), "merge", "name")),
            "Loop": {"$ref": "#/components/schemas/Loop"}}
    meta = PatchMeta.from_openapi(defs, "Props")
    assert meta.child("items").child("items").list_strategy("list") == ("merge", "name")
    assert PatchMeta.from_openapi(defs, "Loop").list_strategy("x") == ("replace", None)


def test_pod_from_the_hub_schemas_merges_containers_by_name() -> None:
    schemas = pytest.importorskip("control.kinds.schemas")
    meta = PatchMeta.from_openapi(schemas.DEFINITIONS, "io.k8s.api.core.v1.Pod")
    out = strategic_merge_patch(pod(), {"spec": {"containers": [{"name": "b", "image": "x"}]}}, meta)
    assert names(out["spec"]["containers"]) == ["a", "b"]
    assert out["spec"]["containers"][1]["image"] == "x"


# --- properties ------------------------------------------------------------------------------

KEYS = st.text(alphabet="abcxyz", min_size=1, max_size=3)
SCALARS = st.booleans() | st.integers(-5, 5) | st.text(max_size=3)


def _json(scalars):
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                        max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, _json(SCALARS), max_size=4), st.dictionaries(KEYS, _json(st.none() | SCALARS), max_size=4))
def test_without_metadata_or_directives_it_is_json_merge_patch(original: dict, patch: dict) -> None:
    expected = json_merge_patch(original, patch)
    # RFC 7386 keeps nulls nested inside a value it adds; SMP drops them. Compare without those.
    assert json.dumps(strategic_merge_patch(original, patch, PatchMeta.empty()), sort_keys=True) == \
        json.dumps(_drop_nulls(expected), sort_keys=True)


def _drop_nulls(value):
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value
