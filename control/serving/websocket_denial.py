"""ASGI's Websocket Denial Response for Daphne, so a websocket upgrade can be refused with a real
HTTP answer (a 404 Kubernetes Status) instead of Daphne's bodyless 403 or a 500; an upgrade the hub
is slow to decide is answered with a Status, never a TCP reset; and a send after the client closed
is dropped, never raised into the application.

Guarantees: after `install(decision=...)`:
- every websocket scope Daphne creates advertises the `websocket.http.response` extension, and an
  application that answers the handshake with `websocket.http.response.start` +
  `websocket.http.response.body` (the ASGI spec's messages) has exactly that status, those headers
  and that body written to the client, then the connection closed.
- an upgrade the application has neither accepted nor refused `decision` seconds after its
  request arrived (autobahn's batched timer rounds that instant down to a whole second: up to 1 s
  sooner) is answered 429 TooManyRequests with `Retry-After: 1` and the Status kube-apiserver's
  fairness answers when a request waited too long in its queue (its wait limit is 15 s), then the
  connection closed. The application then gets `websocket.disconnect`, and the scope's
  `kk.handshake.answered` extension (`control.api.extensions`) says 429 from then on, so an
  application deciding late can see it must not act (its accept would be dropped anyway).
  Without this, autobahn's opening-handshake timeout (Daphne passes 5 s) aborted the connection,
  a TCP reset the client saw as `Connection reset by peer` (`kubectl exec` on a busy hub, issue
  20), and Daphne's connect timeout (20 s) answered a bodyless 403 "Access denied". Daphne hands
  the WebSocket protocol the whole request at once, after Twisted's HTTP channel read it under
  KK_HTTP_HEADER_TIMEOUT, so this bound only ever measures the hub's own slowness, never a client's.
- a `websocket.send` that comes once the closing handshake has begun (the browser closed its tab,
  or the server closed) is dropped: RFC 6455 allows no data frame after a Close frame, and the
  application, busy sending when the client left, learns of it from its `websocket.disconnect`.
  Daphne handed it to autobahn, which raised `Disconnected` back into the application: a
  traceback in the instructor's terminal each time a page was closed while the hub was sending
  to it.
- Everything else Daphne does is unchanged. Installing twice only changes the bound.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from control import seats
from control.api.extensions import HANDSHAKE_ANSWERED
from control.api.extensions import WEBSOCKET_DENIAL as EXTENSION
from control.api.responses import error_response

_bounds: dict[str, float] = {"decision": 15.0}


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def too_slow_answer() -> dict[str, Any]:
    """The denial written when the hub did not decide in time: fairness's 429 and its Status."""
    reply = error_response(seats.too_many_requests())
    headers = [(b"content-type", reply.content_type.encode()), (b"cache-control", b"no-cache, private")]
    headers += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in reply.headers.items()]
    return {"status": reply.status, "headers": headers, "body": [reply.body]}


class HandshakeAnswered:
    """The `kk.handshake.answered` extension of one websocket scope (see the module)."""

    def __init__(self, protocol: Any) -> None:
        self._protocol = protocol

    def status(self) -> int | None:
        """The status the server answered the handshake with by itself (the bound's 429), else None."""
        return self._protocol._answered_by_server


def advertise(protocol: Any, scope: dict[str, Any]) -> None:
    """The extensions a websocket scope of this protocol carries (Daphne's create_application adds them)."""
    scope.setdefault("extensions", {}).update({EXTENSION: {}, HANDSHAKE_ANSWERED: HandshakeAnswered(protocol)})


def install(*, decision: float = 15.0) -> None:
    """Teach Daphne the denial response and the decision bound (called where the ASGI application
    is built)."""
    from autobahn.websocket.types import ConnectionDeny
    from daphne import server, ws_protocol

    _bounds["decision"] = decision
    if getattr(ws_protocol.WebSocketFactory.protocol, "denial_response", False):
        return

    class DenyingWebSocketProtocol(ws_protocol.WebSocketProtocol):
        denial_response = True
        _denial: dict[str, Any] | None = None
        _answered_by_server: int | None = None  # the status of a denial the bound wrote (HandshakeAnswered)

        def connectionMade(self) -> None:  # noqa: N802
            # autobahn arms its opening-handshake timer from this attribute (the factory's, Daphne's
            # 5 s, only when the protocol has none): the hub's decision bound instead.
            self.openHandshakeTimeout = _bounds["decision"]
            super().connectionMade()

        def handle_reply(self, message: dict[str, Any]) -> None:
            kind = message.get("type")
            if kind == "websocket.http.response.start" and hasattr(self, "handshake_deferred"):
                self._denial = {"status": int(message["status"]), "headers": list(message.get("headers", [])),
                                "body": []}
            elif kind == "websocket.http.response.body" and self._denial is not None:
                self._denial["body"].append(message.get("body", b""))
                if not message.get("more_body", False):
                    self._deny()
            elif kind == "websocket.send" and self.state in (self.STATE_CLOSING, self.STATE_CLOSED):
                return  # the peer is gone or going (above); its websocket.disconnect is on its way
            else:
                super().handle_reply(message)

        def _deny(self) -> None:
            status = self._denial["status"]
            # autobahn answers a denied handshake through sendHttpErrorResponse (below)
            self.handshake_deferred.errback(ConnectionDeny(code=status, reason=_phrase(status)))
            del self.handshake_deferred
            self.server.protocol_disconnected(self)

        def onOpenHandshakeTimeout(self) -> None:  # noqa: N802
            if self.state == self.STATE_CONNECTING and hasattr(self, "handshake_deferred"):
                # The request is whole and with the application, which has not decided: answer, not
                # autobahn's abort (a TCP reset).
                self.openHandshakeTimeoutCall = None
                self._denial = too_slow_answer()
                self._answered_by_server = self._denial["status"]
                self._deny()
                return
            super().onOpenHandshakeTimeout()

        def check_timeouts(self) -> None:
            if self.state == self.STATE_CONNECTING:
                return  # Daphne's connect timeout would answer a bodyless 403: the decision bound answers
            super().check_timeouts()

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
            advertise(protocol, scope)
        return original(self, protocol, scope)

    server.Server.create_application = create_application
    ws_protocol.WebSocketFactory.protocol = DenyingWebSocketProtocol
