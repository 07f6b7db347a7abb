"""What a pod asks for and is limited to, as upstream computes it for the scheduler and for quota
(`k8s.io/component-helpers/resource`: PodRequests, PodLimits and their Aggregate* helpers).

Guarantees (pure functions of plain objects, never raising on odd input; amounts are floats in base
units: cores, bytes; an amount that does not parse is left out):
- `container_requests` is one container's `resources.requests`, each missing one taken from its
  limit (the API server's defaulting, so a pod not yet defaulted is judged as a stored one);
  `container_limits` is its `resources.limits`;
- `pod_requests` is upstream's PodRequests: the app containers' sum plus every restartable init
  container (a sidecar, `restartPolicy: Always`: it runs beside them), at least the largest of what
  each ordinary init container needs while it runs (itself plus the sidecars started before it),
  plus `spec.overhead` (RuntimeClass's, added to every resource it names) unless `exclude_overhead`;
  with `non_missing` (the scheduler's non-zero view) a container that states no request for one of
  those resources counts as asking for the given amount;
- `pod_limits` is upstream's PodLimits: the same aggregation of limits, the overhead added only to a
  resource some container limits;
- `sidecars_and_containers` lists the app containers and the restartable init containers (the ones
  HPA's calculatePodRequests sums).
"""

from __future__ import annotations

from typing import Any, Mapping

from control.kinds.quantity import parse_quantity

Obj = dict[str, Any]
Amounts = dict[str, float]


def _amounts(values: Any) -> Amounts:
    out: Amounts = {}
    for name, value in values.items() if isinstance(values, dict) else ():
        try:
            out[str(name)] = parse_quantity(value)
        except (ValueError, TypeError):
            continue  # unreadable: counts as not stated (validation rejects it on write)
    return out


def _resources(container: Any) -> Obj:
    resources = container.get("resources") if isinstance(container, dict) else None
    return resources if isinstance(resources, dict) else {}


def container_limits(container: Any) -> Amounts:
    return _amounts(_resources(container).get("limits"))


def container_requests(container: Any) -> Amounts:
    resources = _resources(container)
    requests = _amounts(resources.get("requests"))
    limits = resources.get("limits")
    if isinstance(limits, dict) and any(name not in requests for name in limits):  # parse only what is missing
        requests = {**_amounts({k: v for k, v in limits.items() if k not in requests}), **requests}
    return requests


def is_sidecar(init_container: Any) -> bool:
    """A restartable init container (`restartPolicy: Always`): it keeps running beside the app."""
    return isinstance(init_container, dict) and init_container.get("restartPolicy") == "Always"


def _spec(pod: Any) -> Obj:
    spec = pod.get("spec") if isinstance(pod, dict) else None
    return spec if isinstance(spec, dict) else {}


def _containers(spec: Obj, field: str) -> list[Obj]:
    return [c for c in spec.get(field) or [] if isinstance(c, dict)]


def sidecars_and_containers(pod: Obj) -> list[Obj]:
    spec = _spec(pod)
    return _containers(spec, "containers") + [c for c in _containers(spec, "initContainers") if is_sidecar(c)]


def _add(into: Amounts, more: Mapping[str, float]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, 0.0) + value


def _aggregate(pod: Obj, per_container) -> Amounts:
    """AggregateContainerRequests/Limits: app containers and sidecars summed, init containers' peak."""
    spec = _spec(pod)
    total: Amounts = {}
    for container in _containers(spec, "containers"):
        _add(total, per_container(container))
    sidecars: Amounts = {}
    init_peak: Amounts = {}
    for container in _containers(spec, "initContainers"):
        own = per_container(container)
        if is_sidecar(container):
            _add(total, own)
            _add(sidecars, own)
            running = dict(sidecars)
        else:  # runs alone after the sidecars started before it
            running = dict(own)
            _add(running, sidecars)
        for name, value in running.items():
            init_peak[name] = max(init_peak.get(name, 0.0), value)
    for name, value in init_peak.items():
        total[name] = max(total.get(name, 0.0), value)
    return total


def pod_requests(pod: Obj, *, non_missing: Mapping[str, float] | None = None,
                 exclude_overhead: bool = False) -> Amounts:
    if non_missing:
        def per_container(container: Obj) -> Amounts:
            return {**non_missing, **container_requests(container)}
    else:
        per_container = container_requests
    total = _aggregate(pod, per_container)
    if not exclude_overhead:
        _add(total, _amounts(_spec(pod).get("overhead")))
    return total


def pod_limits(pod: Obj) -> Amounts:
    total = _aggregate(pod, container_limits)
    for name, value in _amounts(_spec(pod).get("overhead")).items():
        if name in total:
            total[name] += value
    return total

