"""The dashboard's websocket routes, for `control.asgi` to mount."""

from django.urls import path

from dashboard.consumers import LiveConsumer, WireConsumer, WireH2Consumer

websocket_urlpatterns = [
    path("ws/live/", LiveConsumer.as_asgi()),
    path("ws/wire/", WireConsumer.as_asgi()),
    path("ws/wire/h2/", WireH2Consumer.as_asgi()),
]


def serves_websocket(url_path: str) -> bool:
    """Whether one of the routes above takes a websocket on this path (any other is refused)."""
    return any(route.pattern.match(url_path.lstrip("/")) for route in websocket_urlpatterns)
