"""The garbage collector: honours ownerReferences across every watched resource.

Guarantees (kube-controller-manager's garbage collector):
- An object whose owners are all gone is deleted (Background). An owner is gone when no object
  of its kind, name and *uid* exists: a new object with the same name is not the owner. A cache
  miss is confirmed by a live GET before anything is deleted, so a lagging cache never kills a
  dependent of a live owner; owners known to be gone are remembered by uid. The dependent itself
  is read live before it is deleted or patched, and the delete carries that read's
  resourceVersion, so a reference an orphaning owner removed meanwhile saves it.
- References to gone owners are removed from an object that still has a live owner.
- Foreground: an owner carrying the `foregroundDeletion` finalizer gets its dependents deleted
  first (dependents that have dependents of their own in foreground too); once no dependent with
  `blockOwnerDeletion` remains, the finalizer is removed and the hub deletes the owner.
- Orphan: an owner carrying the `orphan` finalizer gets the references to it removed from its
  dependents, then the finalizer removed.
- Every write is guarded by a resourceVersion or uid precondition; a 409 is retried by the runner.
Watched: pods, replicasets, deployments, services, endpoints, configmaps, leases, nodes, jobs,
cronjobs, daemonsets, statefulsets, controllerrevisions, persistentvolumeclaims, replicationcontrollers,
endpointslices, and every custom kind: the collector watches CustomResourceDefinitions through the hub
and, for each one that is Established, starts an informer on the kind it serves (its storage version), so owners
and dependents of custom kinds (an Order and its Dishes) are collected like built-in ones; a
deleted definition stops its informer. Owners of kinds it does not know are kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any, Callable

from control import errors
from control.client.informer import Handlers, Informer, by_owner
from control.client.resources import (
    BY_KIND, CONFIGMAPS, CONTROLLERREVISIONS, CRONJOBS, DAEMONSETS, DEPLOYMENTS, ENDPOINTS, ENDPOINTSLICES, JOBS,
    LEASES, NODES,
    PERSISTENTVOLUMECLAIMS, PODS, REPLICASETS, REPLICATIONCONTROLLERS, SERVICES, STATEFULSETS, Resource, key_of,
)
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, terminating, uid_of
from control.kinds.crd import established
from control.kinds.meta import metadata, owner_references

log = logging.getLogger(__name__)

WATCHED = (PODS, REPLICASETS, DEPLOYMENTS, SERVICES, ENDPOINTS, CONFIGMAPS, LEASES, NODES, JOBS, CRONJOBS)
WATCHED += (DAEMONSETS, CONTROLLERREVISIONS)
WATCHED += (STATEFULSETS, PERSISTENTVOLUMECLAIMS)
WATCHED += (REPLICATIONCONTROLLERS, ENDPOINTSLICES)
DEFINITIONS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
                       namespaced=False)
FOREGROUND, ORPHAN = "foregroundDeletion", "orphan"


def by_uid(obj: Obj) -> list[str]:
    uid = uid_of(obj)
    return [uid] if uid else []


def resource_id(resource: Resource) -> str:
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


def item_key(resource: Resource, obj: Obj) -> str:
    return f"{resource_id(resource)}|{key_of(obj)}"


def custom_resource(crd: Obj) -> Resource | None:
    """The kind an Established CustomResourceDefinition serves, at its storage version (else its
    first served one); None while it is not Established or when it serves nothing."""
    if not established(crd):
        return None
    spec, names = crd.get("spec") or {}, (crd.get("spec") or {}).get("names") or {}
    served = [v for v in spec.get("versions") or [] if v.get("served")]
    version = next((v for v in served if v.get("storage")), served[0] if served else None)
    if version is None or not spec.get("group") or not names.get("plural") or not names.get("kind"):
        return None
    return Resource(spec["group"], version["name"], names["plural"], names["kind"],
                    namespaced=spec.get("scope", "Namespaced") == "Namespaced")


def finalizer_patch(obj: Obj, finalizer: str) -> Obj:
    rest = [f for f in metadata(obj).get("finalizers") or [] if f != finalizer]
    return {"metadata": {"finalizers": rest or None, "resourceVersion": metadata(obj)["resourceVersion"]}}


def drop_refs_patch(obj: Obj, uids: set[str]) -> Obj:
    refs = [r for r in metadata(obj).get("ownerReferences") or [] if r.get("uid") not in uids]
    return {"metadata": {"ownerReferences": refs or None, "resourceVersion": metadata(obj)["resourceVersion"]}}


class GarbageCollector:
    def __init__(self, client: Any, informers: dict[Resource, Informer], *, clock: Clock, absent_memory: int = 4096):
        self.client, self.clock = client, clock
        self.informers: dict[Resource, Informer] = {}
        self.by_id: dict[str, Resource] = {}
        self.kinds: dict[tuple[str, str], Resource] = dict(BY_KIND)
        self.queue = WorkQueue(clock=clock)
        self.absent: OrderedDict[str, None] = OrderedDict()
        self.absent_memory = absent_memory
        self.custom: dict[str, tuple[Resource, Informer, Any]] = {}  # definition name -> its kind's informer
        self._start: Callable[[Informer], Any] = lambda informer: None
        for resource, informer in informers.items():
            self.watch(resource, informer)

    def watch(self, resource: Resource, informer: Informer) -> None:
        self.informers[resource] = informer
        self.by_id[resource_id(resource)] = resource
        self.kinds[(resource.api_version, resource.kind)] = resource
        informer.cache.add_indexer("by_owner", by_owner)
        informer.cache.add_indexer("by_uid", by_uid)
        informer.add_handlers(Handlers(
            on_add=lambda obj, r=resource: self._changed(r, obj),
            on_update=lambda old, new, r=resource: self._updated(r, old, new),
            on_delete=lambda obj, r=resource: self._deleted(r, obj)))

    # --- custom kinds, discovered from their definitions ---------------------------------------

    def follow_definitions(self, definitions: Informer, start: Callable[[Informer], Any]) -> None:
        """Watch every kind a definition serves; `start(informer)` runs an informer (returns a task)."""
        self._start = start
        definitions.add_handlers(Handlers(on_add=self._definition_changed,
                                          on_update=lambda old, new: self._definition_changed(new),
                                          on_delete=self._definition_deleted))

    def _definition_changed(self, crd: Obj) -> None:
        name, resource = metadata(crd).get("name", ""), custom_resource(crd)
        known = self.custom.get(name)
        if known and known[0] == resource:
            return
        if known:
            self._definition_deleted(crd)
        if resource is None or resource in self.informers:
            return
        informer = Informer(self.client, resource, clock=self.clock)
        self.watch(resource, informer)
        self.custom[name] = (resource, informer, self._start(informer))
        log.info("garbage collector now watches %s (from %s)", resource_id(resource), name)

    def _definition_deleted(self, crd: Obj) -> None:
        known = self.custom.pop(metadata(crd).get("name", ""), None)
        if known is None:
            return
        resource, _, task = known
        if task is not None:
            task.cancel()
        self.informers.pop(resource, None)
        self.by_id.pop(resource_id(resource), None)
        if self.kinds.get((resource.api_version, resource.kind)) == resource:
            del self.kinds[(resource.api_version, resource.kind)]

    def _custom_kind(self, ref: dict[str, Any]) -> Resource | None:
        """A custom owner named at another version than the one watched: same group and kind."""
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        return next((r for r, _, _ in self.custom.values() if r.group == group and r.kind == ref.get("kind")), None)

    # --- handlers ------------------------------------------------------------------------------

    def _changed(self, resource: Resource, obj: Obj) -> None:
        finalizers = metadata(obj).get("finalizers") or []
        if owner_references(obj) or (terminating(obj) and (FOREGROUND in finalizers or ORPHAN in finalizers)):
            self.queue.add(item_key(resource, obj))

    def _updated(self, resource: Resource, old: Obj, new: Obj) -> None:
        dropped = {r["uid"] for r in owner_references(old)} - {r["uid"] for r in owner_references(new)}
        self._enqueue_uids(dropped)  # an owner waiting for its dependents may be done
        self._changed(resource, new)

    def _deleted(self, resource: Resource, obj: Obj) -> None:
        self._remember_absent(uid_of(obj))
        for dep_resource, dependent in self.dependents_of(uid_of(obj)):
            self.queue.add(item_key(dep_resource, dependent))
        self._enqueue_uids({r["uid"] for r in owner_references(obj)})

    def _enqueue_uids(self, uids: set[str]) -> None:
        for uid in uids:
            found = self.find_by_uid(uid)
            if found:
                self.queue.add(item_key(*found))

    # --- the graph, read from the caches -------------------------------------------------------

    def dependents_of(self, uid: str) -> list[tuple[Resource, Obj]]:
        return [(r, o) for r, informer in self.informers.items() for o in informer.cache.by_index("by_owner", uid)]

    def find_by_uid(self, uid: str, resource: Resource | None = None) -> tuple[Resource, Obj] | None:
        for r, informer in self.informers.items():
            if resource is None or r == resource:
                for obj in informer.cache.by_index("by_uid", uid):
                    return r, obj
        return None

    def _remember_absent(self, uid: str) -> None:
        if uid:
            self.absent[uid] = None
            while len(self.absent) > self.absent_memory:
                self.absent.popitem(last=False)

    async def owner_state(self, ref: dict[str, Any], namespace: str) -> str:
        """"solid", "waiting" (being deleted in foreground) or "absent"."""
        resource = self.kinds.get((ref.get("apiVersion"), ref.get("kind"))) or self._custom_kind(ref)
        if resource is None:
            return "solid"  # a kind the hub does not serve: not ours to judge
        if ref["uid"] in self.absent:
            return "absent"
        found = self.find_by_uid(ref["uid"], resource)
        owner = found[1] if found else None
        if owner is None:  # confirm a cache miss with the hub before acting on it
            try:
                owner = await self.client.get(resource, ref.get("name", ""), namespace if resource.namespaced else None)
            except errors.NotFound:
                owner = None
            if owner is None or uid_of(owner) != ref["uid"]:
                self._remember_absent(ref["uid"])
                return "absent"
        if terminating(owner) and FOREGROUND in (metadata(owner).get("finalizers") or []):
            return "waiting"
        return "solid"

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        rid, _, obj_key = key.partition("|")
        resource = self.by_id.get(rid)
        informer = self.informers.get(resource) if resource else None
        obj = informer.cache.get(obj_key) if informer else None
        if obj is None:
            return DONE
        finalizers = metadata(obj).get("finalizers") or []
        if terminating(obj) and ORPHAN in finalizers:
            return await self.orphan_dependents(resource, obj)
        if terminating(obj) and FOREGROUND in finalizers:
            return await self.delete_dependents_first(resource, obj)
        if owner_references(obj) and not terminating(obj):
            return await self.collect(resource, obj)
        return DONE

    async def _owner_states(self, obj: Obj) -> dict[str, str]:
        namespace = metadata(obj).get("namespace", "")
        return {ref["uid"]: await self.owner_state(ref, namespace) for ref in owner_references(obj)}

    async def collect(self, resource: Resource, obj: Obj) -> Result:
        states = await self._owner_states(obj)
        if "solid" in states.values() and "absent" not in states.values():
            return DONE  # the common case, decided on the cache alone: no request
        # About to write: decide again on the object as the hub has it now (upstream's
        # attemptToDeleteItem reads the latest too). The cache can still show a reference that an
        # orphaning owner's collection has already removed; deleting on it would kill an orphan.
        latest = await self._latest(resource, obj)
        if latest is None:
            return DONE
        states = await self._owner_states(latest)
        if not states:
            return DONE
        absent = {u for u, s in states.items() if s == "absent"}
        if "solid" in states.values():
            if absent:
                await self._patch(resource, latest, drop_refs_patch(latest, absent))
            return DONE
        waiting = any(s == "waiting" for s in states.values())
        policy = "Foreground" if waiting and self.dependents_of(uid_of(latest)) else "Background"
        log.info("garbage collecting %s %s (owners gone)", resource.kind, key_of(latest))
        # Guarded by the resourceVersion read: a reference removed since is a 409, retried.
        await self._delete(resource, latest, policy, resource_version=metadata(latest).get("resourceVersion"))
        return DONE

    async def _latest(self, resource: Resource, obj: Obj) -> Obj | None:
        """The object as the hub has it now; None when it is gone or is another object by that name."""
        try:
            latest = await self.client.get(resource, metadata(obj)["name"], metadata(obj).get("namespace") or None)
        except errors.NotFound:
            return None
        return latest if uid_of(latest) == uid_of(obj) and not terminating(latest) else None

    async def delete_dependents_first(self, resource: Resource, owner: Obj) -> Result:
        blocking = 0
        for dep_resource, dependent in self.dependents_of(uid_of(owner)):
            ref = next(r for r in owner_references(dependent) if r["uid"] == uid_of(owner))
            if len(owner_references(dependent)) > 1:
                await self._patch(dep_resource, dependent, drop_refs_patch(dependent, {uid_of(owner)}))
                continue  # its other owners decide its fate
            if not terminating(dependent):
                policy = "Foreground" if self.dependents_of(uid_of(dependent)) else "Background"
                await self._delete(dep_resource, dependent, policy)
            if ref.get("blockOwnerDeletion"):
                blocking += 1
        if blocking:
            return DONE  # each dependent's disappearance brings the owner back here
        await self._patch(resource, owner, finalizer_patch(owner, FOREGROUND))
        return DONE

    async def orphan_dependents(self, resource: Resource, owner: Obj) -> Result:
        for dep_resource, dependent in self.dependents_of(uid_of(owner)):
            await self._patch(dep_resource, dependent, drop_refs_patch(dependent, {uid_of(owner)}))
        await self._patch(resource, owner, finalizer_patch(owner, ORPHAN))
        return DONE

    # --- writes ---------------------------------------------------------------------------------

    async def _patch(self, resource: Resource, obj: Obj, patch: Obj) -> None:
        try:
            await self.client.patch(resource, metadata(obj)["name"], patch, metadata(obj).get("namespace") or None)
        except errors.NotFound:
            pass

    async def _delete(self, resource: Resource, obj: Obj, policy: str, *, resource_version: str | None = None) -> None:
        preconditions = {"uid": uid_of(obj)}
        if resource_version:
            preconditions["resourceVersion"] = resource_version
        try:
            await self.client.delete(resource, metadata(obj)["name"], metadata(obj).get("namespace") or None,
                                     propagation=policy, preconditions=preconditions)
        except errors.NotFound:
            pass


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    watched = {r: informers.get(r, indexers={"by_owner": by_owner, "by_uid": by_uid}) for r in WATCHED}
    collector = GarbageCollector(client, watched, clock=clock)
    # Custom kinds come and go with their definitions; the runner does not wait for them to sync
    # (a hub without CustomResourceDefinitions must not hold the built-in kinds' collection back).
    collector.follow_definitions(informers.get(DEFINITIONS), lambda informer: asyncio.ensure_future(informer.run()))
    return Runner("garbagecollector", collector.reconcile, collector.queue, list(watched.values()), workers=4)
