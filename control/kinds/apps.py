"""apps/v1 Deployment and ReplicaSet: defaults, validation (selector must match the template's
labels), immutable selectors, printing and the scale subresource's selector.

Guarantees: defaults match the real API server (replicas 1, RollingUpdate 25%/25%, history 10,
progress deadline 600 s); validation never raises on odd input.
"""

from __future__ import annotations

from typing import Any

from control.errors import go_strings, go_text, go_value
from control.kinds.base import (
    reset_status,
    reset_status_to_zero,
    AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, ScaleSpec, cause, label_causes,
    required, selector_string,
)
from control.kinds.meta import age
from control.kinds.pod_defaults import pod_spec_defaults
from control.kinds.pods import pod_spec_causes


def pod_template_defaults(spec: dict[str, Any], owner: Obj | None = None) -> None:
    """The pod template's defaults (shared by every workload kind); with `owner`, the owner takes
    the template's labels when it has none (as Job and DaemonSet defaulting do upstream)."""
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    template.setdefault("metadata", {})
    if isinstance(template.get("spec"), dict):
        pod_spec_defaults(template["spec"])
    labels = template_labels(spec)
    if owner is not None and isinstance(labels, dict) and labels:
        meta = owner.setdefault("metadata", {})
        if not meta.get("labels"):
            meta["labels"] = dict(labels)


def template_labels(spec: dict[str, Any]) -> Any:
    template = spec.get("template")
    metadata = template.get("metadata") if isinstance(template, dict) else None
    return metadata.get("labels") if isinstance(metadata, dict) else None


def selector_match_causes(selector: dict[str, Any], labels: Any) -> list[Cause]:
    """A workload's selector: valid matchLabels, a selector that parses, and that matches the pod
    template's labels (Kubernetes' "`selector` does not match template `labels`")."""
    from control.kinds.selectors import SelectorError, label_selector_from_object

    out = label_causes(selector.get("matchLabels"), "spec.selector.matchLabels")
    try:
        parsed = label_selector_from_object(selector)
    except SelectorError as exc:
        return out + [cause("spec.selector", f"Invalid value: {exc}")]
    if not parsed.matches(labels if isinstance(labels, dict) else {}):
        out.append(cause("spec.template.metadata.labels",
                         f"Invalid value: {go_map(labels)}: `selector` does not match template `labels`"))
    return out


def _template_defaults(spec: dict[str, Any]) -> None:
    spec.setdefault("replicas", 1)
    pod_template_defaults(spec)


def deployment_defaults(deploy: Obj) -> None:
    spec = deploy.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    _template_defaults(spec)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxSurge", "25%")
                rolling.setdefault("maxUnavailable", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)


def replicaset_defaults(rs: Obj) -> None:
    spec = rs.setdefault("spec", {})
    if isinstance(spec, dict):
        _template_defaults(spec)


def _int_or_percent_causes(value: Any, path: str) -> list[Cause]:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return []
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return [] if int(value[:-1]) <= 100 else [cause(path, f'Invalid value: {go_value(value)}: must not be greater than 100%')]
    return [cause(path, f"Invalid value: {go_value(value)}: must be a non-negative integer or a percentage")]


def _template_causes(spec: Any, *, deployment: bool) -> list[Cause]:
    if not isinstance(spec, dict):
        return [required("spec")]
    out: list[Cause] = []
    replicas = spec.get("replicas")
    if replicas is not None and (not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0):
        out.append(cause("spec.replicas", f"Invalid value: {go_value(replicas)}: must be greater than or equal to 0"))
    selector = spec.get("selector")
    template = spec.get("template")
    labels = template_labels(spec)
    if not isinstance(selector, dict) or not selector:
        out.append(required("spec.selector"))
    else:
        out += selector_match_causes(selector, labels)
    if not isinstance(template, dict):
        out.append(required("spec.template"))
        return out
    out += label_causes(labels, "spec.template.metadata.labels")
    out += pod_spec_causes(template.get("spec"), "spec.template.spec")
    policy = (template.get("spec") or {}).get("restartPolicy") if isinstance(template.get("spec"), dict) else None
    if policy not in (None, "Always"):
        out.append(cause("spec.template.spec.restartPolicy", f'Unsupported value: {go_value(policy)}: supported values: "Always"',
                         "FieldValueNotSupported"))
    if deployment:
        strategy = spec.get("strategy") or {}
        kind = strategy.get("type") if isinstance(strategy, dict) else None
        if kind not in (None, "RollingUpdate", "Recreate"):
            out.append(cause("spec.strategy.type", f'Unsupported value: {go_value(kind)}: supported values: "Recreate", '
                             '"RollingUpdate"', "FieldValueNotSupported"))
        rolling = strategy.get("rollingUpdate") if isinstance(strategy, dict) else None
        if kind == "Recreate" and rolling:
            out.append(cause("spec.strategy.rollingUpdate", "Forbidden: may not be specified when strategy `type` "
                             "is 'Recreate'", "FieldValueForbidden"))
        if isinstance(rolling, dict):
            out += _int_or_percent_causes(rolling.get("maxSurge"), "spec.strategy.rollingUpdate.maxSurge")
            out += _int_or_percent_causes(rolling.get("maxUnavailable"), "spec.strategy.rollingUpdate.maxUnavailable")
            if rolling.get("maxSurge") in (0, "0%") and rolling.get("maxUnavailable") in (0, "0%"):
                out.append(cause("spec.strategy.rollingUpdate.maxUnavailable",
                                 "Invalid value: 0: may not be 0 when `maxSurge` is 0"))
    return out


def go_map(labels: Any) -> str:
    """Labels as Kubernetes prints them in messages: map[string]string{"app":"web"}."""
    if not isinstance(labels, dict):
        return "map[string]string(nil)"
    inner = ", ".join(f"{_go_string(k)}:{_go_string(v)}" for k, v in sorted(labels.items(), key=lambda kv: str(kv[0])))
    return f"map[string]string{{{inner}}}"


def go_label_selector(selector: Any) -> str:
    """A LabelSelector as Go's %#v prints it in the "field is immutable" message, as kubectl shows it:
    v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}."""
    if not isinstance(selector, dict):
        return "(*v1.LabelSelector)(nil)"
    requirements = [r for r in selector.get("matchExpressions") or [] if isinstance(r, dict)]
    if requirements:
        expressions = "[]v1.LabelSelectorRequirement{" + ", ".join(
            f'v1.LabelSelectorRequirement{{Key:{_go_string(r.get("key"))}, '
            f'Operator:{_go_string(r.get("operator"))}, Values:{go_strings(r.get("values"))}}}'
            for r in requirements) + "}"
    else:
        expressions = "[]v1.LabelSelectorRequirement(nil)"
    return f"v1.LabelSelector{{MatchLabels:{go_map(selector.get('matchLabels'))}, MatchExpressions:{expressions}}}"


def _go_string(value: Any) -> str:
    """A value that belongs in a Go string, %q-quoted: null is the empty string, others their JSON text."""
    return go_value(go_text(value))


def validate_deployment(deploy: Obj) -> list[Cause]:
    return _template_causes(deploy.get("spec"), deployment=True)


def validate_replicaset(rs: Obj) -> list[Cause]:
    return _template_causes(rs.get("spec"), deployment=False)


def validate_selector_unchanged(new: Obj, old: Obj) -> list[Cause]:
    new_sel = (new.get("spec") or {}).get("selector")
    old_sel = (old.get("spec") or {}).get("selector")
    if new_sel != old_sel:
        return [cause("spec.selector", f"Invalid value: {go_label_selector(new_sel)}: field is immutable")]
    return []


def _containers(obj: Obj) -> tuple[str, str]:
    containers = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return (",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers))


def _selector_text(obj: Obj) -> str:
    return selector_string((obj.get("spec") or {}).get("selector")) or "<none>"


def _status(obj: Obj, key: str) -> int:
    return int((obj.get("status") or {}).get(key) or 0)


def deployment_cells(deploy: Obj, now: float) -> list[Any]:
    names, images = _containers(deploy)
    desired = (deploy.get("spec") or {}).get("replicas", 1)
    return [deploy["metadata"]["name"], f"{_status(deploy, 'readyReplicas')}/{desired}",
            _status(deploy, "updatedReplicas"), _status(deploy, "availableReplicas"), age(deploy, now),
            names, images, _selector_text(deploy)]


def replicaset_cells(rs: Obj, now: float) -> list[Any]:
    names, images = _containers(rs)
    return [rs["metadata"]["name"], (rs.get("spec") or {}).get("replicas", 1), _status(rs, "replicas"),
            _status(rs, "readyReplicas"), age(rs, now), names, images, _selector_text(rs)]


_WIDE = (Column("Containers", priority=1, description="Names of each container in the template."),
         Column("Images", priority=1, description="Images referenced by each container in the template."),
         Column("Selector", priority=1, description="Label selector for pods."))

_SCALE = ScaleSpec(selector=lambda o: selector_string((o.get("spec") or {}).get("selector")))

DEPLOYMENT = Kind(
    group="apps", version="v1", kind="Deployment", plural="deployments", namespaced=True,
    definition="io.k8s.api.apps.v1.Deployment", short_names=("deploy",), categories=("all",),
    subresources=("status", "scale"), prepare_for_create=reset_status, defaults=deployment_defaults, validate=validate_deployment,
    validate_update=validate_selector_unchanged,
    columns=(NAME_COLUMN, Column("Ready", description="Number of the pod with ready state"),
             Column("Up-to-date", type="integer", description="Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
             Column("Available", type="integer", description="Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
             AGE_COLUMN, *_WIDE),
    cells=deployment_cells, scale=_SCALE, has_spec=True,
)

REPLICASET = Kind(
    group="apps", version="v1", kind="ReplicaSet", plural="replicasets", namespaced=True,
    definition="io.k8s.api.apps.v1.ReplicaSet", short_names=("rs",), categories=("all",),
    subresources=("status", "scale"), prepare_for_create=reset_status_to_zero("replicas"), defaults=replicaset_defaults, validate=validate_replicaset,
    validate_update=validate_selector_unchanged,
    columns=(NAME_COLUMN, Column("Desired", type="integer", description="Replicas is the number of desired replicas."),
             Column("Current", type="integer", description="Replicas is the most recently observed number of replicas."),
             Column("Ready", type="integer", description="The number of ready replicas for this replica set."),
             AGE_COLUMN, *_WIDE),
    cells=replicaset_cells, scale=_SCALE, has_spec=True,
)
