"""`kubectl exec POD -- COMMAND` for a lesson's button: the command runs in the pod's container
through the hub's exec subresource, spoken as kubectl speaks it (a WebSocket, the channel protocol
`v5.channel.k8s.io` or `v4.channel.k8s.io`), and comes back as its output and exit code.

Why a WebSocket of our own: a connection a pod makes (its shell's wget or curl) is decided by the
NetworkPolicies of that pod, and only the pod's node may send traffic as the pod; running the
command in the pod is what the kubectl line beside the button does, and the only honest way.

Guarantees:
- One WebSocket to the hub (the page's hub address, its bearer token and CA), nothing else; the
  request carries `command=` once per word, `stdout=1&stderr=1` and `container=` when named. No
  stdin: the command cannot wait for input.
- The hub's refusal of the upgrade (404 no such pod, 403, 400 ...) is raised as its Status
  (`control.errors`); a stream that ends without the final Status, or a command that runs longer
  than `timeout`, raises `ExecFailed`; output beyond MAX_OUTPUT bytes is dropped (the exit code is
  still read).
- The exit code is the final Status's: 0 for Success, the `ExitCode` cause of a NonZeroExitCode
  Failure (as kubectl prints "command terminated with exit code N"), else ExecFailed with the
  Status's message.
- Frames are RFC 6455's: the client masks what it sends (a close, a pong), reads the server's
  unmasked frames, joins continuation frames, answers a ping, and stops at a close.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import ssl
import struct
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from control import errors

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
STDOUT, STDERR, ERROR = 1, 2, 3
MAX_OUTPUT = 64 * 1024
MAX_FRAME = 1 << 20
MAX_HEAD = 64 * 1024
TIMEOUT = 30.0


class ExecFailed(Exception):
    """The command's stream broke, or it did not end in time."""


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def exec_path(namespace: str, pod: str, command: list[str], container: str = "") -> str:
    params: list[tuple[str, str]] = [("command", word) for word in command]
    params += [("stdout", "1"), ("stderr", "1")] + ([("container", container)] if container else [])
    return f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}/exec?{urlencode(params)}"


def exit_code(status: dict[str, Any]) -> int:
    """The exit code a final Status reports (see the module's guarantees)."""
    if status.get("status") == "Success":
        return 0
    if status.get("reason") == "NonZeroExitCode":
        for cause in (status.get("details") or {}).get("causes") or []:
            if cause.get("reason") == "ExitCode" and str(cause.get("message", "")).isdigit():
                return int(cause["message"])
    raise ExecFailed(str(status.get("message") or "the command failed"))


def frame(opcode: int, payload: bytes = b"") -> bytes:
    """One masked client frame (FIN set)."""
    mask = os.urandom(4)
    size = len(payload)
    head = bytes([0x80 | opcode])
    if size < 126:
        head += bytes([0x80 | size])
    elif size < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack(">H", size)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", size)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def read_frame(reader: asyncio.StreamReader) -> tuple[bool, int, bytes]:
    """(fin, opcode, payload) of the server's next frame."""
    first, second = await reader.readexactly(2)
    size = second & 0x7F
    if size == 126:
        size = struct.unpack(">H", await reader.readexactly(2))[0]
    elif size == 127:
        size = struct.unpack(">Q", await reader.readexactly(8))[0]
    if size > MAX_FRAME:
        raise ExecFailed(f"a frame of {size} bytes is more than {MAX_FRAME}")
    mask = await reader.readexactly(4) if second & 0x80 else b""
    payload = await reader.readexactly(size)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bool(first & 0x80), first & 0x0F, payload


def _handshake(host: str, path: str, key: str, token: str, agent: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13",
             f"Sec-WebSocket-Protocol: {', '.join(PROTOCOLS)}", f"User-Agent: {agent}"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _refusal(reader: asyncio.StreamReader, code: int, headers: dict[str, str]) -> errors.ApiError:
    size = min(int(headers.get("content-length") or 0), MAX_HEAD)
    body = await reader.readexactly(size) if size else b""
    return errors.from_status(body, code)


async def _open(server: str, path: str, token: str, ca: bytes | None, agent: str):
    url = urlsplit(server)
    secure = url.scheme == "https"
    port = url.port or (443 if secure else 80)
    context = None
    if secure:
        context = ssl.create_default_context(cadata=ca.decode()) if ca else ssl.create_default_context()
    reader, writer = await asyncio.open_connection(url.hostname, port, ssl=context,
                                                   server_hostname=url.hostname if secure else None)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(_handshake(url.netloc, path, key, token, agent))
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    code = int(status_line.split(" ", 2)[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in header_lines if line)}
    if code != 101:
        refused = await _refusal(reader, code, headers)
        writer.close()
        raise refused
    accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
    if headers.get("sec-websocket-accept") != accept:
        writer.close()
        raise ExecFailed("the hub's WebSocket handshake did not answer our key")
    return reader, writer


async def _collect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> ExecResult:
    out: dict[int, bytearray] = {STDOUT: bytearray(), STDERR: bytearray()}
    message = bytearray()
    while True:
        fin, opcode, payload = await read_frame(reader)
        if opcode == 0x8:  # close: the stream ended before the final Status
            raise ExecFailed("the stream closed before the command's exit status")
        if opcode == 0x9:
            writer.write(frame(0xA, payload))
            continue
        if opcode in (0x1, 0x2, 0x0):
            message += payload
            if not fin:
                continue
            data, message = bytes(message), bytearray()
            if not data:
                continue
            channel, body = data[0], data[1:]
            if channel in out and len(out[channel]) < MAX_OUTPUT:
                out[channel] += body[:MAX_OUTPUT - len(out[channel])]
            elif channel == ERROR:
                code = exit_code(json.loads(body or b"{}"))
                return ExecResult(code, out[STDOUT].decode(errors="replace"), out[STDERR].decode(errors="replace"))


async def run_in_pod(server: str, token: str, ca: bytes | None, namespace: str, pod: str, command: list[str], *,
                     container: str = "", agent: str = "dashboard", timeout: float = TIMEOUT) -> ExecResult:
    """Run `command` in the pod (see the module's guarantees)."""
    reader, writer = await _open(server, exec_path(namespace, pod, command, container), token, ca, agent)
    try:
        return await asyncio.wait_for(_collect(reader, writer), timeout)
    except asyncio.TimeoutError:
        raise ExecFailed(f"the command ran longer than {timeout:g} s") from None
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        raise ExecFailed(f"the stream broke: {exc}") from None
    finally:
        try:
            writer.write(frame(0x8, struct.pack(">H", 1000)))
            writer.close()
        except (ConnectionError, RuntimeError):
            pass
