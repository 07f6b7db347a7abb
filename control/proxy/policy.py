"""What kube-proxy knows to decide NetworkPolicies at its node, as a CNI's agent would: the
policies (compiled and indexed by namespace, `control.kinds.netpol_decide`), the pods by IP and
the namespaces' labels, kept from its informers' events; and the fields a decided line carries.

Guarantees:
- `policy_changed`/`policy_deleted`, `pod_changed`/`pod_deleted`, `namespace_changed`/
  `namespace_deleted` are the informers' handlers; each changes one entry; `version` goes up with
  every policy change (what the propagation benchmark follows), and when the pods and namespaces
  become known (`peers_synced`) or are forgotten (`forget_peers`: no policy is left).
- A pod is known by its IP while it has one, is not on the host's network (a hostNetwork pod
  has its node's address: it is no pod to NetworkPolicies) and has not finished (Succeeded or
  Failed); when two pods claim one IP the one seen last wins, and a deletion forgets an IP only
  for the pod that held it.
- `decide(source, target, port, protocol)` looks both addresses up (an unknown address is no
  pod: the host, a node, the outside) and asks the engine; traffic with no source is the node's
  own (`node_ip`). Traffic from a node to the pods on that same node is always allowed, as the
  NetworkPolicy documentation says ("connections from the pod's node"): the kubelet's probes, and
  what the node itself sends to its pods.
- `line_fields(...)` gives upstream-minded line fields: a drop's `code` 0, `error`
  "connection timed out (dropped by NetworkPolicy)" and `dropped` {direction, policies, from, to,
  port, protocol}; an allowed connection of an isolated pod `allowedBy`; nothing otherwise.
"""

from __future__ import annotations

from typing import Any

from control.kinds.netpol_decide import Labels, Peer, PolicyIndex, Verdict, decide, pod_peer

Obj = dict[str, Any]
DROPPED = "connection timed out (dropped by NetworkPolicy)"
FINISHED = ("Succeeded", "Failed")


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class PolicyView:
    def __init__(self, node_ip: str = ""):
        self.node_ip = node_ip
        self.index = PolicyIndex()
        self.version = 0
        self.pods: dict[str, Peer] = {}  # pod IP -> the pod
        self._pod_ip: dict[str, str] = {}  # "ns/name" -> the IP it holds here
        self._node_of: dict[str, str] = {}  # pod IP -> its node's address (status.hostIP)
        self.namespaces: dict[str, Labels] = {}

    # --- the informers' handlers ---------------------------------------------------------------

    def policy_changed(self, policy: Obj) -> None:
        self.index.put(policy)
        self.version += 1

    def policy_deleted(self, policy: Obj) -> None:
        self.index.remove(policy)
        self.version += 1

    def pod_changed(self, pod: Obj) -> None:
        key = _key(pod)
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        ip = str(status.get("podIP") or "")
        if not ip or spec.get("hostNetwork") or status.get("phase") in FINISHED:
            self.pod_deleted(pod)
            return
        old = self._pod_ip.get(key)
        if old and old != ip:
            self.pod_deleted(pod)
        self.pods[ip], self._pod_ip[key] = pod_peer(pod), ip
        self._node_of[ip] = str(status.get("hostIP") or "")

    def pod_deleted(self, pod: Obj) -> None:
        ip = self._pod_ip.pop(_key(pod), None)
        if ip and ip in self.pods and self.pods[ip].shown == _key(pod):
            del self.pods[ip]
            self._node_of.pop(ip, None)

    def namespace_changed(self, namespace: Obj) -> None:
        meta = namespace.get("metadata") or {}
        self.namespaces[str(meta.get("name") or "")] = dict(meta.get("labels") or {})

    def peers_synced(self) -> None:
        """The pods and namespaces are known (after the first policy started their informers)."""
        self.version += 1

    def forget_peers(self) -> None:
        """No policy is left and the pod and namespace informers stopped: what they said goes."""
        self.pods, self._pod_ip, self._node_of, self.namespaces = {}, {}, {}, {}
        self.version += 1

    def namespace_deleted(self, namespace: Obj) -> None:
        self.namespaces.pop(str((namespace.get("metadata") or {}).get("name") or ""), None)

    # --- deciding ------------------------------------------------------------------------------

    def peer(self, ip: str) -> Peer:
        return self.pods.get(ip) or Peer(ip)

    def decide(self, source: str, target: str, port: int, protocol: str = "TCP") -> Verdict:
        src = self.peer(source) if source else Peer(self.node_ip)
        dst = self.peer(target)
        if not src.is_pod and dst.is_pod and src.ip and src.ip == self._node_of.get(dst.ip):
            return Verdict(True)  # a node reaches its own pods
        return decide(self.index, src, dst, port, protocol, namespace_labels=self.namespaces.get)

    def shown(self, ip: str) -> str:
        return self.peer(ip).shown if ip else self.node_ip


def line_fields(verdict: Verdict, *, source: str, target: str, port: int, protocol: str, shown) -> Obj:
    """The fields a decided connection adds to kube-proxy's line (`shown(ip)` names an address)."""
    if not verdict.allowed:
        return {"code": 0, "error": DROPPED,
                "dropped": {"direction": verdict.direction, "policies": list(verdict.policies),
                            "from": shown(source), "to": shown(target), "port": port, "protocol": protocol}}
    if verdict.policies:
        return {"allowedBy": list(verdict.policies)}
    return {}
