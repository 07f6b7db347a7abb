"""autoscaling/v1 HorizontalPodAutoscaler as a converted view of the stored autoscaling/v2 objects.

kubectl 1.32's `kubectl autoscale` posts an autoscaling/v1 HPA (as protobuf) through its typed
client and reads the answer as v1. The hub stores only v2: a v1 body is converted to v2 on the
way in (`targetCPUUtilizationPercentage` becomes one CPU Utilization metric) and every answer is
converted back on the way out.

Guarantees: create, get, list, update, patch (main resource and status) and delete work on the v1
path with the same checks, defaults and Statuses as v2 (they run the v2 verbs); a patch is applied
to the v1 view and written back with the read's resourceVersion as precondition (a concurrent
change is a 409, as for any patch race), keeping the v2 fields v1 cannot show (other metrics,
behavior) unless the CPU target itself changed; watch, deletecollection and server-side apply
answer a 405/415 Status (use autoscaling/v2). The view is listed in discovery (`VIEW`, with the
verbs above) after v2, which stays the preferred version, so `kubectl apply` of an autoscaling/v1
manifest finds its kind and kubectl keeps using v2 for everything else.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable

from control import errors
from control.api import verbs
from control.storage.db import run_db
from control.api.discovery import View, resource_entries
from control.api.patching import apply_patch
from control.api.request import PATCH_TYPES, Call, Route, check_type_meta, decode, decode_object
from control.api.responses import Reply, error_response, json_response
from control.kinds.autoscaling import HORIZONTALPODAUTOSCALER, V1_API, v1_to_v2, v2_to_v1

PLURAL = HORIZONTALPODAUTOSCALER.plural
NOT_FOUND = errors.NOT_FOUND
V1_DEFINITION = "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"
SERVED_VERBS = ("create", "delete", "get", "list", "patch", "update")
# The kind as OpenAPI shows it: kubectl validates and computes apply patches from this document.
V1_KIND = dataclasses.replace(HORIZONTALPODAUTOSCALER, version="v1", definition=V1_DEFINITION)

_V1 = "io.k8s.api.autoscaling.v1."
_META = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."


def _int(description: str, fmt: str = "int32") -> dict[str, Any]:
    return {"type": "integer", "format": fmt, "description": description}


def _ref(name: str, description: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": name}], "description": description, "default": {}}


SCHEMAS: dict[str, dict[str, Any]] = {
    V1_DEFINITION: {
        "type": "object", "description": "Configuration of a horizontal pod autoscaler (the CPU-only autoscaling/v1 view).",
        "properties": {
            "apiVersion": {"type": "string", "description": "Versioned schema of this representation."},
            "kind": {"type": "string", "description": "The REST resource type this object represents."},
            "metadata": _ref(_META + "ObjectMeta", "Standard object metadata."),
            "spec": _ref(f"#/components/schemas/{_V1}HorizontalPodAutoscalerSpec", "Behaviour of the autoscaler."),
            "status": _ref(f"#/components/schemas/{_V1}HorizontalPodAutoscalerStatus", "Current information about the autoscaler."),
        },
        "x-kubernetes-group-version-kind": [{"group": "autoscaling", "kind": "HorizontalPodAutoscaler", "version": "v1"}],
    },
    _V1 + "HorizontalPodAutoscalerSpec": {
        "type": "object", "description": "Specification of a horizontal pod autoscaler.",
        "properties": {
            "maxReplicas": _int("Upper limit for the number of pods; cannot be smaller than minReplicas."),
            "minReplicas": _int("Lower limit for the number of pods (default 1)."),
            "scaleTargetRef": _ref(f"#/components/schemas/{_V1}CrossVersionObjectReference",
                                   "Reference to the scaled resource."),
            "targetCPUUtilizationPercentage": _int("Target average CPU utilization over all the pods, in percent "
                                                   "of the requested CPU."),
        },
        "required": ["scaleTargetRef", "maxReplicas"],
    },
    _V1 + "CrossVersionObjectReference": {
        "type": "object", "description": "Enough information to identify the referred resource.",
        "properties": {
            "apiVersion": {"type": "string", "description": "API version of the referent."},
            "kind": {"type": "string", "description": "Kind of the referent."},
            "name": {"type": "string", "description": "Name of the referent."},
        },
        "required": ["kind", "name"], "x-kubernetes-map-type": "atomic",
    },
    _V1 + "HorizontalPodAutoscalerStatus": {
        "type": "object", "description": "Current status of a horizontal pod autoscaler.",
        "properties": {
            "currentCPUUtilizationPercentage": _int("Current average CPU utilization over all pods, in percent."),
            "currentReplicas": _int("Current number of replicas of pods managed by this autoscaler."),
            "desiredReplicas": _int("Desired number of replicas of pods managed by this autoscaler."),
            "lastScaleTime": {"allOf": [{"$ref": _META + "Time"}], "description": "Last time the autoscaler scaled."},
            "observedGeneration": _int("Most recent generation observed by this autoscaler.", "int64"),
        },
        "required": ["currentReplicas", "desiredReplicas"],
    },
}
VIEW = View("autoscaling", "v1", lambda: resource_entries(HORIZONTALPODAUTOSCALER, verbs=SERVED_VERBS),
            kinds=(V1_KIND,), schemas=SCHEMAS)


def parse(rest: str) -> tuple[str, str, str]:
    """(namespace, name, subresource) from the path after /apis/autoscaling/v1/."""
    parts = [p for p in rest.split("/") if p]
    namespace = ""
    if len(parts) >= 3 and parts[0] == "namespaces":
        namespace, parts = parts[1], parts[2:]
    if not parts or parts[0] != PLURAL or len(parts) > 3 or (len(parts) == 3 and parts[2] != "status"):
        raise errors.NotFound(NOT_FOUND)
    return namespace, parts[1] if len(parts) > 1 else "", parts[2] if len(parts) > 2 else ""


def _as_v2_body(call: Call) -> bytes:
    body = decode_object(call)
    probe = Call(method=call.method, kind=HORIZONTALPODAUTOSCALER, namespace=call.namespace, name=call.name,
                 subresource="", query={}, actor=call.actor)
    check_type_meta(probe, body, api_version=V1_API, kind=HORIZONTALPODAUTOSCALER.kind)
    return json.dumps(v1_to_v2(body)).encode()


def _to_v1(reply: Reply) -> Reply:
    if reply.status >= 300 or not reply.content_type.startswith("application/json"):
        return reply
    data = reply.json()
    if data.get("kind") == HORIZONTALPODAUTOSCALER.kind:
        data = v2_to_v1(data)
    elif data.get("kind") == HORIZONTALPODAUTOSCALER.list_kind:
        data["apiVersion"] = V1_API
        data["items"] = [v2_to_v1(item) for item in data.get("items") or []]
    return json_response(data, reply.status, headers=reply.headers)


def _handler(method: str, name: str, sub: str, watch: bool) -> Callable[[Call], Reply]:
    if method in ("GET", "HEAD") and not watch:
        return verbs.get if name else verbs.list_
    if method == "POST" and not name:
        return verbs.create
    if method == "PUT" and name:
        return (lambda call: verbs.update(call, "status")) if sub else verbs.update
    if method == "DELETE" and name and not sub:
        return verbs.delete
    if method == "PATCH" and name:
        return lambda call: _patch(call, sub)
    raise errors.MethodNotAllowed("the server does not allow this method on the requested resource; "
                                  "use autoscaling/v2", details={"kind": PLURAL})


def _patch(call: Call, sub: str) -> Reply:
    patch_type = PATCH_TYPES.get(call.content_type)
    if patch_type not in ("json", "merge", "strategic"):
        raise errors.UnsupportedMediaType(
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json")
    document = decode(call.raw_body, call.content_type, call.decoded)
    read = verbs.get(Call(method="GET", kind=HORIZONTALPODAUTOSCALER, namespace=call.namespace, name=call.name,
                          subresource="", query={}, actor=call.actor))
    current = read.json()
    seen = v2_to_v1(current)
    patched = apply_patch(HORIZONTALPODAUTOSCALER, seen, patch_type, document, definition=V1_DEFINITION)
    if patched.get("apiVersion") != V1_API or patched.get("kind") != HORIZONTALPODAUTOSCALER.kind:
        raise errors.BadRequest("a patch may not change apiVersion or kind")
    written = v1_to_v2(patched)
    spec, kept = written.setdefault("spec", {}), current.get("spec") or {}
    if isinstance(spec, dict):
        target = (patched.get("spec") or {}).get("targetCPUUtilizationPercentage")
        if target == (seen.get("spec") or {}).get("targetCPUUtilizationPercentage") and "metrics" in kept:
            spec["metrics"] = kept["metrics"]  # v1 cannot show them; the patch did not touch them
        if "behavior" in kept:
            spec.setdefault("behavior", kept["behavior"])
    if not sub:
        written["status"] = current.get("status")
    written.setdefault("metadata", {}).setdefault("resourceVersion", current["metadata"]["resourceVersion"])
    update = Call(method="PUT", kind=HORIZONTALPODAUTOSCALER, namespace=call.namespace, name=call.name,
                  subresource=sub, query=call.query, actor=call.actor, content_type="application/json",
                  raw_body=json.dumps(written).encode())
    return verbs.update(update, sub) if sub else verbs.update(update)


def _run(handler: Callable[[Call], Reply], call: Call) -> Reply:
    try:
        return handler(call)
    except errors.ApiError as exc:
        return error_response(exc)


async def serve(method: str, rest: str, query: dict[str, str], headers: dict[str, Any], raw_body: bytes,
                content_type: str, actor: str, tag: dict[str, str]) -> Reply:
    namespace, name, sub = parse(rest)
    watch = query.get("watch") in ("1", "true", "True")
    tag.update({"verb": method.lower(), "resource": f"{PLURAL}/{sub}" if sub else PLURAL, "namespace": namespace,
                "name": name})
    handler = _handler(method, name, sub, watch)
    accept = headers.get("accept", "")
    call = Call(method=method, kind=HORIZONTALPODAUTOSCALER, namespace=namespace, name=name, subresource=sub,
                query=query, actor=actor, accept="" if "as=Table" not in accept else accept,
                content_type=content_type, raw_body=raw_body)
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        call.check_options()
    if method in ("POST", "PUT"):
        call.raw_body, call.content_type = _as_v2_body(call), "application/json"
    return _to_v1(await run_db(_run, handler, call))


async def serve_request(request: Any, rest: str) -> Reply:
    return await serve(request.method, rest, request.query, request.headers, request.body, request.content_type,
                       request.actor, request.tag)


ROUTES = (Route(r"/apis/autoscaling/v1/(?P<rest>.+)", serve_request, None),)
