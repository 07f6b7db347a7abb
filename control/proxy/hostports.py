"""Traffic from a pod to a host-network listener of a node: the ingress controller (the front
door), which listens on node-1's own address as a hostNetwork ingress-nginx does, and the gateway
controller's Gateway listeners, served there too (as Envoy Gateway's proxy on a bare-metal node's
address). No kube-proxy rule is involved upstream either: the packet leaves the pod for the node's
address and reaches the process listening there. kube-proxy only recognises the address and port
and makes the request.

Guarantees:
- A Node announces its host listeners in one annotation per listener program
  (`control.kinds.network.HOST_LISTENER_ANNOTATIONS`): `kubekitchen.dev/ingress-controller-ports`
  written by the ingress controller and `kubekitchen.dev/gateway-listeners` written by the gateway
  controller, each `scheme=port,...` (`http=8080,https=8443`; a scheme may repeat). `announced`
  reads them all (a port claimed twice is the first announcement's); anything malformed is skipped.
- `listener_at(nodes, ip, port)` is the `HostListener` (node name, scheme, who answers: `via`)
  a Node announces on its InternalIP at that port (80 when none is given), or None: any other
  address goes the usual way.
- `send_to_listener` makes each request of the plan as one HTTP/1.1 exchange with the listener
  (the plan's path and Host header; TLS without verification for an https port, as `curl -k`),
  and yields kube-proxy's line for it: `code` 200 when it answered (whatever the HTTP status),
  `response` the whole answer (`status`, `headers`, `body` as text) for the shell to print, `pod`
  and `podNamespace` from its `x-kubekitchen-pod` header (`ns/pod`, or a bare pod name), `via`
  the listener's program (`ingress-controller`, `gateway-controller`); an answer
  that does not come within 2 s, or a refused connection, is a line with code 503 and an error;
  a connection the sending pod's NetworkPolicies drop (egress to the node's address) is never
  made: its line has code 0 and the `dropped` fields, as `send`'s; a connection kube-proxy cannot decide yet
  (`refused`) is a 503 line, nothing sent.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, NamedTuple

import h11

from control.clock import REAL, Clock
from control.client.framing import Wire
from control.kinds.network import HOST_LISTENER_ANNOTATIONS, node_address

Obj = dict[str, Any]
TIMEOUT = 2.0
MAX_BODY = 1 << 20


class Announced(NamedTuple):
    scheme: str  # http or https
    via: str  # the program listening: ingress-controller, gateway-controller


class HostListener(NamedTuple):
    node: str
    scheme: str
    via: str


def parse_ports(text: str) -> dict[int, str]:
    """port -> scheme of one announcement (`http=80,https=443,http=30081`)."""
    out: dict[int, str] = {}
    for part in str(text or "").split(","):
        scheme, _, port = part.strip().partition("=")
        if port.isdigit() and scheme in ("http", "https") and 0 < int(port) < 65536:
            out.setdefault(int(port), scheme)
    return out


def announced(node: Obj) -> dict[int, Announced]:
    """port -> (scheme, via) of every host listener a Node announces."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    out: dict[int, Announced] = {}
    for annotation, via in HOST_LISTENER_ANNOTATIONS:
        for port, scheme in parse_ports(annotations.get(annotation) or "").items():
            out.setdefault(port, Announced(scheme, via))
    return out


def listener_at(nodes: Iterable[Obj], ip: str, port: int | None) -> HostListener | None:
    for node in nodes:
        if node_address(node) == ip:
            found = announced(node).get(port or 80)
            if found:
                return HostListener(str((node.get("metadata") or {}).get("name") or ""), found.scheme, found.via)
    return None


async def exchange(ip: str, port: int, scheme: str, path: str, host: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """One GET to the listener; (status, headers, body)."""
    context = None
    if scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    reader, writer = await asyncio.open_connection(ip, port, ssl=context,
                                                   server_hostname=(host or None) if context else None)
    wire = Wire(reader, writer, h11.CLIENT)
    try:
        wire.send(h11.Request(method="GET", target=path or "/",
                              headers=[(b"host", (host or f"{ip}:{port}").encode()), (b"user-agent", b"curl/8.5.0"),
                                       (b"accept", b"*/*"), (b"connection", b"close")]), h11.EndOfMessage())
        await writer.drain()
        response = await wire.receive_answer()
        if type(response) is not h11.Response:
            raise ConnectionError("the listener closed the connection")
        pieces, size = [], 0
        while True:
            event = await wire.receive()
            if type(event) is h11.Data:
                size += len(event.data)
                if size > MAX_BODY:
                    raise ConnectionError("the answer is too large")
                pieces.append(event.data)
            elif type(event) is h11.EndOfMessage:
                break
            else:
                raise ConnectionError("the answer ended before its body")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers]
        return response.status_code, headers, b"".join(pieces)
    finally:
        writer.close()


async def send_to_listener(plan: Any, *, node: str, where: tuple[str, ...], clock: Clock = REAL,
                           decide: Callable[[str, str, int, str], Awaitable[Obj]] | None = None
                           ) -> AsyncIterator[Obj]:
    """Lines as `control.proxy.send.send` gives them, for a plan whose target is a host listener.
    With `decide` (kube-proxy's NetworkPolicy view) the sending pod's egress to the node's address
    is decided first, as for any connection: a dropped one is never made (code 0, `dropped`)."""
    listener_node, scheme, *rest = where
    via = rest[0] if rest else "ingress-controller"
    port = plan.port or 80
    answered: dict[str, int] = {}
    failed = 0
    start = clock.monotonic()
    for seq in range(plan.count):
        delay = start + seq * plan.interval - clock.monotonic()
        if seq and delay > 0:
            await clock.sleep(delay)
        began = clock.monotonic()
        line: Obj = {"seq": seq, "from": node, "target": plan.target, "service": "", "clusterIP": "",
                     "endpoint": f"{plan.target}:{port}", "pod": "", "podNode": listener_node,
                     "via": via, "endpointsResourceVersion": ""}
        decided = await decide(getattr(plan, "source", ""), plan.target, port, "TCP") if decide is not None else {}
        if "refused" in decided:  # kube-proxy cannot decide yet: nothing is sent, nothing is decided
            failed += 1
            yield {**line, "code": 503, "error": decided["refused"]}
            continue
        if "dropped" in decided:
            failed += 1
            yield {**line, "code": 0, **decided}
            continue
        line.update(decided)
        try:
            async with asyncio.timeout(TIMEOUT):
                status, headers, body = await exchange(plan.target, port, scheme, getattr(plan, "path", "/") or "/",
                                                       getattr(plan, "host", "") or "")
        except (OSError, TimeoutError, ConnectionError, h11.ProtocolError, ssl.SSLError) as exc:
            failed += 1
            yield {**line, "code": 503, "error": f"the {via.replace('-', ' ')} did not answer: {type(exc).__name__}"}
            continue
        who = next((v for k, v in headers if k.lower() == "x-kubekitchen-pod"), "")
        namespace, _, pod = who.rpartition("/")
        line.update(code=200, pod=pod, podNamespace=namespace, ms=round((clock.monotonic() - began) * 1000, 3),
                    response={"status": status, "headers": headers, "body": body.decode("utf-8", errors="replace")})
        answered[pod] = answered.get(pod, 0) + 1
        yield line
    yield {"done": True, "sent": plan.count, "answered": answered, "failed": failed}
