"""The scheduler's own view of the cluster: every node with the running sums of the pods on it,
including pods it has bound but not yet seen come back through its watch ("assumed" pods).

Guarantees:
- Sums (requests, non-zero requests, pod count, pods per controller) are updated incrementally
  from informer events and assumptions — a decision never rescans pods, so it costs O(nodes).
- A pod counts on a node while it has `spec.nodeName` and is not Succeeded/Failed (a terminating
  pod still holds its resources until it is gone).
- `assume(pod, node)` counts a pod on a node before its binding is even sent, so the next
  decision, a microsecond later, already sees it. The assumption ends when the informer shows the
  pod bound (the real entry replaces it), when the pod is deleted, when `forget` is called (the
  bind failed), or `ttl` seconds after `finish_binding` if the watch never confirms it.
- Sums stay correct across node deletion and re-creation: they belong to the node name, and only
  nodes with a Node object are offered to the filters.
- Each node also keeps the pods counted on it (for pod affinity and topology spreading), and the
  cache keeps apart the counted pods with required anti-affinity terms.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Iterator

from control.clock import REAL, Clock
from control.client.resources import key_of
from control.scheduler.demand import NodeInfo, Obj, Requests, node_allocatable, pod_requests
from control.kinds.meta import controller_uid


def has_required_anti_affinity(pod: Obj) -> bool:
    anti = ((pod.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {}
    return bool(anti.get("requiredDuringSchedulingIgnoredDuringExecution")) if isinstance(anti, dict) else False

TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass(frozen=True)
class Counted:
    """One pod counted on one node."""

    node: str
    uid: str
    requests: Requests
    nonzero: Requests
    owner: str
    assumed: bool = False
    pod: Obj | None = None


def counts_on(pod: Obj) -> str:
    """The node this pod's resources count on, or "" if none."""
    node = (pod.get("spec") or {}).get("nodeName") or ""
    if not node or (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
        return ""
    return node


class SchedulerCache:
    def __init__(self, *, clock: Clock | None = None, ttl: float = 30.0):
        self.clock = clock or REAL
        self.ttl = ttl
        self._infos: dict[str, NodeInfo] = {}
        self._pods: dict[str, Counted] = {}
        self._deadlines: dict[str, float] = {}
        self._expiry: deque[tuple[float, str]] = deque()
        # pods counted on a node that carry required anti-affinity terms: every decision checks
        # them (a newcomer must not land beside them), so they are kept apart from the rest
        self.anti_affinity: dict[str, tuple[Obj, str]] = {}

    # --- nodes ---------------------------------------------------------------------------------

    def _info(self, name: str) -> NodeInfo:
        info = self._infos.get(name)
        if info is None:
            info = self._infos[name] = NodeInfo(name)
        return info

    def set_node(self, node: Obj) -> NodeInfo:
        info = self._info(node["metadata"]["name"])
        info.node = node
        info.allocatable = node_allocatable(node)
        return info

    def remove_node(self, name: str) -> None:
        info = self._infos.get(name)
        if info is None:
            return
        info.node = None
        if info.pods == 0:
            del self._infos[name]

    def nodes(self) -> list[NodeInfo]:
        """Every node that has a Node object, in name order."""
        return sorted((info for info in self._infos.values() if info.node is not None), key=lambda info: info.name)

    def node(self, name: str) -> NodeInfo | None:
        return self._infos.get(name)

    # --- counting ------------------------------------------------------------------------------

    def _add(self, key: str, counted: Counted) -> None:
        self._pods[key] = counted
        info = self._info(counted.node)
        info.requested += counted.requests
        info.nonzero += counted.nonzero
        info.pods += 1
        if counted.pod is not None:
            info.pod_objects[key] = counted.pod
            if has_required_anti_affinity(counted.pod):
                self.anti_affinity[key] = (counted.pod, counted.node)
        if counted.owner:
            info.owners[counted.owner] = info.owners.get(counted.owner, 0) + 1

    def _remove(self, key: str) -> Counted | None:
        counted = self._pods.pop(key, None)
        self._deadlines.pop(key, None)
        if counted is None:
            return None
        info = self._infos[counted.node]
        info.requested -= counted.requests
        info.nonzero -= counted.nonzero
        info.pods -= 1
        info.pod_objects.pop(key, None)
        self.anti_affinity.pop(key, None)
        if counted.owner:
            left = info.owners.get(counted.owner, 0) - 1
            if left > 0:
                info.owners[counted.owner] = left
            else:
                info.owners.pop(counted.owner, None)
        if info.node is None and info.pods == 0:
            del self._infos[counted.node]
        return counted

    @staticmethod
    def _counted(pod: Obj, node: str, assumed: bool = False) -> Counted:
        return Counted(node=node, uid=str((pod.get("metadata") or {}).get("uid") or ""),
                       requests=pod_requests(pod), nonzero=pod_requests(pod, nonzero=True),
                       owner=controller_uid(pod), assumed=assumed, pod=pod)

    def pod_observed(self, pod: Obj) -> bool:
        """Account for a pod as the informer now shows it. True when resources were freed on a
        node (a counted pod finished or moved), which may let unschedulable pods fit."""
        key = key_of(pod)
        existing = self._pods.get(key)
        node = counts_on(pod)
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if not node:
            if existing is None:
                return False
            if existing.assumed and existing.uid == uid and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES:
                return False  # our binding is in flight; the watch has not caught up yet
            self._remove(key)
            return not existing.assumed
        if existing is not None and not existing.assumed and existing.node == node and existing.uid == uid:
            self._infos[node].pod_objects[key] = pod  # its labels may have changed (pod affinity reads them)
            return False  # the spec is immutable: nothing this pod counts changed
        if existing is not None:
            self._remove(key)
        self._add(key, self._counted(pod, node))
        return existing is not None and not existing.assumed and existing.node != node

    def pod_deleted(self, pod: Obj) -> bool:
        """Forget a deleted pod. True when it was counted on a node (its resources are free now)."""
        counted = self._remove(key_of(pod))
        return counted is not None and not counted.assumed

    def counted(self, key: str) -> Counted | None:
        return self._pods.get(key)

    # --- assumptions ---------------------------------------------------------------------------

    def assume(self, pod: Obj, node: str) -> None:
        key = key_of(pod)
        self._remove(key)
        self._add(key, self._counted(pod, node, assumed=True))

    def is_assumed(self, key: str) -> bool:
        counted = self._pods.get(key)
        return counted is not None and counted.assumed

    def finish_binding(self, key: str) -> None:
        """The bind succeeded: the assumption now lives until confirmed, or at most `ttl` seconds."""
        if not self.is_assumed(key):
            return
        deadline = self.clock.now() + self.ttl
        self._deadlines[key] = deadline
        self._expiry.append((deadline, key))

    def forget(self, key: str) -> None:
        """The bind failed: the pod is not on that node after all."""
        if self.is_assumed(key):
            self._remove(key)

    def expire(self) -> list[str]:
        """Drop assumptions whose binding finished more than `ttl` ago without being confirmed."""
        now, expired = self.clock.now(), []
        while self._expiry and self._expiry[0][0] <= now:
            deadline, key = self._expiry.popleft()
            if self.is_assumed(key) and self._deadlines.get(key) == deadline:
                self._remove(key)
                expired.append(key)
        return expired

    def assumed(self) -> Iterator[str]:
        return (key for key, counted in self._pods.items() if counted.assumed)

    def in_flight(self) -> int:
        """Assumed pods whose binding has not finished yet (no deadline)."""
        return sum(1 for key in self.assumed() if math.isinf(self._deadlines.get(key, math.inf)))
