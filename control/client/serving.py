"""The small HTTP/1.1 servers a spoke opens on its node's address (the kubelet's, its log server,
kube-proxy's), on the one framing of `control.client.framing` (h11).

Guarantees — one way to serve for every such server:
- `NodeServer.handle` reads requests one after another on a connection (keep-alive) and hands each
  to the subclass's `answer(request, exchange)`; it waits up to `IDLE_SECONDS` for the next one.
- A request's body (Content-Length or chunked) is read whole before `answer` sees it, up to
  `MAX_BODY`; a larger one is answered 413 and the connection closed without reading the rest.
- Anything that is not HTTP/1.1 (a malformed request line or header, a bad chunk) is answered 400
  and the connection closed; the server goes on serving others.
- `HttpError` is the one error class of these servers: raised by `answer` (or the parsing it
  calls) before an answer started, it becomes that status with the server's `error_body`; after a
  streamed answer started, the connection is just closed.
- An answer is framed by Content-Length (`Exchange.respond`) or streamed chunked (`Exchange.start`,
  `send`, `end`); `close=True` asks the client to close after it.
- `NodeServer.start` listens and returns the port it took (0: any free one); `close` stops
  listening and ends the connections still open.
- Every request must carry the cluster's node-access secret (`control.client.nodeaccess`, as a
  kubelet with `--anonymous-auth=false`); one without it, or with another, is answered 401 with an
  Unauthorized Status before `answer` sees it, and the connection serves on. Only a server's
  `open_paths` (kube-proxy's /healthz, as upstream's healthz port) answer anyone.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11

from control.client import nodeaccess
from control.client.framing import Wire

log = logging.getLogger(__name__)
IDLE_SECONDS = 120.0  # an idle keep-alive connection is closed after this
MAX_BODY = 1 << 20
REASONS = {200: b"OK", 400: b"Bad Request", 401: b"Unauthorized", 404: b"Not Found", 405: b"Method Not Allowed",
           413: b"Payload Too Large", 431: b"Request Header Fields Too Large", 503: b"Service Unavailable"}


class HttpError(Exception):
    """An answer other than success, with its status; `close` ends the connection after it."""

    def __init__(self, status: int, message: str, *, close: bool = False):
        super().__init__(message)
        self.status, self.message, self.close = status, message, close


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    headers: list[tuple[bytes, bytes]]  # lowercase names, as h11 gives them
    body: bytes


class Exchange:
    """The answering side of one connection, one request at a time."""

    def __init__(self, wire: Wire, *, idle: float = IDLE_SECONDS, max_body: int = MAX_BODY):
        self.wire, self.idle, self.max_body = wire, idle, max_body
        self.head_only = False  # a HEAD request: answers carry their length but no body

    async def next_request(self) -> Request | None:
        """The next request with its whole body; None when the client closed or stayed idle."""
        try:
            async with asyncio.timeout(self.idle):
                event = await self.wire.receive()
                if type(event) is not h11.Request:
                    return None  # ConnectionClosed between requests
                self.head_only = event.method == b"HEAD"
                body = await self._body(event)
        except TimeoutError:
            return None
        except h11.RemoteProtocolError as exc:
            raise HttpError(exc.error_status_hint, f"malformed request: {exc}", close=True) from None
        return Request(event.method.decode("latin-1"), event.target.decode("latin-1"), list(event.headers), body)

    async def _body(self, request: h11.Request) -> bytes:
        for name, value in request.headers:
            if name == b"content-length" and int(value) > self.max_body:
                raise HttpError(413, f"a request body of {int(value)} bytes is over {self.max_body}", close=True)
        pieces, size = [], 0
        while True:
            event = await self.wire.receive()
            if type(event) is h11.Data:
                size += len(event.data)
                if size > self.max_body:  # chunked: no length to check up front
                    raise HttpError(413, f"a request body over {self.max_body} bytes", close=True)
                pieces.append(event.data)
            elif type(event) is h11.EndOfMessage:
                return b"".join(pieces)
            else:
                raise h11.RemoteProtocolError("the request ended before its body")

    @property
    def started(self) -> bool:
        """Whether an answer to the current request has begun (no other can be sent)."""
        return self.wire.h11.our_state is not h11.SEND_RESPONSE and self.wire.h11.our_state is not h11.IDLE

    def _head(self, status: int, content_type: str, length: int | None, close: bool) -> h11.Response:
        headers = [(b"content-type", content_type.encode("latin-1"))]
        if length is not None:
            headers.append((b"content-length", str(length).encode()))
        # said either way (h11 turns keep-alive into close when the client asked to close)
        headers.append((b"connection", b"close" if close else b"keep-alive"))
        return h11.Response(status_code=status, headers=headers, reason=REASONS.get(status, b"Error"))

    async def respond(self, status: int, content_type: str, data: bytes, *, close: bool = False) -> None:
        """One whole answer, framed by its length."""
        events: list[h11.Event] = [self._head(status, content_type, len(data), close)]
        if data and not self.head_only:
            events.append(h11.Data(data=data))
        self.wire.send(*events, h11.EndOfMessage())
        await self.wire.writer.drain()

    async def start(self, status: int, content_type: str, *, close: bool = False) -> None:
        """Begin a streamed answer (chunked for HTTP/1.1 clients)."""
        self.wire.send(self._head(status, content_type, None, close))
        await self.wire.writer.drain()

    async def send(self, data: bytes) -> None:
        """One piece of a streamed answer, flushed now (one chunk on the wire)."""
        if data and not self.head_only:
            self.wire.send(h11.Data(data=data))
        await self.wire.writer.drain()

    async def end(self) -> None:
        self.wire.send(h11.EndOfMessage())
        await self.wire.writer.drain()

    def ready_for_next(self) -> bool:
        """After an answer: whether the connection is kept for another request (and ready for it)."""
        if not self.wire.reusable:
            return False
        self.wire.next_cycle()
        return True


class NodeServer:
    """Listening, the keep-alive loop and error answers; subclasses answer requests in `answer`."""

    server: asyncio.AbstractServer | None = None
    idle: float = IDLE_SECONDS
    closing = False
    open_paths: frozenset[str] = frozenset()  # answered without the node-access secret
    access_token = ""  # the secret callers present; "" until start (or the first request) reads it

    async def start(self, host: str, port: int = 0) -> int:
        self.expected_token()  # read (or made) before listening: a server never runs without one
        self.server = await asyncio.start_server(self.handle, host, port)
        return self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self.server:
            self.server.close()
        open_now = list(self._open_connections())
        self.closing = True
        for task in open_now:
            task.cancel()
        await asyncio.gather(*open_now, return_exceptions=True)

    def _open_connections(self) -> set[asyncio.Task]:
        return self.__dict__.setdefault("_connections", set())

    def expected_token(self) -> str:
        """The node-access secret callers must present (this process's data folder's)."""
        if not self.access_token:
            self.access_token = nodeaccess.token()
        return self.access_token

    def admits(self, request: Request) -> bool:
        """Whether the caller proved itself (or asked for an open path)."""
        if self.open_paths and urlsplit(request.target).path in self.open_paths:
            return True
        return nodeaccess.admits(request.headers, self.expected_token())

    async def answer(self, request: Request, exchange: Exchange) -> None:
        raise NotImplementedError

    def error_body(self, error: HttpError) -> tuple[str, bytes]:
        """(content type, body) of an error answer: JSON `{"error"}` unless a server says otherwise."""
        return "application/json", json.dumps({"error": error.message}).encode()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        connections = self._open_connections()
        if task is not None:
            connections.add(task)
        exchange = Exchange(Wire(reader, writer, h11.SERVER), idle=self.idle)
        try:
            while True:
                try:
                    request = await exchange.next_request()
                    if request is None:
                        return
                    if self.admits(request):
                        await self.answer(request, exchange)
                    else:
                        await exchange.respond(401, "application/json", nodeaccess.UNAUTHORIZED)
                except HttpError as exc:
                    if exchange.started:
                        return  # mid-stream: the only honest signal left is closing
                    content_type, body = self.error_body(exc)
                    await exchange.respond(exc.status, content_type, body, close=exc.close)
                if not exchange.ready_for_next():
                    return
        except (ConnectionError, TimeoutError, h11.ProtocolError):
            pass  # the client left or broke the exchange; nothing more to say to it
        except asyncio.CancelledError:
            if not self.closing:
                raise
            # ended by close(): finish quietly (asyncio logs a connection task that ends cancelled)
        except Exception:  # a bug in one answer must not take the server down
            log.exception("%s: answering a request failed", type(self).__name__)
        finally:
            connections.discard(task)
            writer.close()
