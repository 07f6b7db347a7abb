"""autoscaling/v1 HorizontalPodAutoscaler: the HPA kind's second served version, converted to and
from the stored autoscaling/v2 as upstream's pkg/apis/autoscaling/v1/conversion.go does.

Guarantees: v1 shows one CPU utilisation target (`targetCPUUtilizationPercentage`) and its current
value; what v1 cannot show travels in upstream's round-trip annotations, so a v2 object read as v1
and written back (a PUT of the read, a patch of the v1 view) keeps everything:
- `autoscaling.alpha.kubernetes.io/metrics`: the other metrics, in v1's MetricSpec shape;
- `autoscaling.alpha.kubernetes.io/current-metrics`: every current metric (v1's MetricStatus);
- `autoscaling.alpha.kubernetes.io/behavior`: spec.behavior;
- `autoscaling.alpha.kubernetes.io/conditions`: status.conditions.
On the way in, the annotations are read back and dropped; a v1 object with no metric at all gets
the CPU default (80%), as upstream. Pure functions of plain dicts.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from control.kinds.base import Obj

V1_API = "autoscaling/v1"
V2_API = "autoscaling/v2"
METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
ROUND_TRIP = (METRICS_ANNOTATION, CURRENT_METRICS_ANNOTATION, BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION)
DEFAULT_CPU_UTILIZATION = 80

# source type -> (v2 member, v1 member): v1 keeps v2beta1's flat metric shapes
_MEMBER = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods", "Object": "object",
           "External": "external"}
# v2 target/current field -> v1 field, per source type (spec, then status)
_SPEC_VALUES = {
    "Resource": {"averageUtilization": "targetAverageUtilization", "averageValue": "targetAverageValue"},
    "ContainerResource": {"averageUtilization": "targetAverageUtilization", "averageValue": "targetAverageValue"},
    "Pods": {"averageValue": "targetAverageValue"},
    "Object": {"value": "targetValue", "averageValue": "averageValue"},
    "External": {"value": "targetValue", "averageValue": "targetAverageValue"},
}
_STATUS_VALUES = {
    "Resource": {"averageUtilization": "currentAverageUtilization", "averageValue": "currentAverageValue"},
    "ContainerResource": {"averageUtilization": "currentAverageUtilization", "averageValue": "currentAverageValue"},
    "Pods": {"averageValue": "currentAverageValue"},
    "Object": {"value": "currentValue", "averageValue": "averageValue"},
    "External": {"value": "currentValue", "averageValue": "currentAverageValue"},
}
_TARGET_TYPE = {"averageUtilization": "Utilization", "averageValue": "AverageValue", "value": "Value"}


def _metric_to_v1(metric: Obj, values: dict[str, dict[str, str]], inner: str) -> Obj:
    kind = metric.get("type")
    member = _MEMBER.get(kind or "")
    if member is None or not isinstance(metric.get(member), dict):
        return copy.deepcopy(metric)
    source, out = metric[member], {}
    for key in ("name", "container"):
        if key in source:
            out[key] = source[key]
    identifier = source.get("metric") or {}
    if "name" in identifier:
        out["metricName"] = identifier["name"]
    if "selector" in identifier:
        out["metricSelector" if kind == "External" else "selector"] = identifier["selector"]
    if "describedObject" in source:
        out["target"] = source["describedObject"]
    for v2_key, v1_key in values[kind].items():
        if v2_key in (source.get(inner) or {}):
            out[v1_key] = source[inner][v2_key]
    return {"type": kind, member: out}


def _metric_to_v2(metric: Obj, values: dict[str, dict[str, str]], inner: str) -> Obj:
    kind = metric.get("type")
    member = _MEMBER.get(kind or "")
    if member is None or not isinstance(metric.get(member), dict):
        return copy.deepcopy(metric)
    source, out, value = metric[member], {}, {}
    for key in ("name", "container"):
        if key in source:
            out[key] = source[key]
    if "metricName" in source:
        selector_key = "metricSelector" if kind == "External" else "selector"
        out["metric"] = {"name": source["metricName"],
                         **({"selector": source[selector_key]} if selector_key in source else {})}
    if kind == "Object" and "target" in source:
        out["describedObject"] = source["target"]
    for v2_key, v1_key in values[kind].items():
        if v1_key in source:
            value[v2_key] = source[v1_key]
    if inner == "target":
        given = next((k for k in ("value", "averageValue", "averageUtilization") if k in value), None)
        value = {"type": _TARGET_TYPE[given], **value} if given else value
    out[inner] = value
    return {"type": kind, member: out}


def _is_cpu_utilization(metric: Obj) -> bool:
    resource = metric.get("resource") or {}
    return (metric.get("type") == "Resource" and resource.get("name") == "cpu"
            and (resource.get("target") or {}).get("averageUtilization") is not None)


def _encoded(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def v2_to_v1(hpa: Obj) -> Obj:
    """Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler."""
    out = copy.deepcopy(hpa)
    out["apiVersion"] = V1_API
    meta = out.setdefault("metadata", {})
    spec = out.get("spec") if isinstance(out.get("spec"), dict) else {}
    metrics = [m for m in spec.pop("metrics", None) or [] if isinstance(m, dict)]
    behavior = spec.pop("behavior", None)
    cpu = next((m for m in metrics if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu"), None)
    if cpu is not None and (cpu["resource"].get("target") or {}).get("averageUtilization") is not None:
        spec["targetCPUUtilizationPercentage"] = cpu["resource"]["target"]["averageUtilization"]
    if not isinstance(out.get("status"), dict):
        out["status"] = {}  # v1's status is a struct: always there, with both counts
    status = out["status"]
    current = [m for m in status.pop("currentMetrics", None) or [] if isinstance(m, dict)]
    conditions = status.pop("conditions", None) or []
    for metric in current:
        resource = metric.get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            utilization = (resource.get("current") or {}).get("averageUtilization")
            if utilization is not None:
                status["currentCPUUtilizationPercentage"] = utilization
    status.setdefault("currentReplicas", 0)
    status.setdefault("desiredReplicas", 0)
    others = [_metric_to_v1(m, _SPEC_VALUES, "target") for m in metrics if not _is_cpu_utilization(m)]
    carried = {METRICS_ANNOTATION: others, CURRENT_METRICS_ANNOTATION: [_metric_to_v1(m, _STATUS_VALUES, "current") for m in current],
               BEHAVIOR_ANNOTATION: behavior, CONDITIONS_ANNOTATION: conditions}
    if any(carried.values()):
        annotations = dict(meta.get("annotations") or {})
        annotations.update({key: _encoded(value) for key, value in carried.items() if value})
        meta["annotations"] = annotations
    return out


def _decoded(annotations: dict[str, Any], key: str) -> Any:
    try:
        return json.loads(annotations[key]) if isinstance(annotations.get(key), str) else None
    except ValueError:
        return None  # a hand-edited annotation that does not parse is dropped, as the field it stood for


def v1_to_v2(hpa: Obj) -> Obj:
    """Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler."""
    out = copy.deepcopy(hpa)
    out["apiVersion"] = V2_API
    meta = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    spec = out.get("spec")
    if isinstance(spec, dict):
        percent = spec.pop("targetCPUUtilizationPercentage", None)
        metrics = [_metric_to_v2(m, _SPEC_VALUES, "target") for m in _decoded(annotations, METRICS_ANNOTATION) or []
                   if isinstance(m, dict)]
        if percent is not None:
            metrics.append({"type": "Resource", "resource": {
                "name": "cpu", "target": {"type": "Utilization", "averageUtilization": percent}}})
        if not metrics:  # v1's implicit default, made explicit (upstream does it here too)
            metrics = [{"type": "Resource", "resource": {
                "name": "cpu", "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
        spec["metrics"] = metrics
        behavior = _decoded(annotations, BEHAVIOR_ANNOTATION)
        if isinstance(behavior, dict):
            spec["behavior"] = behavior
    status = out.get("status")
    if isinstance(status, dict):
        utilization = status.pop("currentCPUUtilizationPercentage", None)
        current = _decoded(annotations, CURRENT_METRICS_ANNOTATION)
        if isinstance(current, list):  # these have more information than the one CPU figure
            status["currentMetrics"] = [_metric_to_v2(m, _STATUS_VALUES, "current") for m in current if isinstance(m, dict)]
        elif utilization is not None:
            status["currentMetrics"] = [{"type": "Resource", "resource": {
                "name": "cpu", "current": {"averageUtilization": utilization}}}]
        conditions = _decoded(annotations, CONDITIONS_ANNOTATION)
        if isinstance(conditions, list):
            status["conditions"] = conditions
    if annotations:
        kept = {k: v for k, v in annotations.items() if k not in ROUND_TRIP}
        if kept:
            meta["annotations"] = kept
        else:
            meta.pop("annotations", None)
    return out
