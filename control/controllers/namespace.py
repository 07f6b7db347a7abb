"""The namespace controller: a namespace being deleted is emptied, then let go.

Guarantees (kube-controller-manager's namespace controller):
- For a namespace with a deletionTimestamp whose `spec.finalizers` still holds `kubernetes`,
  every namespaced resource the hub serves (found by discovery, so new kinds are covered) is
  deleted with one deletecollection per resource (Background propagation; pods get their normal
  grace period, so kubelets stop them; unbound pods go at once).
- Only when a fresh list finds nothing left in any of them is `kubernetes` removed from
  `spec.finalizers` through the `finalize` subresource, guarded by the resourceVersion; the hub
  then deletes the namespace (its metadata.finalizers, if any, are other controllers' business).
- While something remains (terminating pods, objects held by finalizers) it looks again after
  `RECHECK` seconds; the hub refuses new objects in a terminating namespace meanwhile.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import ALL, NAMESPACES, Resource, key_of
from control.client.runner import DONE, Result, Runner, requeue_after
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, terminating
from control.kinds.meta import metadata

log = logging.getLogger(__name__)

FINALIZER = "kubernetes"
RECHECK = 1.0


async def namespaced_resources(client: Any) -> list[Resource]:
    """Every namespaced resource the hub lists and deletes, from its discovery documents."""
    documents = [await client.request("GET", "/api/v1")]
    groups = (await client.request("GET", "/apis")).get("groups") or []
    for group in groups:
        preferred = (group.get("preferredVersion") or {}).get("groupVersion")
        if preferred:
            documents.append(await client.request("GET", f"/apis/{preferred}"))
    out = []
    for document in documents:
        group, _, version = str(document.get("groupVersion", "")).rpartition("/")
        for entry in document.get("resources") or []:
            verbs = set(entry.get("verbs") or [])
            if entry.get("namespaced") and "/" not in entry.get("name", "") and {"list", "delete"} <= verbs:
                out.append(Resource(group, version, entry["name"], entry.get("kind", ""), namespaced=True))
    return out


class NamespaceController:
    def __init__(self, client: Any, namespaces: Informer, *, clock: Clock):
        self.client, self.namespaces = client, namespaces
        self.queue = WorkQueue(clock=clock)
        namespaces.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new)))

    def _enqueue(self, ns: Obj) -> None:
        if terminating(ns):
            self.queue.add(key_of(ns))

    async def discover(self) -> list[Resource]:
        try:
            found = await namespaced_resources(self.client)
        except (errors.ApiError, ValueError, KeyError, AttributeError) as exc:
            log.info("discovery failed (%s); using the built-in list of resources", exc)
            found = []
        return found or [r for r in ALL if r.namespaced]

    async def reconcile(self, key: str) -> Result:
        ns = self.namespaces.cache.get(key)
        if ns is None or not terminating(ns):
            return DONE
        finalizers = list((ns.get("spec") or {}).get("finalizers") or [])
        if FINALIZER not in finalizers:
            return DONE
        name = metadata(ns)["name"]
        resources = await self.discover()
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        for resource in resources:
            try:
                await self.client.request("DELETE", resource.path(name), body=options)
            except (errors.NotFound, errors.MethodNotAllowed):
                continue
        remaining = []
        for resource in resources:
            try:
                items = (await self.client.list(resource, name)).get("items") or []
            except (errors.NotFound, errors.MethodNotAllowed):
                continue
            if items:
                remaining.append(f"{len(items)} {resource.plural}")
        if remaining:
            log.info("namespace %s still has %s", name, ", ".join(remaining))
            return requeue_after(RECHECK)
        body = copy.deepcopy(ns)
        body["spec"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
        try:
            await self.client.replace(NAMESPACES, body, subresource="finalize")
        except errors.NotFound:
            pass
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    namespaces = informers.get(NAMESPACES)
    controller = NamespaceController(client, namespaces, clock=clock)
    return Runner("namespace", controller.reconcile, controller.queue, [namespaces], workers=2)
