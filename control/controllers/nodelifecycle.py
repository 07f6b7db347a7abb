"""The node lifecycle controller: notices dead nodes, taints them, and evicts their pods.

Guarantees (kube-controller-manager's node lifecycle controller, taint manager and pod GC):
- Every node is looked at every `timings.node_monitor` s and whenever its Lease or status
  changes. Its heartbeat is the newest of its Lease's renewTime, its Ready condition's
  lastHeartbeatTime and its creation. A heartbeat older than `timings.node_grace` s turns every
  condition (Ready, MemoryPressure, DiskPressure, PIDPressure) Unknown with reason
  NodeStatusUnknown, records a NodeNotReady event and marks its pods not Ready.
- Taints follow the Ready condition: Unknown → `node.kubernetes.io/unreachable` NoExecute and
  NoSchedule (with timeAdded); False → `node.kubernetes.io/not-ready`; True (the kubelet is back
  and says so) → neither. Existing taints keep their timeAdded.
- A pod on a node with a NoExecute taint it does not tolerate is deleted at once; one that
  tolerates it for tolerationSeconds is deleted that long after the taint's timeAdded (the
  smallest tolerationSeconds wins; tolerations without it keep the pod forever); a
  TaintManagerEviction event says so. Deletion uses the pod's normal grace period.
- A pod still terminating past its deletionTimestamp on a node that is not Ready, or bound to a
  node that no longer exists (confirmed by a live GET), is force-deleted (grace 0), as the pod
  GC does for pods whose kubelet is gone.
- Writes carry resourceVersions or uid preconditions; a 409 is the runner's to retry.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer, by_node
from control.client.resources import LEASES, NODES, PODS, key_of
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.kinds.meta import format_time, get_condition, metadata, node_ready_status, parse_time
from control.controllers.common import Obj, Wakeups, created_at, pod_ready, terminating, uid_of
from control.kinds.placement import tolerates

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-node-lease"
UNREACHABLE, NOT_READY = "node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"
OUR_TAINTS = (UNREACHABLE, NOT_READY)
CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


def no_execute_taints(node: Obj | None) -> list[dict[str, Any]]:
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or [] if t.get("effect") == "NoExecute"]


def unknown_conditions(node: Obj, now: float) -> list[dict[str, Any]] | None:
    """The node's conditions all Unknown; None when they already are."""
    conditions = copy.deepcopy((node.get("status") or {}).get("conditions") or [])
    changed = False
    for condition in conditions:
        if condition.get("status") != "Unknown":
            condition.update({"status": "Unknown", "reason": "NodeStatusUnknown",
                              "message": "Kubelet stopped posting node status.", "lastTransitionTime": format_time(now)})
            changed = True
    present = {c.get("type") for c in conditions}
    for kind in CONDITIONS:
        if kind not in present:
            conditions.append({"type": kind, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                               "message": "Kubelet never posted node status.", "lastHeartbeatTime": None,
                               "lastTransitionTime": format_time(now)})
            changed = True
    return conditions if changed else None


def wanted_taints(node: Obj, ready: str, now: float) -> list[dict[str, Any]]:
    """The node's taints with ours matching `ready` ("Unknown" → unreachable, "False" → not-ready)."""
    taints = ((node.get("spec") or {}).get("taints") or [])
    key = {"Unknown": UNREACHABLE, "False": NOT_READY}.get(ready)
    out = [copy.deepcopy(t) for t in taints if t.get("key") not in OUR_TAINTS or t.get("key") == key]
    if key:
        for effect in ("NoSchedule", "NoExecute"):
            if not any(t.get("key") == key and t.get("effect") == effect for t in out):
                out.append({"key": key, "effect": effect, "timeAdded": format_time(now)})
    return out


def eviction_due(pod: Obj, taints: list[dict[str, Any]], now: float) -> float | None:
    """When the pod must go because of these NoExecute taints: a time, or None for never."""
    used = []
    for taint in taints:
        matching = [t for t in (pod.get("spec") or {}).get("tolerations") or [] if tolerates(t, taint)]
        if not matching:
            return now
        used += matching
    seconds = [int(t["tolerationSeconds"]) for t in used if t.get("tolerationSeconds") is not None]
    if not seconds:
        return None
    start = min((parse_time(t.get("timeAdded")) or now for t in taints), default=now)
    return start + max(0, min(seconds))


class NodeLifecycleController:
    def __init__(self, client: Any, nodes: Informer, leases: Informer, pods: Informer, *, clock: Clock, timings: Any,
                 recorder: Any = None):
        self.client, self.nodes, self.leases, self.pods = client, nodes, leases, pods
        self.clock, self.timings, self.recorder = clock, timings, recorder
        self.queue = WorkQueue(clock=clock)
        self.wakeups = Wakeups(clock)
        pods.cache.add_indexer("by_node", by_node)
        nodes.add_handlers(Handlers(on_add=self._node_added, on_update=self._node_updated, on_delete=self._node_deleted))
        leases.add_handlers(Handlers(on_add=self._lease_changed, on_update=lambda old, new: self._lease_changed(new)))
        pods.add_handlers(Handlers(on_add=self._pod_changed, on_update=lambda old, new: self._pod_changed(new)))

    # --- handlers ------------------------------------------------------------------------------

    def _enqueue_pods_on(self, node_name: str) -> None:
        for pod in self.pods.cache.by_index("by_node", node_name):
            self.queue.add(f"pod:{key_of(pod)}")

    def _node_added(self, node: Obj) -> None:
        self.queue.add(f"node:{metadata(node)['name']}")
        self._enqueue_pods_on(metadata(node)["name"])

    def _node_updated(self, old: Obj, new: Obj) -> None:
        self.queue.add(f"node:{metadata(new)['name']}")
        if no_execute_taints(old) != no_execute_taints(new) or node_ready_status(old) != node_ready_status(new):
            self._enqueue_pods_on(metadata(new)["name"])

    def _node_deleted(self, node: Obj) -> None:
        self._enqueue_pods_on(metadata(node)["name"])

    def _lease_changed(self, lease: Obj) -> None:
        if metadata(lease).get("namespace") == LEASE_NAMESPACE:
            self.queue.add(f"node:{metadata(lease)['name']}")

    def _pod_changed(self, pod: Obj) -> None:
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            return
        node = self.nodes.cache.get(node_name)
        if node is None or terminating(pod) or no_execute_taints(node):
            self.queue.add(f"pod:{key_of(pod)}")

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        kind, _, rest = key.partition(":")
        if kind == "node":
            return await self.reconcile_node(rest)
        return await self.reconcile_pod(rest)

    def heartbeat(self, node: Obj) -> float:
        lease = self.leases.cache.get(f"{LEASE_NAMESPACE}/{metadata(node)['name']}")
        ready = get_condition(node, "Ready") or {}
        seen = [parse_time(((lease or {}).get("spec") or {}).get("renewTime")),
                parse_time(ready.get("lastHeartbeatTime")), created_at(node)]
        return max(t for t in seen if t is not None)

    async def reconcile_node(self, name: str) -> Result:
        node = self.nodes.cache.get(name)
        if node is None:
            return DONE
        now = self.clock.now()
        stale = now - self.heartbeat(node) > self.timings.node_grace
        if stale:
            conditions = unknown_conditions(node, now)
            if conditions is not None:
                body = copy.deepcopy(node)
                body.setdefault("status", {})["conditions"] = conditions
                was_ready = node_ready_status(node) == "True"
                node = await self.client.replace_status(NODES, body)
                log.info("node %s stopped posting status; marked Unknown", name)
                if was_ready and self.recorder:
                    await self.recorder.record(node, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady")
        ready = node_ready_status(node)
        if ready != "True":
            await self.mark_pods_not_ready(name, now)
        if not stale and ready == "Unknown":
            return self.wakeups.after(f"node:{name}", self.timings.node_monitor)  # alive again (or new): wait for its kubelet
        taints = wanted_taints(node, ready, now)
        if taints != ((node.get("spec") or {}).get("taints") or []):
            body = copy.deepcopy(node)
            body.setdefault("spec", {})["taints"] = taints
            await self.client.replace(NODES, body)
        return self.wakeups.after(f"node:{name}", self.timings.node_monitor)

    async def mark_pods_not_ready(self, node_name: str, now: float) -> None:
        for pod in self.pods.cache.by_index("by_node", node_name):
            if terminating(pod) or not pod_ready(pod):
                continue
            body = copy.deepcopy(pod)
            condition = get_condition(body, "Ready")
            condition.update({"status": "False", "lastTransitionTime": format_time(now)})
            try:
                await self.client.replace_status(PODS, body)
            except errors.NotFound:
                pass

    async def reconcile_pod(self, key: str) -> Result:
        pod = self.pods.cache.get(key)
        node_name = ((pod or {}).get("spec") or {}).get("nodeName")
        if pod is None or not node_name:
            return DONE
        node, now = self.nodes.cache.get(node_name), self.clock.now()
        if node is None:
            try:
                await self.client.get(NODES, node_name)
                return DONE  # our cache lags; the node's add event brings the pod back
            except errors.NotFound:
                await self.delete_pod(pod, grace=0)
                return DONE
        if terminating(pod):
            if node_ready_status(node) == "True":
                return DONE
            deadline = parse_time(metadata(pod).get("deletionTimestamp")) or now
            if deadline <= now:
                await self.delete_pod(pod, grace=0)
                return DONE
            return self.wakeups.after(f"pod:{key}", deadline - now + 0.5)
        due = eviction_due(pod, no_execute_taints(node), now)
        if due is None:
            return DONE
        if due > now:
            return self.wakeups.after(f"pod:{key}", due - now)
        if self.recorder:
            await self.recorder.record(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {key}")
        await self.delete_pod(pod)
        return DONE

    async def delete_pod(self, pod: Obj, grace: int | None = None) -> None:
        try:
            await self.client.delete(PODS, metadata(pod)["name"], metadata(pod)["namespace"], grace_period=grace,
                                     preconditions={"uid": uid_of(pod)})
        except errors.NotFound:
            pass


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    nodes = informers.get(NODES)
    leases = informers.get(LEASES)
    pods = informers.get(PODS, indexers={"by_node": by_node})
    controller = NodeLifecycleController(client, nodes, leases, pods, clock=clock, timings=timings, recorder=recorder)
    return Runner("nodelifecycle", controller.reconcile, controller.queue, [nodes, leases, pods], workers=2)
