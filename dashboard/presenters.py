"""Turning hub objects into the small view models the page draws, and the page's words.

Guarantees:
- Every presenter is a pure function of one object (no I/O, no clock): the same object always
  gives the same view model, and a view model carries only what the page draws (so 1,000 pods
  cost kilobytes, not megabytes, on the websocket).
- `change_item` keeps every change of every kind (the version log shows them all) and attaches a
  view model only for the kinds the panels draw.
- `terms()` gives each word of the picture twice, as Kubernetes names it and as the restaurant
  story of the seed articles tells it, in the active language (English or Korean).
"""

from __future__ import annotations

from typing import Any, Callable

from django.utils.translation import gettext_lazy as _

Obj = dict[str, Any]
SPOKES_CONFIGMAP = ("kube-system", "kubekitchen-spokes")
CRASH_ANNOTATION = "kubekitchen.dev/crash-after"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _key(obj: Obj) -> str:
    meta = _meta(obj)
    return f"{meta['namespace']}/{meta.get('name', '')}" if meta.get("namespace") else meta.get("name", "")


def _base(obj: Obj) -> Obj:
    meta = _meta(obj)
    return {"key": _key(obj), "ns": meta.get("namespace", ""), "name": meta.get("name", "")}


def _condition(obj: Obj, kind: str) -> str | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == kind:
            return condition.get("status")
    return None


def _owner(obj: Obj, kind: str) -> str:
    for ref in _meta(obj).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("kind") == kind:
            return ref.get("name", "")
    return ""


def pod_status(pod: Obj) -> str:
    """What `kubectl get pods` prints in STATUS: Terminating, a container's reason, or the phase."""
    if _meta(pod).get("deletionTimestamp"):
        return "Terminating"
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    for state_name in ("waiting", "terminated"):
        for status in statuses:
            state = ((status or {}).get("state") or {}).get(state_name)
            if state and state.get("reason"):
                return state["reason"]
    return (pod.get("status") or {}).get("phase") or "Pending"


def pod_vm(pod: Obj) -> Obj:
    status = pod.get("status") or {}
    restarts = sum(int((s or {}).get("restartCount") or 0) for s in status.get("containerStatuses") or [])
    annotations = _meta(pod).get("annotations") or {}
    return {**_base(pod), "node": (pod.get("spec") or {}).get("nodeName", ""),
            "phase": status.get("phase") or "Pending", "status": pod_status(pod),
            "ready": _condition(pod, "Ready") == "True", "restarts": restarts,
            "terminating": bool(_meta(pod).get("deletionTimestamp")), "ip": status.get("podIP", ""),
            "owner": _owner(pod, "ReplicaSet"), "crashing": CRASH_ANNOTATION in annotations}


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


def service_vm(service: Obj) -> Obj:
    spec = service.get("spec") or {}
    ports = [f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or [] if isinstance(p, dict)]
    selector = spec.get("selector") or {}
    return {**_base(service), "type": spec.get("type", "ClusterIP"), "clusterIP": spec.get("clusterIP", ""),
            "ports": ports, "selector": ",".join(f"{k}={v}" for k, v in sorted(selector.items()))}


def endpoints_vm(endpoints: Obj) -> Obj:
    addresses = []
    for subset in endpoints.get("subsets") or []:
        for field, ready in (("addresses", True), ("notReadyAddresses", False)):
            for address in (subset or {}).get(field) or []:
                target = (address or {}).get("targetRef") or {}
                addresses.append({"ip": address.get("ip", ""), "pod": target.get("name", ""), "ready": ready})
    return {**_base(endpoints), "addresses": addresses}


def spoke_key(spoke: str) -> str:
    """A spoke's key in the supervisor's ConfigMap (keys cannot hold a "/"): kubelet/node-1 -> kubelet.node-1."""
    return spoke.replace("/", ".", 1) if spoke.startswith("kubelet/") else spoke


def spoke_name(key: str) -> str:
    return key.replace(".", "/", 1) if key.startswith("kubelet.") else key


def spokes_vm(configmap: Obj) -> Obj:
    """The desired state of each spoke, by spoke name, from the supervisor's ConfigMap."""
    data = configmap.get("data") or {}
    return {"key": _key(configmap), "states": {spoke_name(str(k)): str(v) for k, v in data.items()}}


PRESENTERS: dict[str, Callable[[Obj], Obj]] = {
    "pods": pod_vm, "nodes": node_vm, "deployments": deployment_vm, "replicasets": replicaset_vm,
    "services": service_vm, "endpoints": endpoints_vm,
}
KINDS = {"pods": "Pod", "nodes": "Node", "deployments": "Deployment", "replicasets": "ReplicaSet",
         "services": "Service", "endpoints": "Endpoints", "events": "Event", "leases": "Lease",
         "configmaps": "ConfigMap", "namespaces": "Namespace"}


def is_spokes_configmap(resource: str, namespace: str, name: str) -> bool:
    return resource == "configmaps" and (namespace, name) == SPOKES_CONFIGMAP


def present(resource: str, obj: Obj) -> Obj | None:
    presenter = PRESENTERS.get(resource)
    if presenter is not None:
        return presenter(obj)
    meta = _meta(obj)
    if is_spokes_configmap(resource, meta.get("namespace", ""), meta.get("name", "")):
        return spokes_vm(obj)
    return None


def snapshot(body: Obj) -> Obj:
    """The hub's snapshot as view models, keyed by resource."""
    objects = body.get("objects") or {}
    return {"revision": int(body.get("revision") or 0),
            "objects": {resource: [PRESENTERS[resource](o) for o in objects.get(resource) or []]
                        for resource in PRESENTERS}}


def change_item(change: Obj) -> Obj:
    """One committed change as a line of the version log, with a view model when it is drawn."""
    resource = change.get("resource", "")
    obj = change.get("object") or {}
    return {"rv": int(change.get("revision") or 0), "type": change.get("type", ""), "resource": resource,
            "kind": obj.get("kind") or KINDS.get(resource, resource), "ns": change.get("namespace", ""),
            "name": change.get("name", ""), "actor": change.get("actor", ""), "vm": present(resource, obj)}


# --- words ---------------------------------------------------------------------------------------

TERMS: dict[str, tuple[Any, Any]] = {
    # key: (as Kubernetes names it, as the restaurant story tells it)
    "hub": (_("API server"), _("Waiter")),
    "store": (_("etcd (store)"), _("Notepad")),
    "kube-controller-manager": (_("controller-manager"), _("Cook: keeps every count")),
    "kube-scheduler": (_("scheduler"), _("Cook: picks a stove")),
    "kubelet": (_("kubelet"), _("Stove cook")),
    "kubectl": (_("kubectl"), _("Guest (kubectl)")),
    "python-client": (_("Python client"), _("Guest (Python)")),
    "dashboard": (_("dashboard"), _("This page (a guest)")),
    "dashboard/wire": (_("dashboard: wire view"), _("Listener (wire view)")),
    "supervisor": (_("supervisor"), _("Kitchen manager")),
    "unknown": (_("unknown client"), _("Unknown guest")),
    "controllers": (_("replicaset · deployment · endpoints · garbage collector · namespace · node lifecycle"),
                    _("counts dishes · follows orders · tells the counter · clears plates")),
    "pod": (_("Pod"), _("Dish")),
    "pods": (_("Pods"), _("Dishes")),
    "node": (_("Node"), _("Stove")),
    "nodes": (_("Nodes and their pods"), _("Stoves and their dishes")),
    "unscheduled": (_("Not scheduled yet"), _("Waiting for a stove")),
    "deployments": (_("Deployments and ReplicaSets"), _("Orders and their batches")),
    "deployment": (_("Deployment"), _("Order")),
    "replicaset": (_("ReplicaSet"), _("Batch")),
    "services": (_("Services and endpoints"), _("Serving counters and ready plates")),
    "service": (_("Service"), _("Serving counter")),
    "endpoints": (_("Endpoints"), _("Ready plates")),
    "log": (_("Version log"), _("The notepad, line by line")),
    "manifest": (_("Manifest (desired state)"), _("Order slip (what the guest wants)")),
    "apply": (_("Apply"), _("Hand the slip to the waiter")),
    "request": (_("request"), _("a cook or guest speaks to the waiter")),
    "watch": (_("watch event"), _("the waiter tells a cook the order changed")),
    "requests": (_("requests"), _("spoken")),
    "watches": (_("watch events"), _("told")),
    "errors": (_("errors"), _("refused")),
    "delete-pod": (_("Delete pod"), _("Drop the pasta")),
    "crash": (_("Crash container"), _("Burn the dish")),
    "cordon": (_("Cordon"), _("Close the stove")),
    "uncordon": (_("Uncordon"), _("Open the stove")),
    "stop": (_("Stop"), _("Send home")),
    "start": (_("Start"), _("Call back")),
    "stop-kubelet": (_("Stop kubelet"), _("Send the cook home")),
    "start-kubelet": (_("Start kubelet"), _("Call the cook back")),
    "scale-up": (_("Scale +1"), _("One more")),
    "scale-down": (_("Scale −1"), _("One fewer")),
    "desired": (_("desired"), _("ordered")),
    "current": (_("current"), _("cooking")),
    "ready": (_("ready"), _("garnished")),
    "revision": (_("revision"), _("slip line")),
    "wire": (_("The wire: one watch stream, byte by byte"), _("Listening in: what the waiter says, word by word")),
    "story": (_("Every component talks only to the API server; users declare, controllers reconcile."),
              _("Everyone talks only through the waiter; the kitchen always completes the order — a dropped pasta is cooked again.")),
}

STATUS_WORDS: dict[str, tuple[Any, Any]] = {
    "Pending": (_("Pending"), _("Waiting for a stove")),
    "ContainerCreating": (_("ContainerCreating"), _("Cooking")),
    "Running": (_("Running"), _("Cooked")),
    "Ready": (_("Ready"), _("Garnished")),
    "CrashLoopBackOff": (_("CrashLoopBackOff"), _("Burnt again and again")),
    "Error": (_("Error"), _("Burnt")),
    "Completed": (_("Completed"), _("Served")),
    "Succeeded": (_("Succeeded"), _("Served")),
    "Failed": (_("Failed"), _("Burnt")),
    "Terminating": (_("Terminating"), _("Being cleared away")),
}

UI_STRINGS: dict[str, Any] = {
    "connected": _("live"),
    "connecting": _("connecting…"),
    "reloading": _("history expired (410): reloading the snapshot"),
    "hub-down": _("the hub does not answer; retrying"),
    "paused": _("paused"),
    "no-pods": _("no pods"),
    "not-ready": _("NotReady"),
    "cordoned": _("cordoned"),
    "stopped": _("stopped"),
    "running": _("running"),
    "restarts": _("restarts"),
    "bytes": _("bytes"),
    "chunk": _("chunk"),
    "no-endpoints": _("no endpoints"),
    "wire-open": _("Open the stream"),
    "wire-close": _("Close the stream"),
}


def _pair(pair: tuple[Any, Any]) -> dict[str, str]:
    return {"k8s": str(pair[0]), "kitchen": str(pair[1])}


def terms() -> dict[str, Any]:
    """Every word the page's script draws with, in the active language."""
    return {"terms": {key: _pair(pair) for key, pair in TERMS.items()},
            "status": {key: _pair(pair) for key, pair in STATUS_WORDS.items()},
            "ui": {key: str(value) for key, value in UI_STRINGS.items()}}
