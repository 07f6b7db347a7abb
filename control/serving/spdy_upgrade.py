"""SPDY over a plain HTTP/1.1 Upgrade for Daphne: kubectl's port-forward without WebSocket (its
fallback, and the only way before 1.30: `POST .../portforward` with `Connection: Upgrade`,
`Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version: portforward.k8s.io`).

Daphne hands an application only HTTP requests and WebSockets. After `install()`, such a request
reaches the application as a websocket scope instead, so the one portforward handler serves it:
the offered subprotocols are the request's stream protocols with the tunnelling prefix
(`SPDY/3.1+portforward.k8s.io`, what kubectl offers over WebSocket), `websocket.accept` writes
`101 Switching Protocols` (`Upgrade: SPDY/3.1`, the chosen `X-Stream-Protocol-Version`), and from
then on the connection's raw bytes are `websocket.receive`/`websocket.send` bytes. A refusal
(`websocket.http.response.*`, see `websocket_denial`) is written as an ordinary HTTP answer.

Guarantees: only an upgrade to SPDY/3.1 offering `portforward.k8s.io` is taken over (exec and
attach over SPDY keep their plain-HTTP answer); every other request goes through Daphne unchanged;
the connection is closed when the application closes it (also over TLS), and the application hears
`websocket.disconnect` when the client goes. Installing twice is harmless.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any
from urllib.parse import unquote

from twisted.internet.protocol import Protocol

from control.serving import websocket_denial

PORTFORWARD = b"portforward.k8s.io"
PREFIX = "SPDY/3.1+"
EXTENSION = "kubekitchen.dev/spdy-upgrade"  # marks the scopes that are really raw SPDY


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def wants_spdy_portforward(headers: Any) -> list[str] | None:
    """The stream protocols offered when the request (Twisted `Headers`) asks for SPDY port-forward."""
    raw_upgrade = headers.getRawHeaders(b"upgrade")
    if not raw_upgrade:  # nearly every request: no second header lookup
        return None
    upgrade = b",".join(raw_upgrade).lower()
    offered = [v.strip() for raw in headers.getRawHeaders(b"x-stream-protocol-version") or []
               for v in raw.split(b",") if v.strip()]
    if b"spdy/3.1" not in upgrade or PORTFORWARD not in offered:
        return None
    return [PREFIX + v.decode("latin-1") for v in offered]


class SpdyUpgradeProtocol(Protocol):
    """The connection after the hand-over: bytes to and from the application as websocket messages."""

    def __init__(self, server: Any, scope: dict[str, Any]):
        self.server, self.scope = server, scope
        self.queue: Any = None
        self.refusal: dict[str, Any] | None = None

    def connectionMade(self) -> None:  # noqa: N802 (Twisted's names)
        if hasattr(self.transport, "setTcpNoDelay"):
            self.transport.setTcpNoDelay(True)  # small frames must not wait for a delayed ACK
        self.server.protocol_connected(self)
        self.queue = self.server.create_application(self, self.scope)
        if self.queue is not None:
            self.queue.put_nowait({"type": "websocket.connect"})

    def dataReceived(self, data: bytes) -> None:  # noqa: N802
        if self.queue is not None:
            self.queue.put_nowait({"type": "websocket.receive", "bytes": data})

    def connectionLost(self, reason: Any = None) -> None:  # noqa: N802
        if self.queue is not None:
            self.queue.put_nowait({"type": "websocket.disconnect", "code": 1006})
        self.server.protocol_disconnected(self)

    def handle_reply(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "websocket.accept":
            version = (message.get("subprotocol") or "").removeprefix(PREFIX).encode("latin-1")
            self.transport.write(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
                                 b"X-Stream-Protocol-Version: " + version + b"\r\n\r\n")
        elif kind == "websocket.send":
            data = message.get("bytes")
            self.transport.write(data if data is not None else (message.get("text") or "").encode())
        elif kind == "websocket.close":
            self.transport.loseConnection()
        elif kind == "websocket.http.response.start":
            self.refusal = {"status": int(message["status"]), "headers": list(message.get("headers", [])), "body": b""}
        elif kind == "websocket.http.response.body" and self.refusal is not None:
            self.refusal["body"] += message.get("body", b"")
            if not message.get("more_body", False):
                head = f"HTTP/1.1 {self.refusal['status']} {_phrase(self.refusal['status'])}\r\n"
                lines = b"".join(bytes(n) + b": " + bytes(v) + b"\r\n" for n, v in self.refusal["headers"])
                body = self.refusal["body"]
                self.transport.write(head.encode("latin-1") + lines + f"Content-Length: {len(body)}\r\n"
                                     f"Connection: close\r\n\r\n".encode("latin-1") + body)
                self.transport.loseConnection()

    def check_timeouts(self) -> None:
        """Daphne asks every connection; the application's idle timeout is what applies here."""

    def handle_exception(self, exception: Exception) -> None:
        self.transport.loseConnection()


def hand_over(request: Any, offered: list[str]) -> None:
    """Give the request's connection to a `SpdyUpgradeProtocol` (as Daphne does for WebSocket)."""
    path = request.path.decode("ascii")
    query = request.uri.split(b"?", 1)[1] if b"?" in request.uri else b""
    client = [str(request.client.host), request.client.port] if hasattr(request.client, "host") else None
    scope = {"type": "websocket", "path": unquote(path), "raw_path": request.path, "query_string": query,
             "headers": [(name.lower(), value) for name, values in request.requestHeaders.getAllRawHeaders()
                         for value in values],
             "subprotocols": offered, "scheme": "ws", "client": client,
             "server": [str(request.host.host), request.host.port],
             "extensions": {websocket_denial.EXTENSION: {}, EXTENSION: {}}}
    protocol = SpdyUpgradeProtocol(request.server, scope)
    transport, request.transport = request.transport, None
    if hasattr(transport, "wrappedProtocol"):  # TLS wraps the connection's protocol
        transport.wrappedProtocol = protocol
    else:
        transport.protocol = protocol
    # The HTTP channel registered itself as the connection's producer; left there, a TLS connection
    # never closes (Twisted's TLS waits for the producer to go before its close_notify), so the
    # application's close, e.g. the idle timeout, would never reach kubectl over https.
    transport.unregisterProducer()
    protocol.makeConnection(transport)
    request.server.protocol_disconnected(request)
    request.channel._networkProducer.resumeProducing()  # keep reading the connection, as Daphne does


def install() -> None:
    """Teach Daphne the hand-over (called where the ASGI application is built)."""
    from daphne import http_protocol

    if getattr(http_protocol.WebRequest.process, "spdy_upgrade", False):
        return
    original = http_protocol.WebRequest.process

    def process(self: Any) -> Any:
        offered = wants_spdy_portforward(self.requestHeaders)
        if offered is not None:
            try:
                self.path.decode("ascii")
                self.uri.decode("ascii")
            except UnicodeDecodeError:
                return original(self)  # Daphne's own 400
            return hand_over(self, offered)
        return original(self)

    process.spdy_upgrade = True  # type: ignore[attr-defined]
    http_protocol.WebRequest.process = process
