"""Node filters: may this pod run on that node, and if not, why not — pure functions of the pod,
its requests and a `NodeInfo`.

Guarantees:
- Each filter returns None when the node passes, or a reason worded like kube-scheduler's, so
  `failure_message` reads like a real FailedScheduling event:
  `0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: },
  2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for
  scheduling, 2 No preemption victims found for incoming pod.`
- `node_reasons` stops at the first failing placement filter (unschedulable, taints, readiness,
  selector/affinity); only when those pass are resources checked, and then every short resource
  is named (a node can be short of both CPU and memory); only a node that fits is then asked
  about the other pods (inter-pod affinity, topology spread: `control.scheduler.interpod`).
- Preemption's sentence counts a node "No preemption victims found" when every reason is one
  evicting pods could cure (resources, anti-affinity, spread skew), else "Preemption is not
  helpful for scheduling", as upstream's Unschedulable vs UnschedulableAndUnresolvable.
- Toleration matching is Kubernetes' `ToleratesTaint`: an empty effect matches every effect, an
  empty key with `Exists` matches every taint, `Equal` (or no operator) compares values; only
  NoSchedule and NoExecute taints keep pods away (PreferNoSchedule only discourages).
- Resources: the pods counted on a node plus this pod must fit `allocatable` (a zero request
  always fits), and the pod count must stay within `allocatable.pods`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from control.kinds.meta import is_node_ready
from control.kinds.placement import required_affinity_matches, tolerates, untolerated_taint
from control.scheduler.demand import NodeInfo, Obj, Requests
from control.scheduler.interpod import PREEMPTABLE

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}

NOT_READY = "node(s) were not ready"
UNSCHEDULABLE = "node(s) were unschedulable"
SELECTOR_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"
INSUFFICIENT_CPU = "Insufficient cpu"
INSUFFICIENT_MEMORY = "Insufficient memory"
RESOURCE_REASONS = (TOO_MANY_PODS, INSUFFICIENT_CPU, INSUFFICIENT_MEMORY)
NO_NODES = "no nodes available to schedule pods"


# --- taints and tolerations: upstream's component helpers, shared with the DaemonSet controller --

def _tolerations(pod: Obj) -> list[dict[str, Any]]:
    return (pod.get("spec") or {}).get("tolerations") or []


def _node(info: NodeInfo) -> Obj:
    return info.node or {}


# --- the filters -----------------------------------------------------------------------------

def check_unschedulable(pod: Obj, info: NodeInfo) -> str | None:
    """A cordoned node (`spec.unschedulable`) takes only pods tolerating its unschedulable taint."""
    if not (_node(info).get("spec") or {}).get("unschedulable"):
        return None
    if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in _tolerations(pod) if isinstance(t, dict)):
        return None
    return UNSCHEDULABLE


def check_taints(pod: Obj, info: NodeInfo) -> str | None:
    taint = untolerated_taint(_tolerations(pod), (_node(info).get("spec") or {}).get("taints") or [])
    if taint is None:
        return None
    return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value') or ''}}}"


def check_ready(pod: Obj, info: NodeInfo) -> str | None:
    return None if is_node_ready(_node(info)) else NOT_READY


def matches_node_selector(pod: Obj, node: Obj) -> bool:
    """`spec.nodeSelector` (every label equal) and, if present, the required node affinity terms (any)."""
    return required_affinity_matches(pod.get("spec") or {}, node)


def check_selector(pod: Obj, info: NodeInfo) -> str | None:
    return None if matches_node_selector(pod, _node(info)) else SELECTOR_MISMATCH


def check_resources(pod: Obj, requests: Requests, info: NodeInfo) -> list[str]:
    """Every resource this node is short of for this pod ([] when it fits)."""
    reasons = []
    if info.pods + 1 > info.allocatable.pods:
        reasons.append(TOO_MANY_PODS)
    if requests.cpu > 0 and info.requested.cpu + requests.cpu > info.allocatable.cpu:
        reasons.append(INSUFFICIENT_CPU)
    if requests.memory > 0 and info.requested.memory + requests.memory > info.allocatable.memory:
        reasons.append(INSUFFICIENT_MEMORY)
    return reasons


PLACEMENT_FILTERS: tuple[Callable[[Obj, NodeInfo], str | None], ...] = (
    check_unschedulable, check_taints, check_ready, check_selector)


def node_reasons(pod: Obj, requests: Requests, info: NodeInfo,
                 cluster: Callable[[NodeInfo], str | None] | None = None) -> list[str]:
    """Why this pod cannot go to this node; [] means it fits. `cluster` is the check that looks
    at the other pods (pod affinity, topology spread), run last as upstream's plugin order."""
    for check in PLACEMENT_FILTERS:
        reason = check(pod, info)
        if reason:
            return [reason]
    short = check_resources(pod, requests, info)
    if short or cluster is None:
        return short
    reason = cluster(info)
    return [reason] if reason else []


# --- the FailedScheduling message ------------------------------------------------------------

def _histogram(counts: Counter) -> str:
    return ", ".join(sorted(f"{count} {reason}" for reason, count in counts.items()))


def failure_message(total_nodes: int, reasons_by_node: dict[str, list[str]], post_filter: str | None = None) -> str:
    """kube-scheduler's FitError text, including its preemption post-filter sentence: the nodes'
    own when `post_filter` is None (no victims anywhere), none when "" (preemption nominated a
    node), else the sentence given (the pod may not preempt)."""
    if total_nodes == 0:
        return NO_NODES
    counts: Counter = Counter()
    preemption: Counter = Counter()
    for reasons in reasons_by_node.values():
        counts.update(reasons)
        helpful = all(r in RESOURCE_REASONS or r in PREEMPTABLE for r in reasons)
        preemption["No preemption victims found for incoming pod" if helpful
                   else "Preemption is not helpful for scheduling"] += 1
    message = f"0/{total_nodes} nodes are available"
    if counts:
        message += f": {_histogram(counts)}."
    else:
        message += "."
    if post_filter is not None:
        return f"{message} {post_filter}." if post_filter else message
    if preemption:
        message += f" preemption: 0/{total_nodes} nodes are available: {_histogram(preemption)}."
    return message
