"""`exec` and `attach` on an object placed on a node (`pods/NAME/exec`): the hub accepts the
client's WebSocket (the channel protocols `v5.channel.k8s.io`, `v4.channel.k8s.io`) and relays
it to the node's kubelet over an upgraded HTTP/1.1 connection (`control.client.remotecommand`).

Guarantees:
- Which paths: a kind declares `exec`/`attach` among its subresources; this module asks the kind,
  never names one. The kind's location (`Kind.connect`, e.g. `control.kinds.pod_locations`) says
  which container and which kubelet path, from the object and its host; the endpoint passes
  `control.api.node_address`: the hub contacts no address outside the node network (400).
- Before the upgrade, as kube-apiserver's connect handler does, bad requests are refused with the
  Status as the handshake's HTTP answer: the object not found 404, no command 400, a container
  not named on a multi-container object or not in it 400, not yet on a node 400, a Node without
  a kubelet endpoint 503; an unsupported subprotocol 403 (`requested protocol(s) are not
  supported`). A plain HTTP request (no WebSocket, e.g. SPDY) gets the same checks, then 400.
- After the upgrade, the kubelet's refusal or absence ends the stream with an InternalError
  Status on the error channel (upstream's stream translator: `Internal error occurred: unable to
  upgrade connection: container not found ("c")`); the kubelet's own final Status is relayed as is.
- Messages are relayed both ways unchanged (first byte the channel; v5's CLOSE included), except
  that the first message to the client waits until FIRST_MESSAGE_HOLD has passed since the
  accept: client-go's WebSocket executor starts reading before it has made its streams and drops
  a message for a stream it has not made yet (`websocket.go`: "Unknown stream id 1, discarding
  message"), and our kubelet answers faster than a container runtime does, so on a busy machine
  `kubectl exec POD -- ls` printed nothing and exited 0. The stream ends when either side ends it, or after `KK_STREAM_IDLE_SECONDS` (environment or
  setting; default 4 h, the kubelet's streamingConnectionIdleTimeout) with nothing relayed: then
  a Timeout Status on the error channel says why (`idle_status`), so kubectl prints the reason
  and exits 1 instead of ending silently with 0 as upstream does (kubernetes#73056).
  Each stream leaves exactly one traffic record (code 101 once upgraded, else the refusal's code).
- A stream the hub decided to accept after Daphne already answered its handshake 429 (the hub's
  decision bound, `control.serving.websocket_denial`) is not started: the client was told to try
  again, so the command must not run (its record says 429).
- Browsers: a request without an `Origin` (kubectl, the Python client's without one) is served; one
  with an `Origin` only when it is the hub's own page (the Origin's host is the request's Host, or
  one of ALLOWED_HOSTS), else 403: a foreign page cannot open a shell in a pod. A browser on the
  hub's own page is the dashboard's shell: its requests are the client "dashboard".
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from control import config, errors
from control.auth import enabled as auth_enabled
from control.auth import gate
from control import kinds as registry
from control.api import extensions
from control.api import locations, node_address, traffic
from control.api.request import Call, Request
from control.api.responses import Reply, error_response
from control.client.remotecommand import (ERROR, FrameReader, UpgradeRefused, connect_upgraded, frame,
                                          status_json)
from control.clock import REAL, Clock
from control.storage.db import run_db

STREAMS = ("exec", "attach")
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
PATH = re.compile(r"/api/(?P<version>[^/]+)/namespaces/(?P<namespace>[^/]+)/(?P<plural>[^/]+)/(?P<name>[^/]+)"
                  r"/(?P<sub>[^/]+)|/apis/(?P<group>[^/]+)/(?P<gversion>[^/]+)/namespaces/(?P<gnamespace>[^/]+)"
                  r"/(?P<gplural>[^/]+)/(?P<gname>[^/]+)/(?P<gsub>[^/]+)")
DEFAULT_IDLE_SECONDS = 4 * 3600.0  # the kubelet's streamingConnectionIdleTimeout
FIRST_MESSAGE_HOLD = 0.3  # seconds after the accept before the first message to the client (see above)
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class StreamTarget:
    address: str
    port: int
    kubelet_path: str  # the kind's location on the kubelet, query included (command=..., stdin, ...)


def stream_kind(path: str, subresources: tuple[str, ...] = STREAMS) -> tuple[Any, str, str, str] | None:
    """(kind, namespace, name, subresource) when `path` is one of `subresources` (exec/attach unless
    told) that a served kind declares; None otherwise."""
    match = PATH.fullmatch(path)
    if match is None:
        return None
    parts = match.groupdict()
    group = parts["group"] or ""
    version = parts["version"] or parts["gversion"]
    plural, sub = parts["plural"] or parts["gplural"], parts["sub"] or parts["gsub"]
    kind = registry.by_resource(group, version, plural)
    if kind is None or sub not in subresources or sub not in kind.subresources:
        return None
    return kind, parts["namespace"] or parts["gnamespace"], parts["name"] or parts["gname"], sub


def is_stream_path(path: str) -> bool:
    return stream_kind(path) is not None


def locate(kind: Any, namespace: str, name: str, action: str, query: dict[str, list[str]]) -> StreamTarget:
    """Runs on the database thread: the kubelet the kind's location names, or the ApiError."""
    located = locations.locate(kind, namespace, name, action, query)
    return StreamTarget(located.target.address, located.target.port, located.path)


def internal_error(message: str) -> dict[str, Any]:
    """apierrors.NewInternalError(err).Status(), as the stream translator writes it."""
    return {"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {message}",
            "reason": "InternalError", "details": {"causes": [{"message": message}]}, "code": 500}


def choose_protocol(offered: list[str]) -> str | None:
    return next((p for p in offered if p in PROTOCOLS), None)


async def exec_over_http(call: Call) -> Reply:
    """`exec`/`attach` asked without a WebSocket (SPDY, or a plain request): the same checks, then
    400, so a client that falls back from WebSocket prints the real reason."""
    query = {k: [v] for k, v in call.query.items()}
    await run_db(locate, call.kind, call.namespace, call.name, call.subresource, query)
    raise errors.BadRequest(f"Upgrade request required: {call.kind.plural}/{call.subresource} is served over "
                            f"WebSocket ({', '.join(PROTOCOLS)}) only")


def origin_allowed(headers: dict[str, str]) -> bool:
    """No Origin (not a browser), or the hub's own page (see the module's guarantees)."""
    origin = headers.get("origin")
    if origin is None:
        return True
    netloc = urlsplit(origin).netloc.lower()
    if netloc and netloc == headers.get("host", "").lower():
        return True
    domain, _ = split_domain_port(netloc)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


def stream_actor(request: Request) -> str:
    """Who opened the stream: a browser on the hub's own page is the dashboard's shell."""
    if "origin" in request.headers and request.headers.get("user-agent", "").startswith("Mozilla/"):
        return "dashboard"
    return request.actor


def user_actor(actor: str, user: str) -> str:
    """The dashboard's shell of a logged-in user is that user's spoke, `dashboard/<user>`, as the
    dashboard's other requests for them."""
    if actor != "dashboard" or not auth_enabled():
        return actor
    return f"dashboard/{re.sub(r'[^A-Za-z0-9._-]+', '-', user).strip('-')[:60] or 'user'}"


async def _deny(send: Send, scope: dict[str, Any], reply: Reply) -> None:
    if extensions.WEBSOCKET_DENIAL not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    await send({"type": "websocket.http.response.start", "status": reply.status,
                "headers": [(b"content-type", reply.content_type.encode()), (b"cache-control", b"no-cache, private")]})
    await send({"type": "websocket.http.response.body", "body": reply.body})


async def serve_stream(scope: dict[str, Any], receive: Receive, send: Send, *, idle: float | None = None,
                       clock: Clock = REAL, first_hold: float | None = None) -> None:
    """The ASGI websocket handler of an exec/attach path (see `is_stream_path`)."""
    started = REAL.monotonic()  # the traffic record's latency is on the hub's own clock
    if (await receive())["type"] != "websocket.connect":
        return
    kind, namespace, name, action = stream_kind(scope["path"]) or (None, "", "", "")
    request = Request({**scope, "method": "GET"}, b"")
    actor = stream_actor(request)
    tag = {"verb": "create", "resource": f"{kind.plural}/{action}" if kind else scope["path"],
           "namespace": namespace, "name": name}
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    where = traffic.scope("POST", scope["path"], {})
    try:
        if not origin_allowed(request.headers):
            raise errors.Forbidden(f"websocket origin {request.headers.get('origin')!r} is not allowed: "
                                   "only the hub's own page may open a stream")
        if kind is None:
            raise errors.NotFound(errors.NOT_FOUND)
        user = await gate.admit("POST", scope["path"], {}, scope.get("headers", []),  # create on the subresource
                                identified=request.identified,
                                client_chain=extensions.client_chain(scope.get("extensions") or {}))
        actor = user_actor(actor, user.name)
        target = await run_db(locate, kind, namespace, name, action, query)
        protocol = choose_protocol(list(scope.get("subprotocols") or []))
        if protocol is None:
            offered = list(scope.get("subprotocols") or [])
            raise errors.Forbidden(f"requested protocol(s) are not supported: [{' '.join(offered)}]; "
                                   f"supports [{' '.join(PROTOCOLS)}]")
    except errors.ApiError as exc:
        reply = error_response(exc)
        traffic.request_done(user_actor(actor, request.user.name) if request.user else actor, tag, reply.status,
                             started, request.user, where)
        await _deny(send, scope, reply)
        return
    answered = (scope.get("extensions") or {}).get(extensions.HANDSHAKE_ANSWERED)
    if answered is not None and answered.status() is not None:
        # the hub already answered the handshake (429: it took too long to get here): a client told to
        # try again must not have the command run now
        traffic.request_done(actor, tag, answered.status(), started, request.user, where)
        return
    await send({"type": "websocket.accept", "subprotocol": protocol})
    try:
        await Relay(target, receive, send, idle if idle is not None else stream_idle_seconds(), clock,
                    FIRST_MESSAGE_HOLD if first_hold is None else first_hold).run()
    finally:
        traffic.request_done(actor, tag, 101, started, request.user, where)


def go_duration(seconds: float) -> str:
    """Go's time.Duration text for whole seconds (4h0m0s, 1m30s, 8s), as the kubelet's flag shows it."""
    total = int(seconds)
    if total < 60:
        return f"{seconds:g}s"
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes}m{secs}s" if hours else f"{minutes}m{secs}s"


def idle_status(idle: float) -> dict[str, Any]:
    """The error channel's Status when the idle timeout ends a stream."""
    message = (f"stream closed: nothing was sent or received for {go_duration(idle)} (the streaming "
               f"connection idle timeout, KK_STREAM_IDLE_SECONDS)")
    return errors.Timeout(message).status()


def stream_idle_seconds() -> float:
    """The idle timeout: the environment's KK_STREAM_IDLE_SECONDS, else the setting, else 4 h."""
    raw = config.given("KK_STREAM_IDLE_SECONDS") or getattr(settings, "KK_STREAM_IDLE_SECONDS", None)
    try:
        seconds = float(raw) if raw is not None else DEFAULT_IDLE_SECONDS
    except ValueError:
        return DEFAULT_IDLE_SECONDS
    return seconds if seconds > 0 else DEFAULT_IDLE_SECONDS


class Relay:
    """One upgraded stream: the client's WebSocket and the kubelet's framed connection."""

    def __init__(self, target: StreamTarget, receive: Receive, send: Send, idle: float, clock: Clock = REAL,
                 first_hold: float = 0.0):
        self.target, self.receive, self.send, self.idle, self.clock = target, receive, send, idle, clock
        self.last_activity = clock.monotonic()
        self.first_at = self.last_activity + first_hold  # not before: the client may not have its streams yet

    async def run(self) -> None:
        try:
            frames, writer = await connect_upgraded(self.target.address, self.target.port, self.target.kubelet_path,
                                                    token=node_address.credential())
        except UpgradeRefused as refused:
            return await self._fail(f"unable to upgrade connection: {refused.message}")
        except (OSError, TimeoutError) as exc:
            return await self._fail(f"error dialing backend: {exc}")
        tasks = [asyncio.ensure_future(self._to_client(frames)), asyncio.ensure_future(self._to_kubelet(writer)),
                 asyncio.ensure_future(self._watch_idle())]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            writer.close()
        if tasks[2] in done and tasks[0] not in done:
            return await self._fail_with(idle_status(self.idle))  # ended for idleness, not by the command: say so
        await self._close()

    async def _fail(self, message: str) -> None:
        await self._fail_with(internal_error(message))

    async def _fail_with(self, status: dict[str, Any]) -> None:
        try:
            await self.send({"type": "websocket.send", "bytes": bytes((ERROR,)) + status_json(status)})
        except Exception:  # the client already left; nothing to tell it
            pass
        await self._close()

    async def _close(self) -> None:
        try:
            await self.send({"type": "websocket.close", "code": 1000})
        except Exception:  # the client already left; nothing to tell it
            pass

    async def _to_client(self, frames: FrameReader) -> None:
        while (item := await frames.next()) is not None:
            if (wait := self.first_at - self.clock.monotonic()) > 0:
                await self.clock.sleep(wait)
            self.last_activity = self.clock.monotonic()
            await self.send({"type": "websocket.send", "bytes": bytes((item[0],)) + item[1]})

    async def _to_kubelet(self, writer: asyncio.StreamWriter) -> None:
        while True:
            message = await self.receive()
            if message["type"] != "websocket.receive":
                return  # websocket.disconnect
            data = message.get("bytes")
            if data is None:
                data = (message.get("text") or "").encode()
            if not data:
                continue
            self.last_activity = self.clock.monotonic()
            writer.write(frame(data[0], data[1:]))
            await writer.drain()

    async def _watch_idle(self) -> None:
        while (left := self.last_activity + self.idle - self.clock.monotonic()) > 0:
            await self.clock.sleep(left)
