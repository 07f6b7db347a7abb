"""Websocket routing: the dashboard's sockets reach their consumers; any other upgrade gets a 404
Status (ASGI's denial response, which `control.serving.websocket_denial` teaches Daphne), never a 500."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from control.serving import websocket_denial
from control.serving.asgi import application


def _websocket(path: str, *, denial: bool = True) -> list[dict]:
    scope = {"type": "websocket", "path": path, "query_string": b"", "headers": [], "subprotocols": [],
             "extensions": {websocket_denial.EXTENSION: {}} if denial else {}}
    sent: list[dict] = []

    async def receive():
        return {"type": "websocket.connect"}

    async def send(message):
        sent.append(message)

    asyncio.run(application(scope, receive, send))
    return sent


@pytest.mark.parametrize("path", ["/api/v1/namespaces/default/pods/x/log", "/apis/foo/v1/bar",
                                  "/kubekitchen/changes", "/nowhere", "/api/ws/live/"])
def test_an_upgrade_nobody_serves_is_a_404_status(path):
    start, body = _websocket(path)
    assert start["type"] == "websocket.http.response.start" and start["status"] == 404
    assert (b"content-type", b"application/json") in start["headers"]
    status = json.loads(body["body"])
    assert body["type"] == "websocket.http.response.body" and body["body"].endswith(b"\n")
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "NotFound", 404)


def test_without_the_extension_the_handshake_is_closed_not_crashed():
    assert _websocket("/api/v1/namespaces/default/pods/x/log", denial=False) == [{"type": "websocket.close",
                                                                           "code": 1000}]


def test_the_dashboard_sockets_are_routed_to_their_consumers():
    from dashboard.routing import serves_websocket

    assert serves_websocket("/ws/live/") and serves_websocket("/ws/wire/")
    assert not serves_websocket("/ws/nothing/") and not serves_websocket("/api/v1/pods")


def test_daphne_answers_the_denial_with_the_status_on_the_wire(hub):
    """Through the real server: status line, JSON Status, connection closed, no traceback logged."""
    request = (b"GET /apis/foo/v1/bar HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
               b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
    with socket.create_connection(("127.0.0.1", hub.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 404 Not Found") and b"content-type: application/json" in head.lower()
    assert json.loads(body)["reason"] == "NotFound"
    assert "Traceback" not in hub.log.read_text()


def test_a_refused_upgrade_leaves_one_traffic_record():
    from control.api import traffic

    heard: list[dict] = []
    stop = traffic.listen(heard.append)
    try:
        _websocket("/api/v1/namespaces/default/pods/x/log")
    finally:
        stop()
    assert [(r["type"], r["code"], r["resource"]) for r in heard] == [
        ("request", 404, "/api/v1/namespaces/default/pods/x/log")]
