"""The dashboard's websocket routes, for `control.asgi` to mount."""

from django.urls import path

from dashboard.consumers import LiveConsumer, WireConsumer

websocket_urlpatterns = [
    path("ws/live/", LiveConsumer.as_asgi()),
    path("ws/wire/", WireConsumer.as_asgi()),
]
