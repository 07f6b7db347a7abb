"""apps/v1 StatefulSet: defaults, validation, the fields an update may change, printing and the
scale subresource, as `pkg/registry/apps/statefulset/strategy.go`, `pkg/apis/apps/v1/defaults.go`
and `pkg/apis/apps/validation` do them.

Guarantees:
- create resets status; defaults: replicas 1, podManagementPolicy OrderedReady, updateStrategy
  RollingUpdate with partition 0, revisionHistoryLimit 10, persistentVolumeClaimRetentionPolicy
  Retain/Retain, the template's pod defaults, and each volumeClaimTemplate as a
  PersistentVolumeClaim (apiVersion/kind, volumeMode Filesystem, status phase Pending);
- validation never raises on odd input: non-negative replicas/minReadySeconds/partition/ordinals,
  the two management policies and update strategies, a non-empty selector matching the template,
  restartPolicy Always, no activeDeadlineSeconds, claim templates with a name, access modes and a
  storage request;
- an update may change only replicas, ordinals, template, updateStrategy, revisionHistoryLimit,
  persistentVolumeClaimRetentionPolicy and minReadySeconds: anything else (serviceName,
  selector, volumeClaimTemplates, podManagementPolicy) is upstream's single Forbidden cause on
  `spec`;
- the table is kubectl's `NAME READY AGE` (wide: CONTAINERS IMAGES).
"""

from __future__ import annotations

import copy
from typing import Any

from control.errors import go_value
from control.kinds.apps import pod_template_defaults, selector_match_causes, template_labels
from control.kinds.base import (
    AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, ScaleSpec, cause, label_causes, name_causes, required,
    reset_status_to_zero, selector_string,
)
from control.kinds.meta import age
from control.kinds.pods import pod_spec_causes
from control.kinds.volumes import claim_spec_causes

ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"
ROLLING_UPDATE, ON_DELETE = "RollingUpdate", "OnDelete"
RETAIN, DELETE = "Retain", "Delete"
MUTABLE_SPEC = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
FORBIDDEN_UPDATE = ("Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                    "'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' "
                    "and 'minReadySeconds' are forbidden")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def statefulset_defaults(sts: Obj) -> None:
    spec = sts.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", ORDERED_READY)
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", ROLLING_UPDATE)
        if strategy["type"] == ROLLING_UPDATE:
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("partition", 0)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(policy, dict):
        policy.setdefault("whenDeleted", RETAIN)
        policy.setdefault("whenScaled", RETAIN)
    pod_template_defaults(spec)
    for claim in spec.get("volumeClaimTemplates") or []:
        if isinstance(claim, dict):
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            if isinstance(claim.get("spec"), dict):
                claim["spec"].setdefault("volumeMode", "Filesystem")
            status = claim.setdefault("status", {})
            if isinstance(status, dict):
                status.setdefault("phase", "Pending")


def _non_negative(value: Any, path: str) -> list[Cause]:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return []
    return [cause(path, f"Invalid value: {go_value(value)}: must be greater than or equal to 0")]


def _selector_causes(spec: dict[str, Any]) -> list[Cause]:
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [required("spec.selector")]
    out = []
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        out.append(cause("spec.selector", f"Invalid value: {go_value(selector)}: empty selector is invalid for "
                         "statefulset"))
    return out + selector_match_causes(selector, template_labels(spec))


def _strategy_causes(spec: dict[str, Any]) -> list[Cause]:
    strategy = _dict(spec.get("updateStrategy"))
    kind = strategy.get("type")
    out: list[Cause] = []
    if not kind:
        return [required("spec.updateStrategy")]
    if kind not in (ROLLING_UPDATE, ON_DELETE):
        return [cause("spec.updateStrategy", f"Invalid value: {go_value(kind)}: must be '{ROLLING_UPDATE}' or "
                      f"'{ON_DELETE}'")]
    rolling = strategy.get("rollingUpdate")
    if kind == ON_DELETE and rolling is not None:
        out.append(cause("spec.updateStrategy.rollingUpdate", f"Invalid value: {go_value(rolling)}: only allowed "
                         f"for updateStrategy '{ROLLING_UPDATE}'"))
    if isinstance(rolling, dict):
        out += _non_negative(rolling.get("partition"), "spec.updateStrategy.rollingUpdate.partition")
    return out


def _retention_causes(spec: dict[str, Any]) -> list[Cause]:
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    out: list[Cause] = []
    for key in ("whenDeleted", "whenScaled"):
        value = _dict(policy).get(key)
        if value not in (RETAIN, DELETE):
            out.append(cause(f"spec.persistentVolumeClaimRetentionPolicy.{key}", f"Unsupported value: "
                             f'{go_value(value)}: supported values: "Retain", "Delete"', "FieldValueNotSupported"))
    return out


def _claim_template_causes(spec: dict[str, Any]) -> list[Cause]:
    out: list[Cause] = []
    for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
        path = f"spec.volumeClaimTemplates[{i}]"
        name = _dict(_dict(claim).get("metadata")).get("name")
        out += name_causes(name, f"{path}.metadata.name")
        out += claim_spec_causes(_dict(_dict(claim).get("spec")), f"{path}.spec")
    return out


def validate_statefulset(sts: Obj) -> list[Cause]:
    spec = sts.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    out: list[Cause] = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        out.append(required("spec.podManagementPolicy"))
    elif policy not in (ORDERED_READY, PARALLEL):
        out.append(cause("spec.podManagementPolicy", f"Invalid value: {go_value(policy)}: must be "
                         f"'{ORDERED_READY}' or '{PARALLEL}'"))
    out += _strategy_causes(spec)
    out += _retention_causes(spec)
    out += _non_negative(spec.get("replicas"), "spec.replicas")
    out += _non_negative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    out += _non_negative(_dict(spec.get("ordinals")).get("start"), "spec.ordinals.start")
    out += _selector_causes(spec)
    template = spec.get("template")
    if not isinstance(template, dict):
        return out + [required("spec.template")]
    out += label_causes(_dict(template.get("metadata")).get("labels"), "spec.template.metadata.labels")
    pod_spec = template.get("spec")
    out += pod_spec_causes(pod_spec, "spec.template.spec")
    restart = _dict(pod_spec).get("restartPolicy")
    if restart != "Always":
        out.append(cause("spec.template.spec.restartPolicy", f'Unsupported value: {go_value(restart)}: supported '
                         'values: "Always"', "FieldValueNotSupported"))
    if _dict(pod_spec).get("activeDeadlineSeconds") is not None:
        out.append(cause("spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in "
                         "StatefulSet is not Supported", "FieldValueForbidden"))
    return out + _claim_template_causes(spec)


def validate_statefulset_update(new: Obj, old: Obj) -> list[Cause]:
    spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    fixed = {k: v for k, v in spec.items() if k not in MUTABLE_SPEC}
    old_fixed = {k: v for k, v in old_spec.items() if k not in MUTABLE_SPEC}
    if fixed != old_fixed:
        return [cause("spec", FORBIDDEN_UPDATE, "FieldValueForbidden")]
    return []


def _containers(sts: Obj) -> tuple[str, str]:
    containers = _dict(_dict(_dict(sts.get("spec")).get("template")).get("spec")).get("containers") or []
    return (",".join(c.get("name", "") for c in containers if isinstance(c, dict)),
            ",".join(c.get("image", "") for c in containers if isinstance(c, dict)))


def statefulset_cells(sts: Obj, now: float) -> list[Any]:
    names, images = _containers(sts)
    desired = _dict(sts.get("spec")).get("replicas", 1)
    ready = int(_dict(sts.get("status")).get("readyReplicas") or 0)
    return [sts["metadata"]["name"], f"{ready}/{desired}", age(sts, now), names, images]


def template_copy(sts: Obj) -> Obj:
    return copy.deepcopy(_dict(_dict(sts.get("spec")).get("template")))


STATEFULSET = Kind(
    group="apps", version="v1", kind="StatefulSet", plural="statefulsets", namespaced=True,
    definition="io.k8s.api.apps.v1.StatefulSet", short_names=("sts",), categories=("all",),
    subresources=("status", "scale"), prepare_for_create=reset_status_to_zero("replicas", "availableReplicas"),
    defaults=statefulset_defaults,
    validate=validate_statefulset, validate_update=validate_statefulset_update,
    columns=(NAME_COLUMN, Column("Ready", description="Number of the pod with ready state"), AGE_COLUMN,
             Column("Containers", priority=1, description="Names of each container in the template."),
             Column("Images", priority=1, description="Images referenced by each container in the template.")),
    cells=statefulset_cells, has_spec=True,
    scale=ScaleSpec(selector=lambda o: selector_string(_dict(o.get("spec")).get("selector"))),
)
