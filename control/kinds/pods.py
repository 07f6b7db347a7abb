"""The Pod kind: defaults, validation, the update rules, printing and field selectors.

Guarantees: `pod_defaults` is idempotent and fills what the real API server fills (restart
policy, grace period, scheduler, DNS policy, pull policy, the default NoExecute tolerations);
`pod_spec_causes` validates a pod spec wherever it appears (pods, pod templates); a pod's spec is
immutable after creation except for the fields Kubernetes lets change.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from control.kinds.base import (
    AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, field_value, name_causes, required,
)
from control.kinds.meta import age
from control.kinds.quantity import is_quantity

RESTART_POLICIES = ("Always", "OnFailure", "Never")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


@lru_cache(maxsize=1)
def _toleration_seconds() -> int:
    from control.client.timings import Timings

    return int(Timings.from_env().toleration_seconds)


def _container_defaults(container: dict[str, Any]) -> None:
    image = container.get("image") or ""
    tag = image.rsplit("/", 1)[-1]
    latest = "@" not in image and (":" not in tag or tag.endswith(":latest"))
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def pod_spec_defaults(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                _container_defaults(container)


def pod_defaults(pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    pod_spec_defaults(spec)
    tolerations = spec.setdefault("tolerations", [])
    if isinstance(tolerations, list):
        present = {t.get("key") for t in tolerations if isinstance(t, dict)}
        for key in DEFAULT_TOLERATIONS:
            if key not in present:
                tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                    "tolerationSeconds": _toleration_seconds()})


def _container_causes(container: Any, path: str, seen: set[str]) -> list[Cause]:
    if not isinstance(container, dict):
        return [cause(path, "Invalid value: must be an object")]
    out = name_causes(container.get("name"), f"{path}.name", label=True) if container.get("name") else [
        required(f"{path}.name")]
    name = container.get("name")
    if isinstance(name, str):
        if name in seen:
            out.append(cause(f"{path}.name", f'Duplicate value: "{name}"', "FieldValueDuplicate"))
        seen.add(name)
    if not container.get("image"):
        out.append(required(f"{path}.image"))
    if container.get("imagePullPolicy") not in (None, *PULL_POLICIES):
        out.append(cause(f"{path}.imagePullPolicy", f'Unsupported value: "{container["imagePullPolicy"]}": '
                         'supported values: "Always", "IfNotPresent", "Never"', "FieldValueNotSupported"))
    for i, port in enumerate(container.get("ports") or []):
        number = port.get("containerPort") if isinstance(port, dict) else None
        if number is None:
            out.append(required(f"{path}.ports[{i}].containerPort"))
        elif not isinstance(number, int) or not 1 <= number <= 65535:
            out.append(cause(f"{path}.ports[{i}].containerPort",
                             f"Invalid value: {number}: must be between 1 and 65535, inclusive"))
    resources = container.get("resources") or {}
    for section in ("requests", "limits"):
        for resource, value in ((resources.get(section) or {}) if isinstance(resources, dict) else {}).items():
            if not is_quantity(value):
                out.append(cause(f"{path}.resources.{section}[{resource}]",
                                 f'Invalid value: "{value}": must be a valid quantity'))
    return out


def pod_spec_causes(spec: Any, path: str = "spec") -> list[Cause]:
    if not isinstance(spec, dict):
        return [required(path)]
    out: list[Cause] = []
    containers = spec.get("containers")
    if not containers:
        out.append(required(f"{path}.containers"))
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(key) or []):
            out += _container_causes(container, f"{path}.{key}[{i}]", seen)
    policy = spec.get("restartPolicy")
    if policy not in (None, *RESTART_POLICIES):
        out.append(cause(f"{path}.restartPolicy", f'Unsupported value: "{policy}": supported values: '
                         '"Always", "OnFailure", "Never"', "FieldValueNotSupported"))
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or grace < 0):
        out.append(cause(f"{path}.terminationGracePeriodSeconds",
                         f"Invalid value: {grace}: must be greater than or equal to 0"))
    return out


def validate_pod(pod: Obj) -> list[Cause]:
    return pod_spec_causes(pod.get("spec"))


_MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds")


def validate_pod_update(new: Obj, old: Obj) -> list[Cause]:
    """A pod's spec may change only in container images, the deadline and added tolerations."""
    new_spec, old_spec = dict(new.get("spec") or {}), dict(old.get("spec") or {})
    for key in _MUTABLE_SPEC:
        new_spec.pop(key, None), old_spec.pop(key, None)
    if not old_spec.get("nodeName"):  # binding sets nodeName once
        new_spec.pop("nodeName", None), old_spec.pop("nodeName", None)

    def without_images(spec: dict[str, Any]) -> dict[str, Any]:
        spec = dict(spec)
        for key in ("containers", "initContainers"):
            if isinstance(spec.get(key), list):
                spec[key] = [{**c, "image": None} if isinstance(c, dict) else c for c in spec[key]]
        return spec

    if without_images(new_spec) != without_images(old_spec):
        return [cause("spec", "Forbidden: pod updates may not change fields other than "
                      "`spec.containers[*].image`, `spec.initContainers[*].image`, "
                      "`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing "
                      "tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 "
                      "if it was previously negative)", "FieldValueForbidden")]
    return []


def pod_display_status(pod: Obj) -> str:
    """The STATUS column as kubectl prints it: a waiting/terminated reason wins over the phase."""
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    for cs in status.get("initContainerStatuses") or []:
        state = cs.get("state") or {}
        if state.get("terminated", {}).get("exitCode", 0) != 0 or state.get("waiting", {}).get("reason") not in (None, "PodInitializing"):
            reason = "Init:" + (state.get("waiting", {}).get("reason") or state.get("terminated", {}).get("reason") or "Error")
            break
    else:
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            if state.get("waiting", {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif state.get("terminated"):
                term = state["terminated"]
                reason = term.get("reason") or (f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode', 0)}")
    if pod.get("metadata", {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _ready(pod: Obj) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    return f"{sum(1 for s in statuses if s.get('ready'))}/{total}"


def _restarts(pod: Obj) -> int:
    return sum(int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or [])


def pod_cells(pod: Obj, now: float) -> list[Any]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    gates = spec.get("readinessGates") or []
    return [pod["metadata"]["name"], _ready(pod), pod_display_status(pod), _restarts(pod), age(pod, now),
            status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", f"{len(gates)}" if gates else "<none>"]


POD = Kind(
    group="", version="v1", kind="Pod", plural="pods", namespaced=True,
    definition="io.k8s.api.core.v1.Pod", short_names=("po",), categories=("all",),
    subresources=("status", "binding", "log"),
    defaults=pod_defaults, validate=validate_pod, validate_update=validate_pod_update,
    columns=(NAME_COLUMN, Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
             Column("Status", description="The aggregate status of the containers in this pod."),
             Column("Restarts", type="string", description="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
             AGE_COLUMN,
             Column("IP", priority=1, description="IP address allocated to the pod."),
             Column("Node", priority=1, description="Name of the Node to which this pod is assigned."),
             Column("Nominated Node", priority=1, description="Name of the node the scheduler nominated for preemption."),
             Column("Readiness Gates", priority=1, description="Conditions that must be true for the pod to be ready.")),
    cells=pod_cells,
    field_getters={
        "spec.nodeName": lambda o: field_value(o, "spec", "nodeName"),
        "spec.restartPolicy": lambda o: field_value(o, "spec", "restartPolicy"),
        "spec.schedulerName": lambda o: field_value(o, "spec", "schedulerName"),
        "spec.serviceAccountName": lambda o: field_value(o, "spec", "serviceAccountName"),
        "spec.hostNetwork": lambda o: field_value(o, "spec", "hostNetwork") or "false",
        "status.phase": lambda o: field_value(o, "status", "phase"),
        "status.podIP": lambda o: field_value(o, "status", "podIP"),
        "status.nominatedNodeName": lambda o: field_value(o, "status", "nominatedNodeName"),
    },
)
