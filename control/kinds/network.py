"""The cluster's network plan: address ranges and well-known ports, shared by the hub and spokes.

Guarantees: plain constants and pure helpers only (no store, no HTTP), so the hub's allocators,
kube-proxy, the kubelet and the dashboard agree on one plan. The two configurable ranges
(`service_cidr()`, `load_balancer_pool()`: KK_SERVICE_CIDR, KK_LOAD_BALANCER_POOL) are read through
`control.config` when asked for, never when this module is imported.
"""

from __future__ import annotations

import functools
import ipaddress

from control import config

CLUSTER_DOMAIN = "cluster.local"
CLUSTER_DNS = "10.96.0.10"  # the kube-dns Service's ClusterIP (kubeadm's default: the tenth address)
NODE_PORT_RANGE = range(30000, 32768)  # --service-node-port-range=30000-32767
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.lru_cache(maxsize=8)
def _network(name: str, text: str) -> Network:
    try:
        return ipaddress.ip_network(text)
    except ValueError as exc:
        raise ValueError(f"{name}={text!r}: {exc}") from None


def service_cidr() -> Network:
    """Where Service cluster IPs come from (Kubernetes' default is 10.96.0.0/12; our /16 is plenty
    and reads better on a projector)."""
    return _network("KK_SERVICE_CIDR", config.text("KK_SERVICE_CIDR"))


def load_balancer_pool() -> Network:
    """What a simulated cloud load balancer hands out (kind's and MetalLB's demos use such a pool)."""
    return _network("KK_LOAD_BALANCER_POOL", config.text("KK_LOAD_BALANCER_POOL"))
KUBE_PROXY_PORT = 10256  # kube-proxy's healthz port; here it also serves its rules and sends traffic
# Where a kube-proxy that had to take another port (another cluster on the machine holds 10256) says so.
KUBE_PROXY_PORT_ANNOTATION = "kubekitchen.dev/kube-proxy-port"
# Where the ingress controller, a host-network listener of node-1, says it serves (`http=80,https=443`):
# written by control.frontdoor, read by kube-proxy to send a pod's traffic for that address:port there.
INGRESS_PORTS_ANNOTATION = "kubekitchen.dev/ingress-controller-ports"
# Where the gateway controller says which ports of node-1's address serve Gateway listeners
# (`http=80,http=30081`, same format): written by control.gateway, read by kube-proxy the same way.
GATEWAY_PORTS_ANNOTATION = "kubekitchen.dev/gateway-listeners"
# Every announcement of host-network listeners a Node may carry -> who answers there (a line's `via`).
HOST_LISTENER_ANNOTATIONS = ((INGRESS_PORTS_ANNOTATION, "ingress-controller"),
                             (GATEWAY_PORTS_ANNOTATION, "gateway-controller"))


def node_address(node: dict) -> str | None:
    """A Node's InternalIP, where its kubelet and kube-proxy listen."""
    addresses = ((node.get("status") or {}).get("addresses")) or []
    return next((a.get("address") for a in addresses if a.get("type") == "InternalIP"), None)


def kubelet_endpoint(node: dict | None) -> tuple[str, int] | None:
    """(InternalIP, port) of a Node's kubelet, from its status (`daemonEndpoints.kubeletEndpoint`)."""
    if node is None:
        return None
    address = node_address(node)
    port = (((node.get("status") or {}).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    return (address, int(port)) if address and isinstance(port, int) and port > 0 else None


def kube_proxy_endpoint(node: dict | None) -> tuple[str, int] | None:
    """(InternalIP, port) of a Node's kube-proxy: the port its annotation names, else KUBE_PROXY_PORT."""
    if node is None or not node_address(node):
        return None
    advertised = ((node.get("metadata") or {}).get("annotations") or {}).get(KUBE_PROXY_PORT_ANNOTATION)
    port = int(advertised) if isinstance(advertised, str) and advertised.isdigit() and 0 < int(advertised) < 65536 \
        else KUBE_PROXY_PORT
    return str(node_address(node)), port
