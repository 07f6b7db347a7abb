"""HTTP/1.1 framing on h11, shared by both ends the project speaks it from: the spokes' lean client
(`control.client.lean`) and the node servers (`control.client.serving`).

Why h11: a well-kept, sans-I/O state machine parses heads, Content-Length and chunked bodies and
keep-alive, so no module here writes a request line or a chunk size by hand. h11 does the parsing;
this module only moves bytes between it and an asyncio stream.

Guarantees:
- `Wire` is one socket and the one `h11.Connection` that lives as long as it does (reused across
  keep-alive cycles, never rebuilt per request).
- `Wire.receive` returns the next h11 event, reading as needed; a peer that closes mid-message or
  sends something that is not HTTP/1.1 raises `h11.RemoteProtocolError` (its `error_status_hint`
  is the status a server answers with).
- `Wire.reusable` says whether both sides finished the exchange cleanly and neither asked to close;
  `Wire.next_cycle` then readies the connection for the next one.
- `split_lines` turns a stream of body pieces into whole lines, however the pieces cut them.
"""

from __future__ import annotations

import asyncio
import socket
from typing import AsyncIterator

import h11

READ_SIZE = 1 << 16
MAX_HEAD = 64 * 1024  # request line + headers; Kubernetes' long selectors fit


class Wire:
    """One HTTP/1.1 connection: the asyncio streams of a socket and its h11 state machine."""

    __slots__ = ("reader", "writer", "h11")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, role: type):
        self.reader, self.writer = reader, writer
        self.h11 = h11.Connection(role, max_incomplete_event_size=MAX_HEAD)
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            # small requests and answers must not wait for Nagle's delayed ACK
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def receive(self) -> h11.Event | type[h11.PAUSED]:
        """The next event from the peer; h11.ConnectionClosed when it closed between messages."""
        connection = self.h11
        while True:
            event = connection.next_event()
            if event is not h11.NEED_DATA:
                return event
            connection.receive_data(await self.reader.read(READ_SIZE))

    async def receive_answer(self) -> h11.Event | type[h11.PAUSED]:
        """The first event after sending a request: when nothing is buffered yet, read before
        asking h11 (saves it one pass over an empty buffer per request)."""
        if not self.h11.trailing_data[0]:
            self.h11.receive_data(await self.reader.read(READ_SIZE))
        return await self.receive()

    def send(self, *events: h11.Event) -> None:
        """Frame events and queue their bytes in one write (flushed by the transport)."""
        connection = self.h11
        data = b"".join(connection.send(event) or b"" for event in events)
        if data:
            self.writer.write(data)

    @property
    def reusable(self) -> bool:
        return self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE

    def next_cycle(self) -> None:
        self.h11.start_next_cycle()

    def closed_by_peer(self) -> bool:
        """Whether the peer already closed it (e.g. its idle timeout passed while it sat in a pool)."""
        return self.reader.at_eof() or self.writer.is_closing()

    def close(self) -> None:
        self.writer.close()


def header(headers: list[tuple[bytes, bytes]], name: bytes) -> str:
    """The value of a header (lowercase name, as h11 gives them), or ""."""
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return ""


async def split_lines(pieces: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """Each complete non-blank line (without its newline) of a body that arrives in pieces; a
    line cut across pieces is held until its newline arrives. A last line without one counts."""
    pending = b""
    async for piece in pieces:
        pending += piece
        if b"\n" not in piece:
            continue
        *complete, pending = pending.split(b"\n")
        for line in complete:
            if line.strip():
                yield line
    if pending.strip():
        yield pending
