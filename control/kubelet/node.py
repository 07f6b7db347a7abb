"""Who a simulated node is and how it introduces itself: addresses, pod CIDR, the Node object and
its Lease, as pure functions of the node's name, its config and the time.

Guarantees:
- `node_number` is stable: a name ending in 1..254 uses that number (node-3 -> 3), any other name
  a hash of it in 1..254; the node's InternalIP is 127.0.1.N and its podCIDR 10.244.N.0/24.
- `IpPool` hands out each pod IP of the CIDR (.2 to .254) to one pod uid at a time, walking
  forward so a freed IP is not reused at once; asking twice for one uid gives the same IP.
- `node_status` keeps each condition's lastTransitionTime while its status holds and refreshes
  lastHeartbeatTime; Ready is always True (a kubelet that can post is ready), so a node the
  lifecycle controller marked Unknown turns Ready again when its kubelet reports.
- `registered_node` takes over an existing Node: it adds its labels and a missing podCIDR and
  keeps everything else (taints, unschedulable, other labels).
"""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import platform
import re
import zlib
from typing import Any

from control.kinds.meta import format_micro_time, format_time, new_condition, owner_reference
from control.kubelet.config import KubeletConfig

Obj = dict[str, Any]
KUBELET_VERSION = "v1.32.0-kube-kitchen"
RUNTIME_VERSION = "kitchen://1.0"
LEASE_NAMESPACE = "kube-node-lease"


def node_number(node: str) -> int:
    match = re.search(r"(\d+)$", node)
    if match and 1 <= int(match.group(1)) <= 254:
        return int(match.group(1))
    return zlib.crc32(node.encode()) % 254 + 1


def internal_ip(node: str) -> str:
    return f"127.0.1.{node_number(node)}"


def pod_cidr(node: str, pods: int = 110) -> str:
    """The node's pod range: 10.244.N.0/24 (253 pod IPs) for an ordinary node; a node asked to hold
    more pods (the kwok-style 10,000 on one node) gets a /16 of its own, 10.(200+N%50).0.0/16."""
    if pods <= 250:
        return f"10.244.{node_number(node)}.0/24"
    return f"10.{200 + node_number(node) % 50}.0.0/16"


class IpPool:
    """Pod IPs of one node's CIDR, one per pod uid."""

    def __init__(self, cidr: str):
        network = ipaddress.ip_network(cidr, strict=False)
        self.addresses = [str(ip) for ip in list(network.hosts())[1:]]  # .1 is the node's gateway
        self.by_uid: dict[str, str] = {}
        self._taken: set[str] = set()
        self._next = 0

    def allocate(self, uid: str) -> str:
        if uid in self.by_uid:
            return self.by_uid[uid]
        for offset in range(len(self.addresses)):
            index = (self._next + offset) % len(self.addresses)
            ip = self.addresses[index]
            if ip not in self._taken:
                self._next = index + 1
                return self._take(uid, ip)
        raise RuntimeError(f"no pod IP left in {len(self.addresses)} addresses")

    def claim(self, uid: str, ip: str) -> str:
        """Keep `ip` for `uid` (a pod adopted after a restart) if it is ours and free."""
        if ip in self.addresses and ip not in self._taken:
            return self._take(uid, ip)
        return self.allocate(uid)

    def release(self, uid: str) -> None:
        ip = self.by_uid.pop(uid, None)
        if ip:
            self._taken.discard(ip)

    def _take(self, uid: str, ip: str) -> str:
        self.by_uid[uid] = ip
        self._taken.add(ip)
        return ip


def node_labels(node: str) -> dict[str, str]:
    return {"kubernetes.io/hostname": node, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
            "node-role.kubernetes.io/worker": ""}


def capacity(config: KubeletConfig) -> dict[str, str]:
    return {"cpu": config.cpu, "memory": config.memory, "pods": config.pods, "ephemeral-storage": "100Gi"}


def node_info(node: str) -> dict[str, str]:
    digest = hashlib.sha256(node.encode()).hexdigest()
    uuid = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    return {"machineID": digest[:32], "systemUUID": uuid, "bootID": uuid, "kernelVersion": platform.release(),
            "osImage": "Kube Kitchen simulated node", "containerRuntimeVersion": RUNTIME_VERSION,
            "kubeletVersion": KUBELET_VERSION, "kubeProxyVersion": KUBELET_VERSION,
            "operatingSystem": "linux", "architecture": "amd64"}


_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def node_status(existing: Obj | None, *, node: str, ip: str, port: int, config: KubeletConfig, now: float) -> Obj:
    status = copy.deepcopy(existing or {})
    old = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    conditions = []
    for type_, value, reason, message in _CONDITIONS:
        conditions.append(new_condition(type_, value, now, old.get(type_), reason=reason, message=message,
                                        lastHeartbeatTime=format_time(now)))
    status.update({
        "capacity": capacity(config), "allocatable": capacity(config), "conditions": conditions,
        "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": node}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}, "nodeInfo": node_info(node),
    })
    return status


def registered_node(existing: Obj | None, node: str, pods: int = 110) -> Obj:
    """The Node object to create (existing None) or to write back over `existing`."""
    obj = copy.deepcopy(existing) if existing else {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}
    obj.setdefault("apiVersion", "v1")
    obj.setdefault("kind", "Node")
    meta = obj.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **node_labels(node)}
    spec = obj.setdefault("spec", {})
    if not spec.get("podCIDR"):
        spec["podCIDR"] = pod_cidr(node, pods)
    spec.setdefault("podCIDRs", [spec["podCIDR"]])
    return obj


def lease_object(existing: Obj | None, *, node: str, node_uid: str, duration: float, now: float) -> Obj:
    lease = copy.deepcopy(existing) if existing else {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": node, "namespace": LEASE_NAMESPACE}}
    meta = lease.setdefault("metadata", {})
    if node_uid and not meta.get("ownerReferences"):
        meta["ownerReferences"] = [owner_reference("v1", "Node", node, node_uid)]
    spec = lease.setdefault("spec", {})
    spec.update({"holderIdentity": node, "leaseDurationSeconds": max(1, int(round(duration))),
                 "renewTime": format_micro_time(now)})
    return lease
