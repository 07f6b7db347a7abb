"""What one object counts against a ResourceQuota (upstream pkg/quota/v1/evaluator/core and the
generic object-count evaluator), and quantities shown as Go's resource.Quantity prints them.

Guarantees (pure functions):
- every namespaced object counts 1 against `count/<plural>.<group>` (`count/<plural>` for the core
  group); pods, services, secrets, configmaps, persistentvolumeclaims, replicationcontrollers and
  resourcequotas also count 1 against their legacy name;
- a pod counts its containers' requests and limits (`requests.cpu`/`cpu`, `requests.memory`/`memory`,
  `limits.cpu`, `limits.memory`, the ephemeral-storage ones) as upstream's PodRequests and PodLimits
  aggregate them (`control.kinds.pod_requests`: sidecars, init containers, `spec.overhead`); a terminal pod
  (Succeeded or Failed) counts nothing, as upstream's QuotaV1Pod;
- a service counts `services.loadbalancers` and `services.nodeports`; a claim `requests.storage`;
- `missing_compute` names, as upstream's pod Constraints, every quota'd compute resource a container
  does not state; `show` prints a number the way Quantity.String() does.
"""

from __future__ import annotations

from typing import Any

from control.kinds.pod_requests import pod_limits, pod_requests
from control.kinds.quantity import parse_quantity

Obj = dict[str, Any]

LEGACY_COUNTS = {"/pods": "pods", "/services": "services", "/secrets": "secrets", "/configmaps": "configmaps",
                 "/persistentvolumeclaims": "persistentvolumeclaims",
                 "/replicationcontrollers": "replicationcontrollers", "/resourcequotas": "resourcequotas"}
# The quota names a pod's containers must each state once quota'd (upstream's validationSet).
QUOTA_RESOURCES = ("cpu", "memory", "ephemeral-storage")  # a pod's compute resources a quota counts
COMPUTE = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")
BYTES = ("memory", "storage", "ephemeral-storage")
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def count_name(resource: str) -> str:
    """`count/<plural>.<group>` for a store key "<group>/<plural>" (no group part for core)."""
    group, _, plural = resource.partition("/")
    return f"count/{plural}.{group}" if group else f"count/{plural}"


def _amount(value: Any) -> float | None:
    try:
        return parse_quantity(value)
    except (ValueError, TypeError):
        return None


def terminal(pod: Obj) -> bool:
    return ((pod.get("status") or {}).get("phase")) in ("Succeeded", "Failed")


def container_usage(container: Obj) -> dict[str, float]:
    """upstream podComputeUsageHelper for one container (without the pod count)."""
    resources = container.get("resources") if isinstance(container.get("resources"), dict) else {}
    out: dict[str, float] = {}
    for section in ("requests", "limits"):
        values = resources.get(section)
        for name, value in (values.items() if isinstance(values, dict) else ()):
            number = _amount(value)
            if number is None or name not in ("cpu", "memory", "ephemeral-storage"):
                continue
            out[f"{section}.{name}"] = number
            if section == "requests" and name != "ephemeral-storage":
                out[name] = number
            elif section == "requests":
                out["ephemeral-storage"] = number
    return out


def _pod_compute(pod: Obj) -> dict[str, float]:
    """upstream podComputeUsageHelper: PodRequests and PodLimits (control.kinds.pod_requests,
    overhead included) for the resources a quota names."""
    requests, limits = pod_requests(pod), pod_limits(pod)
    out: dict[str, float] = {}
    for name in QUOTA_RESOURCES:
        if name in requests:
            out[name] = out[f"requests.{name}"] = requests[name]
        if name in limits:
            out[f"limits.{name}"] = limits[name]
    return out


def usage(resource: str, obj: Obj) -> dict[str, float]:
    """Everything `obj` (stored under `resource`) counts against a quota."""
    if resource == "/pods" and terminal(obj):
        return {}
    out = {count_name(resource): 1.0}
    if resource in LEGACY_COUNTS:
        out[LEGACY_COUNTS[resource]] = 1.0
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if resource == "/pods":
        out.update(_pod_compute(obj))
    elif resource == "/services":
        kind = spec.get("type") or "ClusterIP"
        if kind == "LoadBalancer":
            out["services.loadbalancers"] = 1.0
        if kind in ("NodePort", "LoadBalancer"):
            out["services.nodeports"] = float(len(spec.get("ports") or []))
    elif resource == "/persistentvolumeclaims":
        requests = (spec.get("resources") or {}).get("requests") or {}
        storage = _amount(requests.get("storage")) if isinstance(requests, dict) else None
        if storage is not None:
            out["requests.storage"] = storage
    return out


def missing_compute(pod: Obj, hard: list[str]) -> str:
    """upstream's pod Constraints: `must specify limits.cpu for: a,b; must specify ...` or ""."""
    required = sorted(set(hard) & set(COMPUTE))
    if not required:
        return ""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    missing: dict[str, set[str]] = {}
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if not isinstance(container, dict):
            continue
        stated = container_usage(container)
        for name in required:
            if name not in stated:
                missing.setdefault(name, set()).add(str(container.get("name", "")))
    return "; ".join(f"must specify {name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


def show(name: str, number: float) -> str:
    """A quota value as Quantity.String() prints it: counts and cores in plain or milli units,
    bytes with a binary suffix when they divide evenly, else a decimal one."""
    if number != int(number):
        milli = number * 1000
        return f"{int(round(milli))}m" if abs(milli - round(milli)) < 1e-6 else f"{int(round(number * 1e9))}n"
    whole = int(number)
    if whole and any(name.endswith(unit) for unit in BYTES):
        for suffix, size in _BINARY:
            if whole % size == 0:
                return f"{whole // size}{suffix}"
        for suffix, size in _DECIMAL:
            if whole % size == 0:
                return f"{whole // size}{suffix}"
    return str(whole)


def pretty(values: dict[str, float]) -> str:
    """upstream prettyPrint: `name=value` sorted by name, comma separated."""
    return ",".join(f"{name}={show(name, values[name])}" for name in sorted(values))
