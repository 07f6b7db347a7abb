"""The resourcequota controller: every ResourceQuota's `status.hard` is its `spec.hard` and its
`status.used` what the namespace's objects use (upstream pkg/controller/resourcequota).

Guarantees (level-triggered, idempotent):
- `reconcile(namespace/name)` recounts from scratch: pods, services, secrets, configmaps and
  claims from the shared caches (as upstream's evaluators read their informers' listers; terminal
  pods count nothing, `control.kinds.quota_usage`), any other `count/<plural>.<group>` of a
  built-in kind listed from the hub; so a busy namespace's recounts cost the hub no request. It
  writes the status subresource only when it differs, guarded by the resourceVersion read (a
  conflict is retried with back-off); a quota that is gone is the end of it;
- a quota is recounted when it comes or its `spec.hard` changes, when an object of a cached kind
  in its namespace comes, changes or goes (replenishment, upstream's QuotaMonitor), and every
  `Timings.quota_sync` seconds (the listed kinds' changes are seen then). A write of the quota's
  status alone is no reason (upstream's updateQuota ignores it too): such writes are this
  controller's own and admission's charges, and a charge is seen before the object charged for
  reaches the caches, so a recount then would write a usage that dips and comes back;
- names the hub cannot count (a custom kind) are reported as used 0, as upstream does for
  resources no evaluator knows.
"""

from __future__ import annotations

import copy
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import (
    CONFIGMAPS, PERSISTENTVOLUMECLAIMS, PODS, SECRETS, SERVICES, Resource, key_of, split_key,
)
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, Wakeups
from control.kinds.meta import metadata
from control.kinds.resourcequotas import namespace_usage, show, usage_names

RESOURCEQUOTAS = Resource("", "v1", "resourcequotas", "ResourceQuota")
# Counted from the shared caches besides pods: the kinds upstream's core evaluators know.
CACHED = (SERVICES, SECRETS, CONFIGMAPS, PERSISTENTVOLUMECLAIMS)


def store_key(resource: Resource) -> str:
    return f"{resource.group}/{resource.plural}"


def _hard(quota: Obj) -> dict[str, Any]:
    return (quota.get("spec") or {}).get("hard") or {}


def counted_kinds(hard: list[str]) -> list[Resource]:
    """The built-in namespaced kinds whose objects may count against any of these names."""
    from control.kinds import KINDS

    wanted = set(hard)
    return [Resource(k.group, k.version, k.plural, k.kind) for k in KINDS
            if k.namespaced and wanted & usage_names(k.resource)]


class ResourceQuotaController:
    def __init__(self, client: Any, quotas: Informer, pods: Informer, *, clock: Clock, resync: float,
                 caches: dict[Resource, Informer] | None = None):
        """`caches`: informers of other kinds to count from (by default only pods are cached)."""
        self.client, self.quotas, self.pods = client, quotas, pods
        self.resync = resync
        self.queue = WorkQueue(clock=clock)
        self.wakeups = Wakeups(clock)
        self.caches = {store_key(PODS): pods, **{store_key(r): i for r, i in (caches or {}).items()}}
        quotas.add_handlers(Handlers(on_add=self._quota, on_update=self._quota_updated,
                                     on_delete=lambda q: self.wakeups.forget(key_of(q))))
        for informer in self.caches.values():
            informer.add_handlers(Handlers(on_add=self._counted, on_update=lambda old, new: self._counted(new),
                                           on_delete=self._counted))

    def _quota(self, quota: Obj) -> None:
        self.queue.add(key_of(quota))

    def _quota_updated(self, old: Obj, new: Obj) -> None:
        if _hard(old) != _hard(new):
            self._quota(new)

    def _counted(self, obj: Obj) -> None:
        for quota in self.quotas.cache.by_index("namespace", metadata(obj).get("namespace", "")):
            self.queue.add(key_of(quota))

    async def _objects(self, namespace: str, hard: list[str]) -> dict[str, list[Obj]]:
        found: dict[str, list[Obj]] = {}
        for resource in counted_kinds(hard):
            key = store_key(resource)
            cache = self.caches.get(key)
            if cache is not None:
                found[key] = cache.cache.by_index("namespace", namespace)
                continue
            answer = await self.client.list(resource, namespace)
            found[key] = list(answer.get("items") or [])
        return found

    async def reconcile(self, key: str) -> Result:
        quota = self.quotas.cache.get(key)
        if quota is None:
            return DONE
        namespace, _ = split_key(key)
        hard = dict(_hard(quota))
        used = namespace_usage(quota, await self._objects(namespace, list(hard)))
        status = {"hard": hard, "used": {name: show(name, used.get(name, 0.0)) for name in hard}}
        if status != (quota.get("status") or {}):
            body = copy.deepcopy(quota)
            body.update(apiVersion="v1", kind="ResourceQuota", status=status)
            try:
                await self.client.replace_status(RESOURCEQUOTAS, body)
            except errors.NotFound:
                return DONE
        return self.wakeups.after(key, self.resync)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    quotas, pods = informers.get(RESOURCEQUOTAS), informers.get(PODS)
    caches = {resource: informers.get(resource) for resource in CACHED}
    controller = ResourceQuotaController(client, quotas, pods, clock=clock, resync=timings.quota_sync, caches=caches)
    return Runner("resourcequota-controller", controller.reconcile, controller.queue,
                  [quotas, pods, *caches.values()], workers=1)
