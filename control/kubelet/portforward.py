"""The kubelet's port-forward endpoint: `POST /portForward/<ns>/<pod>?port=N` with `Upgrade:
kubekitchen.dev/portforward`, answered `101 Switching Protocols`; from then on the connection is one
forwarded TCP connection to the pod's port N (what the container runtime's PortForward gives
upstream: the bytes of `localhost:N` inside the pod's network namespace), until either side closes.

Guarantees:
- Before switching protocols: a malformed path 404, a missing or bad `port` 400 (the kubelet's
  messages: `query parameter "port" is required`, `unable to parse "x" as a port`, `port "0" must
  be > 0`), a request without the upgrade 400, a pod this kubelet does not run 404
  `pod does not exist`, a port nothing listens on 503 with containerd's "connection refused"
  message as the kubelet writes it on the error stream (`error forwarding port 81 to pod <sandbox
  id>, uid : failed to execute portforward in network namespace ...`).
- What listens: a running container of the pod listens on the TCP ports its spec declares
  (`ports[].containerPort`) and, for the server images of `SERVER_IMAGES`, on their usual port.
  The listener is a simulated HTTP/1.1 server (keep-alive, HEAD, pipelined requests): nginx
  images answer nginx's default page ("Welcome to nginx!") and its 404 page, httpd images
  "It works!", any other the JSON line `/serve` answers (`{"pod", "namespace", "node", "podIP",
  "port"}`). Bytes that are not HTTP get a 400 and the connection is closed, as a web server does.
- Each answered request counts once in the pod's CPU model (`count(uid)`), like `/serve`.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

import h11

from control.client.framing import Wire, header
from control.client.serving import Exchange, HttpError, Request
from control.clock import Clock
from control.kubelet.containers import Container
# The simulated servers are pure and shared with the front door; re-exported for the kubelet's callers.
from control.kinds.pod_servers import REASONS, SERVER_IMAGES, Listener, flavour_for, image_name  # noqa: F401

UPGRADE = b"kubekitchen.dev/portforward"
Found = tuple[dict[str, Any], Any, tuple[Container, ...]]  # (pod, its record, containers now)


def sandbox_id(uid: str) -> str:
    """The pod sandbox's ID, stable for a pod (the CRI's 64-hex-digit ID)."""
    return hashlib.sha256(f"sandbox/{uid}".encode()).hexdigest()


def refused_message(port: int, uid: str) -> str:
    """What the kubelet writes on the error stream when nothing listens (containerd's wording)."""
    sandbox = sandbox_id(uid)
    netns = f"/var/run/netns/cni-{uuid.UUID(bytes=hashlib.sha256(f'netns/{uid}'.encode()).digest()[:16])}"
    return (f"error forwarding port {port} to pod {sandbox}, uid : failed to execute portforward in network "
            f'namespace "{netns}": failed to connect to localhost:{port} inside namespace "{sandbox}", '
            f"IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused "
            f"IPv6 dial tcp6 [::1]:{port}: connect: connection refused ")


def listener_for(found: Found, port: int, node: str) -> Listener | None:
    """The server a running container of the pod has on `port`; None when nothing listens."""
    pod, record, containers = found
    running = {c.name for c in containers if c.state == "running"}
    meta = pod.get("metadata") or {}
    for spec in (pod.get("spec") or {}).get("containers") or []:
        if spec.get("name") not in running:
            continue
        declared = {p.get("containerPort") for p in spec.get("ports") or []
                    if isinstance(p, dict) and (p.get("protocol") or "TCP") == "TCP"}
        flavour, usual = SERVER_IMAGES.get(image_name(str(spec.get("image") or "")), ("json", None))
        if port in declared or port == usual:
            return Listener(flavour, meta.get("name", ""), meta.get("namespace", ""), node,
                            getattr(record, "pod_ip", "") or "", port, meta.get("uid", ""))
    return None


def parse_forward(target: str) -> tuple[str, str, int]:
    """(namespace, pod, port) of a `/portForward/...` target; HttpError when malformed."""
    url = urlsplit(target)
    parts = [unquote(p) for p in url.path.split("/") if p]
    if len(parts) != 3 or parts[0] != "portForward" or not all(parts):
        raise HttpError(404, f"no such path: {url.path}")
    raw = (parse_qs(url.query, keep_blank_values=True).get("port") or [None])[-1]
    if raw is None or raw == "":
        raise HttpError(400, 'query parameter "port" is required')
    if not raw.isdigit() or int(raw) > 65535:
        raise HttpError(400, f'unable to parse "{raw}" as a port')
    if int(raw) < 1:
        raise HttpError(400, f'port "{raw}" must be > 0')
    return parts[1], parts[2], int(raw)


async def serve_connection(wire: Wire, listener: Listener, *, clock: Clock,
                           count: Callable[[str], None] = lambda uid: None) -> None:
    """Answer HTTP requests on one forwarded connection until the peer closes or asks to."""
    try:
        while True:
            event = await wire.receive()
            if type(event) is not h11.Request:
                return  # ConnectionClosed: the client is done
            method, target = event.method.decode("latin-1"), event.target.decode("latin-1")
            while type(await wire.receive()) is not h11.EndOfMessage:
                pass  # a body: the simulated servers do not read it
            status, headers, body = listener.answer(method, target, clock.now())
            headers.append((b"content-length", str(len(body)).encode()))
            events: list[h11.Event] = [h11.Response(status_code=status, headers=headers,
                                                    reason=REASONS.get(status, b""))]
            if method != "HEAD" and body:
                events.append(h11.Data(data=body))
            wire.send(*events, h11.EndOfMessage())
            await wire.writer.drain()
            count(listener.uid)
            if not wire.reusable:
                return
            wire.next_cycle()
    except h11.RemoteProtocolError:
        if wire.h11.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            wire.writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/html\r\ncontent-length: 0\r\n"
                              b"connection: close\r\n\r\n")
            await wire.writer.drain()


class PortForwardServer:
    """Answers port-forward requests for the kubelet's node server."""

    def __init__(self, lookup: Callable[[str, str], Found | None], *, node: str, clock: Clock,
                 count: Callable[[str], None] = lambda uid: None):
        self.lookup, self.node, self.clock, self.count = lookup, node, clock, count

    @staticmethod
    def serves(path: str) -> bool:
        return path.startswith("/portForward/")

    async def answer(self, request: Request, exchange: Exchange) -> None:
        if request.method != "POST":
            raise HttpError(405, f"method {request.method} not allowed")
        namespace, name, port = parse_forward(request.target)
        if header(request.headers, b"upgrade").lower() != UPGRADE.decode():
            raise HttpError(400, "port-forward needs an upgraded connection (Upgrade: kubekitchen.dev/portforward)")
        found = self.lookup(namespace, name)
        if found is None:
            raise HttpError(404, "pod does not exist")
        listener = listener_for(found, port, self.node)
        if listener is None:
            raise HttpError(503, refused_message(port, (found[0].get("metadata") or {}).get("uid", "")))
        outer = exchange.wire
        outer.send(h11.InformationalResponse(status_code=101, headers=[(b"connection", b"Upgrade"),
                                                                      (b"upgrade", UPGRADE)]))
        await outer.writer.drain()
        leftover, _ = outer.h11.trailing_data
        inner = Wire(outer.reader, outer.writer, h11.SERVER)
        if leftover:
            inner.h11.receive_data(bytes(leftover))
        try:
            await serve_connection(inner, listener, clock=self.clock, count=self.count)
        except ConnectionError:
            pass  # the hub went away: so did the forwarded connection
