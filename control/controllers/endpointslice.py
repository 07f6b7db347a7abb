"""The EndpointSlice controller: every Service with a selector has EndpointSlices listing the pods
behind it, as kube-controller-manager's endpointslice controller (pkg/controller/endpointslice).

Guarantees:
- Pods that match the selector, have a podIP of the slice's address type and are not finished
  (upstream's ShouldPodBeInEndpoints with terminating pods included) are endpoints
  `{addresses: [ip], conditions, nodeName, targetRef, hostname?}`; conditions as upstream's
  podToEndpoint: serving = the pod is Ready, terminating = it has a deletionTimestamp, ready =
  serving and not terminating (always true with publishNotReadyAddresses).
- Ports are the Service's, named as its ports, each the resolved targetPort (a named
  containerPort looked up in each pod); pods resolving to the same ports share slices.
- A slice holds at most 100 endpoints (`MAX_ENDPOINTS_PER_SLICE`); an endpoint stays in the slice
  it is in while it exists, new ones fill slices with room, then new slices. A Service with no
  endpoints keeps one placeholder slice with none (and no ports), as upstream's.
- Every slice is created with generateName `<service>-`, the labels `kubernetes.io/service-name`
  and `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io` (with the
  Service's own labels, and `service.kubernetes.io/headless` for a headless one), and the Service
  as controlling owner, so the garbage collector deletes them with it.
- Level-triggered and idempotent: a slice is written only when its endpoints, ports, labels or
  owner differ; slices the informer has not caught up with (our own recent writes) postpone the
  reconcile rather than create twice (upstream's endpointSliceTracker).
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import ENDPOINTSLICES, PODS, SERVICES, key_of
from control.client.runner import DONE, Result, Runner, drop, requeue_after
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, pod_ready, terminating, uid_of
from control.controllers.endpoints import address_of, pod_handlers, resolve_port, service_selector
from control.kinds.endpointslices import MANAGED_BY_LABEL, SERVICE_NAME_LABEL, endpoint_ip_causes
from control.kinds.meta import labels_of, metadata, new_controller_ref

CONTROLLER_NAME = "endpointslice-controller.k8s.io"
MAX_ENDPOINTS_PER_SLICE = 100  # kube-controller-manager's --max-endpoints-per-slice default
HEADLESS_LABEL = "service.kubernetes.io/headless"
STALE_RETRY_SECONDS = 0.05
Ports = tuple[tuple[str, int, str], ...]


def address_type(svc: Obj) -> str:
    families = (svc.get("spec") or {}).get("ipFamilies") or ["IPv4"]
    return str(families[0])


def in_slices(pod: Obj) -> bool:
    """ShouldPodBeInEndpoints(pod, includeTerminating=true)."""
    if not (pod.get("status") or {}).get("podIP"):
        return False
    phase = (pod.get("status") or {}).get("phase")
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    if policy == "Never":
        return phase not in ("Failed", "Succeeded")
    if policy == "OnFailure":
        return phase != "Succeeded"
    return True


def pod_endpoint(pod: Obj, svc: Obj) -> Obj:
    serving = pod_ready(pod)
    going = terminating(pod)
    ready = bool((svc.get("spec") or {}).get("publishNotReadyAddresses")) or (serving and not going)
    address = address_of(pod, svc)  # the Endpoints controller's ip, hostname, nodeName and targetRef
    endpoint: Obj = {"addresses": [address["ip"]],
                     "conditions": {"ready": ready, "serving": serving, "terminating": going}}
    for field in ("hostname", "nodeName", "targetRef"):
        if field in address:
            endpoint[field] = address[field]
    return endpoint


def _usable(ip: Any, family: str) -> bool:
    try:
        parsed = ipaddress.ip_address(str(ip))
    except ValueError:
        return False
    return f"IPv{parsed.version}" == family and not endpoint_ip_causes(ip, "")


def slice_ports(svc: Obj, pod: Obj) -> list[Obj] | None:
    """The slice ports of `pod` for `svc`; None when the Service has ports and none resolves."""
    ports = []
    for sp in (svc.get("spec") or {}).get("ports") or []:
        number = resolve_port(sp, pod)
        if number is None:
            continue
        port: Obj = {"name": sp.get("name") or "", "port": number, "protocol": sp.get("protocol") or "TCP"}
        if sp.get("appProtocol"):
            port["appProtocol"] = sp["appProtocol"]
        ports.append(port)
    if (svc.get("spec") or {}).get("ports") and not ports:
        return None
    return ports


def _signature(ports: list[Obj] | None) -> Ports:
    return tuple(sorted((str(p.get("name") or ""), int(p.get("port") or 0), str(p.get("protocol") or "TCP"))
                        for p in ports or []))


def _endpoint_key(endpoint: Obj) -> str:
    return str((endpoint.get("targetRef") or {}).get("uid") or ",".join(endpoint.get("addresses") or []))


def desired_endpoints(svc: Obj, pods: list[Obj]) -> dict[Ports, tuple[list[Obj], dict[str, Obj]]]:
    """{port signature: (ports, {endpoint key: endpoint})} for the pods behind `svc`."""
    family = address_type(svc)
    groups: dict[Ports, tuple[list[Obj], dict[str, Obj]]] = {}
    for pod in sorted(pods, key=lambda p: ((p.get("status") or {}).get("podIP") or "", uid_of(p))):
        if not in_slices(pod) or not _usable(pod["status"]["podIP"], family):
            continue
        ports = slice_ports(svc, pod)
        if ports is None:
            continue
        endpoint = pod_endpoint(pod, svc)
        groups.setdefault(_signature(ports), (ports, {}))[1][_endpoint_key(endpoint)] = endpoint
    return groups


def slice_labels(svc: Obj) -> dict[str, str]:
    """setEndpointSliceLabels: the Service's labels, then the ones the controller owns."""
    labels = {k: v for k, v in labels_of(svc).items() if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL)}
    if (svc.get("spec") or {}).get("clusterIP") == "None":
        labels[HEADLESS_LABEL] = ""
    labels[SERVICE_NAME_LABEL] = metadata(svc)["name"]
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
    return labels


def plan_slices(svc: Obj, pods: list[Obj], existing: list[Obj]) -> tuple[list[Obj], list[Obj], list[Obj]]:
    """(slices to create, slices to update, slices to delete) that make `existing` what `svc` and
    `pods` call for; every slice written carries the ports, labels and owner it should."""
    groups = desired_endpoints(svc, pods)
    labels, owner = slice_labels(svc), new_controller_ref(svc, api_version="v1", kind="Service")
    family = address_type(svc)
    # content[i] = (ports, endpoints) wanted for existing[i]; None: the slice goes
    content: list[tuple[list[Obj] | None, list[Obj]] | None] = [None] * len(existing)
    new: list[tuple[list[Obj] | None, list[Obj]]] = []
    for signature, (ports, wanted) in groups.items():
        placed: set[str] = set()
        roomy: list[int] = []
        for i, current in enumerate(existing):
            if content[i] is not None or _signature(current.get("ports")) != signature:
                continue
            kept = []
            for endpoint in current.get("endpoints") or []:
                key = _endpoint_key(endpoint)
                if key in wanted and key not in placed and len(kept) < MAX_ENDPOINTS_PER_SLICE:
                    kept.append(wanted[key])
                    placed.add(key)
            content[i] = (ports, kept)
            roomy.append(i)
        left = [e for key, e in wanted.items() if key not in placed]
        for i in roomy:  # fill the slices with room first, then let the ones left empty go
            room = MAX_ENDPOINTS_PER_SLICE - len(content[i][1])  # type: ignore[index]
            content[i][1].extend(left[:room])  # type: ignore[index]
            left = left[room:]
            if not content[i][1]:  # type: ignore[index]
                content[i] = None
        new += [(ports, left[n:n + MAX_ENDPOINTS_PER_SLICE]) for n in range(0, len(left), MAX_ENDPOINTS_PER_SLICE)]
    if not groups:  # upstream's placeholder: one slice without endpoints or ports
        placeholder = next((i for i, s in enumerate(existing) if not s.get("endpoints") and not s.get("ports")),
                           0 if existing else None)
        if placeholder is None:
            new.append((None, []))
        else:
            content[placeholder] = (None, [])
    creates = [_slice(svc, family, labels, owner, ports, endpoints) for ports, endpoints in new]
    updates, deletes = [], []
    for current, wanted in zip(existing, content):
        if wanted is None:
            deletes.append(current)
            continue
        body = copy.deepcopy(current)
        body.pop("ports", None)
        if wanted[0] is not None:
            body["ports"] = copy.deepcopy(wanted[0])
        body["endpoints"] = wanted[1]
        body["metadata"]["labels"] = labels
        body["metadata"]["ownerReferences"] = [owner]
        if body != current:
            updates.append(body)
    return creates, updates, deletes


def _slice(svc: Obj, family: str, labels: dict[str, str], owner: Obj, ports: list[Obj] | None,
           endpoints: list[Obj]) -> Obj:
    meta = metadata(svc)
    body: Obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"generateName": f"{meta['name'][:62]}-", "namespace": meta["namespace"],
                              "labels": dict(labels), "ownerReferences": [owner]},
                 "addressType": family, "endpoints": endpoints}
    if ports is not None:
        body["ports"] = copy.deepcopy(ports)
    return body


def service_key_of(slice_: Obj) -> str | None:
    """The Service a slice of ours belongs to ("namespace/name"), None for slices of other managers."""
    labels = labels_of(slice_)
    if labels.get(MANAGED_BY_LABEL) != CONTROLLER_NAME or not labels.get(SERVICE_NAME_LABEL):
        return None
    return f"{metadata(slice_).get('namespace', '')}/{labels[SERVICE_NAME_LABEL]}"


class EndpointSliceController:
    def __init__(self, client: Any, services: Informer, pods: Informer, slices: Informer, *, clock: Clock):
        self.client, self.services, self.pods, self.slices = client, services, pods, slices
        self.queue = WorkQueue(clock=clock)
        # what our own writes left each Service's slices at: name -> generation, or None once deleted
        self.expected: dict[str, dict[str, int | None]] = {}
        services.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                       on_delete=self._enqueue))
        pods.add_handlers(pod_handlers(services, self.queue))
        slices.add_handlers(Handlers(on_add=self._slice_changed, on_update=lambda old, new: self._slice_changed(new),
                                     on_delete=self._slice_changed))

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _slice_changed(self, slice_: Obj) -> None:
        key = service_key_of(slice_)
        if key is not None:
            self.queue.add(key)

    def slices_of(self, key: str) -> list[Obj]:
        namespace = key.split("/", 1)[0]
        return sorted((s for s in self.slices.cache.by_index("namespace", namespace) if service_key_of(s) == key),
                      key=lambda s: metadata(s).get("name", ""))

    def _stale(self, key: str, slices: list[Obj]) -> bool:
        seen = {metadata(s)["name"]: int(metadata(s).get("generation") or 0) for s in slices}
        for name, generation in self.expected.get(key, {}).items():
            if generation is None and name in seen or generation is not None and seen.get(name, -1) < generation:
                return True
        self.expected.pop(key, None)
        return False

    async def reconcile(self, key: str) -> Result:
        svc = self.services.cache.get(key)
        slices = self.slices_of(key)
        if svc is None or service_selector(svc) is None:
            return DONE  # the garbage collector deletes a gone Service's slices (owner reference)
        if self._stale(key, slices):
            return requeue_after(STALE_RETRY_SECONDS)
        selector = service_selector(svc)
        pods = [p for p in self.pods.cache.by_index("namespace", metadata(svc)["namespace"])
                if selector is not None and selector.matches(labels_of(p))]
        creates, updates, deletes = plan_slices(svc, pods, slices)
        expected = self.expected.setdefault(key, {})
        try:
            for body in creates:
                made = await self.client.create(ENDPOINTSLICES, body, metadata(svc)["namespace"])
                expected[metadata(made)["name"]] = int(metadata(made).get("generation") or 0)
            for body in updates:
                made = await self.client.replace(ENDPOINTSLICES, body)
                expected[metadata(made)["name"]] = int(metadata(made).get("generation") or 0)
            for current in deletes:
                try:
                    await self.client.delete(ENDPOINTSLICES, metadata(current)["name"], metadata(current)["namespace"])
                except errors.NotFound:
                    pass
                expected[metadata(current)["name"]] = None
        except errors.Forbidden as exc:
            return drop(f"cannot write endpointslices of {key}: {exc}")  # the namespace is being deleted
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    services, pods, slices = informers.get(SERVICES), informers.get(PODS), informers.get(ENDPOINTSLICES)
    controller = EndpointSliceController(client, services, pods, slices, clock=clock)
    return Runner("endpointslice", controller.reconcile, controller.queue, [services, pods, slices], workers=2)
