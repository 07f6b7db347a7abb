"""The spokes' HTTP/1.1 client: keep-alive connections on asyncio streams, one exchange at a time
per connection, framed by h11 (`control.client.framing`).

Why it is lean: the spokes make thousands of small requests per second in a burst (a Deployment
of 1,000 pods); a general-purpose client's per-request bookkeeping cost several times what the
request itself did. Here each socket keeps its one h11.Connection across requests, the fixed
headers are validated once per pool, and a request's deadline is a plain `asyncio.timeout` (no
task per request).

Guarantees:
- At most `size` ordinary requests are in flight at once; streams (`stream`, e.g. watches) get a
  connection of their own outside that limit, so a held watch never starves requests.
- A connection is reused only when both sides finished cleanly and neither asked to close; an idle
  one the server has closed meanwhile is dropped before use, never sent on.
- Every failure to talk to the server — refused, reset, closed mid-answer, a malformed answer, no
  answer in time — raises `ServerUnreachable` (a ConnectionError), and the connection it happened
  on is closed, never reused. (A request h11 refuses to frame, e.g. a target with a space, is the
  caller's bug: h11.LocalProtocolError, not "unreachable".)
- At most `size` idle connections are kept.
"""

from __future__ import annotations

import asyncio
import ssl
from contextlib import asynccontextmanager
from typing import AsyncIterator
from urllib.parse import urlsplit

import h11

from control.client.framing import Wire, header, split_lines

MUTATING = frozenset(("POST", "PUT", "PATCH", "DELETE"))


class ServerUnreachable(ConnectionError):
    """The server did not answer in full (refused, reset, closed, malformed, timed out)."""


class Answer:
    """A streamed answer: its status and headers now, its body as it arrives."""

    def __init__(self, wire: Wire, response: h11.Response, read_timeout: float | None):
        self.wire, self.status, self.read_timeout = wire, response.status_code, read_timeout
        self.headers: list[tuple[bytes, bytes]] = list(response.headers)
        self.complete = False

    async def pieces(self) -> AsyncIterator[bytes]:
        """The body as it arrives (one piece per read, however the server framed it)."""
        while not self.complete:
            async with asyncio.timeout(self.read_timeout):
                event = await self.wire.receive()
            if type(event) is h11.Data:
                yield bytes(event.data)
            elif type(event) is h11.EndOfMessage:
                self.complete = True
            else:
                raise h11.RemoteProtocolError("the answer ended before its body")

    def lines(self) -> AsyncIterator[bytes]:
        """Each complete non-blank line of the body, however the chunks cut it."""
        return split_lines(self.pieces())

    async def read(self) -> bytes:
        return b"".join([piece async for piece in self.pieces()])


class ConnectionPool:
    def __init__(self, server: str, agent: str, *, size: int = 32, connect_timeout: float = 10.0, token: str = "",
                 ca: bytes | None = None):
        parts = urlsplit(server)
        self.tls = parts.scheme == "https"
        self.ca = ca  # PEM of the CA that signed the server's certificate (the cluster CA), else the system's
        self._context: ssl.SSLContext | None = None
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or (443 if self.tls else 80)
        self.agent, self.connect_timeout = agent, connect_timeout
        self._idle: list[Wire] = []
        self._size = size
        self._slots = asyncio.Semaphore(size)
        host = f"[{self.host}]" if ":" in self.host else self.host
        fixed = [(b"host", f"{host}:{self.port}".encode()), (b"user-agent", agent.encode()),
                 (b"accept", b"application/json")]
        if token:  # the caller's identity at the hub (a bearer token, as client-go sends it)
            fixed.append((b"authorization", f"Bearer {token}".encode("latin-1")))
        # validated once here; h11 takes an already validated header list as it is
        self._plain = h11.Request(method="GET", target="/", headers=fixed).headers
        self._empty_body = h11.Request(method="POST", target="/", headers=fixed + [(b"content-length", b"0")]).headers
        self._fixed = fixed

    async def request(self, method: str, target: str, body: bytes | None, content_type: str,
                      timeout: float) -> tuple[int, bytes]:
        """(status, body) of one request; `target` is the path with its query string."""
        async with self._slots:
            wire = None
            try:
                async with asyncio.timeout(timeout):
                    wire = self._take_idle() or await self._open()
                    self._send_request(wire, method, target, body, content_type)
                    response = await self._response(wire)
                    pieces = []
                    while True:
                        event = await wire.receive()
                        if type(event) is h11.Data:
                            pieces.append(event.data)
                        elif type(event) is h11.EndOfMessage:
                            break
                        else:
                            raise h11.RemoteProtocolError("the answer ended before its body")
            except (OSError, TimeoutError, h11.RemoteProtocolError) as exc:
                if wire is not None:
                    wire.close()
                raise ServerUnreachable(f"{self.host}:{self.port}: {_why(exc)}") from None
            except BaseException:  # cancelled mid-exchange: the connection is in an unknown state
                if wire is not None:
                    wire.close()
                raise
            self._release(wire)
            return response.status_code, b"".join(pieces)

    @asynccontextmanager
    async def stream(self, method: str, target: str, *, body: bytes | None = None,
                     content_type: str = "application/json",
                     read_timeout: float | None = None) -> AsyncIterator[Answer]:
        """A request whose answer is read as it arrives (a watch, a log follow, NDJSON); waiting
        more than `read_timeout` for the next piece is `ServerUnreachable`."""
        wire = None
        answer = None
        try:
            try:
                async with asyncio.timeout(self.connect_timeout):
                    wire = self._take_idle() or await self._open()
                    self._send_request(wire, method, target, body, content_type)
                async with asyncio.timeout(read_timeout):
                    answer = Answer(wire, await self._response(wire), read_timeout)
                yield answer
            except (OSError, TimeoutError, h11.RemoteProtocolError) as exc:
                raise ServerUnreachable(f"{self.host}:{self.port}: {_why(exc)}") from None
        finally:
            if wire is not None:
                if answer is not None and answer.complete:
                    self._release(wire)
                else:
                    wire.close()  # left mid-answer: the rest would arrive on the next request

    async def close(self) -> None:
        self.drop_idle()

    def drop_idle(self) -> None:
        """Close the idle connections (one in use closes when its exchange ends or fails)."""
        while self._idle:
            self._idle.pop().close()

    def _take_idle(self) -> Wire | None:
        while self._idle:
            wire = self._idle.pop()
            if not wire.closed_by_peer():
                return wire
            wire.close()
        return None

    def _tls_context(self) -> ssl.SSLContext | None:
        """Made once per pool (it reads the CA: milliseconds of the loop), shared by its connections."""
        if self.tls and self._context is None:
            self._context = ssl.create_default_context(cadata=self.ca.decode() if self.ca else None)
        return self._context

    def _release(self, wire: Wire) -> None:
        if wire.reusable and len(self._idle) < self._size:
            wire.next_cycle()
            self._idle.append(wire)
        else:
            wire.close()

    async def _open(self) -> Wire:
        reader, writer = await asyncio.open_connection(self.host, self.port, ssl=self._tls_context())
        return Wire(reader, writer, h11.CLIENT)

    def _send_request(self, wire: Wire, method: str, target: str, body: bytes | None, content_type: str) -> None:
        if body is None:
            headers = self._empty_body if method in MUTATING else self._plain
            wire.send(h11.Request(method=method, target=target, headers=headers), h11.EndOfMessage())
            return
        headers = self._fixed + [(b"content-type", content_type.encode("latin-1")),
                                 (b"content-length", str(len(body)).encode())]
        wire.send(h11.Request(method=method, target=target, headers=headers), h11.Data(data=body), h11.EndOfMessage())

    async def _response(self, wire: Wire) -> h11.Response:
        event = await wire.receive_answer()
        while True:
            if type(event) is h11.Response:
                return event
            if type(event) is not h11.InformationalResponse:  # a 100 Continue is skipped
                raise h11.RemoteProtocolError(f"the server closed the connection ({type(event).__name__})")
            event = await wire.receive()


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


__all__ = ["Answer", "ConnectionPool", "ServerUnreachable", "header"]
