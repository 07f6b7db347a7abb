"""Decode request bodies sent as `application/vnd.kubernetes.protobuf` into their JSON shape.

kubectl 1.32's `create namespace|configmap|deployment|service|secret|serviceaccount|job|cronjob|token|pdb`,
`create priorityclass|ingress` and `autoscale` POST protobuf, `drain` POSTs a protobuf Eviction (and DELETEs with a protobuf
DeleteOptions where there is no eviction subresource); `run`, `expose`, `apply` and `create -f`
send JSON. The body is the magic `k8s\\x00` followed by a
runtime.Unknown envelope: field 1 TypeMeta {1 apiVersion, 2 kind}, 2 the object's own message,
3 contentEncoding, 4 contentType.

Guarantees: `decode_kubernetes_protobuf` returns the dict the object would be in JSON, with
`apiVersion` and `kind` from the envelope; Go's JSON rules are mirrored (zero non-pointer scalars
left out, empty structs as `{}`, zero times as null, bytes as base64, IntOrString as int or
string). For any input bytes it either returns or raises `ProtobufError` - never another
exception, never unbounded recursion or looping. `ProtobufUnsupported` (a `ProtobufError`) means
the body is fine but names a kind or encoding without a table (a 415); any other `ProtobufError`
means a malformed body (a 400).
"""

from __future__ import annotations

from typing import Any

from control.api.protobuf.authentication import AUTHENTICATION
from control.api.protobuf.batch import BATCH
from control.api.protobuf.certificates import CERTIFICATES
from control.api.protobuf.core import CORE
from control.api.protobuf.decoder import decode_message
from control.api.protobuf.meta import META
from control.api.protobuf.networking import NETWORKING
from control.api.protobuf.policy import POLICY
from control.api.protobuf.rbac import AUTHENTICATION_REVIEWS, RBAC, REVIEWS
from control.api.protobuf.schema import compile_tables
from control.api.protobuf.scheduling import SCHEDULING
from control.api.protobuf.volumes import VOLUMES
from control.api.protobuf.wire import LENGTH_DELIMITED, ProtobufError, ProtobufUnsupported, fields
from control.api.protobuf.workloads import WORKLOADS

__all__ = ["MEDIA_TYPE", "ProtobufError", "ProtobufUnsupported", "decode_kubernetes_protobuf", "supported_kinds"]

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

TABLES = compile_tables(META, CORE, VOLUMES, WORKLOADS, AUTHENTICATION, BATCH, POLICY, RBAC, REVIEWS,
                        AUTHENTICATION_REVIEWS, SCHEDULING, NETWORKING, CERTIFICATES)

_CORE_KINDS = ("Binding", "ConfigMap", "Endpoints", "Event", "LimitRange", "Namespace", "Node",
               "PersistentVolume", "PersistentVolumeClaim", "Pod", "PodTemplate", "ReplicationController",
               "ResourceQuota", "Secret", "Service", "ServiceAccount")
_APPS_KINDS = ("ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet")
# (apiVersion, kind) -> the message its body is.
KINDS: dict[tuple[str, str], str] = {
    **{("v1", kind): kind for kind in _CORE_KINDS},
    **{("apps/v1", kind): kind for kind in _APPS_KINDS},
    ("autoscaling/v1", "Scale"): "Scale",
    ("autoscaling/v1", "HorizontalPodAutoscaler"): "HorizontalPodAutoscalerV1",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HorizontalPodAutoscaler",
    ("coordination.k8s.io/v1", "Lease"): "Lease",
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
    ("batch/v1", "Job"): "Job",
    ("batch/v1", "CronJob"): "CronJob",
    ("policy/v1", "Eviction"): "Eviction",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("networking.k8s.io/v1", "Ingress"): "Ingress",
    ("networking.k8s.io/v1", "IngressClass"): "IngressClass",
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): "CertificateSigningRequest",
    **{(api_version, message): message for api_version, table in (("rbac.authorization.k8s.io/v1", RBAC),
                                                                  ("authorization.k8s.io/v1", REVIEWS),
                                                                  ("authentication.k8s.io/v1", AUTHENTICATION_REVIEWS))
       for message in table if message[0].isupper() and table[message].startswith("1 metadata ObjectMeta")},
}


def supported_kinds() -> list[tuple[str, str]]:
    """(apiVersion, kind) pairs with a table; DeleteOptions is accepted under any apiVersion."""
    return sorted(KINDS) + [("*", "DeleteOptions")]


def decode_kubernetes_protobuf(body: bytes) -> dict[str, Any]:
    data = memoryview(bytes(body))
    if bytes(data[:len(MAGIC)]) != MAGIC:
        raise ProtobufError("not a Kubernetes protobuf body: it must start with the bytes 'k8s\\x00'")
    api_version, kind, raw, encoding = _envelope(data[len(MAGIC):])
    if encoding:
        raise ProtobufUnsupported(f"protobuf content encoding {encoding!r} is not supported")
    if not kind:
        raise ProtobufError("the protobuf envelope names no kind; send application/json")
    message = "DeleteOptions" if kind == "DeleteOptions" and api_version else KINDS.get((api_version, kind))
    if message is None:
        raise ProtobufUnsupported(f"protobuf is not supported for {api_version or '(no apiVersion)'} {kind}; "
                            f"send application/json")
    return {"apiVersion": api_version, "kind": kind, **decode_message(TABLES, message, raw)}


def _envelope(data: memoryview) -> tuple[str, str, memoryview, str]:
    """apiVersion, kind, raw object bytes and contentEncoding of a runtime.Unknown."""
    api_version = kind = encoding = ""
    raw = memoryview(b"")
    for number, wire_type, value in fields(data):
        if number in (1, 2, 3, 4) and wire_type != LENGTH_DELIMITED:
            raise ProtobufError(f"envelope field {number}: expected length-delimited wire type")
        if number == 1:
            for inner, inner_type, text in fields(value):
                if inner in (1, 2) and inner_type != LENGTH_DELIMITED:
                    raise ProtobufError(f"envelope typeMeta field {inner}: expected length-delimited wire type")
                if inner == 1:
                    api_version = _utf8(text)
                elif inner == 2:
                    kind = _utf8(text)
        elif number == 2:
            raw = value
        elif number == 3:
            encoding = _utf8(value)
    return api_version, kind, raw, encoding


def _utf8(value: memoryview) -> str:
    return bytes(value).decode("utf-8", "replace")
