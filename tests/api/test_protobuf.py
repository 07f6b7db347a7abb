"""Protobuf request bodies (what kubectl's imperative commands POST) decode to their JSON shape.

Bodies come from three places: genuine kubectl 1.32 captures saved under fixtures/protobuf/ (each
with the `--dry-run=client -o json` rendering of the same command as the expected dict), a small
encoder below that writes what Go's generated code writes (the tables read backwards), and random
bytes for the error paths. The e2e test re-captures the fixtures through a recording proxy in
front of a real hub (`KK_UPDATE_PROTOBUF_FIXTURES=1` rewrites them).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from control import config
from control.api.protobuf import (
    KINDS, MAGIC, TABLES, ProtobufError, ProtobufUnsupported, decode_kubernetes_protobuf, supported_kinds,
)
from control.api.protobuf.decoder import MAX_DEPTH, decode_message
from control.api.protobuf.schema import SCALARS, Field, compile_tables

FIXTURES = Path(__file__).parent / "fixtures" / "protobuf"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


# --- a test-side encoder: what Go's generated Marshal writes, driven by the same tables ---------

def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


def vi(number: int, value: int) -> bytes:
    return tag(number, 0) + varint(value)


def flat_names(message: str) -> set[str]:
    names: set[str] = set()
    for field in TABLES[message].values():
        names |= flat_names(field.type) if field.inline else {field.name}
    return names


def encode_time(value: str | None, micro: bool = False) -> bytes:
    if value is None:
        return b""  # Go writes a zero time as an empty message
    moment = dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")
    delta = moment.replace(tzinfo=dt.timezone.utc) - EPOCH
    return vi(1, delta.days * 86400 + delta.seconds) + vi(2, delta.microseconds * 1000)


def encode_value(type_: str, number: int, value: Any) -> bytes:
    if type_ == "str":
        return ld(number, value.encode())
    if type_ == "int":
        return vi(number, value)
    if type_ == "bool":
        return vi(number, int(value))
    if type_ == "bytes":
        return ld(number, base64.b64decode(value))
    if type_ in ("Time", "MicroTime"):
        return ld(number, encode_time(value, micro=type_ == "MicroTime"))
    if type_ == "Quantity":
        return ld(number, ld(1, value.encode()))
    if type_ == "IntOrString":
        inner = vi(1, 1) + vi(2, 0) + ld(3, value.encode()) if isinstance(value, str) else \
            vi(1, 0) + vi(2, value) + ld(3, b"")
        return ld(number, inner)
    if type_ in ("FieldsV1", "RawExtension"):
        return ld(number, b"" if value is None else ld(1, json.dumps(value).encode()))
    return ld(number, encode(type_, value))


def encode(message: str, obj: dict[str, Any], packed: bool = False) -> bytes:
    out = b""
    for field in sorted(TABLES[message].values(), key=lambda f: f.number):
        if field.inline:  # a Go embedded struct is not a pointer: always written
            out += ld(field.number, encode(field.type, {k: v for k, v in obj.items() if k in flat_names(field.type)}))
        elif field.name not in obj:
            continue
        elif field.mapped:
            for key, item in obj[field.name].items():
                out += ld(field.number, ld(1, key.encode()) + encode_value(field.type, 2, item))
        elif field.repeated and packed and field.type in ("int", "bool"):
            out += ld(field.number, b"".join(varint(int(v)) for v in obj[field.name]))
        elif field.repeated:
            out += b"".join(encode_value(field.type, field.number, v) for v in obj[field.name])
        else:
            out += encode_value(field.type, field.number, obj[field.name])
    return out


def envelope(api_version: str, kind: str, raw: bytes, encoding: str = "") -> bytes:
    return MAGIC + ld(1, ld(1, api_version.encode()) + ld(2, kind.encode())) + ld(2, raw) + \
        ld(3, encoding.encode()) + ld(4, b"")


def body(api_version: str, kind: str, obj: dict[str, Any], **kw: Any) -> bytes:
    return envelope(api_version, kind, encode(KINDS[(api_version, kind)], obj, **kw))


# --- genuine kubectl bodies ---------------------------------------------------------------------

def fixture_names() -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.pb") if (FIXTURES / f"{p.stem}.json").exists())


@pytest.mark.parametrize("name", fixture_names())
def test_genuine_kubectl_body_decodes_to_its_json_form(name):
    got = decode_kubernetes_protobuf((FIXTURES / f"{name}.pb").read_bytes())
    assert got == json.loads((FIXTURES / f"{name}.json").read_text())


def test_the_genuine_fixtures_cover_the_imperative_commands():
    assert {"namespace", "configmap", "deployment", "service-clusterip", "hpa-v1", "job", "cronjob"} <= \
        set(fixture_names())


def test_genuine_deployment_body_in_detail():
    got = decode_kubernetes_protobuf((FIXTURES / "deployment.pb").read_bytes())
    assert got["apiVersion"] == "apps/v1" and got["kind"] == "Deployment"
    assert got["metadata"] == {"name": "web", "labels": {"app": "web"}, "creationTimestamp": None}
    assert got["spec"]["replicas"] == 2
    container = got["spec"]["template"]["spec"]["containers"][0]
    assert container == {"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}], "resources": {}}
    assert got["spec"]["strategy"] == {} and got["status"] == {}


def test_genuine_service_body_has_int_or_string_target_port():
    got = decode_kubernetes_protobuf((FIXTURES / "service-clusterip.pb").read_bytes())
    assert got["spec"]["ports"] == [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}]
    assert got["spec"]["type"] == "ClusterIP"


def test_genuine_zero_replicas_survive_because_replicas_is_a_pointer():
    got = decode_kubernetes_protobuf((FIXTURES / "deployment-zero.pb").read_bytes())
    assert got["spec"]["replicas"] == 0


def test_genuine_configmap_keeps_empty_values_and_base64s_binary_data():
    got = decode_kubernetes_protobuf((FIXTURES / "configmap.pb").read_bytes())
    assert got["data"] == {"a": "b", "empty": ""}
    assert base64.b64decode(got["binaryData"]["bin"]) == b"hello\xff\x00\x01bin"


def test_a_body_of_an_unsupported_kind_names_it():
    with pytest.raises(ProtobufUnsupported, match=r"^protobuf is not supported for policy/v1beta1 "
                                                  r"PodDisruptionBudget; send application/json$"):
        decode_kubernetes_protobuf(envelope("policy/v1beta1", "PodDisruptionBudget", b""))


def test_genuine_pdb_body_keeps_its_int_or_string_and_zero_status_counts():
    got = decode_kubernetes_protobuf((FIXTURES / "poddisruptionbudget.pb").read_bytes())
    assert got["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}
    assert got["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


def test_an_eviction_carries_its_delete_options():
    options = encode("DeleteOptions", {"gracePeriodSeconds": 0, "preconditions": {"uid": "u-1"}})
    raw = ld(1, encode("ObjectMeta", {"name": "web-1", "namespace": "default"})) + ld(2, options)
    assert decode_kubernetes_protobuf(envelope("policy/v1", "Eviction", raw)) == {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-1", "namespace": "default"},
        "deleteOptions": {"gracePeriodSeconds": 0, "preconditions": {"uid": "u-1"}}}


def test_genuine_job_bodies_keep_the_command_and_the_restart_policy_kubectl_chose():
    job = decode_kubernetes_protobuf((FIXTURES / "job-command.pb").read_bytes())
    assert job["apiVersion"] == "batch/v1" and job["kind"] == "Job"
    pod = job["spec"]["template"]["spec"]
    assert pod["containers"][0]["command"] == ["echo", "hi"] and pod["restartPolicy"] == "Never"
    cron = decode_kubernetes_protobuf((FIXTURES / "cronjob.pb").read_bytes())
    assert cron["spec"]["schedule"] == "*/1 * * * *"
    assert cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_the_genuine_fixtures_cover_drains_delete_options():
    assert {"deleteoptions-drain", "deleteoptions-drain-grace-0", "deleteoptions-drain-grace-30"} <= set(fixture_names())


PODS = "/api/v1/namespaces/default/pods"


def _bound_pod(name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "busybox"}]}})


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("name, gone_at_once", [
    ("deleteoptions-drain", False), ("deleteoptions-drain-grace-30", False), ("deleteoptions-drain-grace-0", True),
])
def test_a_delete_with_drains_protobuf_body_is_honoured(api, name, gone_at_once):
    assert api.post(PODS, _bound_pod("p")).status_code == 201
    answer = api.delete(f"{PODS}/p", (FIXTURES / f"{name}.pb").read_bytes(),
                        content_type="application/vnd.kubernetes.protobuf")
    assert answer.status_code == 200, answer.content
    after = api.get(f"{PODS}/p")
    if gone_at_once:
        assert after.status_code == 404
    else:  # a bound pod waits for its kubelet, with the grace period the body asked for (30 s by default)
        assert json.loads(after.content)["metadata"]["deletionGracePeriodSeconds"] == 30


@pytest.mark.django_db(transaction=True)
def test_a_delete_with_a_malformed_protobuf_body_is_a_400_status(api):
    assert api.post(PODS, _bound_pod("p")).status_code == 201
    answer = api.delete(f"{PODS}/p", b"k8s\x00\x0a\xff", content_type="application/vnd.kubernetes.protobuf")
    status = json.loads(answer.content)
    assert answer.status_code == 400 and status["kind"] == "Status" and status["reason"] == "BadRequest"
    assert status["message"].startswith("the body of the request could not be decoded: protobuf: ")
    assert api.get(f"{PODS}/p").status_code == 200


# --- Go's zero-value rules ----------------------------------------------------------------------

def test_zero_scalars_go_writes_are_dropped_unless_pointer_or_always_shown():
    meta = ld(1, b"x") + ld(2, b"") + ld(3, b"") + vi(7, 0) + ld(8, b"")
    spec = (vi(1, 0) + ld(3, b"") + vi(5, 0) + vi(6, 0) + vi(7, 0)  # replicas=0 (pointer), minReadySeconds=0
            + vi(9, 0))                                            # progressDeadlineSeconds=0 (pointer)
    got = decode_kubernetes_protobuf(envelope("apps/v1", "Deployment", ld(1, meta) + ld(2, spec) + ld(3, b"")))
    assert got == {"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "x", "creationTimestamp": None},
                   "spec": {"replicas": 0, "template": {}, "revisionHistoryLimit": 0, "progressDeadlineSeconds": 0},
                   "status": {}}


@pytest.mark.parametrize("message,field,value", [
    ("PodSpec", "terminationGracePeriodSeconds", 0),
    ("PodSpec", "automountServiceAccountToken", False),
    ("PodSpec", "enableServiceLinks", False),
    ("SecurityContext", "runAsUser", 0),
    ("SecurityContext", "privileged", False),
    ("PodSecurityContext", "fsGroup", 0),
    ("ConfigMap", "immutable", False),
    ("ConfigMapKeySelector", "optional", False),
    ("SecretVolumeSource", "defaultMode", 0),
    ("OwnerReference", "controller", False),
    ("DeleteOptions", "gracePeriodSeconds", 0),
    ("ServiceSpec", "allocateLoadBalancerNodePorts", False),
    ("Toleration", "tolerationSeconds", 0),
    ("ContainerStatus", "ready", False),
    ("ContainerStatus", "restartCount", 0),
    ("ContainerStateTerminated", "exitCode", 0),
    ("HorizontalPodAutoscalerStatusV1", "desiredReplicas", 0),
])
def test_zero_values_that_mean_something_are_kept(message, field, value):
    assert decode_message(TABLES, message, memoryview(encode(message, {field: value}))) == {field: value}


@pytest.mark.parametrize("message,field,value", [
    ("ObjectMeta", "generateName", ""), ("ObjectMeta", "generation", 0), ("Container", "stdin", False),
    ("ContainerPort", "hostPort", 0), ("ServiceSpec", "clusterIP", ""), ("PodSpec", "hostNetwork", False),
])
def test_zero_values_omitempty_hides_are_dropped(message, field, value):
    assert decode_message(TABLES, message, memoryview(encode(message, {field: value}))) == {}


def test_empty_struct_fields_come_back_as_empty_objects_like_go_json():
    got = decode_message(TABLES, "Container", memoryview(ld(1, b"c") + ld(8, b"")))
    assert got == {"name": "c", "resources": {}}


# --- a rich Pod, every kind of field --------------------------------------------------------------

RICH_POD = {
    "metadata": {
        "name": "web-1", "namespace": "shop", "uid": "1234", "resourceVersion": "42", "generation": 3,
        "creationTimestamp": "2025-01-02T03:04:05Z", "deletionTimestamp": "2025-01-02T03:05:05Z",
        "deletionGracePeriodSeconds": 0, "labels": {"app": "web", "tier": ""},
        "annotations": {"note": "x"}, "finalizers": ["a/b"],
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u1",
                             "controller": True, "blockOwnerDeletion": False}],
        "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                           "time": "2025-01-02T03:04:05Z", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}],
    },
    "spec": {
        "volumes": [
            {"name": "cfg", "configMap": {"name": "cfg", "items": [{"key": "a", "path": "a.txt", "mode": 420}],
                                          "defaultMode": 0, "optional": False}},
            {"name": "scratch", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
            {"name": "tok", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
            ]}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}},
            {"name": "host", "hostPath": {"path": "/var/log", "type": ""}},
        ],
        "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "true"],
                            "restartPolicy": "Always"}],
        "containers": [{
            "name": "app", "image": "nginx:1.27", "args": ["--port", "80"], "workingDir": "/srv",
            "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "A", "value": "1"},
                    {"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                    {"name": "K", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k", "optional": True}}},
                    {"name": "M", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}}],
            "envFrom": [{"prefix": "P_", "secretRef": {"name": "s", "optional": False}}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "0"}},
            "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg", "readOnly": True}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP",
                                          "httpHeaders": [{"name": "X", "value": "y"}]},
                              "initialDelaySeconds": 5, "periodSeconds": 10, "terminationGracePeriodSeconds": 0},
            "readinessProbe": {"tcpSocket": {"port": 80}, "failureThreshold": 3},
            "startupProbe": {"exec": {"command": ["cat", "/tmp/ok"]}},
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}}, "postStart": {"exec": {"command": ["true"]}}},
            "securityContext": {"runAsUser": 0, "runAsNonRoot": False, "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File", "tty": True, "stdin": True,
        }],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "activeDeadlineSeconds": 600,
        "dnsPolicy": "ClusterFirst", "nodeSelector": {"disk": "ssd"}, "serviceAccountName": "default",
        "automountServiceAccountToken": False, "nodeName": "node-1", "hostNetwork": True,
        "securityContext": {"runAsGroup": 1000, "fsGroup": 2000, "supplementalGroups": [1, 2, 3],
                            "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]},
        "imagePullSecrets": [{"name": "regcred"}], "hostname": "web", "subdomain": "web",
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchFields": [{"key": "metadata.name", "operator": "NotIn",
                                                                  "values": ["n2"]}]}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                                    "topologyKey": "kubernetes.io/hostname"}}]},
        },
        "schedulerName": "default-scheduler",
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}],
        "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["db"]}], "priorityClassName": "high", "priority": 0,
        "dnsConfig": {"nameservers": ["1.1.1.1"], "options": [{"name": "ndots", "value": "2"}]},
        "readinessGates": [{"conditionType": "x/ready"}], "enableServiceLinks": False,
        "preemptionPolicy": "Never", "overhead": {"cpu": "10m"},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
                                       "minDomains": 2}],
        "os": {"name": "linux"}, "hostUsers": False, "schedulingGates": [{"name": "wait"}],
    },
    "status": {
        "phase": "Running", "hostIP": "10.0.0.5", "podIP": "10.1.0.7", "podIPs": [{"ip": "10.1.0.7"}],
        "startTime": "2025-01-02T03:04:06Z", "qosClass": "Burstable",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-02T03:04:10Z",
                        "lastProbeTime": None}],
        "containerStatuses": [{"name": "app", "ready": False, "restartCount": 0, "image": "nginx:1.27",
                               "imageID": "", "started": False,
                               "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                        "finishedAt": "2025-01-02T03:05:00Z"}}}],
    },
}


@pytest.mark.parametrize("packed", [False, True])
def test_rich_pod_round_trips(packed):
    got = decode_kubernetes_protobuf(body("v1", "Pod", RICH_POD, packed=packed))
    assert got == {"apiVersion": "v1", "kind": "Pod", **RICH_POD}


def test_service_lease_hpa_v2_and_delete_options_round_trip():
    service = {"metadata": {"name": "lb"}, "spec": {
        "type": "LoadBalancer", "selector": {"app": "web"}, "externalTrafficPolicy": "Local",
        "ports": [{"name": "https", "port": 443, "targetPort": "https", "nodePort": 30443, "appProtocol": "h2"}],
        "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}},
        "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"], "allocateLoadBalancerNodePorts": False},
        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ipMode": "VIP"}]},
                   "conditions": [{"type": "Ok", "status": "True", "lastTransitionTime": None,
                                   "reason": "", "message": ""}]}}
    lease = {"metadata": {"name": "ctrl", "namespace": "kube-system"},
             "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15, "leaseTransitions": 0,
                      "acquireTime": "2025-01-02T03:04:05.123456Z", "renewTime": "2025-01-02T03:04:06.000001Z"}}
    hpa = {"metadata": {"name": "web"}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 5,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                                "averageUtilization": 80}}}],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                                   "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}}
    for api_version, kind, obj in [("v1", "Service", service), ("coordination.k8s.io/v1", "Lease", lease),
                                   ("autoscaling/v2", "HorizontalPodAutoscaler", hpa)]:
        assert decode_kubernetes_protobuf(body(api_version, kind, obj)) == \
            {"apiVersion": api_version, "kind": kind, **obj}
    options = {"gracePeriodSeconds": 0, "propagationPolicy": "Foreground", "dryRun": ["All"],
               "preconditions": {"uid": "u", "resourceVersion": "7"}}
    raw = encode("DeleteOptions", options)
    for api_version in ("v1", "meta.k8s.io/v1", "apps/v1"):
        assert decode_kubernetes_protobuf(envelope(api_version, "DeleteOptions", raw)) == \
            {"apiVersion": api_version, "kind": "DeleteOptions", **options}



def test_a_replication_controller_round_trips_with_its_map_selector_and_zero_replicas():
    rc = {"metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
          "spec": {"replicas": 0, "minReadySeconds": 5, "selector": {"app": "nginx"},
                   "template": {"metadata": {"labels": {"app": "nginx"}},
                                "spec": {"containers": [{"name": "nginx", "image": "nginx",
                                                         "ports": [{"containerPort": 80}]}]}}},
          "status": {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 2,
                     "observedGeneration": 4}}
    assert KINDS[("v1", "ReplicationController")] == "ReplicationController"
    got = decode_kubernetes_protobuf(body("v1", "ReplicationController", rc))
    assert got["spec"] == rc["spec"]  # replicas is a pointer: an explicit 0 survives
    assert got["status"] == rc["status"] and got["metadata"]["labels"] == {"app": "nginx"}

# --- well-known types --------------------------------------------------------------------------

@pytest.mark.parametrize("payload,expected", [
    (b"", None),
    (vi(1, 0), "1970-01-01T00:00:00Z"),
    (vi(1, 1735787045) + vi(2, 999_999_999), "2025-01-02T03:04:05Z"),
    (vi(1, -1), "1969-12-31T23:59:59Z"),
    (vi(1, -62135596800), None),                      # Go's zero time.Time
    (vi(1, -62135596800 + 1), "0001-01-01T00:00:01Z"),
    (vi(1, 253402300799), "9999-12-31T23:59:59Z"),
    (vi(1, 0) + vi(2, 1_500_000_000), "1970-01-01T00:00:01Z"),  # nanos past a second carry over
    (vi(99, 5) + vi(1, 60), "1970-01-01T00:01:00Z"),  # unknown field skipped
])
def test_time(payload, expected):
    assert decode_message(TABLES, "ObjectMeta", memoryview(ld(8, payload))) == {"creationTimestamp": expected}


def test_micro_time_keeps_microseconds():
    got = decode_message(TABLES, "LeaseSpec", memoryview(ld(3, vi(1, 1) + vi(2, 1000)) + ld(4, b"")))
    assert got == {"acquireTime": "1970-01-01T00:00:01.000001Z", "renewTime": None}


@pytest.mark.parametrize("seconds", [253402300800, -62135596801, -(1 << 63), (1 << 63) - 1])
def test_times_go_cannot_render_are_refused(seconds):
    with pytest.raises(ProtobufError, match="outside years 1-9999"):
        decode_message(TABLES, "ObjectMeta", memoryview(ld(8, vi(1, seconds))))


@pytest.mark.parametrize("payload,expected", [
    (vi(1, 0) + vi(2, 8080), 8080), (vi(2, -1), -1), (vi(1, 1) + ld(3, b"http"), "http"),
    (b"", 0), (vi(1, 1), ""), (vi(1, 0) + vi(2, 1 << 32 | 7), 7),
])
def test_int_or_string(payload, expected):
    assert decode_message(TABLES, "TCPSocketAction", memoryview(ld(1, payload))) == {"port": expected}


def test_int_or_string_of_unknown_type_is_refused():
    with pytest.raises(ProtobufError, match="IntOrString type 2"):
        decode_message(TABLES, "TCPSocketAction", memoryview(ld(1, vi(1, 2))))


def test_quantity_map_and_missing_map_parts():
    raw = ld(1, ld(1, b"cpu") + ld(2, ld(1, b"250m"))) + ld(1, ld(1, b"memory")) + ld(2, ld(2, ld(1, b"1Gi")))
    assert decode_message(TABLES, "ResourceRequirements", memoryview(raw)) == \
        {"limits": {"cpu": "250m", "memory": "0"}, "requests": {"": "1Gi"}}


def test_negative_ints_use_ten_byte_varints():
    assert decode_message(TABLES, "PodSecurityContext", memoryview(vi(2, -5))) == {"runAsUser": -5}
    assert len(varint(-5)) == 10


def test_managed_fields_raw_json_must_be_json():
    raw = ld(17, ld(7, ld(1, b"{not json")))
    with pytest.raises(ProtobufError, match="not JSON"):
        decode_message(TABLES, "ObjectMeta", memoryview(raw))
    raw = ld(17, ld(7, ld(1, b"NaN")))
    with pytest.raises(ProtobufError, match="not JSON"):
        decode_message(TABLES, "ObjectMeta", memoryview(raw))


def test_invalid_utf8_becomes_replacement_characters_as_in_go_json():
    assert decode_message(TABLES, "ObjectMeta", memoryview(ld(1, b"a\xffb"))) == {"name": "a\ufffdb"}


# --- protobuf rules: unknown fields, repeats, merging ---------------------------------------------

def test_unknown_fields_of_every_wire_type_are_skipped():
    unknown = vi(900, 1) + tag(901, 1) + b"\x00" * 8 + ld(902, b"junk") + tag(903, 5) + b"\x00" * 4
    meta = unknown + ld(1, b"x") + unknown
    got = decode_kubernetes_protobuf(envelope("v1", "Namespace", ld(1, meta) + unknown + ld(2, b"")))
    assert got == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "spec": {}}


def test_a_message_field_seen_twice_is_merged_and_a_scalar_keeps_the_last_value():
    label = lambda k, v: ld(11, ld(1, k) + ld(2, v))  # noqa: E731
    raw = ld(1, ld(1, b"a") + label(b"x", b"1")) + ld(1, ld(1, b"b") + label(b"y", b"2"))
    got = decode_message(TABLES, "ConfigMap", memoryview(raw))
    assert got == {"metadata": {"name": "b", "labels": {"x": "1", "y": "2"}}}
    assert decode_message(TABLES, "ObjectMeta", memoryview(ld(1, b"n") + ld(1, b""))) == {}


def test_an_inlined_struct_seen_twice_is_merged():
    raw = ld(1, b"v") + ld(2, ld(19, ld(1, ld(1, b"cfg")))) + ld(2, ld(19, vi(3, 420)))
    assert decode_message(TABLES, "Volume", memoryview(raw)) == \
        {"name": "v", "configMap": {"name": "cfg", "defaultMode": 420}}


# --- errors ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("data,message", [
    (b"", "must start with"),
    (b"{\"kind\": \"Namespace\"}", "must start with"),
    (b"k8s", "must start with"),
    (MAGIC + ld(2, b""), "names no kind"),
    (MAGIC + ld(1, ld(2, b"Namespace")), r"^protobuf is not supported for \(no apiVersion\) Namespace"),
    (envelope("v1", "Gizmo", b""), r"^protobuf is not supported for v1 Gizmo; send application/json$"),
    (envelope("apps/v2", "Deployment", b""), "not supported for apps/v2 Deployment"),
    (envelope("v1", "Namespace", b"", encoding="gzip"), "content encoding 'gzip'"),
    (MAGIC + b"\x0a\x05\x0a\x02v1", "truncated data"),
    (MAGIC + vi(1, 5), "envelope field 1: expected length-delimited"),
    (MAGIC + ld(1, vi(2, 1)), "typeMeta field 2: expected length-delimited"),
    (envelope("v1", "Namespace", vi(1, 3)), r"Namespace.metadata: expected length-delimited wire type, got varint"),
    (envelope("v1", "Namespace", ld(1, vi(1, 3))), "ObjectMeta.name: expected length-delimited"),
    (envelope("v1", "Namespace", ld(1, ld(7, b"1"))), "ObjectMeta.generation: expected varint"),
    (envelope("v1", "Namespace", tag(5, 3)), "start-group wire type"),
    (envelope("v1", "Namespace", tag(5, 6) + b"\x00"), "wire type 6"),
    (envelope("v1", "Namespace", b"\x00\x00"), "invalid field number 0"),
    (envelope("v1", "Namespace", tag(1, 0) + b"\xff" * 11), "longer than 10 bytes"),
    (envelope("v1", "Namespace", tag(1, 0) + b"\xff\xff"), "truncated data"),
    (envelope("v1", "Namespace", tag(3, 1) + b"\x00\x00"), "needs 8 bytes"),
    (envelope("v1", "Namespace", ld(1, tag(8, 2) + varint(50))), "declares 50 bytes"),
])
def test_bad_bodies_raise_a_clear_protobuf_error(data, message):
    with pytest.raises(ProtobufError, match=message):
        decode_kubernetes_protobuf(data)


def test_protobuf_error_is_a_value_error():
    assert issubclass(ProtobufError, ValueError) and issubclass(ProtobufUnsupported, ProtobufError)


@pytest.mark.parametrize("data,unsupported", [
    (envelope("v1", "Gizmo", b""), True), (envelope("v1", "Namespace", b"", encoding="gzip"), True),
    (envelope("v1", "Namespace", b"\x00"), False), (b"{}", False), (MAGIC + ld(2, b""), False),
])
def test_unsupported_kinds_are_told_apart_from_malformed_bodies(data, unsupported):
    with pytest.raises(ProtobufError) as caught:
        decode_kubernetes_protobuf(data)
    assert isinstance(caught.value, ProtobufUnsupported) is unsupported


def test_nesting_is_bounded_even_for_a_recursive_table():
    tables = compile_tables({"Tree": "1 child Tree, 2 name str"})
    data = ld(2, b"leaf")
    for _ in range(MAX_DEPTH + 5):
        data = ld(1, data)
    with pytest.raises(ProtobufError, match="nested more than"):
        decode_message(tables, "Tree", memoryview(data))
    shallow = ld(1, ld(1, ld(2, b"x")))
    assert decode_message(tables, "Tree", memoryview(shallow)) == {"child": {"child": {"name": "x"}}}


@pytest.mark.parametrize("source,message", [
    ({"A": "1 x str, 1 y str"}, "declared twice"),
    ({"A": "1 x str, 2 x int"}, "declared twice"),
    ({"A": "1 x Missing"}, "unknown message Missing"),
    ({"A": "one x str"}, "cannot parse"),
    ({"A": "1 x {[]str}"}, "cannot parse"),
    ({"A": "1 x {str"}, "bad type"),
    ({"A": "1 ...str"}, "only messages can be inlined"),
    ({"A": "1 name str, 2 ...B", "B": "1 name str"}, "clashes"),
])
def test_malformed_tables_fail_at_compile_time(source, message):
    with pytest.raises(ValueError, match=message):
        compile_tables(source)


# --- the tables themselves ---------------------------------------------------------------------

def test_every_supported_kind_has_a_table_with_metadata():
    for (api_version, kind), message in KINDS.items():
        assert TABLES[message][1].name == "metadata" and TABLES[message][1].type == "ObjectMeta", kind
    assert ("v1", "Namespace") in supported_kinds() and ("*", "DeleteOptions") in supported_kinds()
    assert {("v1", k) for k in ("Namespace", "ConfigMap", "Service", "Pod", "Endpoints", "Node", "Event")} <= set(KINDS)
    assert {("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("autoscaling/v1", "Scale"),
            ("autoscaling/v1", "HorizontalPodAutoscaler"), ("autoscaling/v2", "HorizontalPodAutoscaler"),
            ("coordination.k8s.io/v1", "Lease")} <= set(KINDS)


def test_object_meta_pod_spec_and_container_field_numbers():
    numbers = lambda m: {f.name: f.number for f in TABLES[m].values()}  # noqa: E731
    assert numbers("ObjectMeta") == {
        "name": 1, "generateName": 2, "namespace": 3, "selfLink": 4, "uid": 5, "resourceVersion": 6,
        "generation": 7, "creationTimestamp": 8, "deletionTimestamp": 9, "deletionGracePeriodSeconds": 10,
        "labels": 11, "annotations": 12, "ownerReferences": 13, "finalizers": 14, "managedFields": 17}
    assert numbers("Container")["envFrom"] == 19 and numbers("Container")["startupProbe"] == 22
    assert numbers("PodSpec")["initContainers"] == 20 and numbers("PodSpec")["automountServiceAccountToken"] == 21
    assert numbers("DeploymentSpec") == {"replicas": 1, "selector": 2, "template": 3, "strategy": 4,
                                         "minReadySeconds": 5, "revisionHistoryLimit": 6, "paused": 7,
                                         "progressDeadlineSeconds": 9, "podReplacementPolicy": 10}


# The Go binary of kubectl carries every generated.proto as a gzipped FileDescriptorProto, with the
# gogoproto options: `nullable=false` (extension 65001) marks a field Go holds by value.
_GOGO_NULLABLE = 65001
_DESCRIPTOR_TYPES = {3: "int", 5: "int", 8: "bool", 9: "str", 12: "bytes", 11: "message"}
_WELL_KNOWN_NAMES = {"Time": "Time", "MicroTime": "MicroTime", "Quantity": "Quantity",
                     "IntOrString": "IntOrString", "FieldsV1": "FieldsV1", "RawExtension": "RawExtension"}


def kubectl_descriptors() -> dict[str, list[dict[str, Any]]]:
    """Full message name -> its fields, read from the kubectl binary."""
    import re
    import zlib

    from control.api.protobuf.wire import fields

    def text(v: Any) -> str:
        return bytes(v).decode()

    def field_of(data: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"nullable": True, "type_name": ""}
        for n, _, v in fields(data):
            if n in (1, 6):
                out["name" if n == 1 else "type_name"] = text(v)
            elif n in (3, 4, 5):
                out[{3: "number", 4: "label", 5: "type"}[n]] = v
            elif n == 8:
                out["nullable"] = all(not (on == _GOGO_NULLABLE and ov == 0) for on, _, ov in fields(v))
        return out

    def messages(data: Any, prefix: str, into: dict[str, list[dict[str, Any]]]) -> None:
        name, found, nested = "", [], []
        for n, _, v in fields(data):
            if n == 1:
                name = text(v)
            elif n == 2:
                found.append(field_of(v))
            elif n == 3:
                nested.append(v)
        into[f"{prefix}.{name}"] = found
        for inner in nested:
            messages(inner, f"{prefix}.{name}", into)

    binary = Path(shutil.which("kubectl") or "/usr/bin/kubectl").resolve().read_bytes()
    out: dict[str, list[dict[str, Any]]] = {}
    for match in re.finditer(rb"\x1f\x8b\x08\x00\x00\x00\x00\x00", binary):
        try:
            proto = memoryview(zlib.decompressobj(31).decompress(binary[match.start():match.start() + 4_000_000]))
        except zlib.error:
            continue
        if b"k8s.io" not in bytes(proto[:300]):
            continue
        package = next((text(v) for n, _, v in fields(proto) if n == 2), "")
        for n, _, v in fields(proto):
            if n == 4:
                messages(v, package, out)
    return out


def descriptor_name(message: str) -> list[str]:
    if message.startswith("HorizontalPodAutoscaler") and message.endswith("V1"):
        return [f"k8s.io.api.autoscaling.v1.{message[:-2]}"]
    if message in ("Scale", "ScaleSpec", "ScaleStatus"):
        return [f"k8s.io.api.autoscaling.v1.{message}"]
    return [f"{package}.{message}" for package in (
        "k8s.io.apimachinery.pkg.apis.meta.v1", "k8s.io.api.core.v1", "k8s.io.api.apps.v1",
        "k8s.io.api.autoscaling.v2", "k8s.io.api.coordination.v1", "k8s.io.api.batch.v1",
        "k8s.io.api.policy.v1")]


@pytest.mark.skipif(not shutil.which("kubectl") and not Path("/usr/bin/kubectl").exists(), reason="no kubectl")
def test_tables_agree_with_the_descriptors_compiled_into_kubectl():
    descriptors = kubectl_descriptors()
    if not descriptors:
        pytest.skip("this kubectl carries no protobuf descriptors")
    problems, checked = [], 0
    for message, table in TABLES.items():
        full = next((name for name in descriptor_name(message) if name in descriptors), None)
        if full is None:
            continue  # a message newer than this kubectl
        checked += 1
        by_number = {d["number"]: d for d in descriptors[full]}
        problems += [f"{message}: #{n} {d['name']} is missing" for n, d in by_number.items() if n not in table]
        for number, field in table.items():
            d = by_number.get(number)
            if d is None:
                continue  # a field newer than this kubectl
            if field.mapped:
                entry = {e["number"]: e for e in descriptors.get(d["type_name"].lstrip("."), [])}
                d, repeated = {**entry.get(2, {}), "name": d["name"]}, False
            else:
                repeated = d.get("label") == 3
            want = _DESCRIPTOR_TYPES.get(d.get("type"), "?")
            if want == "message":
                short = d.get("type_name", "").rsplit(".", 1)[-1]
                ok = short in _WELL_KNOWN_NAMES if field.type in _WELL_KNOWN_NAMES else \
                    short == field.type.removesuffix("V1")
            else:
                ok = want == field.type
            if not ok or repeated != field.repeated or (not field.inline and d["name"] != field.name):
                problems.append(f"{message} #{number}: {field} vs {d}")
            if field.type in SCALARS and not field.repeated and not field.mapped and field.pointer != d["nullable"]:
                problems.append(f"{message}.{field.name}: pointer mark is {field.pointer}, Go's is {d['nullable']}")
    assert checked > 200 and not problems, problems


def sample(field: Field, depth: int) -> Any:
    """A non-zero value of a field's type (deterministic), for the every-table round trip."""
    simple = {"str": "s", "int": -7, "bool": True, "bytes": "AAE=", "Time": "2001-02-03T04:05:06Z",
              "MicroTime": "2001-02-03T04:05:06.000007Z", "Quantity": "1Gi", "IntOrString": "p",
              "FieldsV1": {"f:a": {}}, "RawExtension": {"kind": "X"}}
    return simple[field.type] if field.type in simple else full_example(field.type, depth + 1)


def full_example(message: str, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if depth > 4:
        return out
    for field in TABLES[message].values():
        if field.inline:
            out.update(full_example(field.type, depth))
        elif field.mapped:
            out[field.name] = {"k": sample(field, depth)}
        elif field.repeated:
            out[field.name] = [sample(field, depth), sample(field, depth)]
        else:
            out[field.name] = sample(field, depth)
    return out


@pytest.mark.parametrize("message", sorted(TABLES))
def test_every_table_round_trips_a_fully_populated_message(message):
    obj = full_example(message)
    assert decode_message(TABLES, message, memoryview(encode(message, obj))) == obj


# --- hypothesis: round trips and arbitrary bytes --------------------------------------------------

def _times(micro: bool) -> st.SearchStrategy[str | None]:
    moments = st.datetimes(min_value=dt.datetime(1, 1, 1, 0, 0, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59))

    def render(m: dt.datetime) -> str:
        text = f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        return f"{text}.{m.microsecond:06d}Z" if micro else f"{text}Z"

    return st.none() | moments.map(render)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=8)


def value_strategy(field: Field, depth: int) -> st.SearchStrategy[Any]:
    keep = field.keeps_zero or field.repeated or field.mapped
    base: dict[str, st.SearchStrategy[Any]] = {
        "str": st.text(min_size=0 if keep else 1, max_size=8),
        "int": st.integers(-(1 << 63), (1 << 63) - 1).filter(lambda v: keep or v != 0),
        "bool": st.booleans() if keep else st.just(True),
        "bytes": st.binary(min_size=0 if keep else 1, max_size=8).map(lambda b: base64.b64encode(b).decode()),
        "Time": _times(False), "MicroTime": _times(True),
        "Quantity": st.text(min_size=1, max_size=6),
        "IntOrString": st.integers(-(1 << 31), (1 << 31) - 1) | st.text(max_size=6),
        "FieldsV1": st.none() | st.dictionaries(st.text(max_size=4), _JSON, max_size=3),
        "RawExtension": st.none() | st.dictionaries(st.text(max_size=4), _JSON, min_size=1, max_size=3),
    }
    return base[field.type] if field.type in base else message_strategy(field.type, depth + 1)


def message_strategy(message: str, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    if depth > 3:
        return st.just({})
    optional: dict[str, st.SearchStrategy[Any]] = {}
    inlined = []
    for field in TABLES[message].values():
        if field.inline:
            inlined.append(message_strategy(field.type, depth))
        elif field.mapped:
            optional[field.name] = st.dictionaries(st.text(max_size=5), value_strategy(field, depth),
                                                   min_size=1, max_size=2)
        elif field.repeated:
            optional[field.name] = st.lists(value_strategy(field, depth), min_size=1, max_size=2)
        else:
            optional[field.name] = value_strategy(field, depth)
    own = st.fixed_dictionaries({}, optional=optional)
    return st.tuples(own, *inlined).map(lambda parts: {k: v for part in parts for k, v in part.items()})


@st.composite
def message_and_object(draw):
    message = draw(st.sampled_from(sorted(TABLES)))
    return message, draw(message_strategy(message))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(message_and_object(), st.booleans())
def test_random_objects_of_any_message_round_trip(case, packed):
    message, obj = case
    assert decode_message(TABLES, message, memoryview(encode(message, obj, packed=packed))) == obj


def _decodes_or_refuses(data: bytes) -> None:
    try:
        result = decode_kubernetes_protobuf(data)
    except ProtobufError:
        return
    assert isinstance(result, dict) and "kind" in result
    json.dumps(result)  # always JSON-shaped


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_only_ever_raise_protobuf_error(data):
    _decodes_or_refuses(data)
    _decodes_or_refuses(MAGIC + data)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(KINDS)), st.binary(max_size=400))
def test_arbitrary_object_bytes_behind_a_valid_envelope_only_raise_protobuf_error(kind, raw):
    _decodes_or_refuses(envelope(*kind, raw))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([p.name for p in sorted(FIXTURES.glob("*.pb"))] or ["-"]), st.data())
def test_mutated_genuine_bodies_only_raise_protobuf_error(name, data):
    if name == "-":
        pytest.skip("no fixtures")
    original = bytearray((FIXTURES / name).read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(original)))
        action = data.draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        if action == "flip" and pos < len(original):
            original[pos] ^= data.draw(st.integers(1, 255))
        elif action == "insert":
            original[pos:pos] = data.draw(st.binary(min_size=1, max_size=4))
        elif action == "delete":
            del original[pos:pos + data.draw(st.integers(1, 4))]
        else:
            del original[pos:]
    _decodes_or_refuses(bytes(original))


def test_every_truncation_of_a_genuine_body_decodes_or_refuses():
    data = (FIXTURES / "deployment.pb").read_bytes()
    for end in range(len(data)):
        _decodes_or_refuses(data[:end])


# --- end to end: capture what kubectl really sends ----------------------------------------------

# (fixture name, kubectl arguments) - each POSTs one protobuf body.
COMMANDS = [
    ("namespace", ["create", "namespace", "team-a"]),
    ("configmap", ["create", "configmap", "cfg", "--from-literal=a=b", "--from-literal=empty=",
                   "--from-file=bin={binfile}"]),
    ("deployment", ["create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=80"]),
    ("deployment-zero", ["create", "deployment", "idle", "--image=nginx", "--replicas=0"]),
    ("service-clusterip", ["create", "service", "clusterip", "web", "--tcp=80:8080"]),
    ("service-headless", ["create", "service", "clusterip", "headless", "--clusterip=None"]),
    ("service-nodeport", ["create", "service", "nodeport", "np", "--tcp=80:8080", "--node-port=30080"]),
    ("service-loadbalancer", ["create", "service", "loadbalancer", "lb", "--tcp=443:8443"]),
    ("service-externalname", ["create", "service", "externalname", "ext", "--external-name=example.com"]),
    ("hpa-v1", ["autoscale", "deployment", "pre", "--min=2", "--max=5", "--cpu-percent=80"]),
    ("secret", ["create", "secret", "generic", "s1", "--from-literal=k=v"]),
    ("serviceaccount", ["create", "serviceaccount", "sa1"]),
    ("job", ["create", "job", "j1", "--image=busybox"]),
    ("job-command", ["create", "job", "hi", "--image=busybox", "--", "echo", "hi"]),
    ("cronjob", ["create", "cronjob", "cj", "--image=busybox", "--schedule=*/1 * * * *", "--", "date"]),
    ("poddisruptionbudget", ["create", "poddisruptionbudget", "pdb", "--selector=app=x", "--min-available=1"]),
]


@pytest.mark.e2e
def test_kubectl_protobuf_bodies_decode_like_its_own_json(tmp_path):
    from tests.conftest import KUBECTL, Hub

    if not shutil.which(KUBECTL):
        pytest.skip("kubectl is not installed")
    hub = Hub().start()
    from tests.recording_proxy import RecordingProxy

    recorder = RecordingProxy(hub.port, hub.auth)
    try:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(hub.kubeconfig_for(recorder.url))
        (tmp_path / "bin").write_bytes(b"hello\xff\x00\x01bin")
        hub.kubectl("create", "-f", "-", input=json.dumps({  # what `autoscale` scales; plain JSON create
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "pre", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "pre"}}, "template": {
                "metadata": {"labels": {"app": "pre"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
        update = config.given("KK_UPDATE_PROTOBUF_FIXTURES") == "1"
        for name, args in COMMANDS:
            args = [a.replace("{binfile}", str(tmp_path / "bin")) for a in args]
            base = [KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path / "cache"), *args]
            recorder.requests.clear()
            subprocess.run(base, capture_output=True, text=True, timeout=60)  # fails until protobuf is wired in
            bodies = recorder.bodies(content_type="protobuf")
            assert len(bodies) == 1, f"{name}: expected one protobuf POST, saw {len(bodies)}"
            captured = bodies[0]
            if name.endswith(".unsupported"):
                with pytest.raises(ProtobufError, match="not supported"):
                    decode_kubernetes_protobuf(captured)
                if update:
                    (FIXTURES / f"{name}.pb").write_bytes(captured)
                continue
            cut = base.index("--") if "--" in base else len(base)  # flags go before a command's `--`
            dry = subprocess.run([*base[:cut], "--dry-run=client", "-o", "json", *base[cut:]], capture_output=True,
                                 text=True, timeout=60)
            expected = json.loads(dry.stdout)
            assert decode_kubernetes_protobuf(captured) == expected, name
            if update:
                FIXTURES.mkdir(parents=True, exist_ok=True)
                (FIXTURES / f"{name}.pb").write_bytes(captured)
                (FIXTURES / f"{name}.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")
            elif (FIXTURES / f"{name}.json").exists():
                assert json.loads((FIXTURES / f"{name}.json").read_text()) == expected, name
    finally:
        recorder.close()
        hub.stop()
