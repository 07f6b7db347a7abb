"""The ASGI application Daphne serves: the hub's HTTP API (and later the dashboard's websockets)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

application = get_asgi_application()
