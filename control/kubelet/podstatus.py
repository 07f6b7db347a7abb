"""A pod record rendered as the pod's `status`, and a status read back into a record.

Guarantees: `render_status` is pure and stable: called twice on the same record and moment it
gives the same dict, and it keeps every condition's lastTransitionTime while its status holds, so
an unchanged pod is never written again. It keeps what others own (PodScheduled, DisruptionTarget,
nominatedNodeName, an eviction's reason/message) and replaces what the kubelet owns. Every
containerStatus carries the fields the official Python client requires (name, image, imageID,
ready, restartCount). Init containers have their initContainerStatuses (ready once completed) and
the Initialized condition (False, ContainersNotInitialized, until they have all completed);
containers not started yet in such a pod wait with reason PodInitializing, as upstream's.
`record_from_status` adopts a pod a previous kubelet ran, so a restarted
kubelet carries on instead of starting the pod over.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from control.kinds.meta import format_time, new_condition, parse_time
from control.kinds.pod_resources import pod_qos
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import Container, Run, go_duration, new_container, restarts
from control.kubelet.initcontainers import completed, init_policy, sidecars
from control.kubelet.podstate import PodRecord, pod_phase, readiness, restart_policy
from control.kubelet.probestate import has_started

Obj = dict[str, Any]
OWNED_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
RUNTIME = "kitchen://"


def image_id(image: str) -> str:
    repository = image.split("@", 1)[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return f"docker-pullable://{repository}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def _terminated(run: Run) -> Obj:
    return {"exitCode": run.exit_code if run.exit_code is not None else 0, "reason": run.reason,
            **({"message": run.message} if run.message else {}),
            "startedAt": format_time(run.started_at), "finishedAt": format_time(run.finished_at or run.started_at),
            "containerID": RUNTIME + run.container_id}


def _state(c: Container, pod_meta: Obj, creating: str = "ContainerCreating") -> tuple[Obj, Obj]:
    """(state, lastState) of a container as Kubernetes shows them (`creating`: the waiting reason
    of a container not started yet: PodInitializing in a pod with init containers)."""
    state = c.state
    last = {"terminated": _terminated(c.previous)} if c.previous else {}
    if c.hold is not None and state in ("creating", "backoff"):
        reason, message = c.hold
        return {"waiting": {"reason": reason, **({"message": message} if message else {})}}, last
    if state == "creating":
        return {"waiting": {"reason": creating}}, last
    if state == "backoff":
        message = (f"back-off {go_duration(c.backoff)} restarting failed container={c.name} "
                   f"pod={pod_meta.get('name')}_{pod_meta.get('namespace')}({pod_meta.get('uid')})")
        return {"waiting": {"reason": "CrashLoopBackOff", "message": message}}, last
    if state == "running" and c.current:
        return {"running": {"startedAt": format_time(c.current.started_at)}}, last
    if c.current:
        return {"terminated": _terminated(c.current)}, last
    if c.previous:  # stopped while waiting out a back-off
        return {"terminated": _terminated(c.previous)}, {}
    return {"waiting": {"reason": creating}}, {}


def container_status(c: Container, image: str, ready: bool, pod_meta: Obj, *, started: bool | None = None,
                     creating: str = "ContainerCreating") -> Obj:
    state, last_state = _state(c, pod_meta, creating)
    run = c.last_run
    status: Obj = {"name": c.name, "image": image, "imageID": image_id(image) if run else "",
                   "ready": ready, "restartCount": c.restart_count,
                   "started": c.state == "running" if started is None else started,
                   "state": state, "lastState": last_state}
    if run:
        status["containerID"] = RUNTIME + run.container_id
    return status


def qos_class(pod: Obj) -> str:
    return pod_qos(pod)


def _condition(old: dict[str, Obj], type_: str, ok: bool, now: float, reason: str = "", message: str = "") -> Obj:
    reasons = {"reason": reason, "message": message} if not ok and reason else {}
    return new_condition(type_, "True" if ok else "False", now, old.get(type_), **reasons)


def render_status(pod: Obj, record: PodRecord, now: float) -> Obj:
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    status = copy.deepcopy(pod.get("status") or {})
    old = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    phase = pod_phase(record, sidecars(pod))
    ready = readiness(pod, record, now)
    images = {c.get("name"): c.get("image", "") for c in (spec.get("initContainers") or []) +
              (spec.get("containers") or []) if isinstance(c, dict)}
    specs = {c.get("name"): c for c in spec.get("containers") or [] if isinstance(c, dict)}
    creating = "PodInitializing" if record.init_containers else "ContainerCreating"
    pending_init = [c.name for c in record.init_containers if not (completed(c) or (c.name in sidecars(pod) and
                                                                       c.last_run is not None))]
    init_reason = {"reason": "PodCompleted"} if phase in ("Succeeded", "Failed") else {
        "reason": "ContainersNotInitialized", "message": f"containers with incomplete status: [{' '.join(pending_init)}]"}
    unready = [c.name for c in record.init_containers if c.name in sidecars(pod) and c.state != "running"]
    unready += [name for name, ok in ready.items() if not ok]  # sidecars count, as upstream's
    all_ready = not unready and phase == "Running"
    if phase in ("Succeeded", "Failed"):
        reason, message = "PodCompleted", ""
    else:
        reason, message = "ContainersNotReady", f"containers with unready status: [{' '.join(unready)}]"
    conditions = [
        _condition(old, "PodReadyToStartContainers", record.sandbox_ready, now),
        _condition(old, "Initialized", not pending_init, now, **init_reason),
        _condition(old, "Ready", all_ready, now, reason, message),
        _condition(old, "ContainersReady", all_ready, now, reason, message),
        old.get("PodScheduled") or {"type": "PodScheduled", "status": "True",
                                    "lastTransitionTime": format_time(record.started_at)},
    ]
    conditions += [c for t, c in old.items() if t not in OWNED_CONDITIONS and t != "PodScheduled"]
    status.update({
        "phase": phase, "conditions": conditions,
        "hostIP": record.host_ip, "hostIPs": [{"ip": record.host_ip}],
        "startTime": format_time(record.started_at), "qosClass": qos_class(pod),
        "containerStatuses": [container_status(c, images.get(c.name) or c.image, ready[c.name], meta, creating=creating,
                                               started=has_started(specs.get(c.name) or {}, c, record.probes))
                              for c in record.containers],
    })
    if record.init_containers:  # an init container is ready once it has completed (a sidecar: while it runs)
        status["initContainerStatuses"] = [
            container_status(c, images.get(c.name) or c.image, completed(c) or (c.name in sidecars(pod) and
                             c.state == "running"), meta, creating="PodInitializing") for c in record.init_containers]
    if record.sandbox_ready and record.pod_ip:
        status["podIP"], status["podIPs"] = record.pod_ip, [{"ip": record.pod_ip}]
    else:
        status.pop("podIP", None), status.pop("podIPs", None)
    return status


def _run_from(state: Obj, number: int, container_id: str = "") -> Run | None:
    running, terminated = state.get("running"), state.get("terminated")
    detail = running or terminated
    if not isinstance(detail, dict):
        return None
    started = parse_time(detail.get("startedAt"))
    if started is None:
        return None
    cid = str(detail.get("containerID") or container_id).removeprefix(RUNTIME)
    if running is not None:
        return Run(number=number, container_id=cid, started_at=started)
    return Run(number=number, container_id=cid, started_at=started,
               finished_at=parse_time(terminated.get("finishedAt")) or started,
               exit_code=int(terminated.get("exitCode") or 0), oom_killed=terminated.get("reason") == "OOMKilled")


def _adopt(spec: Obj, found: Obj, uid: str, policy: str, now: float, backoff: BackoffPolicy,
           default_start_delay: float) -> Container:
    name, image = spec.get("name", ""), spec.get("image", "")
    fresh = new_container(name, image, uid, now, default_start_delay)
    count = int(found.get("restartCount") or 0)
    last = _run_from(found.get("lastState") or {}, max(0, count - 1))
    run = _run_from(found.get("state") or {}, count, str(found.get("containerID") or ""))
    if run is not None and run.running:
        return Container(name, image, fresh.seed, now, 0.0, current=run, previous=last, restart_count=count)
    if run is not None and not restarts(policy, run.exit_code or 0):
        return Container(name, image, fresh.seed, now, 0.0, current=run, previous=last, restart_count=count,
                         finished=True)
    if run is not None or last is not None:  # ended, or waiting out a back-off: restart now
        return Container(name, image, fresh.seed, now, 0.0, previous=run or last, restart_count=count,
                         backoff=backoff.base, restart_at=now)
    return fresh


def record_from_status(pod: Obj, now: float, *, host_ip: str, pod_ip: str, backoff: BackoffPolicy,
                       default_start_delay: float) -> PodRecord:
    """A record for a pod found already running on this node (the kubelet was restarted); its init
    containers are adopted too (a completed one stays completed)."""
    meta, status, spec = pod.get("metadata") or {}, pod.get("status") or {}, pod.get("spec") or {}
    uid, policy = meta.get("uid", ""), restart_policy(pod)
    seen = {s.get("name"): s for s in status.get("containerStatuses") or [] if isinstance(s, dict)}
    seen_init = {s.get("name"): s for s in status.get("initContainerStatuses") or [] if isinstance(s, dict)}
    containers = tuple(_adopt(c, seen.get(c.get("name")) or {}, uid, policy, now, backoff, default_start_delay)
                       for c in spec.get("containers") or [] if isinstance(c, dict))
    inits = tuple(_adopt(c, seen_init.get(c.get("name")) or {}, uid,
                         init_policy(policy, c.get("restartPolicy") == "Always"), now, backoff, default_start_delay)
                  for c in spec.get("initContainers") or [] if isinstance(c, dict))
    started = parse_time(status.get("startTime")) or now
    return PodRecord(key=f"{meta.get('namespace')}/{meta.get('name')}", uid=uid, started_at=started,
                     host_ip=host_ip, pod_ip=pod_ip, containers=containers, init_containers=inits)
