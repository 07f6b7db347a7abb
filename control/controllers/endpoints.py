"""The Endpoints controller: every Service with a selector has an Endpoints object of the same
name listing the pods behind it.

Guarantees (kube-controller-manager's endpoint controller):
- Pods that match the selector, have a podIP, are not terminating and not finished are listed:
  Ready ones (condition Ready=True, or all of them with publishNotReadyAddresses) under
  `addresses`, the others under `notReadyAddresses`, each `{ip, nodeName, targetRef}`, with
  `hostname` when the pod's spec.subdomain names the Service (a StatefulSet's pods).
- Ports come from the Service: `port` is the resolved targetPort (a number, or a named
  containerPort looked up in each pod; a pod without that port is left out of that port's
  subset); pods with the same ports share a subset; addresses are sorted by IP.
- The Endpoints object is created, replaced only when its subsets or labels differ (with its
  resourceVersion), and deleted when its Service is. Services without a selector are left
  alone (their Endpoints belong to the user).
Not done: EndpointSlices, the last-change-trigger-time annotation.
"""

from __future__ import annotations

import copy
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import ENDPOINTS, PODS, SERVICES, key_of
from control.client.runner import DONE, Result, Runner, drop
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, pod_ready, terminating, uid_of
from control.kinds.meta import labels_of, metadata, spec_selector
from control.kinds.selectors import LabelSelector


def service_selector(svc: Obj) -> LabelSelector | None:
    """The Service's selector; None when it has none (the Service is not ours to fill). A Service
    selects by a plain label map, which is a LabelSelector's matchLabels: the object layer's one
    selector reading (`spec_selector`, a broken one matching nothing) reads it as such."""
    selector = (svc.get("spec") or {}).get("selector")
    return spec_selector({"spec": {"selector": {"matchLabels": selector}}}) if selector else None


def resolve_port(service_port: dict[str, Any], pod: Obj) -> int | None:
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol") or "TCP"
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return port.get("containerPort")
    return None


def address_of(pod: Obj, svc: Obj | None = None) -> dict[str, Any]:
    address: dict[str, Any] = {"ip": (pod.get("status") or {}).get("podIP")}
    pod_spec = pod.get("spec") or {}
    if svc is not None and pod_spec.get("hostname") and pod_spec.get("subdomain") == metadata(svc).get("name") \
            and metadata(svc).get("namespace") == metadata(pod).get("namespace"):
        address["hostname"] = pod_spec["hostname"]  # upstream's ShouldSetHostname: DNS names web-0.web.ns.svc
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        address["nodeName"] = node
    address["targetRef"] = {"kind": "Pod", "namespace": metadata(pod).get("namespace", ""), "name": metadata(pod)["name"],
                            "uid": uid_of(pod)}
    return address


def listed(pod: Obj) -> bool:
    return (bool((pod.get("status") or {}).get("podIP")) and not terminating(pod)
            and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))


def compute_subsets(svc: Obj, pods: list[Obj]) -> list[dict[str, Any]]:
    """Subsets from the pods behind `svc`, grouped by identical port lists, in a stable order."""
    spec = svc.get("spec") or {}
    publish_all = bool(spec.get("publishNotReadyAddresses"))
    groups: dict[tuple, dict[str, list]] = {}
    for pod in pods:
        if not listed(pod):
            continue
        ports = []
        for sp in spec.get("ports") or []:
            number = resolve_port(sp, pod)
            if number is None:
                continue
            port = {"port": number, "protocol": sp.get("protocol") or "TCP"}
            if sp.get("name"):
                port["name"] = sp["name"]
            ports.append(port)
        if spec.get("ports") and not ports:
            continue
        signature = tuple(sorted((p.get("name", ""), p["port"], p["protocol"]) for p in ports))
        group = groups.setdefault(signature, {"ports": ports, "addresses": [], "notReadyAddresses": []})
        ready = publish_all or pod_ready(pod)
        group["addresses" if ready else "notReadyAddresses"].append(address_of(pod, svc))
    subsets = []
    for signature in sorted(groups):
        group = groups[signature]
        subset: dict[str, Any] = {}
        for field in ("addresses", "notReadyAddresses"):
            if group[field]:
                subset[field] = sorted(group[field], key=lambda a: (a["ip"], a["targetRef"]["uid"]))
        if group["ports"]:
            subset["ports"] = sorted(group["ports"], key=lambda p: (p.get("name", ""), p["port"], p["protocol"]))
        subsets.append(subset)
    return subsets


def pod_handlers(services: Informer, queue: WorkQueue) -> Handlers:
    """Pod handlers that queue every Service selecting the pod (before and after a relabel)."""
    def changed(pod: Obj) -> None:
        for svc in services.cache.by_index("namespace", metadata(pod).get("namespace", "")):
            selector = service_selector(svc)
            if selector is not None and selector.matches(labels_of(pod)):
                queue.add(key_of(svc))

    def updated(old: Obj, new: Obj) -> None:
        if labels_of(old) != labels_of(new):
            changed(old)
        changed(new)

    return Handlers(on_add=changed, on_update=updated, on_delete=changed)


class EndpointsController:
    def __init__(self, client: Any, services: Informer, pods: Informer, endpoints: Informer, *, clock: Clock):
        self.client, self.services, self.pods, self.endpoints = client, services, pods, endpoints
        self.queue = WorkQueue(clock=clock)
        services.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                       on_delete=self._enqueue))
        pods.add_handlers(pod_handlers(services, self.queue))
        endpoints.add_handlers(Handlers(on_delete=self._enqueue))

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    async def reconcile(self, key: str) -> Result:
        svc = self.services.cache.get(key)
        current = self.endpoints.cache.get(key)
        if svc is None:
            if current is not None:
                try:
                    await self.client.delete(ENDPOINTS, metadata(current)["name"], metadata(current)["namespace"])
                except errors.NotFound:
                    pass
            return DONE
        selector = service_selector(svc)
        if selector is None:
            return DONE
        pods = [p for p in self.pods.cache.by_index("namespace", metadata(svc)["namespace"]) if selector.matches(labels_of(p))]
        subsets = compute_subsets(svc, pods)
        labels = dict(labels_of(svc))
        if (svc.get("spec") or {}).get("clusterIP") == "None":
            labels["service.kubernetes.io/headless"] = ""
        try:
            if current is None:
                body = {"apiVersion": "v1", "kind": "Endpoints",
                        "metadata": {"name": metadata(svc)["name"], "namespace": metadata(svc)["namespace"], "labels": labels},
                        "subsets": subsets}
                await self.client.create(ENDPOINTS, body, metadata(svc)["namespace"])
            elif (current.get("subsets") or []) != subsets or labels_of(current) != labels:
                body = copy.deepcopy(current)
                body["subsets"] = subsets
                body["metadata"]["labels"] = labels
                await self.client.replace(ENDPOINTS, body)
        except errors.Forbidden as exc:
            return drop(f"cannot write endpoints {key}: {exc}")  # the namespace is being deleted
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    services, pods, endpoints = informers.get(SERVICES), informers.get(PODS), informers.get(ENDPOINTS)
    controller = EndpointsController(client, services, pods, endpoints, clock=clock)
    return Runner("endpoints", controller.reconcile, controller.queue, [services, pods, endpoints], workers=2)
