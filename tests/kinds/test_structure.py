"""Decoding checks against the published schemas: unknown fields, JSON types, pruning, messages, and
the shape of DEFINITIONS itself (references resolve, descriptions present, merge metadata right)."""

from __future__ import annotations

import copy
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control.kinds.schemas import DEFINITIONS
from control.kinds import structure
from control.kinds.structure import Problem, check, message, prune

POD = "io.k8s.api.core.v1.Pod"
DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"

NGINX_DEPLOYMENT = {  # the Deployment of the Kubernetes docs, plus the fields real charts add
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}, "annotations": {"a": "b"}},
    "spec": {
        "replicas": 3, "revisionHistoryLimit": 5, "progressDeadlineSeconds": 600,
        "selector": {"matchLabels": {"app": "nginx"},
                     "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {
                "containers": [{
                    "name": "nginx", "image": "nginx:1.14.2", "imagePullPolicy": "IfNotPresent",
                    "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}],
                    "env": [{"name": "A", "value": "1"},
                            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "K", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                    "envFrom": [{"configMapRef": {"name": "cfg"}}],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": 0.25}},
                    "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "initialDelaySeconds": 3},
                    "readinessProbe": {"exec": {"command": ["cat", "/tmp/ok"]}, "periodSeconds": 5},
                    "startupProbe": {"tcpSocket": {"port": 80}, "failureThreshold": 30},
                    "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
                    "securityContext": {"runAsUser": 1000, "capabilities": {"drop": ["ALL"]},
                                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                    "stdin": False, "tty": False, "workingDir": "/",
                }],
                "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "true"]}],
                "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
                            {"name": "cfg", "configMap": {"name": "cfg", "items": [{"key": "a", "path": "a"}]}},
                            {"name": "pvc", "persistentVolumeClaim": {"claimName": "c"}},
                            {"name": "proj", "projected": {"sources": [
                                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}]}},
                            {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {
                                "accessModes": ["ReadWriteOnce"], "anything": {"goes": 1}}}}}],
                "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                "nodeSelector": {"disktype": "ssd"}, "serviceAccountName": "default",
                "securityContext": {"fsGroup": 2000, "sysctls": [{"name": "a", "value": "b"}]},
                "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                       "labelSelector": {"matchLabels": {"app": "nginx"}}}}]}},
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                                 "tolerationSeconds": 300}],
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                               "whenUnsatisfiable": "DoNotSchedule"}],
                "hostAliases": [{"ip": "127.0.0.1", "hostnames": ["foo.local"]}],
                "dnsConfig": {"options": [{"name": "ndots", "value": "2"}]},
                "imagePullSecrets": [{"name": "regcred"}], "priorityClassName": "high",
                "schedulerName": "default-scheduler", "enableServiceLinks": False,
            },
        },
    },
}

VALID = [
    (DEPLOYMENT, NGINX_DEPLOYMENT),
    ("io.k8s.api.core.v1.Service", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "type": "NodePort", "ports": [
            {"name": "http", "port": 80, "targetPort": 8080, "nodePort": 30080, "protocol": "TCP"},
            {"name": "grpc", "port": 81, "targetPort": "grpc"}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1", "ports": [{"port": 80, "protocol": "TCP"}]}]}}}),
    ("io.k8s.api.core.v1.Node", {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                             "timeAdded": "2024-01-01T00:00:00Z"}], "podCIDR": "10.1.0.0/24"},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": 110}, "allocatable": {"cpu": 4},
                   "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2024-01-01T00:00:00Z"}],
                   "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                   "nodeInfo": {"kubeletVersion": "v1.32.0", "architecture": "amd64"}}}),
    ("io.k8s.api.core.v1.Event", {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "uid": "u"}, "reason": "Scheduled", "count": 1,
        "source": {"component": "scheduler"}, "eventTime": "2024-01-01T00:00:00.000000Z",
        "series": {"count": 2}, "related": {"kind": "Node", "name": "n"}}),
    ("io.k8s.api.coordination.v1.Lease", {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "n1"},
        "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40, "renewTime": "2024-01-01T00:00:00.000000Z"}}),
    ("io.k8s.api.core.v1.ConfigMap", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"},
        "binaryData": {"b": "AAE="}, "immutable": True}),
    ("io.k8s.api.core.v1.Endpoints", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.1.0.5", "nodeName": "n1", "targetRef": {"kind": "Pod", "name": "p"}}],
                     "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]}),
    ("io.k8s.api.autoscaling.v1.Scale", {
        "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"},
        "spec": {"replicas": 3}, "status": {"replicas": 3, "selector": "app=web"}}),
    (POD, {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                     "name": "rs", "uid": "u", "controller": True, "blockOwnerDeletion": True}],
                     "managedFields": [{"manager": "kubectl", "operation": "Apply",
                                        "fieldsV1": {"f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {}}}}}],
                     "finalizers": ["x"], "generation": 1, "resourceVersion": "5"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "n1"},
        "status": {"phase": "Running", "podIP": "10.1.0.5", "startTime": "2024-01-01T00:00:00Z",
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "c", "ready": True, "restartCount": 2, "image": "i",
                                          "imageID": "sha", "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}},
                                          "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}),
]


@pytest.mark.parametrize("definition, obj", VALID, ids=[d.rsplit(".", 1)[-1] for d, _ in VALID])
def test_real_manifests_have_no_problems(definition, obj):
    assert check(obj, definition) == []
    assert prune(obj, definition) == obj


def test_unknown_fields_are_reported_with_kubernetes_paths_in_order():
    obj = copy.deepcopy(NGINX_DEPLOYMENT)
    obj["spec"]["foo"] = 1
    obj["metadata"]["labelz"] = {}
    obj["spec"]["template"]["spec"]["containers"].append({"name": "b", "imagee": "x"})
    obj["spec"]["template"]["spec"]["volumes"][1]["configMap"]["items"][0]["bogus"] = True
    problems = check(obj, DEPLOYMENT)
    assert [p.path for p in problems] == [
        "metadata.labelz", "spec.template.spec.containers[1].imagee",
        "spec.template.spec.volumes[1].configMap.items[0].bogus", "spec.foo"]
    assert {p.kind for p in problems} == {"unknown"}
    assert message(problems, "Deployment", "v1") == (
        'strict decoding error: unknown field "metadata.labelz", unknown field '
        '"spec.template.spec.containers[1].imagee", unknown field '
        '"spec.template.spec.volumes[1].configMap.items[0].bogus", unknown field "spec.foo"')


def test_type_error_message_names_the_go_struct_field():
    problems = check({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": "nginx"}}, POD)
    assert problems == [Problem("spec.containers", "type", "cannot unmarshal string into Go struct field "
                                "PodSpec.spec.containers of type []v1.Container")]
    assert message(problems, "Pod", "v1") == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct '
        "field PodSpec.spec.containers of type []v1.Container")


def test_a_type_error_wins_over_unknown_fields_in_the_message():
    problems = check({"spec": {"foo": 1, "containers": [{"name": 5}]}}, POD)
    assert [p.kind for p in problems] == ["unknown", "type"]
    text = message(problems, "Pod", "v1")
    assert "cannot unmarshal number into Go struct field Container.spec.containers.name of type string" in text
    assert message([], "Pod", "v1") == ""


def _port(value):
    return {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": value}]}]}}


@pytest.mark.parametrize("value, ok", [
    (80, True), (80.0, True), (None, True), (80.5, False), (True, False), ("80", False),
    (2**31, False), (-(2**31), True), (float("inf"), False), ([80], False), ({}, False),
])
def test_int32_fields(value, ok):
    problems = check(_port(value), POD)
    assert (problems == []) is ok, problems
    if not ok:
        assert problems[0].path == "spec.containers[0].ports[0].containerPort"
        assert "of type int32" in problems[0].message


@pytest.mark.parametrize("value, ok", [
    ("500m", True), (1, True), (0.5, True), (True, False), ([], False), ({"a": 1}, False),
])
def test_quantity_is_string_or_number(value, ok):
    obj = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": value}}}]}}
    problems = check(obj, POD)
    assert (problems == []) is ok
    if not ok:
        assert problems[0].path == "spec.containers[0].resources.limits[cpu]"
        assert problems[0].message.endswith("of type resource.Quantity")


@pytest.mark.parametrize("value, ok", [
    (8080, True), ("http", True), (8080.0, True), (1.5, False), (True, False), ({}, False),
])
def test_int_or_string(value, ok):
    obj = {"spec": {"ports": [{"port": 80, "targetPort": value}]}}
    assert (check(obj, "io.k8s.api.core.v1.Service") == []) is ok


@pytest.mark.parametrize("path, value", [
    (("spec", "hostNetwork"), "true"), (("spec", "nodeName"), 3), (("spec", "nodeSelector"), ["a"]),
    (("metadata", "finalizers"), "x"), (("spec", "affinity"), "x"), (("metadata",), []),
])
def test_wrong_json_types(path, value):
    obj: dict = {}
    target = obj
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    problems = check(obj, POD)
    assert [(p.path, p.kind) for p in problems] == [(".".join(path), "type")]


def test_maps_report_values_by_key_and_accept_any_key():
    problems = check({"metadata": {"labels": {"app": 1, "any/key.x": "ok"}}}, POD)
    assert [(p.path, p.kind) for p in problems] == [("metadata.labels[app]", "type")]
    assert "ObjectMeta.metadata.labels of type string" in problems[0].message


def test_null_is_accepted_everywhere():
    assert check({"metadata": None, "spec": {"containers": None, "hostNetwork": None}}, POD) == []


def test_preserve_unknown_fields_are_left_alone():
    obj = {"spec": {"volumes": [{"name": "e", "ephemeral": {"volumeClaimTemplate": {"x": [1, {"y": 2}]}}}]},
           "metadata": {"managedFields": [{"fieldsV1": {"f:anything": {".": {}}}}]}}
    assert check(obj, POD) == []
    assert prune(obj, POD) == obj


def test_top_level_must_be_an_object():
    for value in ([], "x", 3, True):
        [problem] = check(value, POD)
        assert problem.path == "" and problem.kind == "type"
        assert problem.message.endswith("into Go value of type v1.Pod")
    assert check(None, POD) == []


def test_unknown_definition_is_a_programming_error():
    with pytest.raises(KeyError):
        check({}, "io.k8s.api.core.v1.Nope")


def test_prune_drops_only_unknown_fields_and_shares_nothing():
    obj = copy.deepcopy(NGINX_DEPLOYMENT)
    obj["spec"]["bogus"] = {"x": 1}
    obj["spec"]["template"]["spec"]["containers"][0]["nope"] = 1
    obj["spec"]["replicas"] = "three"  # wrong type: kept, reported by check()
    before = copy.deepcopy(obj)
    pruned = prune(obj, DEPLOYMENT)
    assert obj == before
    assert "bogus" not in pruned["spec"] and "nope" not in pruned["spec"]["template"]["spec"]["containers"][0]
    assert pruned["spec"]["replicas"] == "three"
    assert [p.kind for p in check(pruned, DEPLOYMENT)] == ["type"]
    pruned["spec"]["template"]["spec"]["volumes"][4]["ephemeral"]["volumeClaimTemplate"]["spec"]["x"] = 1
    pruned["metadata"]["labels"]["new"] = "v"
    assert obj == before


def test_very_deep_input_does_not_raise():
    deep: object = "leaf"
    for _ in range(20000):
        deep = [deep]
    obj = {"metadata": {"managedFields": [{"fieldsV1": {"f:x": deep}}]}, "spec": {"unknown": deep}}
    assert [p.path for p in check(obj, POD)] == ["spec.unknown"]
    pruned = prune(obj, POD)
    assert "unknown" not in pruned["spec"]
    assert pruned["metadata"]["managedFields"][0]["fieldsV1"]["f:x"] is not deep


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["spec", "metadata", "status", "containers", "name", "ports", "labels", "x",
                         "template", "replicas", "selector", "conditions", "data", "subsets", "type"]) | st.text(max_size=3),
        inner, max_size=5),
    max_leaves=40,
)
NAMES = st.sampled_from(sorted(DEFINITIONS))


@settings(max_examples=300, deadline=None)
@given(value=JSON, definition=NAMES)
def test_never_raises_and_prune_leaves_no_unknown_fields(value, definition):
    problems = check(value, definition)
    assert all(p.kind in ("unknown", "type") and isinstance(p.path, str) for p in problems)
    text = message(problems, "Pod", "v1")
    assert (text == "") is (problems == [])
    pruned = prune(value, definition)
    assert [p for p in check(pruned, definition) if p.kind == "unknown"] == []
    assert [p for p in check(pruned, definition)] == [p for p in problems if p.kind == "type"]


@settings(max_examples=100, deadline=None)
@given(spec=st.fixed_dictionaries({}, optional={
    "replicas": JSON, "selector": JSON, "template": st.fixed_dictionaries({}, optional={"spec": JSON}),
    "minReadySeconds": JSON}))
def test_never_raises_on_shaped_input(spec):
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": spec}
    assert [p for p in check(prune(obj, DEPLOYMENT), DEPLOYMENT) if p.kind == "unknown"] == []


def _paths(value, at=()):
    """Every place inside a manifest: (path of keys and indexes, the value there)."""
    yield at, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, at + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, at + (index,))


def _replaced(value, path, new):
    if not path:
        return new
    out = copy.copy(value)
    out[path[0]] = _replaced(value[path[0]], path[1:], new)
    return out


def _finds_nothing(value, definition) -> bool:
    root = structure._root(definition)
    return not list(structure._walk(value, root, "", "", 0))


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_the_quick_pass_agrees_with_the_explaining_walk_near_valid_manifests(data):
    """`_clean` (the one pass every write takes) says clean exactly when `_walk` finds no problem:
    valid manifests with one value replaced (wrong types, nulls, nested junk) or one field added."""
    definition, manifest = data.draw(st.sampled_from(VALID))
    path, here = data.draw(st.sampled_from(list(_paths(manifest))))
    if isinstance(here, dict) and data.draw(st.booleans()):
        new = {**here, data.draw(st.text(max_size=4)): data.draw(JSON)}
    else:
        new = data.draw(JSON | st.sampled_from([1, -1, 2**40, 1.5, "s", True, [], {}]))
    value = _replaced(manifest, path, new)
    assert structure._clean(value, structure._root(definition), 0) is _finds_nothing(value, definition)


@settings(max_examples=300, deadline=None)
@given(value=JSON, definition=NAMES)
def test_the_quick_pass_agrees_with_the_explaining_walk_on_any_json(value, definition):
    assert structure._clean(value, structure._root(definition), 0) is _finds_nothing(value, definition)


# --- the schemas themselves ----------------------------------------------------------------------

def test_every_reference_resolves():
    refs = set(re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', json.dumps(DEFINITIONS)))
    assert refs <= set(DEFINITIONS)


def test_every_object_and_property_is_described():
    for name, schema in DEFINITIONS.items():
        assert schema.get("description"), name
        for key, sub in (schema.get("properties") or {}).items():
            assert sub.get("description"), f"{name}.{key}"
            assert "type" in sub or "allOf" in sub, f"{name}.{key}"


def _prop(definition, *path):
    schema = DEFINITIONS[definition]
    for key in path:
        schema = schema["properties"][key]
    return schema


@pytest.mark.parametrize("definition, field, strategy, key", [
    ("io.k8s.api.core.v1.PodSpec", "containers", "merge", "name"),
    ("io.k8s.api.core.v1.PodSpec", "initContainers", "merge", "name"),
    ("io.k8s.api.core.v1.PodSpec", "ephemeralContainers", "merge", "name"),
    ("io.k8s.api.core.v1.PodSpec", "volumes", "merge,retainKeys", "name"),
    ("io.k8s.api.core.v1.Container", "ports", "merge", "containerPort"),
    ("io.k8s.api.core.v1.Container", "env", "merge", "name"),
    ("io.k8s.api.core.v1.Container", "volumeMounts", "merge", "mountPath"),
    ("io.k8s.api.core.v1.ServiceSpec", "ports", "merge", "port"),
    ("io.k8s.api.core.v1.NodeStatus", "addresses", "merge", "type"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "ownerReferences", "merge", "uid"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers", "merge", None),
])
def test_strategic_merge_metadata(definition, field, strategy, key):
    schema = _prop(definition, field)
    assert schema.get("x-kubernetes-patch-strategy") == strategy
    assert schema.get("x-kubernetes-patch-merge-key") == key


def test_every_conditions_list_merges_by_type_and_taints_tolerations_replace():
    found = 0
    for name, schema in DEFINITIONS.items():
        for key, sub in (schema.get("properties") or {}).items():
            if key == "conditions" and name != "io.k8s.api.discovery.v1.Endpoint":  # an object, not a list
                found += 1
                assert sub["x-kubernetes-patch-merge-key"] == "type", name
                assert sub["x-kubernetes-patch-strategy"] == "merge", name
    # + autoscaling (HPA), apiextensions (CRD), batch (Job), policy (PDB), DaemonSet, StatefulSet, PVC,
    # ReplicationController, APIService and CertificateSigningRequest status conditions
    assert found == 16
    assert "x-kubernetes-patch-strategy" not in _prop("io.k8s.api.core.v1.PodSpec", "tolerations")
    assert "x-kubernetes-patch-strategy" not in _prop("io.k8s.api.core.v1.NodeSpec", "taints")


def test_kinds_carry_their_group_version_kind():
    expected = {"io.k8s.api.core.v1.Pod": ("", "v1", "Pod"), DEPLOYMENT: ("apps", "v1", "Deployment"),
                "io.k8s.api.coordination.v1.Lease": ("coordination.k8s.io", "v1", "Lease"),
                "io.k8s.api.autoscaling.v1.Scale": ("autoscaling", "v1", "Scale"),
                "io.k8s.api.core.v1.Binding": ("", "v1", "Binding")}
    for name, (group, version, kind) in expected.items():
        assert DEFINITIONS[name]["x-kubernetes-group-version-kind"] == [
            {"group": group, "kind": kind, "version": version}]
        assert {"apiVersion", "kind", "metadata"} <= set(DEFINITIONS[name]["properties"])


# --- coverage against the official Python client's models ----------------------------------------

_CLIENT_ROOTS = ("V1Pod", "V1Deployment", "V1ReplicaSet", "V1Node", "V1Service", "V1Endpoints", "CoreV1Event",
                 "V1ConfigMap", "V1Lease", "V1Namespace", "V1Scale", "V1Binding", "V1Status", "V1DeleteOptions")
_CLIENT_TYPES = {"str": {"string", "Quantity"}, "int": {"integer"}, "bool": {"boolean"}, "float": {"number"},
                 "datetime": {"Time", "MicroTime"}, "object": {"IntOrString", "FieldsV1", "Patch", "object"}}


def _our_name(client_name: str) -> str | None:
    short = re.sub(r"^(CoreV1|V1)", "", client_name)
    matches = [n for n in DEFINITIONS if n.endswith("." + short)]
    if len(matches) > 1:  # a name two groups use (Event: core/v1 and events.k8s.io/v1): CoreV1Event is core's
        matches = [n for n in matches if n.startswith(("io.k8s.api.core.v1.", "io.k8s.apimachinery."))]
    return matches[0] if len(matches) == 1 else None


def _free(schema) -> bool:
    items = schema.get("items") or {}
    return bool(schema.get("x-kubernetes-preserve-unknown-fields") or items.get("x-kubernetes-preserve-unknown-fields"))


def _our_kind(schema) -> set[str]:
    if "allOf" in schema:
        return {schema["allOf"][0]["$ref"].rsplit(".", 1)[-1]}
    return {schema.get("type", "")}


def test_every_field_the_python_client_knows_is_declared():
    models = pytest.importorskip("kubernetes.client.models")
    todo, seen, checked = list(_CLIENT_ROOTS), set(), 0
    while todo:
        client_name = todo.pop()
        if client_name in seen:
            continue
        seen.add(client_name)
        cls = getattr(models, client_name)
        ours = DEFINITIONS[_our_name(client_name)]
        if ours.get("x-kubernetes-preserve-unknown-fields"):
            continue
        checked += 1
        for attr, client_type in cls.openapi_types.items():
            field = cls.attribute_map[attr]
            assert field in ours["properties"], f"{client_name}.{field}"
            schema = ours["properties"][field]
            nested = re.findall(r"((?:CoreV1|V1)\w+)", client_type)
            if not _free(schema):
                todo += nested
            if client_type.startswith("List["):
                assert schema["type"] == "array", f"{client_name}.{field}"
            elif client_type.startswith("Dict["):
                assert schema["type"] == "object", f"{client_name}.{field}"
            elif nested:
                assert _our_kind(schema) == {re.sub(r"^(CoreV1|V1)", "", nested[0])} or _free(schema), \
                    f"{client_name}.{field}"
            else:
                assert _our_kind(schema) & _CLIENT_TYPES[client_type], f"{client_name}.{field}: {client_type}"
    assert checked > 150
