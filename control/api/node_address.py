"""Where the hub may reach a node: the one gate every call from the hub to a kubelet or a
kube-proxy passes (pod logs, exec/attach, metrics scrapes, /kubekitchen/traffic and proxyrules).

A Node's addresses and ports are written by whoever may write Nodes, so they are input, not truth.
Guarantees:
- The hub contacts only an IP literal (never a hostname: no DNS, no userinfo, no path, port or
  scheme smuggled in the address) inside the node network (`KK_NODE_NETWORK`, default the loopback
  ranges the cluster's kubelets use, 127.0.0.0/8 and ::1; IPv4-mapped IPv6 and other spellings of
  an outside address are refused), on the port the node's component records for itself: its usual
  port (kubelet 10250, kube-proxy 10256) or one the kernel hands out when that one is taken (the
  ephemeral range, where a component asking for port 0 lands: this machine's, `control.ephemeral`,
  also on macOS, where every node may share 127.0.0.1 with such ports of its own).
- A Node outside that plan is answered with a 400 Status naming the node and the address; nothing
  is fetched. A Node publishing nothing is a 503, as before.
- Every call carries the cluster's node-access secret (`control.client.nodeaccess`), the hub's
  proof to node servers that answer no one else: `client` sends it on each request, `credential`
  gives it to the callers that open their own connections (exec/attach, port-forward).
- Clients made here follow no redirect and ignore proxy settings from the environment; answers
  are read up to a bound (`read_bounded`, `bounded_lines`), never whole into memory.
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from typing import Any, AsyncIterator

import httpx

from control import config, errors
from control.ephemeral import ephemeral_ports
from control.client import nodeaccess
from control.kinds.connect import Location
from control.kinds.network import KUBE_PROXY_PORT, KUBE_PROXY_PORT_ANNOTATION, kubelet_endpoint, node_address

KUBELET_PORT = 10250
MAX_ANSWER_BYTES = 8 * 1024 * 1024  # a kubelet summary or kube-proxy's rules are far smaller
MAX_LINE_BYTES = 64 * 1024  # one line of a traffic run


@functools.lru_cache(maxsize=8)
def _networks(text: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(part.strip()) for part in text.split(",") if part.strip())


def node_networks() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The node network (KK_NODE_NETWORK), read when asked for: the only addresses the hub contacts."""
    return _networks(config.text("KK_NODE_NETWORK"))
EPHEMERAL_PORTS = ephemeral_ports()


@dataclass(frozen=True)
class NodeTarget:
    """A checked place on a node: an IP literal inside the node network and an allowed port."""

    node: str
    address: str
    port: int

    def url(self, path: str) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"http://{host}:{self.port}{path}"


def refusal(address: Any, port: Any, usual_port: int) -> str:
    """Why the hub must not contact `address:port` ("" when it may)."""
    if not isinstance(address, str):
        return "its address is not a string"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return f"{address!r} is not an IP address"
    if str(ip) != address:  # one spelling only: no zero-padding, no scope ids, no mixed forms
        return f"{address!r} is not written as {str(ip)!r}"
    networks = node_networks()
    if not any(ip.version == net.version and ip in net for net in networks):
        return f"{address} is outside the node network {', '.join(str(n) for n in networks)}"
    if not isinstance(port, int) or isinstance(port, bool):
        return f"port {port!r} is not a number"
    if port != usual_port and port not in EPHEMERAL_PORTS:
        return (f"port {port} is neither the usual port {usual_port} nor in the ephemeral range "
                f"{EPHEMERAL_PORTS.start}-{EPHEMERAL_PORTS.stop - 1}")
    return ""


def _checked(node_name: str, component: str, address: Any, port: Any, usual_port: int) -> NodeTarget:
    why = refusal(address, port, usual_port)
    if why:
        raise errors.BadRequest(f"node {node_name} publishes an address for its {component} the hub does not "
                                f"contact: {why}")
    return NodeTarget(node_name, address, port)


def kubelet(node: dict[str, Any] | None, node_name: str) -> NodeTarget:
    """The node's kubelet (InternalIP, daemonEndpoints.kubeletEndpoint.Port), checked."""
    raw = _raw_kubelet(node)
    if raw is None:
        raise errors.ServiceUnavailable(f"the kubelet of node {node_name} publishes no endpoint")
    return _checked(node_name, "kubelet", raw[0], raw[1], KUBELET_PORT)


def _raw_kubelet(node: dict[str, Any] | None) -> tuple[Any, Any] | None:
    """What the Node says, unchecked (including a port of the wrong type, to name it in the refusal)."""
    if node is None:
        return None
    found = kubelet_endpoint(node)
    if found is not None:
        return found
    port = (((node.get("status") or {}).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    address = node_address(node)
    return (address, port) if address and port not in (None, 0) else None


def kubelet_or_none(node: dict[str, Any]) -> NodeTarget | None:
    """The node's kubelet when it publishes one inside the plan (a metrics scrape leaves others out)."""
    try:
        return kubelet(node, (node.get("metadata") or {}).get("name", ""))
    except errors.ApiError:
        return None


def kube_proxy(node: dict[str, Any], node_name: str) -> NodeTarget:
    """The node's kube-proxy: its InternalIP, on the port it advertises in the Node annotation
    `kubekitchen.dev/kube-proxy-port` (else KUBE_PROXY_PORT), checked."""
    address = node_address(node)
    if not address:
        raise errors.ServiceUnavailable(f"node {node_name} publishes no address for its kube-proxy")
    advertised = ((node.get("metadata") or {}).get("annotations") or {}).get(KUBE_PROXY_PORT_ANNOTATION)
    if advertised in (None, ""):
        port: Any = KUBE_PROXY_PORT
    else:
        port = int(advertised) if isinstance(advertised, str) and advertised.isdigit() and len(advertised) <= 5 else advertised
    return _checked(node_name, "kube-proxy", address, port, KUBE_PROXY_PORT)


def credential() -> str:
    """The node-access secret the hub presents to a node's servers."""
    return nodeaccess.token()


def client(timeout: httpx.Timeout) -> httpx.AsyncClient:
    """An HTTP client for node targets: the hub's credential on every request, no redirects
    followed, no proxy taken from the environment."""
    return httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False,
                             headers={"Authorization": f"Bearer {credential()}"})


class AnswerTooLarge(Exception):
    """A node's answer went over its bound."""


async def read_bounded(response: httpx.Response, limit: int = MAX_ANSWER_BYTES) -> bytes:
    """The body of a streamed response, refusing (AnswerTooLarge) past `limit` bytes."""
    if response.headers.get("content-length", "").isdigit() and int(response.headers["content-length"]) > limit:
        raise AnswerTooLarge(f"the answer announces {response.headers['content-length']} bytes, over {limit}")
    chunks, size = [], 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > limit:
            raise AnswerTooLarge(f"the answer is over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def bounded_lines(response: httpx.Response, limit: int = MAX_LINE_BYTES) -> AsyncIterator[str]:
    """The response's lines (without their newline); a line longer than `limit` is AnswerTooLarge."""
    pending = b""
    async for chunk in response.aiter_raw():
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.rstrip(b"\r").decode(errors="replace")
        if len(pending) > limit:
            raise AnswerTooLarge(f"a line of the answer is over {limit} bytes")
    if pending:
        yield pending.decode(errors="replace")


def located(location: Location) -> NodeTarget:
    """The kubelet a kind's connect location names (`control.kinds.connect`), checked."""
    return _checked(location.node, "kubelet", location.address, location.port, KUBELET_PORT)
