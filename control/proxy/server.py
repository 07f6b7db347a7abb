"""kube-proxy's HTTP server: health, its rules, and traffic sent through it.

Routes:
- `GET /healthz` -> `ok`.
- `GET /rules` -> JSON `{"node", "balance", "version", "services": [...], "iptables": [...]}`;
  `format=text` -> the iptables-save text; `wait=<version>` waits (up to `timeoutSeconds`,
  default 30, at most 300) until the table's version is above it; `service=<ns>/<name>` shows
  that Service only.
- `POST /send?target=&namespace=&port=&count=&interval=&source=&path=&host=` -> chunked
  `application/x-ndjson`, one line per request as it is answered, then `{"done": true, ...}` (see
  `send`; a target that is a node's host listener, the front door, is sent there with the path and
  Host: `hostports`); `source` is the sending pod's IP, whose NetworkPolicies decide each
  connection with the destination's.
- `GET /decide?target=&namespace=&port=&protocol=&source=` -> JSON, the NetworkPolicy verdict on
  one connection without sending it: `{"allowed", "endpoint", "pod", "policyVersion"}` plus
  `dropped`/`allowedBy` as /send's lines carry them (the cluster DNS asks it before answering a
  pod); `protocol` TCP (default), UDP or SCTP; `wait=<policyVersion>` first waits (up to
  `timeoutSeconds`) until the policy view has changed past that version.

Who may call: `/rules`, `/send` and `/decide` answer only a caller with the cluster's node-access secret (the
hub), others get 401 (`control.client.serving`); `/healthz` answers anyone, as upstream's
kube-proxy serves its healthz port (10256) without authentication.

Guarantees: bad parameters answer 400 `{"error"}`, unknown paths 404, wrong methods 405, never a
crash of the server; plain answers keep the connection open (keep-alive), a /send stream closes
it when done; a client that leaves mid-stream stops the sending. Framing, body limits and
malformed requests are `control.client.serving`'s.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlsplit

from control.client.serving import Exchange, HttpError, NodeServer, Request
from control.proxy.send import SendPlan
from control.proxy.table import iptables_save

if TYPE_CHECKING:
    from control.proxy.proxy import KubeProxy

MAX_WAIT = 300.0
PROTOCOLS = ("TCP", "UDP", "SCTP")


def _wait_params(query: dict[str, str]) -> tuple[int | None, float]:
    try:
        wait = int(query["wait"]) if query.get("wait") not in (None, "") else None
        timeout = float(query.get("timeoutSeconds") or 30)
    except ValueError:
        raise HttpError(400, "wait must be an integer version and timeoutSeconds a number") from None
    if timeout < 0:
        raise HttpError(400, "timeoutSeconds must not be negative")
    return wait, min(timeout, MAX_WAIT)


class ProxyServer(NodeServer):
    open_paths = frozenset({"/healthz"})

    def __init__(self, proxy: "KubeProxy"):
        self.proxy = proxy

    async def answer(self, request: Request, exchange: Exchange) -> None:
        url = urlsplit(request.target)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        routes = {"/healthz": "GET", "/rules": "GET", "/send": "POST", "/decide": "GET"}
        if url.path not in routes:
            raise HttpError(404, f"no such path: {url.path}")
        if request.method != routes[url.path]:
            raise HttpError(405, f"method {request.method} not allowed on {url.path}")
        if url.path == "/healthz":
            return await exchange.respond(200, "text/plain; charset=utf-8", b"ok\n")
        if url.path == "/rules":
            return await self.rules(query, exchange)
        try:
            plan = SendPlan.parse(query)
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None
        if url.path == "/decide":
            return await self.decide(plan, query, exchange)
        await self.stream(plan, exchange)

    async def decide(self, plan: SendPlan, query: dict[str, str], exchange: Exchange) -> None:
        protocol = query.get("protocol") or "TCP"
        if protocol not in PROTOCOLS:
            raise HttpError(400, f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        wait, timeout = _wait_params(query)
        if wait is not None:
            await self.proxy.wait_policies_past(wait, timeout)
        answer = await self.proxy.decide(plan, protocol)
        await exchange.respond(200, "application/json", json.dumps(answer, separators=(",", ":")).encode())

    async def rules(self, query: dict[str, str], exchange: Exchange) -> None:
        wait, timeout = _wait_params(query)
        if wait is not None:
            await self.proxy.wait_past(wait, timeout)
        rules = self.proxy.rules(query.get("service") or None)
        if query.get("format") == "text":
            return await exchange.respond(200, "text/plain; charset=utf-8", iptables_save(rules["iptables"]).encode())
        await exchange.respond(200, "application/json", json.dumps(rules, separators=(",", ":")).encode())

    async def stream(self, plan: SendPlan, exchange: Exchange) -> None:
        await exchange.start(200, "application/x-ndjson", close=True)
        lines = self.proxy.send(plan)
        try:
            async for line in lines:
                await exchange.send(json.dumps(line, separators=(",", ":")).encode() + b"\n")
            await exchange.end()
        finally:
            await lines.aclose()  # type: ignore[attr-defined]
