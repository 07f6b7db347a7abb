"""core/v1 ReplicationController: defaults, validation, printing and the scale subresource, as
kube-apiserver's `pkg/registry/core/replicationcontroller/strategy.go`, `pkg/apis/core/v1/defaults.go`
and `pkg/apis/core/validation` (ValidateReplicationController) do them.

Guarantees:
- create resets status to `{replicas: 0}` (Go always renders that field); spec changes bump metadata.generation; the selector stays mutable (unlike
  a ReplicaSet's, as upstream);
- defaults: replicas 1; an empty `spec.selector` (a plain label map, not a LabelSelector) and empty
  `metadata.labels` are taken from the template's labels; the pod template gets its own defaults;
- validation never raises on odd input: a non-empty selector that matches the template's labels,
  non-negative replicas and minReadySeconds, a template (restartPolicy Always, no
  activeDeadlineSeconds) whose pod spec is valid;
- the table is kubectl's `NAME DESIRED CURRENT READY AGE` (+ CONTAINERS IMAGES SELECTOR wide), and
  the Scale's status.selector is the map as a selector string ("app=nginx").
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.apps import go_map, pod_template_defaults, template_labels
from control.kinds.base import (
    AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, ScaleSpec, cause, label_causes, required,
    reset_status_to_zero,
)
from control.kinds.meta import age
from control.kinds.pods import pod_spec_causes
from control.kinds.selectors import LabelSelector, SelectorError, label_selector_from_object


def _spec(rc: Obj) -> dict[str, Any]:
    spec = rc.get("spec")
    return spec if isinstance(spec, dict) else {}


def selector_map(rc: Obj) -> dict[str, str]:
    """The RC's selector as a label map ({} when absent or not a map)."""
    selector = _spec(rc).get("selector")
    return {str(k): str(v) for k, v in selector.items()} if isinstance(selector, dict) else {}


def format_labels(labels: dict[str, str]) -> str:
    """Kubernetes' labels.FormatLabels / Set.String: "k=v" pairs sorted by key, comma-joined."""
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def replicationcontroller_defaults(rc: Obj) -> None:
    """SetDefaults_ReplicationController: selector and labels from the template, replicas 1."""
    spec = rc.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    labels = template_labels(spec)
    if isinstance(labels, dict):
        # only a template that carries labels (even empty ones) fills in the selector, as upstream
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
    pod_template_defaults(spec, owner=rc)  # also: the RC's labels from the template's when it has none
    spec.setdefault("replicas", 1)




def _non_negative(value: Any, path: str) -> list[Cause]:
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return [cause(path, f"Invalid value: {go_value(value)}: must be greater than or equal to 0")]
    return []


def _selector_causes(selector: Any) -> list[Cause]:
    if selector is None or selector == {}:
        return [required("spec.selector")]  # ValidateNonEmptySelector
    if not isinstance(selector, dict):
        return [cause("spec.selector", f"Invalid value: {go_value(selector)}: must be a map of strings")]
    # its keys and values are not checked here, as upstream: a selector that matches the
    # template's labels has them, and those are checked
    return []


def _template_causes(template: Any, selector: Any) -> list[Cause]:
    """ValidatePodTemplateSpecForRC."""
    if template is None:
        return [required("spec.template")]
    if not isinstance(template, dict):
        return [cause("spec.template", f"Invalid value: {go_value(template)}: must be an object")]
    out: list[Cause] = []
    meta = template.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if isinstance(selector, dict) and selector:
        have = labels if isinstance(labels, dict) else {}
        if any(have.get(k) != v for k, v in selector.items()):
            out.append(cause("spec.template.metadata.labels",
                             f"Invalid value: {go_map(labels)}: `selector` does not match template `labels`"))
    out += label_causes(labels, "spec.template.metadata.labels")
    pod_spec = template.get("spec")
    out += pod_spec_causes(pod_spec, "spec.template.spec")
    if isinstance(pod_spec, dict):
        policy = pod_spec.get("restartPolicy")
        if policy not in (None, "Always"):
            out.append(cause("spec.template.spec.restartPolicy",
                             f'Unsupported value: {go_value(policy)}: supported values: "Always"', "FieldValueNotSupported"))
        if pod_spec.get("activeDeadlineSeconds") is not None:
            out.append(cause("spec.template.spec.activeDeadlineSeconds",
                             "Forbidden: activeDeadlineSeconds in ReplicationController is not Supported",
                             "FieldValueForbidden"))
    return out


def validate_replicationcontroller(rc: Obj) -> list[Cause]:
    """ValidateReplicationControllerSpec (create and update alike: the selector may change)."""
    spec = rc.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    out = _non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    out += _selector_causes(spec.get("selector"))
    out += _non_negative(spec.get("replicas"), "spec.replicas")
    out += _template_causes(spec.get("template"), spec.get("selector"))
    return out


def _status(rc: Obj, key: str) -> int:
    status = rc.get("status")
    value = status.get(key) if isinstance(status, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def replicationcontroller_cells(rc: Obj, now: float) -> list[Any]:
    template = _spec(rc).get("template")
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    containers = pod_spec.get("containers") if isinstance(pod_spec, dict) else None
    containers = [c for c in containers or [] if isinstance(c, dict)]
    return [rc["metadata"]["name"], _spec(rc).get("replicas", 1), _status(rc, "replicas"), _status(rc, "readyReplicas"),
            age(rc, now), ",".join(str(c.get("name", "")) for c in containers),
            ",".join(str(c.get("image", "")) for c in containers), format_labels(selector_map(rc)) or "<none>"]


REPLICATIONCONTROLLER = Kind(
    group="", version="v1", kind="ReplicationController", plural="replicationcontrollers", namespaced=True,
    definition="io.k8s.api.core.v1.ReplicationController", short_names=("rc",), categories=("all",),
    subresources=("status", "scale"), prepare_for_create=reset_status_to_zero("replicas"), defaults=replicationcontroller_defaults,
    validate=validate_replicationcontroller,
    columns=(NAME_COLUMN, Column("Desired", type="integer", description="Replicas is the number of desired replicas."),
             Column("Current", type="integer", description="Replicas is the most recently observed number of replicas."),
             Column("Ready", type="integer", description="The number of ready replicas for this replication controller."),
             AGE_COLUMN,
             Column("Containers", priority=1, description="Names of each container in the template."),
             Column("Images", priority=1, description="Images referenced by each container in the template."),
             Column("Selector", priority=1, description="Label selector for pods.")),
    cells=replicationcontroller_cells, scale=ScaleSpec(selector=lambda o: format_labels(selector_map(o))), has_spec=True,
)


def rc_selector(rc: Obj) -> LabelSelector:
    """The pods the RC selects, as the LabelSelector {matchLabels: spec.selector} upstream's
    replication manager converts it to; an empty or broken selector matches nothing."""
    labels = selector_map(rc)
    if not labels:
        return LabelSelector.nothing()
    try:
        return label_selector_from_object({"matchLabels": labels})
    except SelectorError:
        return LabelSelector.nothing()
