"""The LimitRange kind (core/v1) and the LimitRanger admission (upstream ValidateLimitRange,
SetDefaults_LimitRangeItem and plugin/pkg/admission/limitranger).

Guarantees:
- defaults as upstream: for a Container item, `default` takes `max` where unset, `defaultRequest`
  takes `default`, then `min`;
- validation as upstream: known limit types, no type twice, resource names standard for
  containers (or qualified), no default/defaultRequest on a Pod item, a PersistentVolumeClaim item
  states min or max storage, and min <= defaultRequest <= default <= max, ratio >= 1 and
  <= max/min, each refusal a 422 cause at its field;
- admission on a pod create: every container (and init container) gets the namespace's
  LimitRanges' `defaultRequest`/`default` where it states none (recorded in the
  `kubernetes.io/limit-ranger` annotation); then min, max and maxLimitRequestRatio are enforced per
  Container (and per Pod on the sums, and on a claim's storage) with upstream's exact words, e.g.
  `maximum cpu usage per Container is 1, but limit is 2`; several failures print as Go's
  aggregate: `[first, second]`.
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import NAME_COLUMN, QUALIFIED_NAME, Cause, Column, Kind, Obj, cause
from control.kinds.pod_resources import _EXTENDED, STANDARD, canonical
from control.kinds.quantity import parse_quantity
from control.kinds.strategy import Lister, Policy

LIMITRANGES = "/limitranges"
TYPES = ("Pod", "Container", "PersistentVolumeClaim")
SECTIONS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")
ANNOTATION = "kubernetes.io/limit-ranger"


def _map(item: Obj, section: str) -> dict[str, Any]:
    value = item.get(section)
    return value if isinstance(value, dict) else {}


def limitrange_defaults(lr: Obj) -> None:
    """SetDefaults_LimitRangeItem for Container items."""
    for item in (lr.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = item.setdefault("default", {})
        request = item.setdefault("defaultRequest", {})
        if not isinstance(default, dict) or not isinstance(request, dict):
            continue
        for name, value in _map(item, "max").items():
            default.setdefault(name, value)
        for name, value in default.items():
            request.setdefault(name, value)
        for name, value in _map(item, "min").items():
            request.setdefault(name, value)


def _name_causes(kind: str, name: str, where: str) -> list[Cause]:
    if kind in ("Container", "Pod"):
        if "/" in name and _EXTENDED.match(name):
            return []
        if name in STANDARD or name.startswith("hugepages-"):
            return []
        return [cause(where, f"Invalid value: {go_value(name)}: must be a standard resource for containers")]
    if "/" in name or QUALIFIED_NAME.match(name) and name in ("storage", "cpu", "memory", "ephemeral-storage"):
        return []
    return [cause(where, f"Invalid value: {go_value(name)}: must be a standard resource type or fully qualified")]


def _item_causes(item: Obj, path: str) -> list[Cause]:
    kind = str(item.get("type") or "")
    out: list[Cause] = []
    values: dict[str, dict[str, tuple[float, str]]] = {s: {} for s in SECTIONS}
    for section in SECTIONS:
        if kind == "Pod" and section in ("default", "defaultRequest"):
            if _map(item, section):
                out.append(cause(f"{path}.{section}", "Forbidden: may not be specified when `type` is 'Pod'",
                                 "FieldValueForbidden"))
            continue
        for name, value in _map(item, section).items():
            where = f"{path}.{section}[{name}]"
            out += _name_causes(kind, name, where)
            try:
                values[section][name] = (parse_quantity(value), canonical(value))
            except ValueError:
                out.append(cause(where, f"Invalid value: {go_value(value)}: must be a valid quantity"))
    if kind == "PersistentVolumeClaim" and "storage" not in values["min"] and "storage" not in values["max"]:
        out.append(cause(f"{path}.limits", "Required value: either minimum or maximum storage value is required, "
                         "but neither was provided", "FieldValueRequired"))
    names = sorted({name for section in values.values() for name in section})
    for name in names:
        low, high = values["min"].get(name), values["max"].get(name)
        default, request = values["default"].get(name), values["defaultRequest"].get(name)
        ratio = values["maxLimitRequestRatio"].get(name)

        def bad(section: str, shown: tuple[float, str], text: str) -> None:
            out.append(cause(f"{path}.{section}[{name}]", f"Invalid value: {go_value(shown[1])}: {text}"))

        if low and high and low[0] > high[0]:
            bad("min", low, f"min value {low[1]} is greater than max value {high[1]}")
        if request and low and low[0] > request[0]:
            bad("defaultRequest", request, f"min value {low[1]} is greater than default request value {request[1]}")
        if request and high and request[0] > high[0]:
            bad("defaultRequest", request, f"default request value {request[1]} is greater than max value {high[1]}")
        if request and default and request[0] > default[0]:
            bad("defaultRequest", request, f"default request value {request[1]} is greater than default limit "
                f"value {default[1]}")
        if default and low and low[0] > default[0]:
            bad("default", low, f"min value {low[1]} is greater than default value {default[1]}")
        if default and high and default[0] > high[0]:
            bad("default", high, f"default value {default[1]} is greater than max value {high[1]}")
        if ratio and ratio[0] < 1:
            bad("maxLimitRequestRatio", ratio, f"ratio {ratio[1]} is less than 1")
        if ratio and low and high and low[0] > 0 and ratio[0] > high[0] / low[0]:
            bad("maxLimitRequestRatio", ratio, f"ratio {ratio[1]} is greater than max/min = {high[0] / low[0]:f}")
    return out


def validate_limitrange(lr: Obj) -> list[Cause]:
    spec = lr.get("spec")
    if not isinstance(spec, dict):
        return [cause("spec.limits", "Required value", "FieldValueRequired")]
    out: list[Cause] = []
    seen: set[str] = set()
    for i, item in enumerate(spec.get("limits") or []):
        path = f"spec.limits[{i}]"
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if not kind or not isinstance(kind, str) or ("/" not in kind and kind not in TYPES):
            out.append(cause(f"{path}.type", f"Invalid value: {go_value(kind)}: must be a standard limit type or "
                             "fully qualified"))
        elif kind in seen:
            out.append(cause(f"{path}.type", f"Duplicate value: {go_value(kind)}", "FieldValueDuplicate"))
        seen.add(str(kind))
        out += _item_causes(item, path)
    return out


def limitrange_cells(lr: Obj, now: float) -> list[Any]:
    return [lr["metadata"]["name"], lr["metadata"].get("creationTimestamp", "")]


# --- admission ------------------------------------------------------------------------------

def _containers(pod: Obj) -> list[tuple[str, Obj]]:
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    out = [("container", c) for c in spec.get("containers") or [] if isinstance(c, dict)]
    return out + [("init container", c) for c in spec.get("initContainers") or [] if isinstance(c, dict)]


def _items(listed: Lister, namespace: str, kind: str) -> list[Obj]:
    ranges = sorted(listed(LIMITRANGES, namespace), key=lambda lr: lr["metadata"]["name"])
    return [item for lr in ranges for item in (lr.get("spec") or {}).get("limits") or []
            if isinstance(item, dict) and item.get("type") == kind]


def apply_defaults(resource: str, pod: Obj, old: Obj | None, listed: Lister) -> str:
    """mergePodResourceRequirements: fill what containers leave out from Container items."""
    if resource != "/pods":
        return ""
    items = _items(listed, pod["metadata"].get("namespace") or "", "Container")
    if not items:
        return ""
    defaults: dict[str, dict[str, Any]] = {"limits": {}, "requests": {}}
    for item in items:  # the last LimitRange wins on the same resource, as upstream's loop
        defaults["limits"].update(_map(item, "default"))
        defaults["requests"].update(_map(item, "defaultRequest"))
    notes = []
    for prefix, container in _containers(pod):
        resources = container.setdefault("resources", {})
        if not isinstance(resources, dict):
            continue
        set_by: dict[str, list[str]] = {}
        for section, word in (("requests", "request"), ("limits", "limit")):
            current = resources.setdefault(section, {})
            for name, value in defaults[section].items():
                if isinstance(current, dict) and name not in current:
                    current[name] = value
                    set_by.setdefault(word, []).append(name)
            if not current:
                resources.pop(section)
        for word in ("request", "limit"):
            if word in set_by:
                notes.append(f"{', '.join(sorted(set_by[word]))} {word} for {prefix} {container.get('name', '')}")
    if notes:
        annotations = pod["metadata"].setdefault("annotations", {})
        if isinstance(annotations, dict):
            annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
    return ""


def _amounts(values: Any) -> dict[str, tuple[float, str]]:
    out = {}
    for name, value in (values.items() if isinstance(values, dict) else ()):
        try:
            out[name] = (parse_quantity(value), canonical(value))
        except ValueError:
            continue
    return out


def _bounds(item: Obj, kind: str, requests: dict[str, tuple[float, str]],
            limits: dict[str, tuple[float, str]]) -> list[str]:
    """upstream minConstraint, maxConstraint and limitRequestRatioConstraint for one item."""
    out = []
    for name, low in sorted(_amounts(item.get("min")).items()):
        req, lim = requests.get(name), limits.get(name)
        if req is None:
            out.append(f"minimum {name} usage per {kind} is {low[1]}.  No request is specified")
        elif req[0] < low[0]:
            out.append(f"minimum {name} usage per {kind} is {low[1]}, but request is {req[1]}")
        elif lim is not None and lim[0] < low[0]:
            out.append(f"minimum {name} usage per {kind} is {low[1]}, but limit is {lim[1]}")
    for name, high in sorted(_amounts(item.get("max")).items()):
        req, lim = requests.get(name), limits.get(name)
        if kind == "PersistentVolumeClaim":  # upstream maxRequestConstraint: a claim's max bounds its request
            if req is None:
                out.append(f"maximum {name} usage per {kind} is {high[1]}.  No request is specified")
            elif req[0] > high[0]:
                out.append(f"maximum {name} usage per {kind} is {high[1]}, but request is {req[1]}")
            continue
        if lim is None:
            out.append(f"maximum {name} usage per {kind} is {high[1]}.  No limit is specified")
        elif lim[0] > high[0]:
            out.append(f"maximum {name} usage per {kind} is {high[1]}, but limit is {lim[1]}")
        elif req is not None and req[0] > high[0]:
            out.append(f"maximum {name} usage per {kind} is {high[1]}, but request is {req[1]}")
    for name, ratio in sorted(_amounts(item.get("maxLimitRequestRatio")).items()):
        req, lim = requests.get(name), limits.get(name)
        if req is None or req[0] == 0:
            out.append(f"{name} max limit to request ratio per {kind} is {ratio[1]}, but no request is specified "
                       "or request is 0")
        elif lim is None or lim[0] == 0:
            out.append(f"{name} max limit to request ratio per {kind} is {ratio[1]}, but no limit is specified "
                       "or limit is 0")
        elif lim[0] / req[0] > ratio[0] + 1e-12:
            out.append(f"{name} max limit to request ratio per {kind} is {ratio[1]}, but provided ratio is "
                       f"{lim[0] / req[0]:f}")
    return out


def _summed(containers: list[Obj], section: str) -> dict[str, tuple[float, str]]:
    total: dict[str, float] = {}
    for container in containers:
        for name, (number, _) in _amounts((container.get("resources") or {}).get(section)).items():
            total[name] = total.get(name, 0.0) + number
    return {name: (number, canonical(_plain(name, number))) for name, number in total.items()}


def _plain(name: str, number: float) -> str:
    from control.kinds.quota_usage import show

    return show(name, number)


def enforce(resource: str, obj: Obj, old: Obj | None, listed: Lister) -> str:
    """PodMinMaxLimitRange / PersistentVolumeClaim bounds on create; "" when within them."""
    if old is not None or resource not in ("/pods", "/persistentvolumeclaims"):
        return ""
    namespace = obj["metadata"].get("namespace") or ""
    problems: list[str] = []
    if resource == "/persistentvolumeclaims":
        resources = (obj.get("spec") or {}).get("resources") or {}
        for item in _items(listed, namespace, "PersistentVolumeClaim"):
            # a claim's limits are not user input to the LimitRanger (upstream passes none)
            problems += _bounds(item, "PersistentVolumeClaim", _amounts(resources.get("requests")), {})
    else:
        containers = [c for _, c in _containers(obj)]
        for item in _items(listed, namespace, "Container"):
            for container in containers:
                resources = container.get("resources") or {}
                problems += _bounds(item, "Container", _amounts(resources.get("requests")),
                                    _amounts(resources.get("limits")))
        app = [c for prefix, c in _containers(obj) if prefix == "container"]
        for item in _items(listed, namespace, "Pod"):
            problems += _bounds(item, "Pod", _summed(app, "requests"), _summed(app, "limits"))
    unique = list(dict.fromkeys(problems))
    if not unique:
        return ""
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


LIMIT_POLICY = Policy(name="LimitRanger", mutate=apply_defaults, validate=enforce)

LIMITRANGE = Kind(
    group="", version="v1", kind="LimitRange", plural="limitranges", namespaced=True,
    definition="io.k8s.api.core.v1.LimitRange", short_names=("limits",),
    defaults=limitrange_defaults, validate=validate_limitrange,
    columns=(NAME_COLUMN, Column("Created At", type="date", description="CreationTimestamp is a timestamp "
                                 "representing the server time when this object was created.")),
    cells=limitrange_cells, policy=LIMIT_POLICY,
)
