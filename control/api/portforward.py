"""`portforward` on an object placed on a node (`pods/NAME/portforward`): the hub accepts the
client's WebSocket and relays each forwarded TCP connection to the node's kubelet, one upgraded
HTTP/1.1 connection per forwarded connection (`POST /portForward/<ns>/<name>?port=N`, see
`control.kubelet.portforward`).

Two WebSocket protocols, as kube-apiserver and the kubelet serve them:
- `SPDY/3.1+portforward.k8s.io` (kubectl >= 1.30): SPDY/3.1 (`control.api.spdy`) carried in binary
  messages. Per local connection kubectl opens an error stream then a data stream (headers
  `streamtype`, `port`, `requestid`); each is answered SYN_REPLY at once, a stream with a bad or
  missing `port`/`streamtype` is reset (RST_STREAM CANCEL), as the kubelet's stream handler does.
  When both streams of a request are there the connection is opened; the kubelet's refusal is
  written on the error stream; both streams are then finished (FIN) when the pod's side closes.
- `v4.channel.k8s.io` (the official Python client; also a WebSocket offering no protocol): the
  `ports` query names the ports; port i has data channel 2i and error channel 2i+1, the first
  message of each carrying the port (2 bytes little-endian); all connections are opened at once;
  the WebSocket closes when all of them have ended.

Guarantees:
- Which paths: a kind declares `portforward` among its subresources; this module asks the kind,
  never names one. The kubelet is found only through the object's Node (`kubelet_endpoint`).
- Before the upgrade, bad requests are refused with a Status as the handshake's answer: object
  not found 404, not yet on a node 400 (`pod NAME does not have a host assigned`), no kubelet
  endpoint 503, no or bad `ports` for v4 400, an unsupported subprotocol 403. SPDY over a plain
  HTTP Upgrade (kubectl's fallback, and kubectl < 1.30) arrives here as a websocket scope offering
  `SPDY/3.1+portforward.k8s.io` (`control.spdy_upgrade` hands it over); any other plain HTTP
  request gets the same checks, then 400.
- A refused connection (nothing listens, the kubelet unreachable) affects only its own streams;
  the WebSocket, and the hub, go on. SPDY that does not parse ends the tunnel with GOAWAY
  (PROTOCOL_ERROR). Client PINGs are answered. Nothing relayed for `KK_STREAM_IDLE_SECONDS` ends it.
  Each WebSocket leaves one traffic record (code 101 once upgraded, else the refusal's code).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote

import h11

from control import errors
from control import kinds as registry
from control.api import spdy, traffic
from control.api.request import Call, Request
from control.api.responses import error_response
from control.api.streams import Receive, Send, _deny, stream_idle_seconds, stream_kind
from control.client.framing import Wire
from control.clock import REAL, Clock
from control.kinds.network import kubelet_endpoint
from control.storage import store
from control.storage.db import run_db

SUBRESOURCE = "portforward"
SPDY_PROTOCOL = "SPDY/3.1+portforward.k8s.io"
V4_PROTOCOL = "v4.channel.k8s.io"
PROTOCOLS = (SPDY_PROTOCOL, V4_PROTOCOL)
UPGRADE = b"kubekitchen.dev/portforward"
READ_SIZE = 1 << 16


@dataclass(frozen=True)
class ForwardTarget:
    namespace: str
    name: str
    address: str
    port: int


def is_portforward_path(path: str) -> bool:
    return stream_kind(path, (SUBRESOURCE,)) is not None


def locate(kind: Any, namespace: str, name: str) -> ForwardTarget:
    """Runs on the database thread: the object's kubelet, or the ApiError (PortForwardLocation)."""
    obj = store.object_get(resource=kind.resource, namespace=namespace, name=name)
    node_name = (obj.get("spec") or {}).get("nodeName")
    if not node_name:
        raise errors.BadRequest(f"pod {name} does not have a host assigned")
    try:
        node = store.object_get(resource=registry.by_resource("", "v1", "nodes").resource, namespace="", name=node_name)
    except errors.NotFound:
        node = None
    endpoint = kubelet_endpoint(node)
    if endpoint is None:
        raise errors.ServiceUnavailable(f"the kubelet of node {node_name} publishes no endpoint")
    return ForwardTarget(namespace, name, endpoint[0], endpoint[1])


def parse_ports(query: dict[str, list[str]]) -> list[int]:
    """The v4 protocol's ports (`ports=80,8080`, or the kubelet's `port`), with the kubelet's refusals."""
    raw = (query.get("ports") or []) + (query.get("port") or [])
    if not raw:
        raise errors.BadRequest('query parameter "port" is required')
    ports: list[int] = []
    for value in raw:
        if not value:
            raise errors.BadRequest('query parameter "port" cannot be empty')
        for part in value.split(","):
            if not part.isdigit() or int(part) > 65535:
                raise errors.BadRequest(f'unable to parse "{value}" as a port')
            if int(part) < 1:
                raise errors.BadRequest(f'port "{value}" must be > 0')
            ports.append(int(part))
    return ports


def choose_protocol(offered: list[str]) -> str | None:
    """The subprotocol to accept ('' for a WebSocket that offers none: v4, binary), or None."""
    if not offered:
        return ""
    return next((p for p in PROTOCOLS if p in offered), None)


async def forward_over_http(call: Call) -> Any:
    """`portforward` asked without a WebSocket or SPDY upgrade: the checks, then 400."""
    await run_db(locate, call.kind, call.namespace, call.name)
    raise errors.BadRequest(f"Upgrade request required: {call.kind.plural}/{SUBRESOURCE} is served over "
                            f"WebSocket ({', '.join(PROTOCOLS)}) only")


class Refused(Exception):
    """The forwarded connection could not be made; the message goes on the error stream."""


async def open_forward(target: ForwardTarget, port: int, *,
                       timeout: float = 10.0) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    """One forwarded connection through the kubelet: (reader, writer, bytes already read)."""
    path = f"/portForward/{quote(target.namespace)}/{quote(target.name)}?port={port}"
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(target.address, target.port)
            try:
                wire = Wire(reader, writer, h11.CLIENT)
                wire.send(h11.Request(method="POST", target=path.encode(), headers=[
                    (b"host", f"{target.address}:{target.port}".encode()), (b"connection", b"Upgrade"),
                    (b"upgrade", UPGRADE), (b"content-length", b"0")]), h11.EndOfMessage())
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


async def serve_portforward(scope: dict[str, Any], receive: Receive, send: Send, *, idle: float | None = None,
                            clock: Clock = REAL) -> None:
    """The ASGI websocket handler of a portforward path (see `is_portforward_path`)."""
    started = REAL.monotonic()  # the traffic record's latency is on the hub's own clock
    if (await receive())["type"] != "websocket.connect":
        return
    kind, namespace, name, _ = stream_kind(scope["path"], (SUBRESOURCE,)) or (None, "", "", "")
    actor = Request({**scope, "method": "GET"}, b"").actor
    tag = {"verb": "create", "resource": f"{kind.plural}/{SUBRESOURCE}" if kind else scope["path"],
           "namespace": namespace, "name": name}
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    offered = list(scope.get("subprotocols") or [])
    try:
        if kind is None:
            raise errors.NotFound(errors.NOT_FOUND)
        target = await run_db(locate, kind, namespace, name)
        protocol = choose_protocol(offered)
        if protocol is None:
            raise errors.Forbidden(f"requested protocol(s) are not supported: [{' '.join(offered)}]; "
                                   f"supports [{' '.join(PROTOCOLS)}]")
        ports = parse_ports(query) if protocol != SPDY_PROTOCOL else []
    except errors.ApiError as exc:
        reply = error_response(exc)
        traffic.request_done(actor, tag, reply.status, started)
        await _deny(send, scope, reply)
        return
    await send({"type": "websocket.accept", "subprotocol": protocol or None})
    relay = SpdyTunnel(target, receive, send) if protocol == SPDY_PROTOCOL else Channels(target, ports, receive, send)
    try:
        await relay.run(idle if idle is not None else stream_idle_seconds(), clock)
    finally:
        traffic.request_done(actor, tag, 101, started)


class Relay:
    """What both protocols share: the client's messages, the idle watch and the close."""

    def __init__(self, receive: Receive, send: Send):
        self.receive, self.send = receive, send
        self.last_activity = 0.0
        self.tasks: set[asyncio.Task] = set()
        self.finished = asyncio.Event()  # set when the relay has nothing left to do

    async def run(self, idle: float, clock: Clock) -> None:
        self.last_activity = clock.monotonic()

        async def watch_idle() -> None:
            while (left := self.last_activity + idle - clock.monotonic()) > 0:
                await clock.sleep(left)

        async def messages() -> None:
            while (message := await self.receive())["type"] == "websocket.receive":
                self.last_activity = clock.monotonic()
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
            await pump(reader, leftover, lambda chunk: self._out(2 * i, chunk))
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
        pair = self.pairs.setdefault(request, Pair())
        self.by_stream[frame.stream_id] = pair
        if kind == "error":
            pair.error_id = frame.stream_id
        else:
            pair.data_id, pair.conn = frame.stream_id, Connection(int(port))
        if pair.error_id and pair.data_id:
            del self.pairs[request]
            self.spawn(self._forward(pair))

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
        if not pair.done:
            await self._out(spdy.Data(pair.data_id, chunk))

    def close_all(self) -> None:
        for pair in list(self.by_stream.values()) + list(self.pairs.values()):
            if pair.conn is not None:
                pair.conn.close()
