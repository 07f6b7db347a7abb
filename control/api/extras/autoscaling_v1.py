"""autoscaling/v1 HorizontalPodAutoscaler as a converted view of the stored autoscaling/v2 objects.

kubectl 1.32's `kubectl autoscale` posts an autoscaling/v1 HPA (as protobuf) through its typed
client and reads the answer as v1. The hub stores only v2: a v1 body is converted to v2 on the
way in (`targetCPUUtilizationPercentage` becomes one CPU Utilization metric) and every answer is
converted back on the way out.

Guarantees: create, get, list, update (main resource and status) and delete work on the v1 path with
the same checks, defaults and Statuses as v2 (they run the v2 verbs); patch and watch answer a 405
Status (use autoscaling/v2); the view is not listed in discovery, so kubectl keeps using v2 for
everything else (`get`, `describe`, `edit`, `apply`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from control import errors
from control.api import verbs
from control.storage.db import run_db
from control.api.request import Call, check_type_meta, decode_object
from control.api.responses import Reply, error_response, json_response
from control.kinds.autoscaling import HORIZONTALPODAUTOSCALER, V1_API, v1_to_v2, v2_to_v1

PLURAL = HORIZONTALPODAUTOSCALER.plural
NOT_FOUND = "the server could not find the requested resource"


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
    raise errors.MethodNotAllowed("the server does not allow this method on the requested resource; "
                                  "use autoscaling/v2", details={"kind": PLURAL})


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
    if method in ("POST", "PUT"):
        call.check_options()
        call.raw_body, call.content_type = _as_v2_body(call), "application/json"
    return _to_v1(await run_db(_run, handler, call))
