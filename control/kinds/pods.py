"""The Pod kind: defaults, validation, the update rules, the write strategy (status on create,
graceful deletion, binding, eviction), printing and field selectors.

Guarantees: defaults are `control.kinds.pod_defaults` (what the real API server fills);
`pod_spec_causes` validates a pod spec wherever it appears (pods, pod templates); a pod's spec is
immutable after creation except for the fields Kubernetes lets change.
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import (
    AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, field_value, name_causes, required,
)
from control.kinds.disruption import EVICTION
from control.kinds.pod_locations import POD_CONNECT
from control.kinds.pod_defaults import pod_defaults
from control.kinds.pod_probes import probe_causes
from control.kinds.pod_volumes import mount_name_causes, volume_causes
from control.kinds.meta import age
from control.kinds.pod_resources import pod_qos, resource_causes
from control.kinds.serviceaccounts import admit_pod
from control.kinds.strategy import Deletion

RESTART_POLICIES = ("Always", "OnFailure", "Never")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")


def _container_causes(container: Any, path: str, seen: set[str], init: bool = False) -> list[Cause]:
    if not isinstance(container, dict):
        return [cause(path, "Invalid value: must be an object")]
    out = name_causes(container.get("name"), f"{path}.name", label=True) if container.get("name") else [
        required(f"{path}.name")]
    name = container.get("name")
    if isinstance(name, str):
        if name in seen:
            out.append(cause(f"{path}.name", f"Duplicate value: {go_value(name)}", "FieldValueDuplicate"))
        seen.add(name)
    if not container.get("image"):
        out.append(required(f"{path}.image"))
    if container.get("imagePullPolicy") not in (None, *PULL_POLICIES):
        out.append(cause(f"{path}.imagePullPolicy", f'Unsupported value: {go_value(container["imagePullPolicy"])}: '
                         'supported values: "Always", "IfNotPresent", "Never"', "FieldValueNotSupported"))
    for i, port in enumerate(container.get("ports") or []):
        number = port.get("containerPort") if isinstance(port, dict) else None
        if number is None:
            out.append(required(f"{path}.ports[{i}].containerPort"))
        elif not isinstance(number, int) or not 1 <= number <= 65535:
            out.append(cause(f"{path}.ports[{i}].containerPort",
                             f"Invalid value: {go_value(number)}: must be between 1 and 65535, inclusive"))
    return out + resource_causes(container.get("resources"), f"{path}.resources") + probe_causes(container, path, init)


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
            out += _container_causes(container, f"{path}.{key}[{i}]", seen, init=key == "initContainers")
    policy = spec.get("restartPolicy")
    if policy not in (None, *RESTART_POLICIES):
        out.append(cause(f"{path}.restartPolicy", f'Unsupported value: {go_value(policy)}: supported values: '
                         '"Always", "OnFailure", "Never"', "FieldValueNotSupported"))
    out += volume_causes(spec, path)
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or grace < 0):
        out.append(cause(f"{path}.terminationGracePeriodSeconds",
                         f"Invalid value: {go_value(grace)}: must be greater than or equal to 0"))
    return out


def validate_pod(pod: Obj) -> list[Cause]:
    spec = pod.get("spec")
    return pod_spec_causes(spec) + (mount_name_causes(spec) if isinstance(spec, dict) else [])


_MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds")


def _gate_causes(new_spec: dict[str, Any], old_spec: dict[str, Any]) -> list[Cause]:
    """Scheduling gates may only be removed (upstream's validation of schedulingGates on update)."""
    old_names = {g.get("name") for g in old_spec.get("schedulingGates") or [] if isinstance(g, dict)}
    for gate in new_spec.get("schedulingGates") or []:
        name = gate.get("name") if isinstance(gate, dict) else gate
        if name not in old_names:
            return [cause("spec.schedulingGates", f"Forbidden: only deletion is allowed, but found new scheduling "
                          f"gate '{name}'", "FieldValueForbidden")]
    return []


def validate_pod_update(new: Obj, old: Obj) -> list[Cause]:
    """A pod's spec may change only in container images, the deadline, added tolerations and
    removed scheduling gates."""
    new_spec, old_spec = dict(new.get("spec") or {}), dict(old.get("spec") or {})
    gates = _gate_causes(new_spec, old_spec)
    if gates:
        return gates
    new_spec.pop("schedulingGates", None), old_spec.pop("schedulingGates", None)
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


# --- the write strategy: create, graceful deletion, binding ---------------------------------------

SCHEDULING_GATED = {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates"}


def prepare_pod_for_create(pod: Obj) -> None:
    """A new pod's status is the hub's, not the client's: it starts Pending, and a pod with
    scheduling gates says so in its PodScheduled condition (upstream's applySchedulingGatedCondition)."""
    pod["status"] = {"phase": "Pending", "qosClass": pod_qos(pod)}  # as upstream's PrepareForCreate
    spec = pod.get("spec")
    if isinstance(spec, dict) and spec.get("schedulingGates"):
        pod["status"]["conditions"] = [dict(SCHEDULING_GATED)]


def prepare_pod_for_update(new: Obj, old: Obj) -> None:
    """The Priority admission on update: a spec that leaves out the priority (and preemption policy)
    the pod was given on create keeps it, so a PUT of the manifest as written is not a spec change."""
    new_spec, old_spec = new.get("spec"), old.get("spec")
    if isinstance(new_spec, dict) and isinstance(old_spec, dict):
        for key in ("priority", "preemptionPolicy"):
            if new_spec.get(key) is None and old_spec.get(key) is not None:
                new_spec[key] = old_spec[key]


def pod_grace_period(pod: Obj, requested: int | None) -> int:
    """Seconds a deleted pod lingers for its kubelet to stop it (the pod strategy's
    CheckGracefulDelete): none when it never ran on a node or has finished; the request's
    gracePeriodSeconds, else the pod's terminationGracePeriodSeconds; a negative one counts as 1."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
        return 0
    grace = requested if requested is not None else spec.get("terminationGracePeriodSeconds", 30)
    if not isinstance(grace, int) or isinstance(grace, bool):
        grace = 30
    return max(0, grace if grace >= 0 else 1)


def bind_pod(pod: Obj, node: str, stamp: str) -> str:
    """Assign `pod` to `node` with its PodScheduled condition; or why not (the answer is 409)."""
    name = pod["metadata"]["name"]
    if pod["metadata"].get("deletionTimestamp"):
        return "pod is being deleted, cannot be assigned to a host"
    spec = pod.setdefault("spec", {})
    if spec.get("nodeName"):
        return f"pod {name} is already assigned to node \"{spec['nodeName']}\""
    if spec.get("schedulingGates"):
        return f"pod {name} has non-empty .spec.schedulingGates"
    spec["nodeName"] = node
    status = pod.setdefault("status", {})
    scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    at = next((i for i, c in enumerate(conditions) if c.get("type") == "PodScheduled"), None)
    if at is None:
        conditions.append(scheduled)
    else:  # in its place, as upstream's UpdatePodCondition; its transition time kept when unchanged
        if conditions[at].get("status") == "True":
            scheduled["lastTransitionTime"] = conditions[at].get("lastTransitionTime", stamp)
        conditions[at] = scheduled
    status["conditions"] = conditions
    return ""


def validate_binding(binding: Obj) -> list[Cause]:
    """ValidatePodBinding: a Binding names a Node (its target's kind empty or "Node") by name."""
    target = binding.get("target")
    if not isinstance(target, dict) or not target.get("name"):
        return [required("target.name")]
    if target.get("kind") not in (None, "", "Node"):
        return [cause("target.kind", f"Invalid value: {go_value(target.get('kind'))}: must be empty or 'Node'")]
    return []


def _init_reason(pod: Obj) -> str | None:
    """The STATUS of a pod still initializing (upstream printPod): Init:N/M, Init:<waiting reason>,
    Init:<terminated reason> (Init:Error), Init:ExitCode:N; None once initialization is done."""
    specs = {c.get("name"): c for c in (pod.get("spec") or {}).get("initContainers") or [] if isinstance(c, dict)}
    total = len(specs)
    for i, cs in enumerate((pod.get("status") or {}).get("initContainerStatuses") or []):
        if not isinstance(cs, dict) or (specs.get(cs.get("name")) or {}).get("restartPolicy") == "Always":
            continue  # a sidecar does not hold initialization up
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(terminated, dict) and terminated.get("exitCode", 0) == 0:
            continue
        if isinstance(terminated, dict):
            if terminated.get("reason"):
                return "Init:" + terminated["reason"]
            if terminated.get("signal"):
                return f"Init:Signal:{terminated['signal']}"
            return f"Init:ExitCode:{terminated.get('exitCode', 0)}"
        if isinstance(waiting, dict) and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return "Init:" + waiting["reason"]
        return f"Init:{i}/{total}"
    return None


def pod_display_status(pod: Obj) -> str:
    """The STATUS column as kubectl prints it: a waiting/terminated reason wins over the phase."""
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    if any(isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in status.get("conditions") or []):
        reason = "SchedulingGated"
    initializing = _init_reason(pod)
    if initializing is not None and not any(isinstance(c, dict) and c.get("type") == "Initialized" and
                                            c.get("status") == "True" for c in status.get("conditions") or []):
        reason = initializing
    else:
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            if state.get("waiting", {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif state.get("terminated"):
                term = state["terminated"]
                reason = term.get("reason") or (f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode', 0)}")
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
        if reason == "Completed" and has_running:  # a container still runs: the pod is not done
            ready = any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
                        for c in status.get("conditions") or [])
            reason = "Running" if ready else "NotReady"
    if pod.get("metadata", {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _ready(pod: Obj) -> str:
    """READY: ready app containers and started, ready sidecars, of the app containers and sidecars."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    sidecar_names = {c.get("name") for c in spec.get("initContainers") or []
                     if isinstance(c, dict) and c.get("restartPolicy") == "Always"}
    sidecars = [s for s in status.get("initContainerStatuses") or [] if isinstance(s, dict)
                and s.get("name") in sidecar_names]
    ready = sum(1 for s in sidecars if s.get("started") and s.get("ready"))
    ready += sum(1 for s in status.get("containerStatuses") or [] if isinstance(s, dict) and s.get("ready"))
    return f"{ready}/{len(spec.get('containers') or []) + len(sidecar_names)}"


def pod_restarts(pod: Obj) -> int:
    """The app containers' restarts; while the pod initializes, the init containers'."""
    status = pod.get("status") or {}
    if _init_reason(pod) is not None:
        return sum(int(s.get("restartCount") or 0) for s in status.get("initContainerStatuses") or [])
    return sum(int(s.get("restartCount") or 0) for s in status.get("containerStatuses") or [])


def pod_cells(pod: Obj, now: float) -> list[Any]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    gates = spec.get("readinessGates") or []
    return [pod["metadata"]["name"], _ready(pod), pod_display_status(pod), pod_restarts(pod), age(pod, now),
            status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", f"{len(gates)}" if gates else "<none>"]


POD = Kind(
    group="", version="v1", kind="Pod", plural="pods", namespaced=True,
    definition="io.k8s.api.core.v1.Pod", short_names=("po",), categories=("all",),
    subresources=("status", "binding", "log", "exec", "attach", "portforward", "eviction"),
    actions={"eviction": EVICTION},  # POST policy/v1 Eviction: a delete that asks the disruption budget
    defaults=pod_defaults, validate=validate_pod, validate_update=validate_pod_update,
    prepare_for_create=prepare_pod_for_create, prepare_for_update=prepare_pod_for_update, bind=bind_pod,
    validate_binding=validate_binding,
    connect=POD_CONNECT,  # log, exec, attach, portforward: through the pod's Node's kubelet
    admit=admit_pod,  # the ServiceAccount admission (control.kinds.serviceaccounts)
    deletion=Deletion(grace_period=pod_grace_period, returns_object=True),
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
