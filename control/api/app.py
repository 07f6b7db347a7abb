"""The hub's HTTP face as a lean ASGI application: the Kubernetes API paths, nothing else.

Guarantees:
- Every answer is JSON with `Content-Type: application/json` (pod logs: text/plain); every failure
  is a Kubernetes Status, bugs included (logged, answered as InternalError, never a stack trace).
- Bodies over the limit are refused with 413 before they are read in full.
- All database work runs on the process's one database thread (`control.storage.db`); the event loop
  only parses, routes and streams.
- Each request leaves exactly one traffic record (who, verb, resource, code, latency).
- A stream (watch, `logs -f`) ends when its client goes away, without waiting for the next event.
- No request starts anything: the change feed (with log compaction) and the CRD follower are
  started by `startup` (ASGI lifespan.startup, see `control.asgi`) and stopped by `shutdown`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable
from urllib.parse import parse_qsl

from django.conf import settings

from control import errors
from control.clock import REAL as clock
from control import kinds as registry
from control.api import crds, discovery, subresources, traffic, verbs
from control.api.extras import metrics
from control.storage.db import run_db
from control.storage.feed import start_feed, stop_feed
from control.api.extras.podlog import pod_log
from control.api.request import Call, client_name
from control.api.responses import Reply, Stream, error_response, json_response
from control.api.watch import wait_for_revision, watch

log = logging.getLogger(__name__)

WATCH_VALUES = ("1", "true", "True")
API_PREFIXES = ("/api", "/apis", "/version", "/openapi", "/healthz", "/readyz", "/livez", "/kubekitchen")
NOT_FOUND = "the server could not find the requested resource"


def is_api_path(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in API_PREFIXES)


class Request:
    """The parts of an HTTP request the hub looks at."""

    def __init__(self, scope: dict[str, Any], body: bytes):
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self.query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        self.body = body
        self.actor = client_name(self.headers.get("user-agent", ""))
        self.tag: dict[str, str] = {"verb": self.method.lower(), "resource": self.path}

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


# --- routing ------------------------------------------------------------------------------------

def _parse_target(group: str, version: str, rest: str) -> tuple[Any, str, str, str]:
    """(kind, namespace, name, subresource) for the path after /api/v1 or /apis/<g>/<v>."""
    parts = [p for p in rest.split("/") if p]
    namespace = ""
    if len(parts) >= 3 and parts[0] == "namespaces" and registry.by_resource(group, version, parts[2]):
        namespace, parts = parts[1], parts[2:]
    if not parts or len(parts) > 3:
        raise errors.NotFound(NOT_FOUND)
    kind = registry.by_resource(group, version, parts[0])
    if kind is None or (namespace and not kind.namespaced):
        raise errors.NotFound(NOT_FOUND)
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else ""
    if sub and sub not in kind.subresources:
        raise errors.NotFound(NOT_FOUND)
    return kind, namespace, name, sub


def _verb(method: str, name: str, query: dict[str, str]) -> str:
    if method == "GET":
        if query.get("watch") in WATCH_VALUES:
            return "watch"
        return "get" if name else "list"
    return {"POST": "create", "PUT": "update", "PATCH": "patch",
            "DELETE": "delete" if name else "deletecollection"}.get(method, method.lower())


SYNC_VERBS: dict[tuple[str, bool, str], Callable[[Call], Reply]] = {
    ("list", False, ""): verbs.list_, ("create", False, ""): verbs.create,
    ("deletecollection", False, ""): verbs.deletecollection,
    ("get", True, ""): verbs.get, ("update", True, ""): verbs.update, ("patch", True, ""): verbs.patch,
    ("delete", True, ""): verbs.delete,
    ("get", True, "status"): verbs.get,
    ("update", True, "status"): lambda call: verbs.update(call, "status"),
    ("patch", True, "status"): lambda call: verbs.patch(call, "status"),
    ("update", True, "finalize"): lambda call: verbs.update(call, "finalize"),
    ("get", True, "scale"): subresources.get_scale, ("update", True, "scale"): subresources.update_scale,
    ("patch", True, "scale"): subresources.patch_scale,
    ("create", True, "binding"): lambda call: subresources.bind(call, verbs.now()),
}


def _guard(fn: Callable[[Call], Reply], call: Call) -> Reply:
    """Runs on the database thread: errors become Statuses there, inside the transaction's scope."""
    try:
        return fn(call)
    except verbs.FutureRevision:
        raise  # the async side waits for that revision and asks again
    except errors.ApiError as exc:
        return error_response(exc)
    except RecursionError:
        return error_response(errors.BadRequest("the object is nested too deeply"))


async def _resource(request: Request, group: str, version: str, rest: str) -> Reply | Stream:
    kind, namespace, name, sub = _parse_target(group, version, rest)
    verb = _verb(request.method, name, request.query)
    request.tag = {"verb": verb, "resource": f"{kind.plural}/{sub}" if sub else kind.plural,
                   "namespace": namespace, "name": name}
    call = Call(method=request.method, kind=kind, namespace=namespace, name=name, subresource=sub,
                query=request.query, actor=request.actor, accept=request.headers.get("accept", ""),
                content_type=request.content_type, raw_body=request.body)
    if verb in ("create", "update", "patch", "delete", "deletecollection"):
        call.check_options()
    if verb == "watch" and not name and not sub:
        return await watch(call)
    if verb == "get" and sub == "log":
        return await pod_log(call)
    handler = SYNC_VERBS.get((verb, bool(name), sub))
    if handler is None:
        raise errors.MethodNotAllowed("the server does not allow this method on the requested resource",
                                      details={"kind": kind.plural})
    try:
        return await run_db(_guard, handler, call)
    except verbs.FutureRevision as future:
        await wait_for_revision(future.revision)
        return await run_db(_guard, handler, call)


def _document(request: Request, verb: str, document: Any) -> Reply:
    request.tag = {"verb": verb, "resource": request.path}
    if document is None:
        raise errors.NotFound(NOT_FOUND)
    return json_response(document)


async def route(request: Request) -> Reply | Stream:
    parts = [p for p in request.path.split("/") if p]
    if parts[:1] == ["kubekitchen"] and len(parts) == 2 and parts[1] in ("resolve", "traffic", "proxyrules"):
        from control.api.extras import services  # Services at work: DNS, traffic through kube-proxy, its rules

        return await services.serve(request, parts[1])
    if request.method not in ("GET", "HEAD") and len(parts) < 3:
        raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
    head = parts[0] if parts else ""
    if head in ("healthz", "readyz", "livez") and len(parts) == 1:
        request.tag = {"verb": "get", "resource": head}
        return Reply(200, b"ok", "text/plain")
    if head == "kubekitchen" and len(parts) == 2 and parts[1] in ("snapshot", "changes"):
        from control.api.extras import kitchen

        request.tag = {"verb": "watch" if parts[1] == "changes" else "list", "resource": parts[1]}
        if parts[1] == "snapshot":
            return await kitchen.snapshot()
        return await kitchen.changes(request.query, request.actor)
    if head == "version" and len(parts) == 1:
        return _document(request, "get", discovery.VERSION)
    if head == "openapi" and parts[1:] == ["v2"]:  # Swagger 2.0: kubectl's fallback, in protobuf or JSON
        from control.api import openapi_v2

        request.tag = {"verb": "get", "resource": request.path}
        body, content_type, etag = openapi_v2.document_reply(request.headers.get("accept", ""))
        return Reply(200, body, content_type, {"ETag": etag})
    if head == "openapi" and parts[1:2] == ["v3"]:
        from control.api import openapi

        if len(parts) == 2:
            return _document(request, "get", openapi.root_document())
        return _document(request, "get", openapi.group_version_document("/".join(parts[2:])))
    if head == "api":
        if len(parts) == 1:
            return _document(request, "get", discovery.api_versions(request.headers.get("host", "")))
        if parts[1] != "v1":
            raise errors.NotFound(NOT_FOUND)
        if len(parts) == 2:
            return _document(request, "get", discovery.resource_list("", "v1"))
        return await _resource(request, "", "v1", "/".join(parts[2:]))
    if head == "apis":
        if len(parts) == 1:
            return _document(request, "get", discovery.api_group_list())
        if len(parts) == 2:
            return _document(request, "get", discovery.api_group(parts[1]))
        if len(parts) == 3:
            return _document(request, "get", discovery.resource_list(parts[1], parts[2]))
        if parts[1] == metrics.GROUP:
            return await metrics.serve(request.method, parts[2], "/".join(parts[3:]), request.query, request.tag)
        if parts[1:3] == ["autoscaling", "v1"]:  # kubectl autoscale's v1 HPA: a converted view of v2
            from control.api.extras import autoscaling_v1

            return await autoscaling_v1.serve(request.method, "/".join(parts[3:]), request.query, request.headers,
                                              request.body, request.content_type, request.actor, request.tag)
        return await _resource(request, parts[1], parts[2], "/".join(parts[3:]))
    raise errors.NotFound(NOT_FOUND)


# --- the ASGI application -----------------------------------------------------------------------

async def startup() -> None:
    """Before the first request (ASGI lifespan.startup): this process's change feed with its log
    compaction, and the custom kinds loaded from the store and kept current."""
    await start_feed()
    await crds.ensure_following()


async def shutdown() -> None:
    """After the last request (ASGI lifespan.shutdown): stop what `startup` started."""
    await crds.stop_following()
    await stop_feed()


async def _read_body(scope: dict[str, Any], receive: Callable) -> bytes | None:
    """The whole body, or None when it is (or announces itself) over the limit."""
    limit = settings.KK_MAX_BODY_BYTES
    for key, value in scope.get("headers", []):
        if key.lower() == b"content-length" and value.isdigit() and int(value) > limit:
            return None
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _headers(content_type: str, extra: dict[str, str], length: int | None = None) -> list[tuple[bytes, bytes]]:
    headers = [(b"content-type", content_type.encode()), (b"cache-control", b"no-cache, private")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
    return headers


async def _send_stream(stream: Stream, receive: Callable, send: Callable) -> None:
    await send({"type": "http.response.start", "status": stream.status,
                "headers": _headers(stream.content_type, stream.headers)})

    async def pump() -> None:
        async for chunk in stream.chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def client_gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    pumping, listening = asyncio.ensure_future(pump()), asyncio.ensure_future(client_gone())
    try:
        await asyncio.wait((pumping, listening), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (pumping, listening):
            task.cancel()
        await asyncio.gather(pumping, listening, return_exceptions=True)
        aclose = getattr(stream.chunks, "aclose", None)
        if aclose:
            await aclose()


async def hub_app(scope: dict[str, Any], receive: Callable, send: Callable) -> None:
    started = clock.monotonic()
    body = await _read_body(scope, receive)
    request = Request(scope, body or b"")
    try:
        if body is None:
            limit = settings.KK_MAX_BODY_BYTES
            raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {limit}")
        answer = await route(request)
    except errors.ApiError as exc:
        answer = error_response(exc)
    except Exception:
        log.exception("unexpected error serving %s %s", request.method, request.path)
        answer = error_response(errors.InternalError("an internal error occurred; the server logged it"))
    traffic.request_done(request.actor, request.tag, answer.status, started)
    if isinstance(answer, Stream):
        await _send_stream(answer, receive, send)
        return
    payload = b"" if request.method == "HEAD" else answer.body
    await send({"type": "http.response.start", "status": answer.status,
                "headers": _headers(answer.content_type, answer.headers, len(answer.body))})
    await send({"type": "http.response.body", "body": payload})
