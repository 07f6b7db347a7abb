"""`portforward` on an object placed on a node (`pods/NAME/portforward`): the hub accepts the
client's WebSocket and relays each forwarded TCP connection to the node's kubelet, one upgraded
HTTP/1.1 connection per forwarded connection (`POST /portForward/<ns>/<name>?port=N`, see
`control.kubelet.portforward`).

Two WebSocket protocols, as kube-apiserver and the kubelet serve them (the relays are in
`control.api.portforward_relays`): `SPDY/3.1+portforward.k8s.io`, SPDY/3.1 carried in binary
messages (kubectl >= 1.30), and `v4.channel.k8s.io`, two channels per port of the `ports` query
(the official Python client; also a WebSocket that offers no protocol).

Guarantees:
- Which paths: a kind declares `portforward` among its subresources; this module asks the kind,
  never names one. The kind's location (`Kind.connect`) names the kubelet and its path from the
  object and its host; `node_address` is the one gate to a node.
- Before the upgrade, bad requests are refused with a Status as the handshake's answer: object
  not found 404, not yet on a node 400 (`pod NAME does not have a host assigned`), no kubelet
  endpoint 503, no or bad `ports` for v4 400, an unsupported subprotocol 403. SPDY over a plain
  HTTP Upgrade (kubectl's fallback, and kubectl < 1.30) arrives here as a websocket scope offering
  `SPDY/3.1+portforward.k8s.io` (`control.serving.spdy_upgrade` hands it over); any other plain HTTP
  request gets the same checks, then 400.
- A refused connection (nothing listens, the kubelet unreachable) affects only its own streams;
  the WebSocket, and the hub, go on. SPDY that does not parse ends the tunnel with GOAWAY
  (PROTOCOL_ERROR). Client PINGs are answered. Nothing relayed for `KK_STREAM_IDLE_SECONDS` ends it.
  Each WebSocket leaves one traffic record (code 101 once upgraded, else the refusal's code).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from control import errors
from control.auth import gate
from control.api import extensions, locations, traffic
from control.api.portforward_relays import Channels, ForwardTarget, SpdyTunnel
from control.api.request import Call, Request
from control.api.responses import error_response
from control.api.streams import Receive, Send, _deny, stream_idle_seconds, stream_kind
from control.clock import REAL, Clock
from control.storage.db import run_db

SUBRESOURCE = "portforward"
SPDY_PROTOCOL = "SPDY/3.1+portforward.k8s.io"
V4_PROTOCOL = "v4.channel.k8s.io"
PROTOCOLS = (SPDY_PROTOCOL, V4_PROTOCOL)


def is_portforward_path(path: str) -> bool:
    return stream_kind(path, (SUBRESOURCE,)) is not None


def locate(kind: Any, namespace: str, name: str) -> ForwardTarget:
    """Runs on the database thread: the kubelet the kind's location names (PortForwardLocation),
    or the ApiError."""
    located = locations.locate(kind, namespace, name, SUBRESOURCE, {})
    return ForwardTarget(namespace, name, located.target.address, located.target.port, located.path)


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


async def serve_portforward(scope: dict[str, Any], receive: Receive, send: Send, *, idle: float | None = None,
                            clock: Clock = REAL) -> None:
    """The ASGI websocket handler of a portforward path (see `is_portforward_path`)."""
    started = REAL.monotonic()  # the traffic record's latency is on the hub's own clock
    if (await receive())["type"] != "websocket.connect":
        return
    kind, namespace, name, _ = stream_kind(scope["path"], (SUBRESOURCE,)) or (None, "", "", "")
    request = Request({**scope, "method": "GET"}, b"")
    actor = request.actor
    where = traffic.scope("POST", scope["path"], {})
    tag = {"verb": "create", "resource": f"{kind.plural}/{SUBRESOURCE}" if kind else scope["path"],
           "namespace": namespace, "name": name}
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    offered = list(scope.get("subprotocols") or [])
    try:
        if kind is None:
            raise errors.NotFound(errors.NOT_FOUND)
        await gate.admit("POST", scope["path"], {}, scope.get("headers", []),  # create on the subresource
                         identified=request.identified,
                         client_chain=extensions.client_chain(scope.get("extensions") or {}))
        target = await run_db(locate, kind, namespace, name)
        protocol = choose_protocol(offered)
        if protocol is None:
            raise errors.Forbidden(f"requested protocol(s) are not supported: [{' '.join(offered)}]; "
                                   f"supports [{' '.join(PROTOCOLS)}]")
        ports = parse_ports(query) if protocol != SPDY_PROTOCOL else []
    except errors.ApiError as exc:
        reply = error_response(exc)
        traffic.request_done(actor, tag, reply.status, started, request.user, where)
        await _deny(send, scope, reply)
        return
    await send({"type": "websocket.accept", "subprotocol": protocol or None})
    relay = SpdyTunnel(target, receive, send) if protocol == SPDY_PROTOCOL else Channels(target, ports, receive, send)
    try:
        await relay.run(idle if idle is not None else stream_idle_seconds(), clock)
    finally:
        traffic.request_done(actor, tag, 101, started, request.user, where)


