"""Node scores: among the nodes a pod fits on, which is best — pure functions of the pod's
requests, its owner and the feasible `NodeInfo`s.

Guarantees:
- `least_allocated` (0–100) is the mean of the CPU and memory fractions left free after placing
  the pod, counted with kube-scheduler's non-zero defaults so best-effort pods spread too.
- `spread` (0–100) favours nodes with fewer pods of the same controller (ReplicaSet, ...):
  100·(max − count)/max over the feasible nodes; a pod without a controller scores 100 everywhere.
- `total = least_allocated + SPREAD_WEIGHT · spread`, all integers, so equal nodes tie exactly.
- `pick_node` is deterministic: ties are broken by a stable hash (CRC-32) of the pod's
  namespace/name, so equal pods do not all land on the first node, yet every run decides alike.
- Cost is O(feasible nodes) per pod: the per-node sums are kept by the cache, never recomputed.
"""

from __future__ import annotations

import zlib
from typing import Sequence

from control.kinds.meta import controller_uid
from control.scheduler.demand import NodeInfo, Obj, Requests

MAX_SCORE = 100
SPREAD_WEIGHT = 2


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


def scores(pod: Obj, nonzero: Requests, feasible: Sequence[NodeInfo]) -> dict[str, int]:
    owner = controller_uid(pod)
    most = max((info.owners.get(owner, 0) for info in feasible), default=0) if owner else 0
    return {info.name: least_allocated(nonzero, info) + SPREAD_WEIGHT * spread(owner, info, most)
            for info in feasible}


def tie_breaker(pod: Obj) -> int:
    meta = pod.get("metadata") or {}
    return zlib.crc32(f"{meta.get('namespace', '')}/{meta.get('name', '')}".encode())


def pick_node(pod: Obj, nonzero: Requests, feasible: Sequence[NodeInfo]) -> NodeInfo:
    """The best-scoring feasible node; `feasible` must not be empty."""
    if not feasible:
        raise ValueError("pick_node needs at least one feasible node")
    scored = scores(pod, nonzero, feasible)
    best = max(scored.values())
    ties = sorted((info for info in feasible if scored[info.name] == best), key=lambda info: info.name)
    return ties[tie_breaker(pod) % len(ties)]
