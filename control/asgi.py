"""The ASGI application Daphne serves: the Kubernetes API paths go to the hub's lean app, the
dashboard's websockets to its Channels consumers, everything else (the dashboard's pages) to Django.

A websocket upgrade on any other path (an API path the hub does not serve as a websocket, such as
`.../pods/x/exec`, or no path anyone serves) is refused with a 404 Kubernetes Status through ASGI's
Websocket Denial Response (`control.websocket_denial` teaches it to Daphne), never a 500.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from channels.routing import URLRouter  # noqa: E402

import time  # noqa: E402

from control import errors, websocket_denial  # noqa: E402
from control.api import traffic  # noqa: E402
from control.api.app import hub_app, is_api_path  # noqa: E402
from control.api.request import Request  # noqa: E402
from control.api.responses import error_response  # noqa: E402
from dashboard.routing import serves_websocket, websocket_urlpatterns  # noqa: E402

websocket_denial.install()
websocket_app = URLRouter(websocket_urlpatterns)
NOT_FOUND = errors.NOT_FOUND


async def refuse_websocket(scope, receive, send) -> None:
    """Answer the handshake with a 404 Status (a bodyless close where the server cannot); like
    any request to the hub, it leaves one traffic record."""
    started = time.perf_counter()
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


async def application(scope, receive, send):
    if scope["type"] == "http" and is_api_path(scope["path"]):
        await hub_app(scope, receive, send)
    elif scope["type"] == "websocket":
        if serves_websocket(scope["path"]) and not is_api_path(scope["path"]):
            await websocket_app(scope, receive, send)
        else:
            await refuse_websocket(scope, receive, send)
    else:
        await django_app(scope, receive, send)
