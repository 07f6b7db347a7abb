"""What a pod asks for, what a node offers and what is already on it, as whole numbers (CPU in
millicores, memory in bytes), so sums never drift the way floats do.

Guarantees:
- `pod_requests` is upstream's PodRequests (`control.kinds.pod_requests`: containers and sidecars
  summed, at least what each init container needs while it runs, plus `spec.overhead`, as
  kube-scheduler's NodeResourcesFit counts it); a container with limits and no requests asks for its
  limits (the API server's defaulting); the sums round up, as Kubernetes' MilliValue does; a value
  that does not parse counts as 0 rather than failing.
- `pod_requests(..., nonzero=True)` gives the scoring view: a container that asks for no CPU or
  memory counts as 100m / 200Mi (kube-scheduler's non-zero defaults), so best-effort pods spread.
- `node_allocatable` reads `status.allocatable`, falling back to `status.capacity`; a missing CPU
  or memory is 0 (nothing that asks fits), a missing pod count is 110 (the kubelet's default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from control.kinds.pod_requests import pod_requests as resource_requests
from control.kinds.quantity import parse_quantity

Obj = dict[str, Any]

DEFAULT_CPU = 100  # kube-scheduler's non-zero default request: 100m
DEFAULT_MEMORY = 200 * 2**20  # 200Mi
DEFAULT_PODS = 110


@dataclass(frozen=True)
class Requests:
    cpu: int = 0  # millicores
    memory: int = 0  # bytes

    def __add__(self, other: "Requests") -> "Requests":
        return Requests(self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: "Requests") -> "Requests":
        return Requests(self.cpu - other.cpu, self.memory - other.memory)


@dataclass(frozen=True)
class Allocatable:
    cpu: int  # millicores
    memory: int  # bytes
    pods: int


def _quantity(value: Any, scale: int = 1) -> int:
    try:
        return _whole(parse_quantity(value), scale)
    except (ValueError, TypeError):
        return 0


def _whole(number: float, scale: int = 1) -> int:
    """Rounded up, as Quantity.MilliValue/Value do (the round() keeps 0.1*1000 from becoming 101)."""
    return max(0, math.ceil(round(number * scale, 6)))


_NON_ZERO = {"cpu": DEFAULT_CPU / 1000, "memory": float(DEFAULT_MEMORY)}


def pod_requests(pod: Obj, *, nonzero: bool = False) -> Requests:
    """The pod's CPU and memory requests (control.kinds.pod_requests: upstream's PodRequests,
    overhead included), in whole millicores and bytes."""
    amounts = resource_requests(pod, non_missing=_NON_ZERO if nonzero else None)
    return Requests(_whole(amounts.get("cpu", 0.0), 1000), _whole(amounts.get("memory", 0.0)))


def node_allocatable(node: Obj) -> Allocatable:
    status = node.get("status") or {}
    allocatable = status.get("allocatable") or status.get("capacity") or {}
    pods = allocatable.get("pods")
    return Allocatable(cpu=_quantity(allocatable.get("cpu", 0), 1000), memory=_quantity(allocatable.get("memory", 0)),
                       pods=_quantity(pods) if pods is not None else DEFAULT_PODS)


@dataclass
class NodeInfo:
    """One node as the scheduler sees it: the Node object (None while only pods name it) and the
    sums of the pods counted on it. Owned and updated by `SchedulerCache`; read-only elsewhere."""

    name: str
    node: Obj | None = None
    allocatable: Allocatable = Allocatable(0, 0, DEFAULT_PODS)
    requested: Requests = Requests()
    nonzero: Requests = Requests()
    pods: int = 0
    owners: dict[str, int] = field(default_factory=dict)
    pod_objects: dict[str, Obj] = field(default_factory=dict)  # key -> the pod counted here (for pod affinity)
