"""The ASGI application Daphne serves: the Kubernetes API paths go to the hub's lean app,
everything else (the dashboard, later) to Django."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from control.api.app import hub_app, is_api_path  # noqa: E402


async def application(scope, receive, send):
    if scope["type"] == "http" and is_api_path(scope["path"]):
        await hub_app(scope, receive, send)
    else:
        await django_app(scope, receive, send)
