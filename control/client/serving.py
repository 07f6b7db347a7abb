"""The small HTTP/1.1 servers a spoke opens on its node's address (the kubelet's, kube-proxy's).

Guarantees: one way to read a request and frame an answer for every such server —
- `read_request` waits (up to `idle` seconds) for a request head, reads and drops its body, and
  returns (method, target, lowercase headers); a body over `MAX_BODY` is a ValueError (the caller
  closes the connection rather than read it);
- `response_head` frames a body by Content-Length, or as chunked when no length is given, and says
  whether the connection stays open; `chunk` frames one chunk and `LAST_CHUNK` ends a stream;
- `NodeServer.start` listens and returns the port it took (0: any free one); `close` stops listening.
"""

from __future__ import annotations

import asyncio

IDLE_SECONDS = 120.0  # an idle keep-alive connection is closed after this
MAX_BODY = 1 << 20
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}
LAST_CHUNK = b"0\r\n\r\n"


def parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    """(method, target, headers with lowercase names) of a request head."""
    lines = head.decode("latin-1").split("\r\n")
    method, target, *_ = lines[0].split(" ") + ["", ""]
    headers = {}
    for line in lines[1:]:
        key, sep, value = line.partition(":")
        if sep:
            headers[key.strip().lower()] = value.strip()
    return method, target, headers


async def read_request(reader: asyncio.StreamReader, *, idle: float = IDLE_SECONDS) -> tuple[str, str, dict[str, str]]:
    method, target, headers = parse_head(await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=idle))
    length = int(headers.get("content-length") or 0)
    if length > MAX_BODY:
        raise ValueError(f"a request body of {length} bytes is over {MAX_BODY}")
    if length:
        await reader.readexactly(length)  # a body means nothing to these servers
    return method, target, headers


def wants_close(headers: dict[str, str]) -> bool:
    return headers.get("connection", "").lower() == "close"


def response_head(status: int, content_type: str, *, length: int | None, close: bool) -> bytes:
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: {content_type}\r\n{framing}\r\n"
            f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n").encode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class NodeServer:
    """Listening and stopping; subclasses answer connections in `handle`."""

    server: asyncio.AbstractServer | None = None

    async def start(self, host: str, port: int = 0) -> int:
        self.server = await asyncio.start_server(self.handle, host, port)
        return self.server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self.server:
            self.server.close()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError
