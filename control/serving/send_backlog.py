"""How far a client is behind in reading its answer, for Daphne: the ASGI `send` of Daphne never
waits for the client (Twisted buffers whatever is written), so a watcher that does not read would
make the hub's memory grow without bound. This module lets the hub see that buffer and drop it.

Guarantees: after `install()`, every HTTP scope Daphne creates carries the extension
`kk.send.backlog`, an object with `unsent() -> int` (bytes written for this connection and not
yet taken by the kernel: the transport's buffers, TLS's included) and `abort()` (drop the
connection and its buffers now, as Twisted's abortConnection). Other scopes are unchanged; under
another server (uvicorn, the in-process tests) the extension is absent and the hub relies on that
server's own flow control. Installing twice is harmless.

Over HTTP/2 (ALPN `h2` on the HTTPS port) one connection carries many requests, each a stream:
`unsent()` also counts the bytes Twisted's H2Connection holds back for this stream (its flow-control
window is spent: the client does not read this stream), and `abort()` resets only this stream
(RST_STREAM) and drops what was queued for it, as kube-apiserver ends one slow watch, not the
client's other requests on the same connection; the application is told the client is gone.
"""

from __future__ import annotations

from typing import Any

from control.api.extensions import SEND_BACKLOG as EXTENSION


def _buffered(transport: Any) -> int:
    """The bytes waiting in one Twisted transport (abstract.FileDescriptor, or TLS's cleartext queue)."""
    total = 0
    data = getattr(transport, "dataBuffer", None)
    if isinstance(data, (bytes, bytearray, memoryview)):
        total += len(data) - int(getattr(transport, "offset", 0) or 0)
    total += int(getattr(transport, "_tempDataLen", 0) or 0)
    total += sum(len(chunk) for chunk in getattr(transport, "_appSendBuffer", None) or ())
    return total


class Backlog:
    def __init__(self, request: Any):
        self.request = request  # daphne's WebRequest (a twisted.web.http.Request)

    def _h2(self) -> tuple[Any, Any] | None:
        """(H2Connection, H2Stream) when this request is an HTTP/2 stream, else None."""
        channel = getattr(self.request, "channel", None)
        connection = getattr(channel, "_conn", None)
        if connection is None or not hasattr(connection, "_outboundStreamQueues"):
            return None
        return connection, channel

    def _transport(self) -> Any:
        h2 = self._h2()
        channel = h2[0] if h2 else getattr(self.request, "channel", None)
        return getattr(channel, "transport", None)

    def unsent(self) -> int:
        total, transport, seen = 0, self._transport(), 0
        while transport is not None and seen < 4:  # TLS wraps TCP: follow the chain a few steps
            total += _buffered(transport)
            transport, seen = getattr(transport, "transport", None), seen + 1
        h2 = self._h2()
        if h2 is not None:
            connection, stream = h2
            queued = connection._outboundStreamQueues.get(stream.streamID, ())
            total += sum(len(part) for part in queued if isinstance(part, (bytes, bytearray, memoryview)))
        return total

    def abort(self) -> None:
        h2 = self._h2()
        if h2 is not None:
            connection, stream = h2
            if stream.streamID not in connection.streams:
                return  # already ended or reset
            from twisted.internet.error import ConnectionLost
            from twisted.python.failure import Failure

            # As Twisted does for a stream the client resets: the request learns first (Daphne sends
            # the application http.disconnect), then the stream and its queue are dropped.
            stream.connectionLost(Failure(ConnectionLost("watch closed: the client stopped reading")))
            connection.abortRequest(stream.streamID)
            return
        transport = self._transport()
        if transport is not None:
            transport.abortConnection()


def install() -> None:
    """Give Daphne's HTTP scopes the extension (called where the ASGI application is built)."""
    from daphne import http_protocol, server

    if getattr(server.Server.create_application, "_kk_backlog", False):
        return
    original = server.Server.create_application

    def create_application(self: Any, protocol: Any, scope: dict[str, Any]) -> Any:
        if scope.get("type") == "http" and isinstance(protocol, http_protocol.WebRequest):
            scope.setdefault("extensions", {})[EXTENSION] = Backlog(protocol)
        return original(self, protocol, scope)

    create_application._kk_backlog = True  # type: ignore[attr-defined]
    server.Server.create_application = create_application
