"""The Gateway's data plane: an HTTP server per served port that routes each request by the
Gateway's Router to a Service's ready endpoint, through that pod's kubelet, and answers what the
pod's simulated server answers.

Guarantees:
- The server answers anyone (it is the cluster's front door, not a node server: no node-access
  secret is asked). It reads the current Router once per request (`router()`), so a route change
  applies from the next request on, never half-way through one.
- Answers, as Envoy Gateway gives them: no rule matches → 404; the chosen rule has no backend
  with a weight, or the drawn backend is unusable (refused, not found) → 500; the Service has no
  ready endpoint → 503 `no healthy upstream`; the kubelet does not answer or the pod does not
  serve → 503. Otherwise the pod's answer (`control.kinds.pod_servers.Listener.answer`: the JSON
  line that names the pod, or nginx's/httpd's page), with `x-kubekitchen-backend: ns/service`
  and `x-kubekitchen-pod: ns/pod` headers so a client can count who answered.
- `ready_endpoints(service, port, slices)` is pure: the ready endpoints (`conditions.ready` not
  false) of the Service's EndpointSlices for the slice port whose name is the service port's,
  without duplicates, in a stable order.
- The endpoint of a backend and the backend of a rule are drawn with the injected `rng`.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl, quote, urlsplit

import h11

from control.clock import REAL, Clock
from control.client.serving import Exchange, NodeServer, Request
from control.gateway.routing import Backend, Router, choose_backend
from control.kinds.pod_servers import Listener

Obj = dict[str, Any]
REASONS = {200: b"OK", 404: b"Not Found", 500: b"Internal Server Error", 503: b"Service Unavailable"}


@dataclass(frozen=True)
class Target:
    """One ready endpoint of a Service port: the pod behind it."""
    pod: str
    namespace: str
    node: str
    ip: str
    port: int


def ready_endpoints(service: Obj, port: int, slices: list[Obj]) -> list[Target]:
    namespace = str((service.get("metadata") or {}).get("namespace") or "")
    wanted = next((p for p in (service.get("spec") or {}).get("ports") or []
                   if isinstance(p, dict) and p.get("port") == port), None)
    if wanted is None:
        return []
    name = str(wanted.get("name") or "")
    found: dict[tuple[str, int], Target] = {}
    for slice_ in slices:
        ports = [p for p in slice_.get("ports") or [] if isinstance(p, dict) and str(p.get("name") or "") == name
                 and isinstance(p.get("port"), int)]
        for endpoint in slice_.get("endpoints") or []:
            addresses = endpoint.get("addresses") or []
            if not addresses or (endpoint.get("conditions") or {}).get("ready") is False:
                continue
            for p in ports:
                found.setdefault((addresses[0], p["port"]), Target(
                    str((endpoint.get("targetRef") or {}).get("name") or ""), namespace,
                    str(endpoint.get("nodeName") or ""), addresses[0], p["port"]))
    return [found[k] for k in sorted(found)]


# endpoints(backend) -> the backend Service's ready endpoints
Endpoints = Callable[[Backend], list[Target]]
# forward(target, from) -> (status, the kubelet's JSON answer)
Forward = Callable[[Target], Awaitable[tuple[int, Obj]]]
# dropped(pod ip, port) -> what the node's network agent says of a connection there: the `dropped`
# fields when a NetworkPolicy drops it, else None
Dropped = Callable[[str, int], Awaitable["Obj | None"]]
CONNECT_TIMEOUT = 5.0  # Envoy's default connect_timeout: how long a dropped connection hangs


def serve_path(target: Target, sender: str) -> str:
    """The kubelet's path for one request to `target`."""
    return f"/serve/{quote(target.namespace)}/{quote(target.pod)}?port={target.port}&from={quote(sender)}"


async def respond(exchange: Exchange, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    """One whole answer with these headers (content-length added)."""
    head = h11.Response(status_code=status, reason=REASONS.get(status, b"Error"),
                        headers=[*headers, (b"content-length", str(len(body)).encode())])
    events: list[Any] = [head]
    if body and not exchange.head_only:
        events.append(h11.Data(data=body))
    exchange.wire.send(*events, h11.EndOfMessage())
    await exchange.wire.writer.drain()


class GatewayServer(NodeServer):
    """The listener(s) of one Gateway on one port."""

    def __init__(self, router: Callable[[], Router], *, endpoints: Endpoints, forward: Forward,
                 rng: random.Random | None = None, clock: Clock = REAL, name: str = "gateway",
                 dropped: Dropped | None = None):
        self.router, self.endpoints, self.forward, self.dropped = router, endpoints, forward, dropped
        self.rng, self.clock, self.name = rng or random.Random(), clock, name

    def admits(self, request: Request) -> bool:
        return True  # the front door: anyone may knock

    async def answer(self, request: Request, exchange: Exchange) -> None:
        status, headers, body = await self.handle_request(request)
        await respond(exchange, status, headers, body)

    async def handle_request(self, request: Request) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        url = urlsplit(request.target)
        headers: dict[str, str] = {}
        for name, value in request.headers:
            key = name.decode("latin-1").lower()
            headers[key] = f"{headers[key]},{value.decode('latin-1')}" if key in headers else value.decode("latin-1")
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        decision = self.router().decide(request.method, url.path or "/", headers.get("host", ""), headers, query)
        if decision is None:
            return self._plain(404, b"")
        backend = choose_backend(decision.rule.backends, self.rng)
        if backend is None or backend.problem:
            return self._plain(500, b"")
        targets = self.endpoints(backend)
        if not targets:
            return self._plain(503, b"no healthy upstream", backend)
        target = targets[self.rng.randrange(len(targets))]
        if self.dropped is not None and await self.dropped(target.ip, target.port):
            await self.clock.sleep(CONNECT_TIMEOUT)  # a NetworkPolicy drops the packets: Envoy's connect timeout
            return self._plain(503, b"upstream connect error or disconnect/reset before headers. "
                                    b"reset reason: connection timeout", backend)
        try:
            code, answer = await self.forward(target)
        except (OSError, asyncio.TimeoutError) as exc:
            code, answer = 503, {"error": type(exc).__name__}
        if code != 200:
            return self._plain(503, b"upstream connect error or disconnect/reset before headers", backend)
        listener = Listener(str(answer.get("server") or "json"), str(answer.get("pod") or target.pod),
                            str(answer.get("namespace") or target.namespace), str(answer.get("node") or target.node),
                            str(answer.get("podIP") or target.ip), target.port, "")
        status, page_headers, page = listener.answer(request.method, request.target, self.clock.now())
        extra = [(b"x-kubekitchen-backend", f"{backend.namespace}/{backend.name}".encode()),
                 (b"x-kubekitchen-pod", f"{listener.namespace}/{listener.pod}".encode())]
        return status, [*page_headers, *extra], page

    def _plain(self, status: int, body: bytes, backend: Backend | None = None) -> tuple[int, list, bytes]:
        headers = [(b"content-type", b"text/plain"), (b"server", b"kube-kitchen-gateway")]
        if backend is not None:
            headers.append((b"x-kubekitchen-backend", f"{backend.namespace}/{backend.name}".encode()))
        return status, headers, body

