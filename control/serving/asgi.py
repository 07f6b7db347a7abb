"""The ASGI dispatcher Daphne serves (its entry point is `control.asgi`, which first installs
`control.serving`'s adjustments): the Kubernetes API paths go to the hub's lean app, the
dashboard's websockets to its Channels consumers, everything else (the dashboard's pages) to Django
(its handler on a few long-lived threads, `control.serving.django_handler`).

The exec/attach subresources a kind declares (`.../pods/x/exec`) are websockets of the hub
(`control.api.streams`), and so is portforward (`control.api.portforward`; kubectl's SPDY over a
plain HTTP Upgrade reaches it as a websocket too, `control.serving.spdy_upgrade`). A websocket upgrade on
any other path (an API path the hub does not serve as a websocket, such as `.../pods/x/log`, or no
path anyone serves) is refused with a 404 Kubernetes Status through ASGI's Websocket Denial
Response (`control.serving.websocket_denial` teaches it to Daphne), never a 500.

Before any of that, a request whose Host header is not one of `ALLOWED_HOSTS` (`control.serving.hosts`: DNS
rebinding) is refused with a 400 Status on every path, and the dashboard's websockets take only a
browser whose Origin is one of them (Channels' AllowedHostsOriginValidator): a foreign page cannot
open them.

Guarantees: it speaks the ASGI lifespan protocol. At `lifespan.startup` the hub's change feed (with
log compaction) and its CRD follower start on the serving loop, before any request; at
`lifespan.shutdown` they stop. Daphne sends no lifespan events, so `runhub` drives them itself
(`ServedLifespan`); a server that does (uvicorn, hypercorn) needs nothing more. Under a server that
neither sends them nor is `runhub` (`manage.py runserver`, which is Daphne's, or `daphne
control.asgi:application`), the first request of a loop starts the hub instead: without that, no
watch there would ever hear of a change.
"""

import asyncio
import logging
import os
from typing import Any, Awaitable, Callable

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

from control.serving.django_handler import pooled_asgi_application  # noqa: E402

django_app = pooled_asgi_application()  # Django's handler, its sync work on a few long-lived threads

from channels.routing import URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from channels.sessions import SessionMiddlewareStack  # noqa: E402

from control import errors  # noqa: E402
from control.serving import hosts, websocket_denial  # noqa: E402
from control.api import app as hub  # noqa: E402
from control.api import traffic  # noqa: E402
from control.api.streams import is_stream_path, serve_stream  # noqa: E402
from control.api.portforward import is_portforward_path, serve_portforward  # noqa: E402
from control.api.app import hub_app, is_api_path  # noqa: E402
from control.api.request import Request  # noqa: E402
from control.api.responses import error_response  # noqa: E402
from control.clock import REAL as clock  # noqa: E402
from dashboard import hub as dashboard_hub  # noqa: E402
from dashboard.routing import serves_websocket, websocket_urlpatterns  # noqa: E402

log = logging.getLogger(__name__)
# The dashboard's websockets read the browser's login from its Django session (cookie).
websocket_app = AllowedHostsOriginValidator(SessionMiddlewareStack(URLRouter(websocket_urlpatterns)))
NOT_FOUND = errors.NOT_FOUND


async def refuse_websocket(scope, receive, send) -> None:
    """Answer the handshake with a 404 Status (a bodyless close where the server cannot); like
    any request to the hub, it leaves one traffic record."""
    started = clock.monotonic()
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    traffic.request_done(Request({**scope, "method": "GET"}, b"").actor, {"verb": "get", "resource": scope["path"]},
                         404, started)
    if websocket_denial.EXTENSION not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1000})
        return
    reply = error_response(errors.NotFound(NOT_FOUND))
    await send({"type": "websocket.http.response.start", "status": reply.status,
                "headers": [(b"content-type", reply.content_type.encode()),
                            (b"cache-control", b"no-cache, private")]})
    await send({"type": "websocket.http.response.body", "body": reply.body})

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


_started: set[asyncio.AbstractEventLoop] = set()  # loops the hub was started on, by lifespan or request


async def lifespan(receive: Receive, send: Send) -> None:
    """The lifespan protocol: start the hub on startup, stop it on shutdown; a failed start is
    reported as `lifespan.startup.failed` (the server then refuses to serve)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await hub.startup()
            except Exception as exc:
                log.exception("the hub failed to start")
                await send({"type": "lifespan.startup.failed", "message": f"the hub failed to start: {exc}"})
                return
            _started.add(asyncio.get_running_loop())
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            _started.discard(asyncio.get_running_loop())
            try:
                await hub.shutdown()
                await dashboard_hub.close_clients()  # the dashboard's one client of the hub, per process
            except Exception as exc:
                log.exception("the hub failed to stop cleanly")
                await send({"type": "lifespan.shutdown.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _start_if_no_lifespan() -> None:
    """The hub on this loop, if no lifespan came (see the module's docstring); idempotent per loop."""
    if asyncio.get_running_loop() in _started:
        return
    try:
        await hub.startup()
        _started.add(asyncio.get_running_loop())
    except Exception:  # the request still gets its own answer (a Status); the next one tries again
        log.exception("the hub failed to start")


async def refuse_host(scope, receive, send) -> None:
    """A Host this server does not answer to: 400 with a Status, whatever the path."""
    host = hosts.host_header(scope) or ""
    reply = error_response(errors.BadRequest(f"the server does not answer to the host {host!r}: "
                                             "see KK_ALLOWED_HOSTS"))
    headers = [(b"content-type", reply.content_type.encode())]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": reply.status,
                    "headers": [*headers, (b"content-length", str(len(reply.body)).encode())]})
        await send({"type": "http.response.body", "body": reply.body})
        return
    if (await receive())["type"] != "websocket.connect":
        return
    if websocket_denial.EXTENSION not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    await send({"type": "websocket.http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": reply.body})


async def application(scope, receive, send):
    if scope["type"] in ("http", "websocket") and not hosts.host_allowed(scope):
        await refuse_host(scope, receive, send)
    elif scope["type"] == "http" and is_api_path(scope["path"]):
        await _start_if_no_lifespan()
        await hub_app(scope, receive, send)
    elif scope["type"] == "websocket":
        if serves_websocket(scope["path"]) and not is_api_path(scope["path"]):
            await _start_if_no_lifespan()
            await websocket_app(scope, receive, send)
        elif is_stream_path(scope["path"]):  # pods/NAME/exec and attach (control.api.streams)
            await _start_if_no_lifespan()
            await serve_stream(scope, receive, send)
        elif is_portforward_path(scope["path"]):  # pods/NAME/portforward (control.api.portforward)
            await _start_if_no_lifespan()
            await serve_portforward(scope, receive, send)
        else:
            await refuse_websocket(scope, receive, send)  # nothing to start for a refusal
    elif scope["type"] == "lifespan":
        await lifespan(receive, send)
    else:
        await django_app(scope, receive, send)


class ServedLifespan:
    """Drives an ASGI app's lifespan for a server that does not (Daphne): `startup()` before the
    server listens, `shutdown()` when it stops, both on the loop the app serves on."""

    def __init__(self, app: Callable[..., Awaitable[None]]):
        self.app = app
        self._inbox: asyncio.Queue = asyncio.Queue()
        self._replies: asyncio.Queue = asyncio.Queue()
        self._task: asyncio.Task | None = None

    async def _send(self, message: dict[str, Any]) -> None:
        await self._replies.put(message)

    async def _exchange(self, event: str) -> None:
        assert self._task is not None
        await self._inbox.put({"type": f"lifespan.{event}"})
        reply = asyncio.ensure_future(self._replies.get())
        await asyncio.wait((reply, self._task), return_when=asyncio.FIRST_COMPLETED)
        if not reply.done():  # the app ended its lifespan without answering
            reply.cancel()
            self._task.result()  # its exception, if it raised one
            raise RuntimeError(f"the application ended without answering lifespan.{event}")
        if reply.result()["type"] != f"lifespan.{event}.complete":
            raise RuntimeError(reply.result().get("message") or reply.result()["type"])

    async def startup(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        self._task = asyncio.ensure_future(self.app(scope, self._inbox.get, self._send))
        await self._exchange("startup")

    async def shutdown(self) -> None:
        if self._task is None or self._task.done():
            return
        await self._exchange("shutdown")
        await self._task
