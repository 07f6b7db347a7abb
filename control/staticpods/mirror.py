"""Mirror pods: how the kubelet shows a static pod in the API (pkg/kubelet/pod/mirror_client.go,
pkg/kubelet/config/common.go), and the status it reports for it.

Guarantees (pure functions):
- `static_pod` is the manifest as the kubelet's file source defaults it: named `<name>-<node>`,
  its namespace "default" when the file names none, `spec.nodeName` the node, a toleration of
  every NoExecute taint, and the annotations `kubernetes.io/config.hash` (a hash of the file),
  `kubernetes.io/config.seen` (when the kubelet first read this version) and
  `kubernetes.io/config.source: file`.
- `mirror_pod` adds what `CreateMirrorPod` adds: `kubernetes.io/config.mirror` (the hash again)
  and an ownerReference to the Node (controller: true), so the pod goes with its node.
- `pod_status` turns what the container runtime knows of the one container (`ContainerView`) into
  a PodStatus with kubectl's words: Running and Ready while the process runs, `CrashLoopBackOff`,
  `ImagePullBackOff` or `ErrImagePull` while it waits, `Completed` when it was stopped on purpose;
  `restartCount` counts every start after the first.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from typing import Any

from control.kinds.meta import format_nano_time, format_time, new_controller_ref
from control.staticpods.manifests import Manifest

MIRROR = "kubernetes.io/config.mirror"
HASH = "kubernetes.io/config.hash"
SEEN = "kubernetes.io/config.seen"
SOURCE = "kubernetes.io/config.source"


def config_hash(manifest: Manifest, node: str) -> str:
    """The static pod's hash, as the kubelet derives its UID from the file and the node."""
    return hashlib.md5(f"{node}\n{manifest.path.name}\n{manifest.text}".encode()).hexdigest()


def static_pod(manifest: Manifest, node: str, seen: float) -> dict[str, Any]:
    pod = copy.deepcopy(manifest.pod)
    meta = pod.setdefault("metadata", {})
    digest = config_hash(manifest, node)
    meta["name"] = f"{manifest.name}-{node}"
    meta["namespace"] = meta.get("namespace") or "default"
    meta["annotations"] = {**(meta.get("annotations") or {}), HASH: digest, SEEN: format_nano_time(seen),
                           SOURCE: "file"}
    for key in ("uid", "resourceVersion", "creationTimestamp", "generateName", "ownerReferences"):
        meta.pop(key, None)
    spec = pod.setdefault("spec", {})
    spec["nodeName"] = node
    tolerations = spec.setdefault("tolerations", [])
    if {"operator": "Exists", "effect": "NoExecute"} not in tolerations:
        tolerations.append({"operator": "Exists", "effect": "NoExecute"})
    pod.pop("status", None)
    return pod


def mirror_pod(manifest: Manifest, node: str, node_uid: str, seen: float) -> dict[str, Any]:
    pod = static_pod(manifest, node, seen)
    meta = pod["metadata"]
    meta["annotations"][MIRROR] = meta["annotations"][HASH]
    node_object = {"metadata": {"name": node, "uid": node_uid}}  # upstream's: controller, no blockOwnerDeletion
    meta["ownerReferences"] = [new_controller_ref(node_object, api_version="v1", kind="Node", block=None)]
    return pod


@dataclass(frozen=True)
class ContainerView:
    """One container as the runtime last saw it. `state`: running, waiting or stopped."""

    state: str
    restarts: int = 0
    started_at: float | None = None  # the current run's start (running), else None
    reason: str = ""  # waiting: CrashLoopBackOff, ImagePullBackOff, ErrImagePull, ContainerCreating
    message: str = ""
    last_exit_code: int | None = None  # the previous run's end, when there was one
    last_reason: str = ""
    last_message: str = ""
    last_started_at: float | None = None
    last_finished_at: float | None = None


def _terminated(code: int, reason: str, message: str, started: float | None, finished: float | None) -> dict[str, Any]:
    state: dict[str, Any] = {"exitCode": code, "reason": reason}
    if message:
        state["message"] = message
    if started is not None:
        state["startedAt"] = format_time(started)
    if finished is not None:
        state["finishedAt"] = format_time(finished)
    return state


def pod_status(pod: dict[str, Any], view: ContainerView, pod_start: float, host_ip: str, now: float) -> dict[str, Any]:
    container = pod["spec"]["containers"][0]
    ready = view.state == "running"
    if view.state == "running":
        state: dict[str, Any] = {"running": {"startedAt": format_time(view.started_at or now)}}
    elif view.state == "stopped":
        state = {"terminated": _terminated(0, "Completed", "", view.last_started_at, view.last_finished_at)}
    else:
        state = {"waiting": {"reason": view.reason, **({"message": view.message} if view.message else {})}}
    last: dict[str, Any] = {}
    if view.last_exit_code is not None and view.state != "stopped":
        last = {"terminated": _terminated(view.last_exit_code, view.last_reason or "Error", view.last_message,
                                          view.last_started_at, view.last_finished_at)}
    flag = "True" if ready else "False"
    stamp = format_time(now)
    conditions = [{"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": format_time(pod_start)},
                  {"type": "Initialized", "status": "True", "lastTransitionTime": format_time(pod_start)},
                  {"type": "Ready", "status": flag, "lastTransitionTime": stamp},
                  {"type": "ContainersReady", "status": flag, "lastTransitionTime": stamp},
                  {"type": "PodScheduled", "status": "True", "lastTransitionTime": format_time(pod_start)}]
    if not ready:
        why = f"containers with unready status: [{container['name']}]"
        for condition in conditions[2:4]:
            condition.update(reason="ContainersNotReady", message=why)
    return {"phase": "Running", "conditions": conditions, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "podIP": host_ip, "podIPs": [{"ip": host_ip}], "startTime": format_time(pod_start),
            "qosClass": "Burstable",
            "containerStatuses": [{"name": container["name"], "image": container.get("image", ""),
                                   "imageID": "", "ready": ready, "started": ready, "restartCount": view.restarts,
                                   "state": state, "lastState": last,
                                   **({"containerID": _container_id(pod, view)} if view.state == "running" else {})}]}


def _container_id(pod: dict[str, Any], view: ContainerView) -> str:
    seed = f"{pod['metadata']['name']}/{view.restarts}/{view.started_at}"
    return f"containerd://{hashlib.sha256(seed.encode()).hexdigest()}"


def stripped_status(status: dict[str, Any]) -> Any:
    """A status without its conditions' transition times: what tells one status from another."""
    plain = copy.deepcopy(status or {})
    for condition in plain.get("conditions") or []:
        condition.pop("lastTransitionTime", None)
    return plain


def same_status(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal but for the Ready conditions' transition times (a status is written only on change)."""
    return stripped_status(a) == stripped_status(b)
