"""The ASGI application Daphne serves: the Kubernetes API paths go to the hub's lean app, the
dashboard's websockets to its Channels consumers, everything else (the dashboard's pages) to Django."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from channels.routing import URLRouter  # noqa: E402

from control.api.app import hub_app, is_api_path  # noqa: E402
from dashboard.routing import websocket_urlpatterns  # noqa: E402

websocket_app = URLRouter(websocket_urlpatterns)


async def application(scope, receive, send):
    if scope["type"] == "http" and is_api_path(scope["path"]):
        await hub_app(scope, receive, send)
    elif scope["type"] == "websocket":
        await websocket_app(scope, receive, send)
    else:
        await django_app(scope, receive, send)
