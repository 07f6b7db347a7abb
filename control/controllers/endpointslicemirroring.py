"""The EndpointSlice mirroring controller: a Service without a selector whose Endpoints a user
writes gets EndpointSlices mirroring them, as kube-controller-manager's
endpointslicemirroring controller, so kube-proxy (which reads only slices) routes to them.

Guarantees:
- For each Endpoints whose Service exists and has no selector, and which is not labelled
  `endpointslice.kubernetes.io/skip-mirror: "true"`: one slice per subset, its `addresses`
  as ready endpoints and `notReadyAddresses` as not ready ones (`ready: false`), serving as
  ready, never terminating, with nodeName, hostname and targetRef kept; the subset's ports;
  addresses that are not usable endpoint IPs (ValidateEndpointIP) or not of the slice's family
  are left out; at most 1000 addresses of a subset are mirrored (upstream's maxEndpointsPerSubset).
- Slices carry the Endpoints' labels, `kubernetes.io/service-name` and
  `endpointslice.kubernetes.io/managed-by: endpointslicemirroring-controller.k8s.io`, and the
  Endpoints as controlling owner (the garbage collector deletes them with it); generateName
  `<service>-`. Written only when they differ; when mirroring no longer applies (a selector
  added, the Service or Endpoints gone) the mirrored slices are deleted. Slices it created or
  deleted that the informer has not caught up with postpone the next reconcile (no duplicates).
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import ENDPOINTS, ENDPOINTSLICES, SERVICES, key_of
from control.client.runner import DONE, Result, Runner, drop, requeue_after
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj
from control.kinds.endpointslices import MANAGED_BY_LABEL, SERVICE_NAME_LABEL, endpoint_ip_causes
from control.kinds.meta import labels_of, metadata, new_controller_ref

CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
MAX_ENDPOINTS_PER_SUBSET = 1000


def _family(ip: Any) -> str:
    try:
        return f"IPv{ipaddress.ip_address(str(ip)).version}"
    except ValueError:
        return ""


def mirrored_endpoint(address: Obj, ready: bool) -> Obj:
    endpoint: Obj = {"addresses": [address["ip"]], "conditions": {"ready": ready, "serving": ready,
                                                                  "terminating": False}}
    for field in ("hostname", "nodeName", "targetRef"):
        if address.get(field):
            endpoint[field] = copy.deepcopy(address[field])
    return endpoint


def desired_slices(svc: Obj, endpoints: Obj) -> list[Obj]:
    """The slices mirroring `endpoints`, one per subset with usable addresses, in subset order."""
    meta = metadata(endpoints)
    labels = {k: v for k, v in labels_of(endpoints).items() if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL)}
    labels[SERVICE_NAME_LABEL] = metadata(svc)["name"]
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
    owner = new_controller_ref(endpoints, api_version="v1", kind="Endpoints")
    family = str(((svc.get("spec") or {}).get("ipFamilies") or ["IPv4"])[0])
    out = []
    for subset in endpoints.get("subsets") or []:
        items = [mirrored_endpoint(a, ready) for field, ready in (("addresses", True), ("notReadyAddresses", False))
                 for a in subset.get(field) or [] if isinstance(a, dict) and a.get("ip")]
        items = [e for e in items if _family(e["addresses"][0]) == family
                 and not endpoint_ip_causes(e["addresses"][0], "")][:MAX_ENDPOINTS_PER_SUBSET]
        if not items:
            continue
        ports = [{"name": p.get("name") or "", "port": p.get("port"), "protocol": p.get("protocol") or "TCP",
                  **({"appProtocol": p["appProtocol"]} if p.get("appProtocol") else {})}
                 for p in subset.get("ports") or [] if isinstance(p, dict)]
        out.append({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"generateName": f"{meta['name'][:62]}-", "namespace": meta["namespace"],
                                 "labels": dict(labels), "ownerReferences": [owner]},
                    "addressType": family, "endpoints": items, "ports": ports})
    return out


def mirrors(svc: Obj | None, endpoints: Obj | None) -> bool:
    return (svc is not None and endpoints is not None and not (svc.get("spec") or {}).get("selector")
            and labels_of(endpoints).get(SKIP_MIRROR_LABEL) != "true")


class EndpointSliceMirroringController:
    def __init__(self, client: Any, services: Informer, endpoints: Informer, slices: Informer, *, clock: Clock):
        self.client, self.services, self.endpoints, self.slices = client, services, endpoints, slices
        self.queue = WorkQueue(clock=clock)
        # slices this controller created (True) or deleted (False) that the cache has not shown yet
        self.pending: dict[str, dict[str, bool]] = {}
        for informer in (services, endpoints):
            informer.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                           on_delete=self._enqueue))
        slices.add_handlers(Handlers(on_update=lambda old, new: self._slice_changed(new),
                                     on_delete=self._slice_changed))

    def _enqueue(self, obj: Obj) -> None:
        self.queue.add(key_of(obj))

    def _slice_changed(self, slice_: Obj) -> None:
        labels = labels_of(slice_)
        if labels.get(MANAGED_BY_LABEL) == CONTROLLER_NAME and labels.get(SERVICE_NAME_LABEL):
            self.queue.add(f"{metadata(slice_).get('namespace', '')}/{labels[SERVICE_NAME_LABEL]}")

    def mirrored_of(self, key: str) -> list[Obj]:
        namespace, name = key.split("/", 1)
        return sorted((s for s in self.slices.cache.by_index("namespace", namespace)
                       if labels_of(s).get(MANAGED_BY_LABEL) == CONTROLLER_NAME
                       and labels_of(s).get(SERVICE_NAME_LABEL) == name), key=lambda s: metadata(s)["name"])

    async def reconcile(self, key: str) -> Result:
        svc, endpoints = self.services.cache.get(key), self.endpoints.cache.get(key)
        wanted = desired_slices(svc, endpoints) if mirrors(svc, endpoints) else []  # type: ignore[arg-type]
        existing = self.mirrored_of(key)
        names = {metadata(s)["name"] for s in existing}
        if any((name in names) != made for name, made in self.pending.get(key, {}).items()):
            return requeue_after(0.05)  # our own last writes have not reached the cache yet
        pending = self.pending[key] = {}
        try:
            for current, body in zip(existing, wanted):
                update = copy.deepcopy(current)
                for field in ("addressType", "endpoints", "ports"):
                    update[field] = body[field]
                update["metadata"]["labels"] = body["metadata"]["labels"]
                update["metadata"]["ownerReferences"] = body["metadata"]["ownerReferences"]
                if update != current:
                    await self.client.replace(ENDPOINTSLICES, update)
            for body in wanted[len(existing):]:
                made = await self.client.create(ENDPOINTSLICES, body, metadata(body)["namespace"])
                pending[metadata(made)["name"]] = True
            for current in existing[len(wanted):]:
                try:
                    await self.client.delete(ENDPOINTSLICES, metadata(current)["name"], metadata(current)["namespace"])
                except errors.NotFound:
                    pass
                pending[metadata(current)["name"]] = False
        except errors.Forbidden as exc:
            return drop(f"cannot write mirrored endpointslices of {key}: {exc}")
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    services, endpoints, slices = informers.get(SERVICES), informers.get(ENDPOINTS), informers.get(ENDPOINTSLICES)
    controller = EndpointSliceMirroringController(client, services, endpoints, slices, clock=clock)
    return Runner("endpointslicemirroring", controller.reconcile, controller.queue, [services, endpoints, slices],
                  workers=1)
