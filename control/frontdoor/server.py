"""The front door's listening sockets: HTTP and HTTPS (with SNI), answering every request by the
controller's `answer(method, target, host)` — the one place that routes.

Guarantees: anyone may call (this is the cluster's public entrance, no node-access secret); each
connection serves requests one after another (keep-alive) until the client closes or stays idle;
a malformed request is answered 400 and closed, never a crash of the server (`control.client.serving`'s
framing); an answer carries the pod's own headers (its server, date, type) plus its length, and a
HEAD answer no body. A TLS listener's certificate follows the name the client asks for
(`tls.Certificates`).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Awaitable, Callable

import h11

from control.client.serving import Exchange, NodeServer, Request
from control.kinds.pod_servers import REASONS

Headers = list[tuple[bytes, bytes]]
Answer = Callable[[str, str, str, bool], Awaitable[tuple[int, Headers, bytes]]]
MORE_REASONS = {308: b"Permanent Redirect", 502: b"Bad Gateway", 503: b"Service Temporarily Unavailable", 504: b"Gateway Time-out"}


def host_of(request: Request) -> str:
    return next((value.decode("latin-1") for name, value in request.headers if name == b"host"), "")


class FrontDoorServer(NodeServer):
    idle = 75.0  # nginx's keepalive_timeout

    def __init__(self, answer: Answer, *, tls: Callable[[], ssl.SSLContext] | None = None):
        self._answer, self._tls = answer, tls

    def admits(self, request: Request) -> bool:
        return True  # the front door is open to all

    def expected_token(self) -> str:
        return ""

    async def start(self, host: str, port: int = 0) -> int:
        context = self._tls() if self._tls is not None else None
        self.server = await asyncio.start_server(self.handle, host, port, ssl=context)
        return self.server.sockets[0].getsockname()[1]

    async def answer(self, request: Request, exchange: Exchange) -> None:
        status, headers, body = await self._answer(request.method, request.target, host_of(request),
                                                   self._tls is not None)
        headers = [*headers, (b"content-length", str(len(body)).encode()), (b"connection", b"keep-alive")]
        events: list[h11.Event] = [h11.Response(status_code=status, headers=headers,
                                                reason=REASONS.get(status) or MORE_REASONS.get(status, b""))]
        if body and not exchange.head_only:
            events.append(h11.Data(data=body))
        exchange.wire.send(*events, h11.EndOfMessage())
        await exchange.wire.writer.drain()
