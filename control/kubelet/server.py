"""The kubelet's HTTP server: the one the Node advertises (InternalIP, kubeletEndpoint.Port).

Routes:
- `POST /serve/<namespace>/<pod>?port=<n>&from=<node>`: one request to the pod's "app" (what
  kube-proxy forwards traffic to). 200 JSON `{"pod", "namespace", "node", "podIP", "port"}` when
  this kubelet runs the pod and a container of it runs (also while it is being stopped within its
  grace period: it shuts down gracefully); 503 `{"error"}` when the pod is here but nothing runs;
  404 when this kubelet does not run it. Each 200 counts as one request in the CPU model.
- `POST /serveIP/<pod IP>?port=<n>&from=<node>`: the same, for the pod of this node that has
  that IP (a pod IP sent to directly, routed here by the node's podCIDR); 404 when none has it.
  Both answers name the simulated server that answered (`"server"`: nginx | httpd | json, see
  `portforward.flavour_for`), so a shell's wget/curl prints that server's page.
- `GET /stats/summary`: the Summary API (see `usage`).
- `GET /healthz` and `GET /containerLogs/...`: handed to the log server (`logs`).
- `POST /exec/...` and `POST /attach/...` (upgraded connections): handed to the exec server
  (`exec`), when the kubelet has one.
- `POST /portForward/...` (upgraded connections): handed to the port-forward server
  (`portforward`), when the kubelet has one.

Who may call: every route, /healthz included, answers only a caller with the cluster's node-access
secret (the hub, and kube-proxy sending traffic to pods); anyone else gets 401 Unauthorized
(`control.client.serving`), as a kubelet with `--anonymous-auth=false` on its port 10250 (its
unauthenticated /healthz is a separate port, 10248, not simulated).

Guarantees: `/serve` and `/stats/summary` keep the connection open (HTTP/1.1 keep-alive, so
kube-proxy reuses its connections); log answers close it, as before. Bad parameters answer 400,
other methods 405, all as JSON `{"error"}`; framing, body limits and malformed requests are
`control.client.serving`'s. Deciding an answer (`serve_answer`) is pure.
"""

from __future__ import annotations

import json
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

from control.client.serving import Exchange, HttpError, NodeServer, Request
from control.kubelet.containers import Container
from control.kubelet.exec import ExecServer
from control.kubelet.logs import LogServer
from control.kubelet.portforward import PortForwardServer

Answer = tuple[int, dict[str, Any]]


BadRequest = HttpError  # the name tests and callers knew; the node servers have one error class


def serving(containers: tuple[Container, ...]) -> bool:
    """Whether the pod's app answers: a container runs (also while a deleted pod's containers
    handle SIGTERM: they finish in-flight work until they end, `podstate`)."""
    return any(c.state == "running" for c in containers)


def serve_answer(*, node: str, namespace: str, name: str, port: int | None, pod_ip: str | None,
                 containers: tuple[Container, ...] | None, server: str = "json") -> Answer:
    """The answer to `POST /serve/<namespace>/<name>`; `containers` None: not a pod of this node."""
    if containers is None:
        return 404, {"error": f'pod "{namespace}/{name}" does not run on node {node}'}
    if not serving(containers):
        return 503, {"error": f'no container of pod "{namespace}/{name}" is running'}
    return 200, {"pod": name, "namespace": namespace, "node": node, "podIP": pod_ip or "", "port": port,
                 "server": server}


def parse_serve(target: str) -> tuple[str, str, int | None, str]:
    """(namespace, pod, port, from) of a `/serve/...` target, ("", pod IP, port, from) of a
    `/serveIP/...` one; HttpError when malformed."""
    url = urlsplit(target)
    parts = [unquote(p) for p in url.path.split("/") if p]
    if parts[:1] == ["serveIP"] and len(parts) == 2:
        parts = ["serveIP", "", parts[1]]
    elif len(parts) != 3 or not all(parts):
        raise HttpError(404, f"no such path: {url.path}")
    query = parse_qs(url.query)
    raw = (query.get("port") or [""])[-1]
    port = None
    if raw:
        if not raw.isdigit() or not 0 < int(raw) < 65536:
            raise HttpError(400, f"invalid port: {raw!r}")
        port = int(raw)
    return parts[1], parts[2], port, (query.get("from") or [""])[-1]


class KubeletServer(NodeServer):
    """Serves `serve(namespace, pod, port, from)` and `stats()` answers, and hands log requests to
    the log server."""

    def __init__(self, logs: LogServer, *, serve: Callable[[str, str, int | None, str], Answer],
                 stats: Callable[[], dict[str, Any]], streams: ExecServer | None = None,
                 forwards: PortForwardServer | None = None,
                 serve_ip: Callable[[str, int | None, str], Answer] | None = None):
        self.logs, self.serve, self.stats, self.streams = logs, serve, stats, streams
        self.forwards, self.serve_ip = forwards, serve_ip

    def route(self, method: str, target: str) -> Answer:
        path = urlsplit(target).path
        try:
            if path.startswith(("/serve/", "/serveIP/")):
                if method != "POST":
                    raise HttpError(405, f"method {method} not allowed")
                namespace, name, port, sender = parse_serve(target)
                if path.startswith("/serveIP/"):
                    if self.serve_ip is None:
                        raise HttpError(404, f"no such path: {path}")
                    return self.serve_ip(name, port, sender)
                return self.serve(namespace, name, port, sender)
            if method != "GET":
                raise HttpError(405, f"method {method} not allowed")
            return 200, self.stats()
        except HttpError as exc:
            return exc.status, {"error": str(exc)}

    async def answer(self, request: Request, exchange: Exchange) -> None:
        path = urlsplit(request.target).path
        if self.streams is not None and self.streams.serves(path):
            return await self.streams.answer(request, exchange)
        if self.forwards is not None and self.forwards.serves(path):
            return await self.forwards.answer(request, exchange)
        if not (path.startswith(("/serve/", "/serveIP/")) or path == "/stats/summary"):
            return await self.logs.answer(request, exchange)
        status, body = self.route(request.method, request.target)
        await exchange.respond(status, "application/json", json.dumps(body, separators=(",", ":")).encode())
