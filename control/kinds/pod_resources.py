"""A container's resources as the API server judges them: validation of requests and limits
(upstream's ValidateResourceRequirements) and the pod's QoS class (upstream's ComputePodQOS).

Guarantees: `resource_causes` gives the upstream field errors, in upstream's words: an unreadable
quantity, a negative one, a resource name that is neither standard nor an extended `domain/name`,
a request above its limit (`must be less than or equal to cpu limit of 1`), a non-overcommitable
resource (hugepages, extended) whose request differs from its limit or has no limit.
`pod_qos` is pure and counts init and app containers, requests defaulted from limits as the API
server's defaults do: BestEffort without any cpu/memory request or limit, Guaranteed when every
container limits both cpu and memory and every request equals its limit, Burstable otherwise.
"""

from __future__ import annotations

import re
from typing import Any

from control.errors import go_value
from control.kinds.base import Cause, cause
from control.kinds.quantity import parse_quantity

STANDARD = ("cpu", "memory", "ephemeral-storage")
QOS_RESOURCES = ("cpu", "memory")
_EXTENDED = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def canonical(value: Any) -> str:
    """A quantity as Go's resource.Quantity prints it: `0.5` -> `500m`, `1024Mi` -> `1Gi`."""
    text = str(value).strip()
    number = parse_quantity(value)
    if re.search(r"(Ki|Mi|Gi|Ti|Pi|Ei)$", text) and number == int(number):
        for suffix, size in _BINARY:
            if number >= size and number % size == 0:
                return f"{int(number // size)}{suffix}"
        return str(int(number))
    if number == int(number) and (number == 0 or abs(number) >= 1):
        whole = int(number)
        for suffix, size in _DECIMAL:
            if abs(whole) >= size and whole % size == 0 and text[-1:].isalpha():
                return f"{whole // size}{suffix}"
        return str(whole)
    milli = number * 1000
    if abs(milli - round(milli)) < 1e-9:
        return f"{int(round(milli))}m"
    return f"{int(round(number * 1e9))}n"


def _overcommitable(name: str) -> bool:
    return not name.startswith("hugepages-") and ("/" not in name or name.startswith("kubernetes.io/"))


def resource_causes(resources: Any, path: str) -> list[Cause]:
    """The field errors of one container's `resources` at `path` (e.g. spec.containers[0].resources)."""
    if not isinstance(resources, dict):
        return []
    out: list[Cause] = []
    parsed: dict[str, dict[str, float]] = {"limits": {}, "requests": {}}
    for section in ("limits", "requests"):
        values = resources.get(section) or {}
        for name, value in (values.items() if isinstance(values, dict) else ()):
            where = f"{path}.{section}[{name}]"
            if "/" not in name and name not in STANDARD and not name.startswith("hugepages-"):
                out.append(cause(where, f"Invalid value: {go_value(name)}: must be a standard resource for containers"))
                continue
            if "/" in name and not _EXTENDED.match(name):
                out.append(cause(where, f"Invalid value: {go_value(name)}: doesn't follow extended resource name "
                                 "standard"))
                continue
            try:
                number = parse_quantity(value)
            except ValueError:
                out.append(cause(where, f"Invalid value: {go_value(value)}: must be a valid quantity"))
                continue
            if number < 0:
                out.append(cause(where, f"Invalid value: {go_value(canonical(value))}: must be greater than or "
                                 "equal to 0"))
                continue
            parsed[section][name] = number
    limits, requests = parsed["limits"], parsed["requests"]
    raw_limits = resources.get("limits") or {}
    for name, request in requests.items():
        shown = go_value(canonical((resources.get("requests") or {})[name]))
        if name in limits:
            limit = canonical(raw_limits[name])
            if not _overcommitable(name) and request != limits[name]:
                out.append(cause(f"{path}.requests", f"Invalid value: {shown}: must be equal to {name} limit of {limit}"))
            elif request > limits[name]:
                out.append(cause(f"{path}.requests", f"Invalid value: {shown}: must be less than or equal to "
                                 f"{name} limit of {limit}"))
        elif not _overcommitable(name):
            out.append(cause(f"{path}.limits", "Required value: Limit must be set for non overcommitable resources",
                             "FieldValueRequired"))
    return out


def _amounts(values: Any) -> dict[str, float]:
    out = {}
    for name, value in (values.items() if isinstance(values, dict) else ()):
        try:
            number = parse_quantity(value)
        except ValueError:
            continue
        if name in QOS_RESOURCES and number > 0:
            out[name] = number
    return out


def pod_qos(pod: Any) -> str:
    """Guaranteed, Burstable or BestEffort (upstream's ComputePodQOS)."""
    spec = (pod or {}).get("spec") or {}
    requests: dict[str, float] = {}
    limits: dict[str, float] = {}
    guaranteed = True
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = (container or {}).get("resources") or {} if isinstance(container, dict) else {}
        found_limits = _amounts(resources.get("limits"))
        found_requests = {**found_limits, **_amounts(resources.get("requests"))}  # defaulted from limits
        for name, amount in found_requests.items():
            requests[name] = requests.get(name, 0.0) + amount
        for name, amount in found_limits.items():
            limits[name] = limits.get(name, 0.0) + amount
        if not all(name in found_limits for name in QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(abs(limits.get(name, -1) - amount) < 1e-12 for name, amount in requests.items()) \
            and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
