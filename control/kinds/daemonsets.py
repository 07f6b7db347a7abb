"""apps/v1 DaemonSet: defaults, validation, the template generation, printing, as kube-apiserver's
`pkg/registry/apps/daemonset/strategy.go`, `pkg/apis/apps/v1/defaults.go` and
`pkg/apis/apps/validation` do them.

Guarantees:
- create resets status, and the template generation (the v1 annotation
  `deprecated.daemonset.template.generation`) starts at 1; an update carries it over from the
  stored object and bumps it when `spec.template` changed (so a client cannot rewrite it);
- defaults: updateStrategy RollingUpdate with maxUnavailable 1 and maxSurge 0,
  revisionHistoryLimit 10, the DaemonSet's labels from its template's when it has none, and the
  pod template's own defaults;
- validation never raises on odd input; the selector is required, non-empty and must match the
  template labels (Kubernetes' "`selector` does not match template `labels`"), restartPolicy is
  Always, activeDeadlineSeconds is refused, counts are non-negative, the update strategy is
  RollingUpdate (exactly one of maxUnavailable and maxSurge non-zero) or OnDelete; the selector
  is immutable;
- the table is kubectl's `NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE`
  (printDaemonSet of v1.32), CONTAINERS IMAGES SELECTOR with -o wide.
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.apps import (
    _int_or_percent_causes, pod_template_defaults, selector_match_causes, template_labels, validate_selector_unchanged,
)
from control.kinds.base import (
    AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, label_causes, required, reset_status_to_zero,
    selector_string,
)
from control.kinds.meta import age
from control.kinds.pods import pod_spec_causes

TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
ROLLING_UPDATE, ON_DELETE = "RollingUpdate", "OnDelete"


def _spec(ds: Obj) -> dict[str, Any]:
    spec = ds.get("spec")
    return spec if isinstance(spec, dict) else {}


def _annotations(ds: Obj) -> dict[str, Any]:
    meta = ds.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    return annotations


def template_generation(ds: Obj) -> int:
    raw = ((ds.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_GENERATION)
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0


_RESET_STATUS = reset_status_to_zero("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                                     "numberReady")


def prepare_daemonset_for_create(ds: Obj) -> None:
    _RESET_STATUS(ds)
    _annotations(ds)[TEMPLATE_GENERATION] = str(max(1, template_generation(ds)))


def prepare_daemonset_for_update(new: Obj, old: Obj) -> None:
    """The template generation is the server's: carried from the stored object, bumped when the
    template changed (upstream's PrepareForUpdate)."""
    generation = template_generation(old) or 1
    if _spec(new).get("template") != _spec(old).get("template"):
        generation += 1
    _annotations(new)[TEMPLATE_GENERATION] = str(generation)


def daemonset_defaults(ds: Obj) -> None:
    spec = ds.get("spec")
    if not isinstance(spec, dict):
        return
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", ROLLING_UPDATE)
        if strategy["type"] == ROLLING_UPDATE:
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", 1)
                rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    pod_template_defaults(spec, ds)


def _non_negative(spec: dict[str, Any], key: str) -> list[Cause]:
    value = spec.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return []
    return [cause(f"spec.{key}", f"Invalid value: {go_value(value)}: must be greater than or equal to 0")]


def _int_or_percent_value(value: Any) -> int:
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return int(value[:-1])
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _go_strategy(strategy: Any) -> str:
    kind = strategy.get("type") if isinstance(strategy, dict) else None
    return f'v1.DaemonSetUpdateStrategy{{Type:{go_value(kind or "")}, RollingUpdate:(*v1.RollingUpdateDaemonSet)(nil)}}'


def _strategy_causes(strategy: Any) -> list[Cause]:
    path = "spec.updateStrategy"
    kind = strategy.get("type") if isinstance(strategy, dict) else None
    if kind == ON_DELETE:
        return []
    if kind != ROLLING_UPDATE:
        return [cause(path, f'Unsupported value: {_go_strategy(strategy)}: supported values: "RollingUpdate", '
                      '"OnDelete"', "FieldValueNotSupported")]
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, dict):
        return [required(f"{path}.rollingUpdate")]
    out = _int_or_percent_causes(rolling.get("maxUnavailable"), f"{path}.rollingUpdate.maxUnavailable")
    out += _int_or_percent_causes(rolling.get("maxSurge"), f"{path}.rollingUpdate.maxSurge")
    unavailable = _int_or_percent_value(rolling.get("maxUnavailable")) != 0
    surge = _int_or_percent_value(rolling.get("maxSurge")) != 0
    if unavailable and surge:
        out.append(cause(f"{path}.rollingUpdate.maxSurge", f"Invalid value: {go_value(rolling.get('maxSurge'))}: "
                         "may not be set when maxUnavailable is non-zero"))
    elif not unavailable and not surge:
        out.append(cause(f"{path}.rollingUpdate.maxUnavailable", "Required value: cannot be 0 when maxSurge is 0",
                         "FieldValueRequired"))
    return out


def validate_daemonset(ds: Obj) -> list[Cause]:
    spec = ds.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    out: list[Cause] = []
    selector, template = spec.get("selector"), spec.get("template")
    labels = template_labels(spec)
    if not isinstance(selector, dict):
        out.append(required("spec.selector"))
    else:
        out += selector_match_causes(selector, labels)
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            out.append(cause("spec.selector", f"Invalid value: {go_value(selector)}: empty selector is invalid "
                             "for daemonset"))
    if not isinstance(template, dict):
        return out + [required("spec.template")]
    out += label_causes(labels, "spec.template.metadata.labels")
    pod_spec = template.get("spec")
    out += pod_spec_causes(pod_spec, "spec.template.spec")
    pod_spec = pod_spec if isinstance(pod_spec, dict) else {}
    policy = pod_spec.get("restartPolicy")
    if policy != "Always":
        out.append(cause("spec.template.spec.restartPolicy", f'Unsupported value: {go_value(policy or "")}: '
                         'supported values: "Always"', "FieldValueNotSupported"))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        out.append(cause("spec.template.spec.activeDeadlineSeconds",
                         "Forbidden: activeDeadlineSeconds in DaemonSet is not Supported", "FieldValueForbidden"))
    out += _non_negative(spec, "minReadySeconds") + _non_negative(spec, "revisionHistoryLimit")
    return out + _strategy_causes(spec.get("updateStrategy"))


def _status(ds: Obj, key: str) -> int:
    return int((ds.get("status") or {}).get(key) or 0)


def node_selector_text(ds: Obj) -> str:
    """The template's nodeSelector as labels.FormatLabels prints it ("<none>" when empty)."""
    selector = ((_spec(ds).get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
    if not isinstance(selector, dict) or not selector:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def daemonset_cells(ds: Obj, now: float) -> list[Any]:
    containers = ((_spec(ds).get("template") or {}).get("spec") or {}).get("containers") or []
    return [ds["metadata"]["name"], _status(ds, "desiredNumberScheduled"), _status(ds, "currentNumberScheduled"),
            _status(ds, "numberReady"), _status(ds, "updatedNumberScheduled"), _status(ds, "numberAvailable"),
            node_selector_text(ds), age(ds, now),
            ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers),
            selector_string(_spec(ds).get("selector")) or "<none>"]


DAEMONSET = Kind(
    group="apps", version="v1", kind="DaemonSet", plural="daemonsets", namespaced=True,
    definition="io.k8s.api.apps.v1.DaemonSet", short_names=("ds",), categories=("all",), subresources=("status",),
    prepare_for_create=prepare_daemonset_for_create, prepare_for_update=prepare_daemonset_for_update,
    defaults=daemonset_defaults, validate=validate_daemonset, validate_update=validate_selector_unchanged,
    columns=(NAME_COLUMN,
             Column("Desired", type="integer", description="The total number of nodes that should be running the "
                    "daemon pod (including nodes correctly running the daemon pod)."),
             Column("Current", type="integer", description="The number of nodes that are running at least 1 daemon "
                    "pod and are supposed to run the daemon pod."),
             Column("Ready", type="integer", description="The number of nodes that should be running the daemon pod "
                    "and have one or more of the daemon pod running with a Ready Condition."),
             Column("Up-to-date", type="integer", description="The total number of nodes that are running updated "
                    "daemon pod"),
             Column("Available", type="integer", description="The number of nodes that should be running the daemon "
                    "pod and have one or more of the daemon pod running and available (ready for at least "
                    "spec.minReadySeconds)"),
             Column("Node Selector", description="NodeSelector is a selector which must be true for the pod to fit "
                    "on a node."),
             AGE_COLUMN,
             Column("Containers", priority=1, description="Names of each container in the template."),
             Column("Images", priority=1, description="Images referenced by each container in the template."),
             Column("Selector", priority=1, description="A label query over pods that are managed by the daemon "
                    "set.")),
    cells=daemonset_cells, has_spec=True,
)
