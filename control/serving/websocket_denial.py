"""ASGI's Websocket Denial Response for Daphne, so a websocket upgrade can be refused with a real
HTTP answer (a 404 Kubernetes Status) instead of Daphne's bodyless 403 or a 500.

Guarantees: after `install()`, every websocket scope Daphne creates advertises the
`websocket.http.response` extension, and an application that answers the handshake with
`websocket.http.response.start` + `websocket.http.response.body` (the ASGI spec's messages) has
exactly that status, those headers and that body written to the client, then the connection
closed. Everything else Daphne does is unchanged. Installing twice is harmless.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from control.api.extensions import WEBSOCKET_DENIAL as EXTENSION


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def install() -> None:
    """Teach Daphne the denial response (called where the ASGI application is built)."""
    from autobahn.websocket.types import ConnectionDeny
    from daphne import server, ws_protocol

    if getattr(ws_protocol.WebSocketFactory.protocol, "denial_response", False):
        return

    class DenyingWebSocketProtocol(ws_protocol.WebSocketProtocol):
        denial_response = True
        _denial: dict[str, Any] | None = None

        def handle_reply(self, message: dict[str, Any]) -> None:
            kind = message.get("type")
            if kind == "websocket.http.response.start" and hasattr(self, "handshake_deferred"):
                self._denial = {"status": int(message["status"]), "headers": list(message.get("headers", [])),
                                "body": []}
            elif kind == "websocket.http.response.body" and self._denial is not None:
                self._denial["body"].append(message.get("body", b""))
                if not message.get("more_body", False):
                    status = self._denial["status"]
                    # autobahn answers a denied handshake through sendHttpErrorResponse (below)
                    self.handshake_deferred.errback(ConnectionDeny(code=status, reason=_phrase(status)))
                    del self.handshake_deferred
                    self.server.protocol_disconnected(self)
            else:
                super().handle_reply(message)

        def sendHttpErrorResponse(self, code: int, reason: str, responseHeaders: Any = None) -> None:  # noqa: N802
            if self._denial is None:
                super().sendHttpErrorResponse(code, reason, responseHeaders)
                return
            body = b"".join(self._denial["body"])
            head = f"HTTP/1.1 {code} {reason}\r\n".encode("latin-1")
            for name, value in self._denial["headers"]:
                head += bytes(name) + b": " + bytes(value) + b"\r\n"
            head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1")
            self.sendData(head + body)

    original = server.Server.create_application

    def create_application(self: Any, protocol: Any, scope: dict[str, Any]) -> Any:
        if isinstance(protocol, DenyingWebSocketProtocol):
            scope.setdefault("extensions", {})[EXTENSION] = {}
        return original(self, protocol, scope)

    server.Server.create_application = create_application
    ws_protocol.WebSocketFactory.protocol = DenyingWebSocketProtocol
