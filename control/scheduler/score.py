"""Node scores: among the nodes a pod fits on, which is best — pure functions of the pod's
requests, its owner and the feasible `NodeInfo`s.

Guarantees:
- `least_allocated` (0–100) is the mean of the CPU and memory fractions left free after placing
  the pod, counted with kube-scheduler's non-zero defaults so best-effort pods spread too.
- `spread` (0–100) favours nodes with fewer pods of the same controller (ReplicaSet, ...):
  100·(max − count)/max over the feasible nodes; a pod without a controller scores 100 everywhere.
- `total = least_allocated + SPREAD_WEIGHT · spread`, plus, when the pod asks for them, upstream's
  weighted plugins normalised to 0–100: preferred node affinity (×2, sum of matching weights),
  PreferNoSchedule taints (×3, fewer untolerated is better), preferred inter-pod (anti-)affinity
  (×2) and ScheduleAnyway topology spreading (×2, fewer matching pods in the domain is better);
  all integers, so equal nodes tie exactly.
- `pick_node` is deterministic: ties are broken by a stable hash (CRC-32) of the pod's
  namespace/name, so equal pods do not all land on the first node, yet every run decides alike.
- Cost is O(feasible nodes) per pod: the per-node sums are kept by the cache, never recomputed.
"""

from __future__ import annotations

import zlib
from typing import Sequence

from control.kinds.meta import controller_uid
from control.kinds.placement import node_affinity, preferred_affinity_score, tolerates
from control.scheduler.demand import NodeInfo, Obj, Requests
from control.scheduler.interpod import affinity_scores, spread_scores

MAX_SCORE = 100
SPREAD_WEIGHT = 2
# upstream's default plugin weights
NODE_AFFINITY_WEIGHT, TAINT_WEIGHT, INTER_POD_WEIGHT, TOPOLOGY_WEIGHT = 2, 3, 2, 2


def _free_fraction(used: int, capacity: int) -> int:
    if capacity <= 0:
        return 0
    return max(0, capacity - used) * MAX_SCORE // capacity


def least_allocated(nonzero: Requests, info: NodeInfo) -> int:
    cpu = _free_fraction(info.nonzero.cpu + nonzero.cpu, info.allocatable.cpu)
    memory = _free_fraction(info.nonzero.memory + nonzero.memory, info.allocatable.memory)
    return (cpu + memory) // 2


def spread(owner: str, info: NodeInfo, most_siblings: int) -> int:
    if not owner or most_siblings <= 0:
        return MAX_SCORE
    return (most_siblings - info.owners.get(owner, 0)) * MAX_SCORE // most_siblings


def prefer_no_schedule(tolerations: list[Obj], info: NodeInfo) -> int:
    """Untolerated PreferNoSchedule taints on the node (TaintToleration's raw score)."""
    taints = ((info.node or {}).get("spec") or {}).get("taints")
    if not taints:
        return 0
    return sum(1 for taint in taints if isinstance(taint, dict) and taint.get("effect") == "PreferNoSchedule"
               and not any(tolerates(t, taint) for t in tolerations))


def normalized(raw: dict[str, int], *, reverse: bool = False) -> dict[str, int]:
    """Raw plugin scores to 0–100 (upstream's NormalizeScore): by the largest, or min–max when
    some are negative; `reverse` makes fewer better."""
    if not raw:
        return {}
    high, low = max(raw.values()), min(raw.values())
    if reverse:
        return {name: MAX_SCORE if high <= 0 else MAX_SCORE * (high + low - value) // high
                for name, value in raw.items()}
    if low < 0:
        return {name: 0 if high == low else MAX_SCORE * (value - low) // (high - low) for name, value in raw.items()}
    return {name: 0 if high <= 0 else MAX_SCORE * value // high for name, value in raw.items()}


def scores(pod: Obj, nonzero: Requests, feasible: Sequence[NodeInfo],
           infos: Sequence[NodeInfo] | None = None) -> dict[str, int]:
    owner = controller_uid(pod)
    most = max((info.owners.get(owner, 0) for info in feasible), default=0) if owner else 0
    total = {info.name: least_allocated(nonzero, info) + SPREAD_WEIGHT * spread(owner, info, most)
             for info in feasible}
    spec = pod.get("spec") or {}
    plugins: list[tuple[int, dict[str, int]]] = []
    if node_affinity(spec).get("preferredDuringSchedulingIgnoredDuringExecution"):
        plugins.append((NODE_AFFINITY_WEIGHT, normalized(
            {info.name: preferred_affinity_score(spec, info.node or {}) for info in feasible})))
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    taints = {info.name: prefer_no_schedule(tolerations, info) for info in feasible}
    if any(taints.values()):
        plugins.append((TAINT_WEIGHT, normalized(taints, reverse=True)))
    everyone = list(infos if infos is not None else feasible)
    affinity = affinity_scores(pod, list(feasible), everyone)
    if affinity is not None:
        plugins.append((INTER_POD_WEIGHT, normalized(affinity)))
    spreading = spread_scores(pod, list(feasible), everyone)
    if spreading is not None:
        plugins.append((TOPOLOGY_WEIGHT, normalized(spreading, reverse=True)))
    for weight, plugin in plugins:
        for name in total:
            total[name] += weight * plugin.get(name, 0)
    return total


def tie_breaker(pod: Obj) -> int:
    meta = pod.get("metadata") or {}
    return zlib.crc32(f"{meta.get('namespace', '')}/{meta.get('name', '')}".encode())


def pick_node(pod: Obj, nonzero: Requests, feasible: Sequence[NodeInfo],
              infos: Sequence[NodeInfo] | None = None) -> NodeInfo:
    """The best-scoring feasible node; `feasible` must not be empty; `infos` are all the nodes
    (pods on infeasible nodes still count for affinity and spreading)."""
    if not feasible:
        raise ValueError("pick_node needs at least one feasible node")
    scored = scores(pod, nonzero, feasible, infos)
    best = max(scored.values())
    ties = sorted((info for info in feasible if scored[info.name] == best), key=lambda info: info.name)
    return ties[tie_breaker(pod) % len(ties)]
