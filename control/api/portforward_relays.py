"""The relays behind `pods/NAME/portforward` (see `control.api.portforward`): the hub->kubelet leg
(one upgraded HTTP/1.1 connection per forwarded TCP connection, `POST /portForward/<ns>/<name>?port=N`,
see `control.kubelet.portforward`) and the two client protocols on top of it.

Guarantees:
- `open_forward` returns the upgraded connection, or raises `Refused` with the message for the
  error stream: the kubelet's own (containerd's "connection refused" wording when nothing
  listens), or `error dialing backend` when the kubelet cannot be reached.
- `Channels` (v4): port i has data channel 2i and error channel 2i+1, the first message of each
  the port (2 bytes little-endian); all connections open at once; the relay ends when all ended.
- `SpdyTunnel`: SYN_REPLY at once for a stream with a valid `port` and `streamtype`, RST_STREAM
  CANCEL otherwise; error and data streams are paired by `requestid` (by stream id for clients
  without one, as the kubelet does); the pair's connection opens once both are there; a refusal
  is written on its error stream; both streams get FIN when the pod's side closes. A request
  still missing a stream after STREAM_CREATION_SECONDS (on the injected clock) is dropped with
  "timed out waiting for streams" on its error stream. Client PINGs are echoed; SPDY that does
  not parse ends the tunnel with GOAWAY(PROTOCOL_ERROR).
- One broken or refused connection ends only its own streams; the relay ends when the client
  leaves, sends GOAWAY, or nothing is relayed for the idle timeout. Relayed means a byte of a
  forwarded connection, either way, or a connection opened: kubectl's SPDY PINGs (every 5 s,
  client-go's PingPeriod) and flow-control frames do not keep an abandoned tunnel open, so the
  bound is the same over SPDY as over WebSocket.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import h11

from control.api import node_address, spdy
from control.api.streams import Receive, Send
from control.client.framing import Wire
from control.clock import REAL, Clock

UPGRADE = b"kubekitchen.dev/portforward"
READ_SIZE = 1 << 16
STREAM_CREATION_SECONDS = 30.0  # the kubelet's streamCreationTimeout


@dataclass(frozen=True)
class ForwardTarget:
    namespace: str
    name: str
    address: str
    port: int
    path: str = ""  # the kind's location on the kubelet; each connection adds `?port=N`

    @property
    def base_path(self) -> str:
        return self.path or f"/portForward/{quote(self.namespace)}/{quote(self.name)}"


class Refused(Exception):
    """The forwarded connection could not be made; the message goes on the error stream."""


async def open_forward(target: ForwardTarget, port: int, *,
                       timeout: float = 10.0) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    """One forwarded connection through the kubelet: (reader, writer, bytes already read)."""
    path = f"{target.base_path}?port={port}"
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(target.address, target.port)
            try:
                wire = Wire(reader, writer, h11.CLIENT)
                wire.send(h11.Request(method="POST", target=path.encode(), headers=[
                    (b"host", f"{target.address}:{target.port}".encode()), (b"connection", b"Upgrade"),
                    (b"upgrade", UPGRADE), (b"content-length", b"0"),
                    (b"authorization", f"Bearer {node_address.credential()}".encode("latin-1"))]), h11.EndOfMessage())
                await writer.drain()
                event = await wire.receive()
                if type(event) is h11.InformationalResponse and event.status_code == 101:
                    return reader, writer, bytes(wire.h11.trailing_data[0])
                body = b""
                while type(event) is h11.Response and type(more := await wire.receive()) is h11.Data:
                    body += more.data
            except BaseException:
                writer.close()
                raise
            writer.close()
    except (OSError, TimeoutError, h11.ProtocolError) as exc:
        raise Refused(f"error forwarding port {port} to pod {target.namespace}/{target.name}: "
                      f"error dialing backend: {exc}") from None
    try:
        message = json.loads(body).get("error")
    except (ValueError, AttributeError):
        message = None
    raise Refused(str(message or body.decode(errors="replace").strip() or "the kubelet refused the connection"))


class Relay:
    """What both protocols share: the client's messages, the idle watch and the close."""

    def __init__(self, receive: Receive, send: Send):
        self.receive, self.send = receive, send
        self.clock: Clock = REAL
        self.last_activity = 0.0
        self.tasks: set[asyncio.Task] = set()
        self.finished = asyncio.Event()  # set when the relay has nothing left to do

    def touch(self) -> None:
        """Something was relayed: the idle timeout starts again."""
        self.last_activity = self.clock.monotonic()

    async def run(self, idle: float, clock: Clock) -> None:
        self.clock = clock
        self.last_activity = clock.monotonic()

        async def watch_idle() -> None:
            while (left := self.last_activity + idle - clock.monotonic()) > 0:
                await clock.sleep(left)

        async def messages() -> None:
            while (message := await self.receive())["type"] == "websocket.receive":
                data = message.get("bytes")
                await self.on_message(data if data is not None else (message.get("text") or "").encode())

        loops: list[asyncio.Future] = []
        try:
            await self.start()
            loops = [asyncio.ensure_future(c) for c in (watch_idle(), messages(), self.finished.wait())]
            await asyncio.wait(loops, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in loops + list(self.tasks):
                task.cancel()
            await asyncio.gather(*loops, *self.tasks, return_exceptions=True)
            self.close_all()
        try:
            await self.send({"type": "websocket.close", "code": 1000})
        except Exception:  # the client already left; nothing to tell it
            pass

    def spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def start(self) -> None:
        """Work to do once accepted (v4 opens its connections here)."""

    async def on_message(self, data: bytes) -> None:
        raise NotImplementedError

    def close_all(self) -> None:
        """Close every kubelet connection still open."""


@dataclass
class Connection:
    """One forwarded connection: its kubelet socket once open, what the client sent before that."""
    port: int
    writer: asyncio.StreamWriter | None = None
    early: list[bytes] = field(default_factory=list)
    client_done: bool = False
    opened: asyncio.Event = field(default_factory=asyncio.Event)

    def write(self, data: bytes) -> None:
        if self.writer is None:
            self.early.append(data)
        elif data and not self.writer.is_closing():
            self.writer.write(data)

    async def flush(self) -> None:
        """Wait for the kubelet to take what was written (backpressure toward the client). A broken
        connection is not the tunnel's end: its pump sees it and ends this connection alone."""
        if self.writer is not None and not self.writer.is_closing():
            try:
                await self.writer.drain()
            except ConnectionError:
                self.writer.close()

    def end_input(self) -> None:
        """The client will send no more: half-close toward the pod (what kubectl's FIN means)."""
        self.client_done = True
        if self.writer is not None and not self.writer.is_closing() and self.writer.can_write_eof():
            try:
                self.writer.write_eof()
            except OSError:
                self.writer.close()

    def attach(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        for data in self.early:
            self.write(data)
        self.early.clear()
        if self.client_done:
            self.end_input()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def pump(reader: asyncio.StreamReader, leftover: bytes, deliver: Any) -> None:
    """The pod's bytes to `deliver(chunk)` until it closes."""
    if leftover:
        await deliver(leftover)
    while chunk := await reader.read(READ_SIZE):
        await deliver(chunk)


class Channels(Relay):
    """The v4 channel protocol: data channel 2i and error channel 2i+1 for the i-th port."""

    def __init__(self, target: ForwardTarget, ports: list[int], receive: Receive, send: Send):
        super().__init__(receive, send)
        self.target, self.connections = target, [Connection(p) for p in ports]
        self.left = len(ports)

    async def _out(self, channel: int, data: bytes) -> None:
        await self.send({"type": "websocket.send", "bytes": bytes((channel,)) + data})

    async def _relay(self, channel: int, data: bytes) -> None:
        self.touch()
        await self._out(channel, data)

    async def start(self) -> None:
        for i, conn in enumerate(self.connections):
            prefix = conn.port.to_bytes(2, "little")
            await self._out(2 * i, prefix)
            await self._out(2 * i + 1, prefix)
        for i, conn in enumerate(self.connections):
            self.spawn(self._forward(i, conn))

    async def _forward(self, i: int, conn: Connection) -> None:
        try:
            reader, writer, leftover = await open_forward(self.target, conn.port)
            conn.attach(writer)
            await pump(reader, leftover, lambda chunk: self._relay(2 * i, chunk))
        except Refused as refused:
            await self._out(2 * i + 1, str(refused).encode())
        except ConnectionError:
            pass  # the pod's side broke: the connection ends like a close
        finally:
            conn.close()
            self.left -= 1
            if self.left == 0:
                self.finished.set()

    async def on_message(self, data: bytes) -> None:
        # the data channels only; writes to an error channel, or unknown channels, are ignored
        if len(data) > 1 and data[0] % 2 == 0 and data[0] // 2 < len(self.connections):
            self.touch()
            conn = self.connections[data[0] // 2]
            conn.write(data[1:])
            await conn.flush()

    def close_all(self) -> None:
        for conn in self.connections:
            conn.close()


@dataclass
class Pair:
    """The two SPDY streams of one forwarded connection (kubectl's `requestid`)."""
    error_id: int = 0
    data_id: int = 0
    conn: Connection | None = None
    done: bool = False


class SpdyTunnel(Relay):
    """SPDY/3.1 carried in WebSocket binary messages; the hub is the SPDY server."""

    def __init__(self, target: ForwardTarget, receive: Receive, send: Send):
        super().__init__(receive, send)
        self.target = target
        self.parser, self.writer = spdy.FrameParser(), spdy.FrameWriter()
        self.pairs: dict[str, Pair] = {}
        self.by_stream: dict[int, Pair] = {}
        self.write_lock = asyncio.Lock()  # header compression is one ordered context

    async def _out(self, *frames: spdy.Frame) -> None:
        async with self.write_lock:
            await self.send({"type": "websocket.send", "bytes": b"".join(self.writer.encode(f) for f in frames)})

    async def on_message(self, data: bytes) -> None:
        try:
            frames = self.parser.feed(data)
        except spdy.SpdyError:
            await self._out(spdy.GoAway(max(self.by_stream, default=0), spdy.GOAWAY_PROTOCOL_ERROR))
            self.finished.set()
            return
        for frame in frames:
            await self._on_frame(frame)

    async def _on_frame(self, frame: spdy.Frame) -> None:
        if isinstance(frame, (spdy.SynStream, spdy.Data)):
            self.touch()  # a connection opened, or its bytes: pings and flow control are not traffic
        if isinstance(frame, spdy.SynStream):
            await self._on_syn(frame)
        elif isinstance(frame, spdy.Data):
            pair = self.by_stream.get(frame.stream_id)
            if pair is not None and pair.conn is not None and frame.stream_id == pair.data_id:
                pair.conn.write(frame.data)
                if frame.fin:
                    pair.conn.end_input()
                else:
                    await pair.conn.flush()
        elif isinstance(frame, spdy.RstStream):
            pair = self.by_stream.get(frame.stream_id)
            if pair is not None:
                pair.done = True  # nothing more is sent on its streams
                if pair.conn is not None:
                    pair.conn.close()
        elif isinstance(frame, spdy.Ping) and frame.ping_id % 2 == 1:  # the client's (odd ids): echoed
            await self._out(frame)
        elif isinstance(frame, spdy.GoAway):
            self.finished.set()
        # SETTINGS, WINDOW_UPDATE, HEADERS and pings answering ours (we send none): nothing to do

    async def _on_syn(self, frame: spdy.SynStream) -> None:
        port, kind = spdy.header(frame.headers, "port"), spdy.header(frame.headers, "streamtype")
        if not port.isdigit() or not 0 < int(port) < 65536 or kind not in ("error", "data"):
            await self._out(spdy.RstStream(frame.stream_id, spdy.CANCEL))
            return
        await self._out(spdy.SynReply(frame.stream_id))
        request = spdy.header(frame.headers, "requestid") or str(frame.stream_id - (2 if kind == "data" else 0))
        pair = self.pairs.get(request)
        if pair is None:
            pair = self.pairs[request] = Pair()
            self.spawn(self._expect_pair(request, pair))
        self.by_stream[frame.stream_id] = pair
        if kind == "error":
            pair.error_id = frame.stream_id
        else:
            pair.data_id, pair.conn = frame.stream_id, Connection(int(port))
        if pair.error_id and pair.data_id:
            del self.pairs[request]
            self.spawn(self._forward(pair))

    async def _expect_pair(self, request: str, pair: Pair) -> None:
        """A request whose second stream does not come within STREAM_CREATION_SECONDS is dropped,
        its error stream told why (the kubelet's monitorStreamPair)."""
        await self.clock.sleep(STREAM_CREATION_SECONDS)
        if self.pairs.get(request) is not pair:
            return  # completed (or reset) in time
        del self.pairs[request]
        for stream_id in (pair.error_id, pair.data_id):
            self.by_stream.pop(stream_id, None)
        if pair.error_id and not pair.done:
            await self._out(spdy.Data(pair.error_id, f"(conn={id(self):#x}, request={request}) timed out waiting for "
                                                     f"streams".encode(), spdy.FLAG_FIN))
        if pair.data_id and not pair.done:
            await self._out(spdy.Data(pair.data_id, flags=spdy.FLAG_FIN))
        pair.done = True

    async def _forward(self, pair: Pair) -> None:
        assert pair.conn is not None
        conn = pair.conn
        try:
            reader, writer, leftover = await open_forward(self.target, conn.port)
            conn.attach(writer)
            await pump(reader, leftover, lambda chunk: self._data(pair, chunk))
        except Refused as refused:
            if not pair.done:
                await self._out(spdy.Data(pair.error_id, str(refused).encode()))
        except ConnectionError:
            pass
        finally:
            conn.close()
            if not pair.done:
                pair.done = True
                await self._out(spdy.Data(pair.error_id, flags=spdy.FLAG_FIN),
                                spdy.Data(pair.data_id, flags=spdy.FLAG_FIN))
            self.by_stream.pop(pair.error_id, None)
            self.by_stream.pop(pair.data_id, None)

    async def _data(self, pair: Pair, chunk: bytes) -> None:
        self.touch()
        if not pair.done:
            await self._out(spdy.Data(pair.data_id, chunk))

    def close_all(self) -> None:
        for pair in list(self.by_stream.values()) + list(self.pairs.values()):
            if pair.conn is not None:
                pair.conn.close()
