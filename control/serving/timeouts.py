"""Header and idle timeouts for the connections Daphne (Twisted's HTTPChannel) serves, as
kube-apiserver's http.Server has them (ReadHeaderTimeout 32 s, IdleTimeout 90 s).

Guarantees, after `install(header=..., idle=...)`:
- idle: a connection on which nothing arrives for `idle` seconds while no request is being
  answered (a client that connects and sends nothing; a kept-alive connection between requests;
  a body that stops arriving) is closed. Twisted suspends this timer while a request is answered,
  so a watch or `logs -f` that streams for half an hour is never cut by it (Daphne's
  `http_timeout`, a limit on the whole response, stays off for that reason).
- header: once the first byte of a request arrives, its request line and headers must all arrive
  within `header` seconds, however slowly they trickle (a slowloris resets the idle timer with
  every byte, not this one); otherwise the connection is closed. The timer exists only while
  headers are awaited (none is made when they come in the request's first read), and a body that
  follows them is not bound by it (the idle bound covers a body that stops arriving).
- HTTP/2 (ALPN `h2` on the HTTPS port), as Go's http2 server bounds it: idle counts only while the
  connection has no open stream (Twisted's H2Connection would otherwise cut a quiet watch whose client
  sends no PING); header: a frame, or a header block split over CONTINUATION frames, begun must be
  complete within `header` seconds (an HTTP/2 slowloris trickles the bytes of one frame).
- Nothing else changes; installing again only changes the two bounds.

`control.serving.install()` installs it with KK_HTTP_HEADER_TIMEOUT and KK_HTTP_IDLE_TIMEOUT.
"""

from __future__ import annotations

from typing import Any

_bounds: dict[str, float] = {}
_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def install(*, header: float, idle: float) -> None:
    """Bound every HTTP/1.1 and HTTP/2 connection Daphne accepts from now on."""
    from daphne import http_protocol
    from twisted.web import http

    _bounds.update(header=header, idle=idle)
    if getattr(http.HTTPChannel, "_kk_bounded", False):
        return
    channel = http.HTTPChannel
    build, received, headers_done, content_done, lost = (
        http_protocol.HTTPFactory.buildProtocol, channel.dataReceived, channel.allHeadersReceived,
        channel.allContentReceived, channel.connectionLost)

    def build_protocol(self: Any, addr: Any) -> Any:
        protocol = build(self, addr)
        protocol.timeOut = _bounds["idle"]  # Twisted's idle timeout (its default: 60 s)
        return protocol

    def data_received(self: Any, data: bytes) -> None:
        # A request begins with these bytes: its headers are timed from now. The timer is made
        # only when they did not all come in this one read (the common case needs none).
        begins = bool(data) and not self._handlingRequest and not self._kk_in_body and self._kk_header_call is None
        heads = self._kk_heads
        received(self, data)
        if begins and self._kk_heads == heads and not self._kk_lost:
            self._kk_header_call = self.callLater(_bounds["header"], _headers_too_slow, self)

    def all_headers_received(self: Any) -> None:
        _cancel(self)
        self._kk_heads, self._kk_in_body = self._kk_heads + 1, True
        headers_done(self)

    def all_content_received(self: Any) -> None:
        self._kk_in_body = False  # the body's bytes are not a slow header; the next request's are timed again
        content_done(self)

    def connection_lost(self: Any, reason: Any) -> None:
        self._kk_lost = True
        _cancel(self)
        lost(self, reason)

    http_protocol.HTTPFactory.buildProtocol = build_protocol
    channel.dataReceived = data_received
    channel.allHeadersReceived = all_headers_received
    channel.allContentReceived = all_content_received
    # per connection, set on the instance once they change: headers completed, reading a body, closed
    channel._kk_heads, channel._kk_in_body, channel._kk_lost, channel._kk_header_call = 0, False, False, None
    channel.connectionLost = connection_lost
    channel._kk_bounded = True
    if http.H2_ENABLED:
        _bound_h2()


def _bound_h2() -> None:
    from twisted.web._http2 import H2Connection

    received, timed_out, lost = H2Connection.dataReceived, H2Connection.timeoutConnection, H2Connection.connectionLost

    def data_received(self: Any, data: bytes) -> None:
        received(self, data)
        if not self._stillProducing:  # the data ended the connection (GOAWAY, a protocol error)
            _cancel(self)
        elif _frame_pending(self):
            if getattr(self, "_kk_header_call", None) is None:
                self._kk_header_call = self.callLater(_bounds["header"], _frame_too_slow, self)
        else:
            _cancel(self)

    def timeout_connection(self: Any) -> None:
        if self.streams:  # answering (a watch may be quiet for long): idle starts when the last stream ends
            self.setTimeout(self.timeOut)
            return
        timed_out(self)  # GOAWAY, then loseConnection ...
        # ... which TLS holds back while a producer is registered (the H2Connection itself): without
        # this the connection would live on until Twisted's abortTimeout (15 s) forces it.
        self.transport.unregisterProducer()

    def connection_lost(self: Any, reason: Any, *args: Any, **kwargs: Any) -> None:
        _cancel(self)
        lost(self, reason, *args, **kwargs)

    H2Connection.dataReceived = data_received
    H2Connection.timeoutConnection = timeout_connection
    H2Connection.connectionLost = connection_lost


def _frame_pending(connection: Any) -> bool:
    """Whether h2 holds part of a frame, or an unfinished header block, from this client."""
    buffer = getattr(connection.conn, "incoming_buffer", None)
    preface_begun = 0 < getattr(buffer, "_preamble_len", 0) < len(_PREFACE)  # what is left of it to come
    return bool(preface_begun or getattr(buffer, "_data", b"") or getattr(buffer, "_headers_buffer", None))


def _frame_too_slow(connection: Any) -> None:
    connection._kk_header_call = None
    connection.transport.abortConnection()


def _cancel(channel: Any) -> None:
    call = getattr(channel, "_kk_header_call", None)
    channel._kk_header_call = None
    if call is not None and call.active():
        call.cancel()


def _headers_too_slow(channel: Any) -> None:
    channel._kk_header_call = None
    channel.timeoutConnection()  # closes it, and aborts it if the client does not let go
