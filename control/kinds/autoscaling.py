"""autoscaling/v2 HorizontalPodAutoscaler: defaults, validation, printing, and its second served
version autoscaling/v1 (what `kubectl autoscale` of kubectl 1.32 sends; converted by
`control.kinds.autoscaling_v1`).

Guarantees: defaults match the real API server (minReplicas 1; 80% average CPU utilisation when
no metric is given; a given `behavior` has its missing parts filled with Kubernetes' rules, a
missing one stays missing and the controller applies the same rules); validation never raises on
odd input and speaks Kubernetes' messages; `effective_behavior` gives the rules the controller
acts on; v2 is stored and preferred, v1 is served beside it with every verb (v2-only fields
round-trip in upstream's annotations).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, required
from control.kinds.autoscaling_v1 import v1_to_v2, v2_to_v1
from control.kinds.meta import age

DEFAULT_CPU_UTILIZATION = 80
DEFAULT_TOLERANCE = 0.1
MAX_STABILIZATION_SECONDS = 3600
MAX_PERIOD_SECONDS = 1800

SCALE_UP_DEFAULT: dict[str, Any] = {
    "stabilizationWindowSeconds": 0, "selectPolicy": "Max",
    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                 {"type": "Percent", "value": 100, "periodSeconds": 15}],
}
SCALE_DOWN_DEFAULT: dict[str, Any] = {
    "stabilizationWindowSeconds": 300, "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


def default_cpu_metric(utilization: int = DEFAULT_CPU_UTILIZATION) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": "cpu",
                                             "target": {"type": "Utilization", "averageUtilization": utilization}}}


def _filled_rules(rules: Any, default: dict[str, Any]) -> dict[str, Any]:
    """Kubernetes' GenerateHPAScale{Up,Down}Rules: missing parts of given rules take the defaults."""
    if not isinstance(rules, dict):
        return copy.deepcopy(default)
    out = dict(rules)
    for key in ("stabilizationWindowSeconds", "selectPolicy", "policies"):
        if out.get(key) is None:
            out[key] = copy.deepcopy(default[key])
    return out


def hpa_defaults(hpa: Obj) -> None:
    spec = hpa.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [default_cpu_metric()]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _filled_rules(behavior.get("scaleUp"), SCALE_UP_DEFAULT)
        behavior["scaleDown"] = _filled_rules(behavior.get("scaleDown"), SCALE_DOWN_DEFAULT)


def effective_behavior(hpa: Obj) -> dict[str, dict[str, Any]]:
    """The scaling rules the controller follows: the given ones, with Kubernetes' defaults filled in."""
    behavior = ((hpa.get("spec") or {}).get("behavior")) or {}
    return {"scaleUp": _filled_rules(behavior.get("scaleUp"), SCALE_UP_DEFAULT),
            "scaleDown": _filled_rules(behavior.get("scaleDown"), SCALE_DOWN_DEFAULT)}


# --- validation ----------------------------------------------------------------------------------

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _target_causes(target: Any, path: str, *, resource: bool) -> list[Cause]:
    if not isinstance(target, dict):
        return [required(path)]
    out: list[Cause] = []
    kind = target.get("type")
    if kind not in ("Utilization", "Value", "AverageValue"):
        out.append(cause(f"{path}.type", f'Invalid value: {go_value(kind or "")}: must be either Utilization, Value, or '
                         "AverageValue"))
    utilization = target.get("averageUtilization")
    if utilization is not None:
        if not _is_int(utilization) or utilization <= 0:
            out.append(cause(f"{path}.averageUtilization", f"Invalid value: {go_value(utilization)}: must be greater than 0"))
        if not resource:
            out.append(cause(f"{path}.averageUtilization", "Forbidden: may not be set for this metric type",
                             "FieldValueForbidden"))
    if kind == "Utilization" and utilization is None:
        out.append(cause(f"{path}.averageUtilization", "Required value: must set averageUtilization when "
                         "type is Utilization", "FieldValueRequired"))
    if kind == "AverageValue" and target.get("averageValue") is None:
        out.append(cause(f"{path}.averageValue", "Required value: must set averageValue when type is "
                         "AverageValue", "FieldValueRequired"))
    if kind == "Value" and target.get("value") is None:
        out.append(cause(f"{path}.value", "Required value: must set value when type is Value", "FieldValueRequired"))
    return out


def _metric_causes(metric: Any, path: str) -> list[Cause]:
    if not isinstance(metric, dict):
        return [required(path)]
    kind = metric.get("type")
    sources = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
               "Object": "object", "External": "external"}
    if kind not in sources:
        return [cause(f"{path}.type", f'Unsupported value: {go_value(kind or "")}: supported values: "ContainerResource", '
                      '"External", "Object", "Pods", "Resource"', "FieldValueNotSupported")]
    field = sources[kind]
    source = metric.get(field)
    out = [cause(f"{path}.{other}", "Forbidden: must populate the given metric source only", "FieldValueForbidden")
           for other in sources.values() if other != field and metric.get(other) is not None]
    if not isinstance(source, dict):
        return out + [cause(f"{path}.{field}", "Required value: must populate information for the given metric "
                            "source", "FieldValueRequired")]
    if kind in ("Resource", "ContainerResource"):
        if not source.get("name"):
            out.append(required(f"{path}.{field}.name"))
        if kind == "ContainerResource" and not source.get("container"):
            out.append(required(f"{path}.{field}.container"))
        out += _target_causes(source.get("target"), f"{path}.{field}.target", resource=True)
    else:
        if not isinstance(source.get("metric"), dict) or not source["metric"].get("name"):
            out.append(cause(f"{path}.{field}.metric.name", "Required value: must specify a metric name",
                             "FieldValueRequired"))
        out += _target_causes(source.get("target"), f"{path}.{field}.target", resource=False)
    return out


def _rules_causes(rules: Any, path: str) -> list[Cause]:
    if rules is None:
        return []
    if not isinstance(rules, dict):
        return [cause(path, "Invalid value: must be an object")]
    out: list[Cause] = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None:
        if not _is_int(window) or window < 0:
            out.append(cause(f"{path}.stabilizationWindowSeconds", f"Invalid value: {go_value(window)}: must be greater than "
                             "or equal to zero"))
        elif window > MAX_STABILIZATION_SECONDS:
            out.append(cause(f"{path}.stabilizationWindowSeconds", f"Invalid value: {go_value(window)}: must be less than or "
                             f"equal to {MAX_STABILIZATION_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in ("Max", "Min", "Disabled"):
        out.append(cause(f"{path}.selectPolicy", f'Unsupported value: {go_value(select)}: supported values: "Disabled", '
                         '"Max", "Min"', "FieldValueNotSupported"))
    policies = rules.get("policies")
    if policies is not None and (not isinstance(policies, list) or not policies):
        out.append(cause(f"{path}.policies", "Required value: must specify at least one Policy",
                         "FieldValueRequired"))
    for i, policy in enumerate(policies if isinstance(policies, list) else []):
        where = f"{path}.policies[{i}]"
        if not isinstance(policy, dict):
            out.append(required(where))
            continue
        if policy.get("type") not in ("Pods", "Percent"):
            out.append(cause(f"{where}.type", f'Unsupported value: {go_value(policy.get("type") or "")}: supported values: '
                             '"Percent", "Pods"', "FieldValueNotSupported"))
        value = policy.get("value")
        if not _is_int(value) or value <= 0:
            out.append(cause(f"{where}.value", f"Invalid value: {go_value(value)}: must be greater than zero"))
        period = policy.get("periodSeconds")
        if not _is_int(period) or period <= 0:
            out.append(cause(f"{where}.periodSeconds", f"Invalid value: {go_value(period)}: must be greater than zero"))
        elif period > MAX_PERIOD_SECONDS:
            out.append(cause(f"{where}.periodSeconds", f"Invalid value: {go_value(period)}: must be less than or equal to "
                             f"{MAX_PERIOD_SECONDS}"))
    return out


def validate_hpa(hpa: Obj) -> list[Cause]:
    spec = hpa.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    out: list[Cause] = []
    ref = spec.get("scaleTargetRef")
    if not isinstance(ref, dict):
        out += [required("spec.scaleTargetRef.kind"), required("spec.scaleTargetRef.name")]
    else:
        for key in ("kind", "name"):
            value = ref.get(key)
            if not value:
                out.append(required(f"spec.scaleTargetRef.{key}"))
            elif not isinstance(value, str) or "/" in value or "%" in value or value in (".", ".."):
                out.append(cause(f"spec.scaleTargetRef.{key}", f"Invalid value: {go_value(value)}: may not contain '/' or "
                                 "'%', and may not be '.' or '..'"))
    minimum = spec.get("minReplicas", 1)
    maximum = spec.get("maxReplicas")
    if minimum is not None and (not _is_int(minimum) or minimum < 1):
        out.append(cause("spec.minReplicas", f"Invalid value: {go_value(minimum)}: must be greater than or equal to 1"))
    if not _is_int(maximum) or maximum < 1:
        out.append(cause("spec.maxReplicas", f"Invalid value: {go_value(maximum)}: must be greater than 0"))
    elif _is_int(minimum) and maximum < minimum:
        out.append(cause("spec.maxReplicas", f"Invalid value: {go_value(maximum)}: must be greater than or equal to "
                         "`minReplicas`"))
    metrics = spec.get("metrics")
    if metrics is not None and not isinstance(metrics, list):
        out.append(cause("spec.metrics", "Invalid value: must be a list"))
    for i, metric in enumerate(metrics if isinstance(metrics, list) else []):
        out += _metric_causes(metric, f"spec.metrics[{i}]")
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        out += _rules_causes(behavior.get("scaleUp"), "spec.behavior.scaleUp")
        out += _rules_causes(behavior.get("scaleDown"), "spec.behavior.scaleDown")
    return out


# --- printing ------------------------------------------------------------------------------------

def _utilization(value: Any) -> str:
    return f"{value}%" if value is not None else "<unknown>"


def targets_text(hpa: Obj, most: int = 3) -> str:
    """kubectl's TARGETS column: "cpu: 45%/50%", "cpu: <unknown>/50%", "+ N more..."."""
    specs = (hpa.get("spec") or {}).get("metrics") or []
    statuses = (hpa.get("status") or {}).get("currentMetrics") or []
    parts = []
    for i, metric in enumerate(specs):
        status = statuses[i] if i < len(statuses) and isinstance(statuses[i], dict) else {}
        kind = metric.get("type") if isinstance(metric, dict) else None
        field = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
                 "Object": "object", "External": "external"}.get(kind or "")
        source = (metric.get(field) if field else None) or {}
        target = source.get("target") or {}
        current = ((status.get(field) or {}).get("current") or {}) if field else {}
        label = source.get("name") or (source.get("metric") or {}).get("name") or "<unknown>"
        if kind == "ContainerResource":
            label = f"{label} ({source.get('container', '')})"
        if target.get("type") == "Utilization" or (target.get("averageUtilization") is not None):
            goal = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
            parts.append(f"{label}: {_utilization(current.get('averageUtilization'))}/{goal}")
        elif target.get("type") == "Value":
            parts.append(f"{label}: {current.get('value', '<unknown>')}/{target.get('value')}")
        else:
            parts.append(f"{label}: {current.get('averageValue', '<unknown>')}/{target.get('averageValue')}"
                         + (" (avg)" if kind in ("Object", "External") else ""))
    if not parts:
        return "<none>"
    if len(parts) > most:
        return ", ".join(parts[:most]) + f" + {len(parts) - most} more..."
    return ", ".join(parts)


def hpa_cells(hpa: Obj, now: float) -> list[Any]:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    minimum = spec.get("minReplicas")
    return [hpa["metadata"]["name"], f"{ref.get('kind', '')}/{ref.get('name', '')}", targets_text(hpa),
            "<unset>" if minimum is None else minimum, spec.get("maxReplicas", 0),
            int(status.get("currentReplicas") or 0), age(hpa, now)]


HORIZONTALPODAUTOSCALER = Kind(
    group="autoscaling", version="v2", kind="HorizontalPodAutoscaler", plural="horizontalpodautoscalers",
    namespaced=True, definition="io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler", short_names=("hpa",),
    categories=("all",), subresources=("status",), defaults=hpa_defaults, validate=validate_hpa,
    columns=(NAME_COLUMN,
             Column("Reference", description="Reference to the scaled resource."),
             Column("Targets", description="Current and target value of each metric."),
             Column("MinPods", description="Lower bound of the replica count."),
             Column("MaxPods", type="integer", description="Upper bound of the replica count."),
             Column("Replicas", type="integer", description="Current number of replicas of the target."),
             AGE_COLUMN),
    cells=hpa_cells, has_spec=True,
)
HORIZONTALPODAUTOSCALER = dataclasses.replace(HORIZONTALPODAUTOSCALER, other_versions=(
    HORIZONTALPODAUTOSCALER.served_as(
        "v1", "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler", on_read=v2_to_v1, to_storage=v1_to_v2,
        cells=lambda hpa, now: hpa_cells(v1_to_v2(hpa), now)),  # printed from what it stands for, as upstream
))
