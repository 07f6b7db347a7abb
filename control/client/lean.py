"""A lean HTTP/1.1 client for the spokes' ordinary requests: keep-alive connections on asyncio
streams, one request at a time per connection.

Why it exists: the spokes make thousands of small requests per second in a burst (a Deployment
of 1,000 pods); a general-purpose client's per-request bookkeeping cost several times what the
request itself did. This one writes the request line and headers, reads `Content-Length` or
chunked bodies, and reuses the connection unless the server closes it.

Guarantees: at most `size` connections are open at once; a connection that failed or timed out is
closed, never reused; every failure to talk to the server is an OSError, asyncio.TimeoutError or
asyncio.IncompleteReadError (the caller turns those into HubUnreachable).
"""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class ConnectionPool:
    def __init__(self, server: str, agent: str, *, size: int = 32):
        parts = urlsplit(server)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.agent = agent
        self._idle: list[Connection] = []
        self._slots = asyncio.Semaphore(size)

    async def request(self, method: str, target: str, body: bytes | None, content_type: str,
                      timeout: float) -> tuple[int, bytes]:
        """(status, body) of one request; `target` is the path with its query string."""
        async with self._slots:
            connection = self._idle.pop() if self._idle else await self._open()
            try:
                status, data, reusable = await asyncio.wait_for(
                    self._exchange(connection, method, target, body, content_type), timeout)
            except BaseException:
                connection[1].close()
                raise
            if reusable:
                self._idle.append(connection)
            else:
                connection[1].close()
            return status, data

    async def close(self) -> None:
        while self._idle:
            self._idle.pop()[1].close()

    async def _open(self) -> Connection:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return reader, writer

    async def _exchange(self, connection: Connection, method: str, target: str, body: bytes | None,
                        content_type: str) -> tuple[int, bytes, bool]:
        reader, writer = connection
        head = (f"{method} {target} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                f"User-Agent: {self.agent}\r\nAccept: application/json\r\n")
        if body is not None:
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        elif method in ("POST", "PUT", "PATCH", "DELETE"):
            head += "Content-Length: 0\r\n"
        writer.write(head.encode("latin-1") + b"\r\n" + (body or b""))
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        if "content-length" in headers:
            data = await reader.readexactly(int(headers["content-length"]))
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            data = await _read_chunked(reader)
        else:
            return status, await reader.read(), False
        return status, data, headers.get("connection", "").lower() != "close"


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                pass
            return bytes(out)
        out += await reader.readexactly(size)
        await reader.readexactly(2)
