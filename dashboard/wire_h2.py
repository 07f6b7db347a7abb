"""The wire view over HTTP/2: the same watch as `dashboard.wire`, opened on the hub's own HTTPS port with
ALPN `h2`, each frame the hub sends shown as it arrives — so the page can set HTTP/2 framing (a HEADERS
frame, then one DATA frame per watch event, no chunk sizes) beside HTTP/1.1's chunked transfer.

Guarantees: only the hub's advertised HTTPS address is contacted (the data folder's record of what
this hub serves, `control.auth.serving.secure_url_for`, or the page's own address when it is already
HTTPS), verified against the cluster CA; TLS must select `h2`, else a note says so and nothing else
is sent. The request is `GET /api/v1/namespaces/<ns>/pods?watch=1` on stream 1, with the user agent
`dashboard/wire` and the bearer token of the user the browser is logged in as. Every frame read from
the connection is passed to `forward` in arrival order as one record: its type, stream id, length
and flags as the frame header says them, plus, for HEADERS, the decoded header fields and, for DATA,
its payload as text. What travels is what the hub writes: one DATA frame per write, i.e. per watch event as it happens;
changes committed together (group commit) and a watch's opening list share one write, so they share
one DATA frame here exactly as they share one chunk in HTTP/1.1. The client side of HTTP/2 (SETTINGS
acknowledgement, flow-control window
updates for what was read) is done with the `h2` library, so a long watch keeps flowing. The
connection is closed when the stream ends, when `forward` fails, or when the task is cancelled.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

import h2.config
import h2.connection
import h2.events
from hyperframe.frame import Frame

from dashboard import hub
from dashboard.hub import WIRE_AGENT

Forward = Callable[[dict[str, Any]], Awaitable[None]]
HEADER_BYTES = 9  # every HTTP/2 frame starts with length (3), type (1), flags (1), stream id (4)
TYPES = {0: "DATA", 1: "HEADERS", 2: "PRIORITY", 3: "RST_STREAM", 4: "SETTINGS", 5: "PUSH_PROMISE",
         6: "PING", 7: "GOAWAY", 8: "WINDOW_UPDATE", 9: "CONTINUATION"}
STREAM = 1


class NoHttp2(Exception):
    """The hub serves no HTTPS, or TLS did not select h2 (the message says which)."""


def secure_address(scope: dict[str, Any]) -> tuple[str, int] | None:
    """(host, port) of this hub's HTTPS port, or None when it serves none."""
    from django.conf import settings

    from control.auth.serving import secure_url_for

    plain = hub.hub_url(scope)
    url = plain if plain.startswith("https://") else secure_url_for(settings.DATA_DIR, plain)
    if not url:
        return None
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 443


def tls_context() -> ssl.SSLContext:
    """Verifies the hub against the cluster CA and offers only h2."""
    from django.conf import settings

    from control import keys

    context = ssl.create_default_context(cadata=keys.ca_certificate(settings.DATA_DIR).decode("ascii"))
    context.set_alpn_protocols(["h2"])
    return context


def request_headers(host: str, port: int, namespace: str, token: str) -> list[tuple[str, str]]:
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return [(":method", "GET"), (":scheme", "https"), (":authority", authority),
            (":path", f"/api/v1/namespaces/{namespace}/pods?watch=1"), ("user-agent", WIRE_AGENT),
            ("accept", "application/json"), *([("authorization", f"Bearer {token}")] if token else [])]


def describe(raw: bytes, events: list[Any]) -> dict[str, Any]:
    """One frame (its bytes, and what h2 made of them) as the page shows it."""
    frame, length = Frame.parse_frame_header(memoryview(raw[:HEADER_BYTES]))
    record: dict[str, Any] = {"type": TYPES.get(raw[3], f"0x{raw[3]:02x}"), "stream": frame.stream_id,
                              "length": length, "flags": sorted(frame.flags)}
    for event in events:
        if isinstance(event, h2.events.ResponseReceived):
            record["headers"] = [[str(k), str(v)] for k, v in event.headers]
        elif isinstance(event, h2.events.DataReceived):
            record["text"] = bytes(event.data).decode("utf-8", "replace")
        elif isinstance(event, h2.events.StreamReset):
            record["error"] = str(event.error_code)
    return record


async def relay(host: str, port: int, forward: Forward, *, namespace: str = "default",
                token: str | None = None, context: ssl.SSLContext | None = None,
                limit_bytes: int = 64 * 1024 * 1024) -> None:
    """Open the watch over HTTP/2 and forward each frame the hub sends until the stream ends."""
    reader, writer = await asyncio.open_connection(host, port, ssl=context or tls_context(),
                                                   server_hostname=host)
    try:
        chosen = writer.get_extra_info("ssl_object").selected_alpn_protocol()
        if chosen != "h2":
            raise NoHttp2(f"the hub's HTTPS port did not choose HTTP/2 (ALPN: {chosen or 'none'})")
        bearer = token if token is not None else await asyncio.to_thread(hub.current_token)
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        conn.initiate_connection()
        conn.send_headers(STREAM, request_headers(host, port, namespace, bearer), end_stream=True)
        writer.write(conn.data_to_send())
        await writer.drain()
        buffer, passed = b"", 0
        while passed < limit_bytes:
            data = await reader.read(64 * 1024)
            if not data:
                return
            passed += len(data)
            buffer += data
            while len(buffer) >= HEADER_BYTES:
                size = HEADER_BYTES + int.from_bytes(buffer[:3], "big")
                if len(buffer) < size:
                    break
                raw, buffer = buffer[:size], buffer[size:]
                events = conn.receive_data(raw)
                for event in events:
                    if isinstance(event, h2.events.DataReceived):  # read: the hub may send more
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                await forward(describe(raw, events))
                if any(isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset, h2.events.ConnectionTerminated))
                       for e in events):
                    return
            writer.write(conn.data_to_send())
            await writer.drain()
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except (ConnectionError, OSError, ssl.SSLError):
            pass
