"""The wire view: one real watch request to the hub over a raw TCP connection, its bytes passed on
untouched, so the page can show HTTP/1.1 chunked transfer (hex chunk sizes, then JSON lines).

Guarantees: the request is exactly `GET /api/v1/namespaces/<ns>/pods?watch=1 HTTP/1.1` with a Host,
a User-Agent naming the client `dashboard/wire`, the bearer token of the user the browser is logged in as (`hub.current_token`) and `Connection: close`
(only the answer's bytes are shown); every byte read from the
socket is handed to `forward` in arrival order, nothing added, decoded or dropped; the socket is
closed when the stream ends, when `forward` fails, or when the task is cancelled. For a hub the page
reached over HTTPS (`ca` given: the cluster CA) the connection is TLS offering only HTTP/1.1, and the
bytes shown are the decrypted ones.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Awaitable, Callable

from dashboard import hub
from dashboard.hub import WIRE_AGENT

Forward = Callable[[bytes], Awaitable[None]]
READ_SIZE = 16 * 1024


def request_bytes(host: str, port: int, namespace: str = "default", token: str = "") -> bytes:
    target = f"/api/v1/namespaces/{namespace}/pods?watch=1"
    host_header = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    lines = [f"GET {target} HTTP/1.1", f"Host: {host_header}", f"User-Agent: {WIRE_AGENT}",
             "Accept: application/json", *([f"Authorization: Bearer {token}"] if token else []),
             "Connection: close", "", ""]
    return "\r\n".join(lines).encode("ascii")


async def relay(host: str, port: int, forward: Forward, *, namespace: str = "default",
                limit_bytes: int = 64 * 1024 * 1024, token: str | None = None, ca: bytes | None = None) -> None:
    """Open the watch and forward its raw bytes until it ends (or `limit_bytes` were passed on)."""
    context = None
    if ca is not None:
        context = ssl.create_default_context(cadata=ca.decode())
        context.set_alpn_protocols(["http/1.1"])  # chunked transfer is what this view shows
    reader, writer = await asyncio.open_connection(host, port, ssl=context)
    try:
        bearer = token if token is not None else await asyncio.to_thread(hub.current_token)
        writer.write(request_bytes(host, port, namespace, bearer))
        await writer.drain()
        passed = 0
        while passed < limit_bytes:
            data = await reader.read(READ_SIZE)
            if not data:
                return
            passed += len(data)
            await forward(data)
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except (ConnectionError, OSError):
            pass
