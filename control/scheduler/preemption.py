"""Preemption, as kube-scheduler's DefaultPreemption plugin decides it (pkg/scheduler/framework/
plugins/defaultpreemption and pkg/scheduler/framework/preemption): pure functions of the pod, the
scheduler's node view and the PodDisruptionBudgets; the scheduler does the writes.

Guarantees:
- `eligibility(pod, infos)`: a pod with `preemptionPolicy: Never` never preempts ("not eligible
  due to preemptionPolicy=Never."), nor does one whose nominated node still has a lower-priority
  pod terminating because it was preempted ("not eligible due to a terminating pod on the
  nominated node.") — the room is coming, preempting again would only take more victims.
- `select_victims(pod, requests, info, pdbs)` (SelectVictimsOnNode): only pods of lower priority
  are ever victims. All of them are removed; if the pod still does not fit, the node is no
  candidate. Then they are given back one by one, most important first (higher priority, then
  earlier start), those whose budget would be broken first: each one the pod still fits beside
  is reprieved, every other is a victim, and a victim whose budget it breaks counts as a
  violation. Victims come out most important first.
- `pick_candidate(candidates)` (pickOneNodeForPreemption): fewest budget violations, then the
  lowest highest-priority victim, then the smallest sum of victim priorities, then the fewest
  victims, then the latest start among the highest-priority victims, then the first node.
- A budget matches a pod in its namespace whose labels its non-empty selector selects; a pod in
  its `status.disruptedPods` is already counted; each victim takes one of `disruptionsAllowed`
  and is a violation once none is left.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from control.kinds.meta import find_condition, labels_of, parse_time, spec_selector
from control.scheduler.demand import NodeInfo, Obj, Requests, pod_requests
from control.scheduler.filter import node_reasons

NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
INT32_MAX = 2**31 - 1


def priority_of(pod: Obj) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset (admission always sets it)."""
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def start_time(pod: Obj) -> float:
    """When the pod started (status.startTime, else its creation): earlier is more important."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    stamp = parse_time(status.get("startTime")) or parse_time(meta.get("creationTimestamp"))
    return stamp if stamp is not None else float("inf")


def importance(pod: Obj) -> tuple[int, float]:
    """A sort key putting the more important pod first (MoreImportantPod)."""
    return (-priority_of(pod), start_time(pod))


def terminating_by_preemption(pod: Obj) -> bool:
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    condition = find_condition((pod.get("status") or {}).get("conditions"), DISRUPTION_TARGET)
    return bool(condition and condition.get("status") == "True" and condition.get("reason") == PREEMPTION_BY_SCHEDULER)


def eligibility(pod: Obj, infos: list[NodeInfo]) -> str:
    """PodEligibleToPreemptOthers: "" when the pod may preempt, else why not."""
    if (pod.get("spec") or {}).get("preemptionPolicy") == NEVER:
        return NOT_ELIGIBLE_NEVER
    nominated = (pod.get("status") or {}).get("nominatedNodeName")
    if nominated:
        own = priority_of(pod)
        for info in infos:
            if info.name == nominated and any(priority_of(p) < own and terminating_by_preemption(p)
                                              for p in info.pod_objects.values()):
                return NOT_ELIGIBLE_TERMINATING
    return ""


@dataclass(frozen=True)
class Candidate:
    node: str
    victims: tuple[Obj, ...]  # most important first
    pdb_violations: int


def _without(info: NodeInfo, pods: list[Obj]) -> NodeInfo:
    """The node as it would be with `pods` gone (only the sums the fit checks read)."""
    freed = Requests()
    for pod in pods:
        freed += pod_requests(pod)
    return replace(info, requested=info.requested - freed, pods=info.pods - len(pods))


def _budget_violations(victims: list[Obj], pdbs: list[Obj]) -> tuple[list[Obj], list[Obj]]:
    """filterPodsWithPDBViolation: (the pods evicting would break a budget for, the others), in order."""
    allowed = [int((pdb.get("status") or {}).get("disruptionsAllowed") or 0) for pdb in pdbs]
    violating, fine = [], []
    for pod in victims:
        meta, broken = pod.get("metadata") or {}, False
        for i, pdb in enumerate(pdbs):
            if (pdb.get("metadata") or {}).get("namespace") != meta.get("namespace"):
                continue
            selector = spec_selector(pdb)
            if not selector.requirements or not selector.matches(labels_of(pod)):
                continue  # an empty selector matches nothing here, as upstream
            if meta.get("name") in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                continue  # the eviction API already counted it
            allowed[i] -= 1
            broken = broken or allowed[i] < 0
        (violating if broken else fine).append(pod)
    return violating, fine


def select_victims(pod: Obj, requests: Requests, info: NodeInfo, pdbs: list[Obj]) -> Candidate | None:
    """The fewest, least important pods to remove from this node so the pod fits (None: no such set)."""
    own = priority_of(pod)
    lower = sorted((p for p in info.pod_objects.values() if priority_of(p) < own), key=importance)
    if not lower or node_reasons(pod, requests, _without(info, lower)):
        return None
    violating, fine = _budget_violations(lower, pdbs)
    removed, victims, violations = list(lower), [], 0
    for group, breaks_budget in ((violating, True), (fine, False)):
        for candidate in group:  # reprievePod: give it back if the pod still fits beside it
            trial = [p for p in removed if p is not candidate]
            if node_reasons(pod, requests, _without(info, trial)):
                victims.append(candidate)
                violations += breaks_budget
            else:
                removed = trial
    victims.sort(key=importance)
    return Candidate(info.name, tuple(victims), violations)


def pick_candidate(candidates: list[Candidate]) -> Candidate | None:
    """pickOneNodeForPreemption: the node whose preemption does the least harm."""
    if not candidates:
        return None

    def harm(c: Candidate) -> tuple:
        top = priority_of(c.victims[0]) if c.victims else -INT32_MAX - 1
        total = sum(priority_of(v) + INT32_MAX + 1 for v in c.victims)
        highest = [v for v in c.victims if priority_of(v) == top]
        earliest = min((start_time(v) for v in highest), default=float("inf"))
        return (c.pdb_violations, top, total, len(c.victims), -earliest)
    return min(candidates, key=harm)  # min keeps the first of equals: upstream's last rule
