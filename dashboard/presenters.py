"""Turning hub objects into the small view models the page draws, and the page's words.

Guarantees:
- Every presenter is a pure function of one object (no I/O, no clock): the same object always
  gives the same view model, and a view model carries only what the page draws (so 1,000 pods
  cost kilobytes, not megabytes, on the websocket).
- `change_item` keeps every change of every kind (the version log shows them all) and attaches a
  view model only for the kinds the panels draw: the built-in ones of `PRESENTERS` (keyed by
  plural) and every custom kind (keyed "<group>/<plural>", view models from `dashboard.custom`).
- A Secret's values never reach the page: its view model (`dashboard.configs.secret_vm`) holds
  its key names only; a ConfigMap's holds its key names too (the supervisor's own ConfigMap is
  the spokes' desired states instead).
- A pod's STATUS and RESTARTS are the hub's table converter's (`control.kinds.pods`), so a chip
  reads as `kubectl get pods` does.
- The page's words live in `dashboard.words`.
"""

from __future__ import annotations

from typing import Any, Callable

from control.kinds.meta import (condition_status as _condition, get_condition as _get_condition, metadata as _meta,
                                owner_name as _owner, parse_time as _parse_time)
from control.kinds import spokes
from control.kinds.core import service_port_text
from control.kinds.pods import pod_display_status, pod_restarts
from control.kinds.spokes import spoke_name
from dashboard import configs, custom, policies, sets

Obj = dict[str, Any]
SPOKES_CONFIGMAP = (spokes.NAMESPACE, spokes.NAME)
CRASH_ANNOTATION = "kubekitchen.dev/crash-after"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"


def _key(obj: Obj) -> str:
    meta = _meta(obj)
    return f"{meta['namespace']}/{meta.get('name', '')}" if meta.get("namespace") else meta.get("name", "")


def _base(obj: Obj) -> Obj:
    meta = _meta(obj)
    return {"key": _key(obj), "ns": meta.get("namespace", ""), "name": meta.get("name", "")}


def pod_status(pod: Obj) -> str:
    """What `kubectl get pods` prints in STATUS (Init:1/2, ImagePullBackOff, OOMKilled, Completed,
    Terminating, ...): the hub's own table converter, not a copy of it."""
    return pod_display_status(pod)


# The kinds that own pods, as a chip names them (kubectl's short names).
OWNER_SHORT = {"ReplicaSet": "rs", "Job": "job", "StatefulSet": "sts", "DaemonSet": "ds", "ReplicationController": "rc"}


def controller_of(obj: Obj) -> tuple[str, str]:
    """(kind, name) of the object's controller: the ownerReference with `controller: true`, else its
    first owner (as kubectl's "Controlled By" falls back), else ("", "")."""
    refs = [ref for ref in _meta(obj).get("ownerReferences") or [] if isinstance(ref, dict)]
    ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
    return (str(ref.get("kind", "")), str(ref.get("name", ""))) if ref else ("", "")


def short_image(image: str) -> str:
    """An image as a chip shows it: no registry or path, a digest cut to 7 hex digits
    ("registry.k8s.io/library/nginx:1.25" -> "nginx:1.25", "x@sha256:0123abcd..." -> "x@0123abc")."""
    name, _, digest = image.partition("@")
    short = name.rsplit("/", 1)[-1]
    if digest:
        short += "@" + digest.split(":", 1)[-1][:7]
    return short


def pod_image(pod: Obj) -> str:
    """The pod's first container's image, short, and "+N" for the N other containers."""
    containers = [c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)]
    if not containers:
        return ""
    first = short_image(str(containers[0].get("image") or ""))
    if not first:
        return ""  # nothing to name (a pod without images is refused by the hub; only test data has one)
    more = f" +{len(containers) - 1}" if len(containers) > 1 else ""
    return first + more


def _ready_since(pod: Obj) -> str:
    """When a Ready pod last became Ready ("" when it is not): a Warning from before that moment
    (a FailedScheduling while its claim was being bound) is history, not its state."""
    ready = _get_condition(pod, "Ready")
    return str(ready.get("lastTransitionTime") or "") if ready and ready.get("status") == "True" else ""


def pod_vm(pod: Obj) -> Obj:
    status = pod.get("status") or {}
    owner_kind, owner = controller_of(pod)
    restarts = pod_restarts(pod)  # as kubectl's RESTARTS: the init containers' while it initializes
    annotations = _meta(pod).get("annotations") or {}
    return {**_base(pod), "node": (pod.get("spec") or {}).get("nodeName", ""),
            "phase": status.get("phase") or "Pending", "status": pod_status(pod),
            "ready": _condition(pod, "Ready") == "True", "readySince": _ready_since(pod), "restarts": restarts,
            "terminating": bool(_meta(pod).get("deletionTimestamp")), "ip": status.get("podIP", ""),
            "owner": owner, "ownerKind": OWNER_SHORT.get(owner_kind, owner_kind.lower()),
            "image": pod_image(pod), "crashing": CRASH_ANNOTATION in annotations,
            "containers": [str((c or {}).get("name", "")) for c in (pod.get("spec") or {}).get("containers") or []],
            "uses": configs.pod_uses(pod)}


def node_vm(node: Obj) -> Obj:
    ready = _condition(node, "Ready")
    return {**_base(node), "ready": {"True": True, "False": False}.get(ready or "", None),
            "unschedulable": bool((node.get("spec") or {}).get("unschedulable"))}


def deployment_vm(deployment: Obj) -> Obj:
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    return {**_base(deployment), "desired": int(spec.get("replicas", 1) or 0),
            "current": int(status.get("replicas") or 0), "ready": int(status.get("readyReplicas") or 0),
            "updated": int(status.get("updatedReplicas") or 0),
            "available": int(status.get("availableReplicas") or 0)}


def replicaset_vm(replicaset: Obj) -> Obj:
    spec, status = replicaset.get("spec") or {}, replicaset.get("status") or {}
    return {**_base(replicaset), "owner": _owner(replicaset, "Deployment"),
            "revision": (_meta(replicaset).get("annotations") or {}).get(REVISION_ANNOTATION, ""),
            "desired": int(spec.get("replicas", 1) or 0), "current": int(status.get("replicas") or 0),
            "ready": int(status.get("readyReplicas") or 0)}


def replicationcontroller_vm(controller: Obj) -> Obj:
    """`kubectl get rc`: DESIRED, CURRENT, READY (its pods name it as owner: "rc/NAME")."""
    spec, status = controller.get("spec") or {}, controller.get("status") or {}
    return {**_base(controller), "desired": int(spec.get("replicas", 1) or 0),
            "current": int(status.get("replicas") or 0), "ready": int(status.get("readyReplicas") or 0)}


def service_vm(service: Obj) -> Obj:
    spec, status = service.get("spec") or {}, service.get("status") or {}
    ports = [service_port_text(p) for p in spec.get("ports") or [] if isinstance(p, dict)]
    selector = spec.get("selector") or {}
    ingress = ((status.get("loadBalancer") or {}).get("ingress")) or []
    external = [str(i.get("ip") or i.get("hostname")) for i in ingress if isinstance(i, dict) and (i.get("ip") or i.get("hostname"))]
    external += [str(ip) for ip in spec.get("externalIPs") or [] if str(ip) not in external]
    return {**_base(service), "type": spec.get("type", "ClusterIP"), "clusterIP": spec.get("clusterIP", ""),
            "externalIPs": external, "externalName": spec.get("externalName", ""),
            "ports": ports, "selector": ",".join(f"{k}={v}" for k, v in sorted(selector.items()))}


def _cpu_target(spec: Obj) -> int | None:
    for metric in spec.get("metrics") or []:
        resource = (metric or {}).get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            value = (resource.get("target") or {}).get("averageUtilization")
            return int(value) if value is not None else None
    return None


def _cpu_current(status: Obj) -> int | None:
    for metric in status.get("currentMetrics") or []:
        resource = (metric or {}).get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            value = (resource.get("current") or {}).get("averageUtilization")
            return int(value) if value is not None else None
    return None


def hpa_vm(hpa: Obj) -> Obj:
    """An autoscaling/v2 HorizontalPodAutoscaler as `kubectl get hpa` reads it."""
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    target = spec.get("scaleTargetRef") or {}
    conditions = [{"type": c.get("type", ""), "status": c.get("status", ""), "reason": c.get("reason", "")}
                  for c in status.get("conditions") or [] if isinstance(c, dict)]
    return {**_base(hpa), "target": f"{target.get('kind', '')}/{target.get('name', '')}",
            "targetCPU": _cpu_target(spec), "currentCPU": _cpu_current(status),
            "min": int(spec.get("minReplicas") or 1), "max": int(spec.get("maxReplicas") or 0),
            "current": int(status.get("currentReplicas") or 0), "desired": int(status.get("desiredReplicas") or 0),
            "lastScale": status.get("lastScaleTime") or "", "conditions": conditions}


def endpoints_vm(endpoints: Obj) -> Obj:
    addresses = []
    for subset in endpoints.get("subsets") or []:
        for field, ready in (("addresses", True), ("notReadyAddresses", False)):
            for address in (subset or {}).get(field) or []:
                target = (address or {}).get("targetRef") or {}
                addresses.append({"ip": address.get("ip", ""), "pod": target.get("name", ""), "ready": ready})
    return {**_base(endpoints), "addresses": addresses}


def _duration(start: Any, end: Any) -> int | None:
    """Whole seconds from one RFC 3339 time to another (None unless both are there)."""
    began, ended = _parse_time(start), _parse_time(end)
    return int(ended - began) if began is not None and ended is not None else None


def job_vm(job: Obj) -> Obj:
    """A batch/v1 Job as `kubectl get jobs` reads it: completions (succeeded of wanted), failed
    pods, active pods, the outcome (Complete / Failed / Suspended / Running) and the duration
    (completion − start; None while it runs: the page has no clock to count it)."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    completions = spec.get("completions")
    wanted = int(completions) if completions is not None else 1  # a work queue: kubectl prints "n/1"
    outcome = "Running"
    for condition in ("Complete", "Failed", "Suspended"):
        if _condition(job, condition) == "True":
            outcome = condition
            break
    return {**_base(job), "completions": wanted, "succeeded": int(status.get("succeeded") or 0),
            "failed": int(status.get("failed") or 0), "active": int(status.get("active") or 0),
            "backoffLimit": int(spec.get("backoffLimit", 6) or 0), "outcome": outcome,
            "owner": _owner(job, "CronJob"), "start": status.get("startTime") or "",
            "duration": _duration(status.get("startTime"), status.get("completionTime"))}


def cronjob_vm(cronjob: Obj) -> Obj:
    """A batch/v1 CronJob as `kubectl get cronjobs` reads it: schedule, suspend, active jobs, last
    schedule time, and the next run (`sets.next_run`)."""
    spec, status = cronjob.get("spec") or {}, cronjob.get("status") or {}
    return {**_base(cronjob), "schedule": str(spec.get("schedule") or ""), "timeZone": spec.get("timeZone") or "",
            "suspend": bool(spec.get("suspend")), "active": len(status.get("active") or []),
            "lastSchedule": status.get("lastScheduleTime") or "", "lastSuccess": status.get("lastSuccessfulTime") or "",
            "next": sets.next_run(cronjob)}


def event_vm(event: Obj) -> Obj:
    """A core/v1 Event as `kubectl get events` reads it: type, reason, the object it concerns,
    message, count, when it was last seen and who reported it."""
    involved = event.get("involvedObject") or {}
    series = event.get("series") or {}
    source = event.get("source") or {}
    last = event.get("lastTimestamp") or series.get("lastObservedTime") or event.get("eventTime") \
        or _meta(event).get("creationTimestamp") or ""
    return {**_base(event), "type": event.get("type") or "Normal", "reason": event.get("reason") or "",
            "message": event.get("message") or "", "count": int(event.get("count") or series.get("count") or 1),
            "object": {"kind": involved.get("kind") or "", "name": involved.get("name") or "",
                       "ns": involved.get("namespace") or ""},
            "last": last, "source": event.get("reportingController") or source.get("component") or "",
            "rv": int(_meta(event).get("resourceVersion") or 0)}


def configmap_or_spokes(configmap: Obj) -> Obj:
    """A ConfigMap's view model; the supervisor's own ConfigMap is the spokes' desired states."""
    meta = _meta(configmap)
    if is_spokes_configmap("configmaps", meta.get("namespace", ""), meta.get("name", "")):
        return spokes_vm(configmap)
    return configs.configmap_vm(configmap)


def spokes_vm(configmap: Obj) -> Obj:
    """The desired state of each spoke, by spoke name, from the supervisor's ConfigMap."""
    data = configmap.get("data") or {}
    return {"key": _key(configmap), "states": {spoke_name(str(k)): str(v) for k, v in data.items()}}


PRESENTERS: dict[str, Callable[[Obj], Obj]] = {
    "pods": pod_vm, "nodes": node_vm, "deployments": deployment_vm, "replicasets": replicaset_vm,
    "services": service_vm, "endpoints": endpoints_vm, "horizontalpodautoscalers": hpa_vm,
    "customresourcedefinitions": custom.crd_vm, "jobs": job_vm, "cronjobs": cronjob_vm, "events": event_vm,
    "daemonsets": sets.daemonset_vm, "statefulsets": sets.statefulset_vm, "persistentvolumeclaims": sets.pvc_vm,
    "persistentvolumes": sets.pv_vm, "poddisruptionbudgets": sets.pdb_vm,
    "replicationcontrollers": replicationcontroller_vm,
    "configmaps": configmap_or_spokes, "secrets": configs.secret_vm,
    "networkpolicies": policies.networkpolicy_vm,  # empty until the hub serves the kind
}
# The snapshot sends at most this many Events (the newest): the panel shows no more, and an old
# cluster's thousands of Events must not cost the page's first message megabytes.
SNAPSHOT_EVENTS = 100
KINDS = {"pods": "Pod", "nodes": "Node", "deployments": "Deployment", "replicasets": "ReplicaSet",
         "services": "Service", "endpoints": "Endpoints", "events": "Event", "leases": "Lease",
         "configmaps": "ConfigMap", "secrets": "Secret", "namespaces": "Namespace",
         "horizontalpodautoscalers": "HorizontalPodAutoscaler",
         "customresourcedefinitions": "CustomResourceDefinition", "jobs": "Job", "cronjobs": "CronJob",
         "daemonsets": "DaemonSet", "statefulsets": "StatefulSet", "persistentvolumeclaims": "PersistentVolumeClaim",
         "persistentvolumes": "PersistentVolume", "poddisruptionbudgets": "PodDisruptionBudget",
         "replicationcontrollers": "ReplicationController", "networkpolicies": "NetworkPolicy"}


def is_spokes_configmap(resource: str, namespace: str, name: str) -> bool:
    return resource == "configmaps" and (namespace, name) == SPOKES_CONFIGMAP


def present(resource: str, obj: Obj) -> Obj | None:
    """The view model of one object of `resource` (a plural, or "<group>/<plural>" for a custom
    kind), or None when the page does not draw that kind."""
    presenter = PRESENTERS.get(resource)
    if presenter is not None:
        return presenter(obj)
    if "/" in resource:
        return custom.object_vm(resource, obj)
    return None


def snapshot(body: Obj) -> Obj:
    """The hub's snapshot as view models, keyed by resource: every built-in kind the page draws
    (empty when the hub does not serve it) and every custom kind the hub sent."""
    objects = body.get("objects") or {}
    keys = [*PRESENTERS, *(key for key in objects if "/" in key)]
    drawn = {key: [vm for vm in (present(key, o) for o in objects.get(key) or []) if vm is not None] for key in keys}
    drawn["events"] = sorted(drawn["events"], key=lambda vm: vm["rv"], reverse=True)[:SNAPSHOT_EVENTS]
    return {"revision": int(body.get("revision") or 0), "objects": drawn}


def change_item(change: Obj) -> Obj:
    """One committed change as a line of the version log, with a view model when it is drawn."""
    plural, group = change.get("resource", ""), change.get("group", "")
    resource = f"{group}/{plural}" if custom.is_custom_group(group) else plural
    obj = change.get("object") or {}
    return {"rv": int(change.get("revision") or 0), "type": change.get("type", ""), "resource": resource,
            "kind": obj.get("kind") or KINDS.get(resource, resource), "ns": change.get("namespace", ""),
            "name": change.get("name", ""), "actor": change.get("actor", ""), "vm": present(resource, obj)}
