"""The stream protocol between the hub and a kubelet for `exec`/`attach` (upstream's
`k8s.io/apimachinery/pkg/util/remotecommand` role): channels, frames and the final Status.

The hub opens an HTTP/1.1 request with `Upgrade: kubekitchen.dev/remotecommand` on the kubelet's
node server; the kubelet answers `101 Switching Protocols` (or an error answer with a JSON
`{"error"}` body) and from then on the connection carries frames both ways:
`[4-byte big-endian length][channel byte][payload]`, the length counting the channel byte.

Guarantees:
- The channels are the WebSocket channel protocol's (stdin 0, stdout 1, stderr 2, error 3,
  resize 4, close 255), so the hub relays a WebSocket message to a frame without translation.
- The kubelet sends exactly one frame on the error channel, the Status that ends the command,
  then closes: `{"metadata":{},"status":"Success"}` or, for a non-zero exit, the NonZeroExitCode
  Failure exactly as the kubelet/CRI writes it (its JSON field order included).
- `FrameReader.next` returns None at a clean end of stream; a torn or oversized frame raises
  `FrameError`. `connect_upgraded` raises `UpgradeRefused` (status, message) when the kubelet
  does not switch protocols, `OSError`/`TimeoutError` when it cannot be reached.
"""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

import h11

from control.client.framing import Wire

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
UPGRADE = b"kubekitchen.dev/remotecommand"
MAX_FRAME = 1 << 20
HEADER = struct.Struct(">I")


class FrameError(Exception):
    pass


class UpgradeRefused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def frame(channel: int, payload: bytes) -> bytes:
    return HEADER.pack(len(payload) + 1) + bytes((channel,)) + payload


class FrameReader:
    """Frames from a stream, after whatever bytes of it were already read (by h11, with the head)."""

    def __init__(self, reader: asyncio.StreamReader, pending: bytes = b""):
        self.reader, self.pending = reader, pending

    async def _exactly(self, count: int) -> bytes:
        taken, self.pending = self.pending[:count], self.pending[count:]
        if len(taken) < count:
            taken += await self.reader.readexactly(count - len(taken))
        return taken

    async def next(self) -> tuple[int, bytes] | None:
        """The next (channel, payload); None when the peer closed between frames."""
        try:
            head = await self._exactly(HEADER.size)
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise FrameError("the stream ended inside a frame header") from None
            return None
        (length,) = HEADER.unpack(head)
        if not 1 <= length <= MAX_FRAME:
            raise FrameError(f"a frame of {length} bytes")
        try:
            body = await self._exactly(length)
        except asyncio.IncompleteReadError:
            raise FrameError("the stream ended inside a frame") from None
        return body[0], body[1:]


def status_json(status: dict[str, Any]) -> bytes:
    return json.dumps(status, separators=(",", ":")).encode()


def exit_status(argv: list[str], code: int) -> dict[str, Any]:
    """The Status the kubelet writes on the error channel when a command ends with `code`."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    command = "[" + " ".join(argv) + "]"  # Go's %v of a []string
    return {"metadata": {}, "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command {command}, "
                       f"exit code {code}",
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


MAX_REFUSAL_BYTES = 64 * 1024


async def connect_upgraded(address: str, port: int, target: str, *, timeout: float = 10.0,
                           token: str = "") -> tuple[FrameReader, asyncio.StreamWriter]:
    """Open the upgraded stream to a kubelet: the request (with `token`, the node-access secret,
    as its bearer credential), its 101, and the raw connection."""
    credential = [(b"authorization", f"Bearer {token}".encode("latin-1"))] if token else []
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(address, port)
        try:
            wire = Wire(reader, writer, h11.CLIENT)
            wire.send(h11.Request(method="POST", target=target.encode("latin-1"),
                                  headers=[(b"host", f"{address}:{port}".encode()), (b"connection", b"Upgrade"),
                                           (b"upgrade", UPGRADE), (b"content-length", b"0"), *credential]),
                      h11.EndOfMessage())
            await writer.drain()
            event = await wire.receive()
            if type(event) is h11.InformationalResponse and event.status_code == 101:
                leftover, _ = wire.h11.trailing_data  # frames that came with the 101
                return FrameReader(reader, bytes(leftover)), writer
            if type(event) is not h11.Response:
                raise UpgradeRefused(502, "the kubelet answered with something that is not HTTP")
            body = b""
            while type(next_event := await wire.receive()) is h11.Data and len(body) < MAX_REFUSAL_BYTES:
                body += next_event.data  # a refusal is a short Status: the rest is not read
            raise UpgradeRefused(event.status_code, _error_text(body) or f"the kubelet answered {event.status_code}")
        except BaseException:
            writer.close()
            raise


def _error_text(body: bytes) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.decode(errors="replace").strip()
    return str(parsed.get("error", "")) if isinstance(parsed, dict) else ""
