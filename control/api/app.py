"""The hub's HTTP face as a lean ASGI application: the Kubernetes API paths, nothing else.

Routing is a table (`ROUTES`): each entry a path pattern, the methods it answers and its handler;
the first entry that matches answers. The Kubernetes resource paths, discovery, OpenAPI and health
are entries, and so are the extras (`control.api.extras`: each module brings its `ROUTES`). Within
a resource path the verb and subresource pick the handler from `SYNC_VERBS` / `ASYNC_VERBS`.

Guarantees:
- Every answer is JSON with `Content-Type: application/json` (pod logs: text/plain); every failure
  is a Kubernetes Status, bugs included (logged, answered as InternalError, never a stack trace).
- Bodies over the limit are refused with 413 before they are read in full; the others are decoded
  (`control.api.bodies`) only after RBAC let the request in and its fairness seats are held, off
  the event loop; the checks that read the object (escalation, NodeRestriction) come after that.
- All database work runs on the process's one database thread (`control.storage.db`); the event loop
  only parses, routes and streams.
- Every request is authenticated and authorized (`control.auth.gate`) before it is routed: a
  401 or 403 Status otherwise.
- Each user's requests in flight are bounded (`control.api.fairness`): beyond its seats and queue,
  429 TooManyRequests with `Retry-After: 1`; watches and other long-running requests take no seat.
- Each request leaves exactly one traffic record (who, verb, resource, code, latency).
- A stream (watch, `logs -f`) ends when its client goes away, without waiting for the next event,
  and is dropped when its client stops reading (over KK_WATCH_MAX_BACKLOG_BYTES unsent for
  KK_WATCH_STALL_SECONDS, under Daphne): hub memory stays bounded per watcher.
- No request starts anything: the change feed (with log compaction) and the CRD follower are
  started by `startup` (ASGI lifespan.startup, see `control.serving.asgi`) and stopped by `shutdown`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Iterator

from django.conf import settings

from control import errors
from control.auth import gate
from control.clock import REAL as clock
from control import kinds as registry
from control.api import (admission, bodies, crds, discovery, fairness, openapi, openapi_v2, portforward, streams,
                         subresources, traffic, verbs)
from control.api import extensions
from control.api.extras import kitchen, metrics, oidc, reviews, services
from control.storage.db import run_db
from control.storage.feed import start_feed, stop_feed
from control.api.extras.podlog import pod_log
from control.api.request import Call, Request, Route
from control.api.responses import Reply, Stream, error_response, json_response
from control.api.watch import wait_for_revision, watch

log = logging.getLogger(__name__)

WATCH_VALUES = ("1", "true", "True")
API_PREFIXES = ("/api", "/apis", "/version", "/openapi", "/healthz", "/readyz", "/livez", "/kubekitchen",
                "/.well-known/openid-configuration", "/openid")
NOT_FOUND = errors.NOT_FOUND
__all__ = ["API_PREFIXES", "ROUTES", "Request", "hub_app", "is_api_path", "route"]


def is_api_path(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in API_PREFIXES)


# --- the Kubernetes resource paths ---------------------------------------------------------------

def _parse_target(group: str, version: str, rest: str) -> tuple[Any, str, str, str]:
    """(kind, namespace, name, subresource) for the path after /api/v1 or /apis/<g>/<v>."""
    parts = [p for p in rest.split("/") if p]
    namespace = ""
    if len(parts) >= 3 and parts[0] == "namespaces" and registry.by_resource(group, version, parts[2]):
        namespace, parts = parts[1], parts[2:]
    if not parts or len(parts) > 3:
        raise errors.path_not_found()
    kind = registry.by_resource(group, version, parts[0])
    if kind is None or (namespace and not kind.namespaced):
        raise errors.path_not_found()
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else ""
    if sub and sub not in kind.subresources:
        raise errors.path_not_found()
    return kind, namespace, name, sub


def _verb(method: str, name: str, query: dict[str, str]) -> str:
    if method == "GET":
        if query.get("watch") in WATCH_VALUES:
            return "watch"
        return "get" if name else "list"
    return {"POST": "create", "PUT": "update", "PATCH": "patch",
            "DELETE": "delete" if name else "deletecollection"}.get(method, method.lower())


# (verb, names one object, subresource) -> handler. Sync handlers run on the database thread.
SYNC_VERBS: dict[tuple[str, bool, str], Callable[[Call], Reply]] = {
    ("list", False, ""): verbs.list_, ("create", False, ""): verbs.create,
    ("deletecollection", False, ""): verbs.deletecollection,
    ("get", True, ""): verbs.get, ("update", True, ""): verbs.update, ("patch", True, ""): verbs.patch,
    ("delete", True, ""): verbs.delete,
    ("get", True, "status"): verbs.get,
    ("update", True, "status"): lambda call: verbs.update(call, "status"),
    ("patch", True, "status"): lambda call: verbs.patch(call, "status"),
    ("update", True, "finalize"): lambda call: verbs.update(call, "finalize"),
    ("get", True, "approval"): verbs.get,  # a CertificateSigningRequest's approval conditions
    ("update", True, "approval"): lambda call: verbs.update(call, "approval"),
    ("patch", True, "approval"): lambda call: verbs.patch(call, "approval"),
    ("get", True, "scale"): subresources.get_scale, ("update", True, "scale"): subresources.update_scale,
    ("patch", True, "scale"): subresources.patch_scale,
    ("create", True, "binding"): lambda call: subresources.bind(call, verbs.now()),
}
# Streams and calls to other servers stay on the event loop.
ASYNC_VERBS: dict[tuple[str, bool, str], Callable[[Call], Any]] = {
    ("watch", False, ""): watch,
    ("get", True, "log"): pod_log,  # through the node's kubelet
    # exec/attach are WebSocket streams (control.serving.asgi routes them); over plain HTTP: checks, then 400
    **{(verb, True, sub): streams.exec_over_http for verb in ("get", "create") for sub in streams.STREAMS},
    **{(verb, True, portforward.SUBRESOURCE): portforward.forward_over_http for verb in ("get", "create")},
}
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


def _guard(fn: Callable[[Call], Reply], call: Call) -> Reply:
    """Runs on the database thread: errors become Statuses there, inside the transaction's scope.
    A write whose handler did not make the stored-object check admission gave it is undone (the
    error leaves the call's savepoint), never answered: a handler that forgets fails closed."""
    try:
        reply = fn(call)
    except verbs.FutureRevision:
        raise  # the async side waits for that revision and asks again
    except errors.ApiError as exc:
        return error_response(exc)
    except RecursionError:
        return error_response(errors.BadRequest("the object is nested too deeply"))
    if call.check_stored is not None and not call.stored_checked and reply.status < 400:
        raise RuntimeError(f"{call.method} {call.kind.resource}/{call.subresource}: the stored-object check was not made")
    return reply


def _author(request: Request) -> str:
    """Who the changes a request makes are by: its client, as the person's own spoke (`kubectl · alice`)."""
    user = request.user
    return traffic.spoke_name(request.actor, user.name, user.groups) if user is not None else request.actor


async def resource(request: Request, group: str = "", version: str = "v1", rest: str = "") -> Reply | Stream:
    kind, namespace, name, sub = _parse_target(group, version, rest)
    verb = _verb(request.method, name, request.query)
    request.tag = {"verb": verb, "resource": f"{kind.plural}/{sub}" if sub else kind.plural,
                   "namespace": namespace, "name": name}
    call = Call(method=request.method, kind=kind, namespace=namespace, name=name, subresource=sub,
                query=request.query, actor=_author(request), user=request.user,
                accept=request.headers.get("accept", ""),
                content_type=request.content_type, raw_body=request.body, decoded=request.decoded,
                check_stored=request.check_stored)
    admission.check_path(kind, namespace, name, verb)
    if verb in WRITE_VERBS:
        call.check_options()
        bodies.refuse_unstorable(verb, request.content_type, request.query, request.decoded)
    streamed = ASYNC_VERBS.get((verb, bool(name), sub))
    if streamed is not None:
        return await streamed(call)
    handler = SYNC_VERBS.get((verb, bool(name), sub)) or subresources.action_handler(kind, verb, sub, verbs.now)
    if handler is None:
        raise errors.MethodNotAllowed("the server does not allow this method on the requested resource",
                                      details={"kind": kind.plural})
    try:
        return await run_db(_guard, handler, call)
    except verbs.FutureRevision as future:
        await wait_for_revision(future.revision)
        return await run_db(_guard, handler, call)


# --- documents: health, version, discovery, OpenAPI ----------------------------------------------

def _document(request: Request, document: Any) -> Reply:
    request.tag = {"verb": "get", "resource": request.path}
    if document is None:
        raise errors.path_not_found()
    return json_response(document)


async def health(request: Request, check: str) -> Reply:
    request.tag = {"verb": "get", "resource": check}
    return Reply(200, b"ok", "text/plain")


async def version(request: Request) -> Reply:
    return _document(request, discovery.VERSION)


async def api_versions(request: Request) -> Reply:
    return _document(request, discovery.api_versions(request.headers.get("host", "")))


async def group_list(request: Request) -> Reply:
    return _document(request, discovery.api_group_list())


async def group(request: Request, group: str) -> Reply:
    return _document(request, discovery.api_group(group))


async def resource_list(request: Request, group: str = "", version: str = "v1") -> Reply:
    return _document(request, discovery.resource_list(group, version))


async def openapi_root(request: Request) -> Reply:
    return _document(request, openapi.root_document())


async def openapi_document(request: Request, path: str) -> Reply:
    return _document(request, openapi.group_version_document(path))


async def openapi_v2_document(request: Request) -> Reply:
    """Swagger 2.0: kubectl's fallback when a kind is missing from v3, in protobuf or JSON."""
    request.tag = {"verb": "get", "resource": request.path}
    body, content_type, etag = openapi_v2.document_reply(request.headers.get("accept", ""))
    return Reply(200, body, content_type, {"ETag": etag})


# --- the table -----------------------------------------------------------------------------------

_SEGMENT = r"[^/]+"
# First match wins: the extras' paths come before the generic resource path they would fall under.
ROUTES: tuple[Route, ...] = (
    Route(r"/(?P<check>healthz|readyz|livez)", health),
    Route(r"/version", version),
    Route(r"/openapi/v2", openapi_v2_document),
    Route(r"/openapi/v3", openapi_root),
    Route(r"/openapi/v3/(?P<path>.+)", openapi_document),
    Route(r"/api", api_versions),
    Route(r"/api/v1", resource_list),
    Route(r"/api/v1/(?P<rest>.+)", resource, None),
    Route(r"/apis", group_list),
    Route(rf"/apis/(?P<group>{_SEGMENT})", group),
    Route(rf"/apis/(?P<group>{_SEGMENT})/(?P<version>{_SEGMENT})", resource_list),
    *kitchen.ROUTES,
    *services.ROUTES,
    *metrics.ROUTES,
    *oidc.ROUTES,
    *reviews.ROUTES,
    Route(rf"/apis/(?P<group>{_SEGMENT})/(?P<version>{_SEGMENT})/(?P<rest>.+)", resource, None),
)


async def route(request: Request) -> Reply | Stream:
    """The answer of the first table entry whose pattern matches the path; 404 when none does,
    405 when it does not answer this method."""
    for entry in ROUTES:
        params = entry.match(request.path)
        if params is None:
            continue
        if entry.methods is not None and request.method not in entry.methods:
            raise errors.MethodNotAllowed("the server does not allow this method on the requested resource")
        return await entry.handler(request, **params)
    raise errors.path_not_found()


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
    bodies.shutdown()


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
    given = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
    headers = [(b"content-type", content_type.encode())]
    if not any(name == b"cache-control" for name, _ in given):  # each header once (a watch sets its own)
        headers.append((b"cache-control", b"no-cache, private"))
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return headers + given


async def _caught_up(backlog: Any) -> bool:
    """Whether the client has read all but KK_WATCH_MAX_BACKLOG_BYTES of what it was sent, waiting
    up to KK_WATCH_STALL_SECONDS for it to catch up (upstream's cache watcher waits a moment on a
    full buffer too, then closes the watch)."""
    limit = settings.KK_WATCH_MAX_BACKLOG_BYTES
    if backlog.unsent() <= limit:
        return True
    deadline = clock.monotonic() + settings.KK_WATCH_STALL_SECONDS
    while clock.monotonic() < deadline:
        await clock.sleep(0.05)
        if backlog.unsent() <= limit:
            return True
    return False


def _pieces(chunk: bytes, backlog: Any) -> Iterator[bytes]:
    """A chunk cut to at most KK_WATCH_MAX_BACKLOG_BYTES per piece when the backlog is watched: a
    watch hands over every change it has waited for as one batch, and a batch sent whole would
    put all of it in the server's buffer behind a client that is not reading, past the bound and
    with no later check to drop it. Each piece is cut only when the last was taken, so a stalled
    client costs one piece beside the chunk, not a second copy of all of it."""
    size = max(16 * 1024, settings.KK_WATCH_MAX_BACKLOG_BYTES)
    if backlog is None or len(chunk) <= size:
        yield chunk
        return
    for at in range(0, len(chunk), size):
        yield chunk[at:at + size]


async def _send_stream(stream: Stream, receive: Callable, send: Callable, backlog: Any = None) -> None:
    """Pump the stream to the client until it ends or the client goes; a client that stops reading
    (its unsent bytes stay over the bound, `backlog` is `control.serving.send_backlog`'s view of them) has
    its connection dropped with what was buffered for it: it relists and watches again. What the
    server buffers for a client stays under about twice the bound, however large a batch."""
    await send({"type": "http.response.start", "status": stream.status,
                "headers": _headers(stream.content_type, stream.headers)})

    async def pump() -> None:
        async for chunk in stream.chunks:
            for piece in _pieces(chunk, backlog):
                if backlog is not None and not await _caught_up(backlog):
                    log.warning("closing a stream whose client stopped reading (%d bytes unsent)", backlog.unsent())
                    backlog.abort()
                    return
                await send({"type": "http.response.body", "body": piece, "more_body": True})
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
    seats: list[Callable[[], None]] = []
    try:
        await _serve(request, body is None, seats, started, receive, send)
    finally:
        for release in seats:  # the request holds its seat until its answer is written (or it is cancelled)
            release()


async def _serve(request: Request, too_large: bool, seats: list[Callable[[], None]], started: float,
                 receive: Callable, send: Callable) -> None:
    try:
        if too_large:
            limit = settings.KK_MAX_BODY_BYTES
            raise errors.RequestEntityTooLarge(f"Request entity too large: limit is {limit}")
        request.user = await gate.admit(request.method, request.path, request.query, request.scope_headers,
                                        request.body, request.content_type, identified=request.identified,
                                        check_object=False, client_chain=extensions.client_chain(request.extensions))
        seats.append(await fairness.take_seats(request))
        # Only now, RBAC passed and the sender's seats held, is the body decoded, off the loop.
        request.decoded = await bodies.predecode(request.method, request.body, request.content_type)
        request.check_stored = await gate.check_body(request.user, request.method, request.path, request.query,
                                                     request.body, request.content_type, request.decoded)
        answer = await route(request)
    except errors.ApiError as exc:
        answer = error_response(exc)
    except Exception:
        log.exception("unexpected error serving %s %s", request.method, request.path)
        answer = error_response(errors.InternalError("an internal error occurred; the server logged it"))
    if request.flow is not None:
        answer.headers.update(request.flow.headers())
    tag = request.tag if answer.status < 400 else traffic.failed(
        request.tag, request.path, request.query, answer.body if isinstance(answer, Reply) else b"")
    traffic.request_done(request.actor, tag, answer.status, started, request.user,
                         traffic.scope(request.method, request.path, request.query))
    if isinstance(answer, Stream):
        await _send_stream(answer, receive, send, request.extensions.get(extensions.SEND_BACKLOG))
        return
    payload = b"" if request.method == "HEAD" else answer.body
    await send({"type": "http.response.start", "status": answer.status,
                "headers": _headers(answer.content_type, answer.headers, len(answer.body))})
    await send({"type": "http.response.body", "body": payload})
