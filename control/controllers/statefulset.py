"""The StatefulSet controller: pods with stable names, stable network identity and their own
claims, created, scaled and updated in order (kube-controller-manager's statefulset controller,
`pkg/controller/statefulset/stateful_set_control.go`).

Guarantees:
- Members are the pods the set controls (orphans matching the selector are adopted, strays
  released) named `<set>-<ordinal>`; ordinals in [start, start+replicas) are wanted, the others
  are condemned. A wanted ordinal without a pod gets one (`statefulsetpods.new_pod`) after its
  claims `<template>-<pod>` exist (created when missing, never while one is being deleted); a
  Failed or Succeeded member is deleted and recreated under the same name, so it re-attaches to
  the same claims, which outlive the pod.
- OrderedReady: at most one change per pass and none past a member that is not Running and
  Ready (or is terminating): creation in ascending order, scale-down one pod at a time from the
  highest ordinal, only when every member is healthy. Parallel: all creations and deletions at
  once.
- Revisions: the template is kept as ControllerRevisions `<set>-<hash>` (one per distinct
  template, re-numbered when an old template comes back, as a rollback does); pods carry
  `controller-revision-hash`. RollingUpdate replaces members not at updateRevision from the
  highest ordinal down to `partition`, one at a time, each waiting for the previous one to be
  Running and Ready; members below the partition are created from currentRevision. OnDelete
  replaces nothing. currentRevision becomes updateRevision once every member runs it and is ready.
  History beyond revisionHistoryLimit that no member uses is deleted.
- persistentVolumeClaimRetentionPolicy: claims get the ownerReferences upstream gives them
  (the set when whenDeleted=Delete, the condemned pod when whenScaled=Delete), so the garbage
  collector deletes them with their owner; Retain/Retain leaves claims unowned.
- Status (replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas,
  currentRevision, updateRevision, observedGeneration, collisionCount) goes through the status
  subresource, only when it changed. Pods have fixed names, so a lagging cache cannot over-create:
  a create of an existing pod is a 409 AlreadyExists, retried after the cache catches up.
- A refused pod or claim create (a quota, a LimitRange) is a Warning `FailedCreate` event as
  upstream words it (`create Pod web-2 in StatefulSet web failed error: <the API's message>`);
  status is still written and the key is retried with the queue's back-off (neither happens for
  a terminating namespace, where every create fails).
Not done: maxUnavailable (alpha upstream), the StatefulSetStartOrdinal-driven migration story.
"""

from __future__ import annotations

import logging
from typing import Any

from control import errors
from control.client.expectations import Expectations
from control.client.informer import Handlers, Informer
from control.client.resources import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS, key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.claiming import claim
from control.controllers.common import Obj, namespace_terminating, pod_available, pod_ready, terminating, uid_of, write_status
from control.controllers.owned import PodsOfOwner
from control.controllers import statefulsetpods as sp
from control.kinds.meta import controller_ref, labels_of, metadata

log = logging.getLogger(__name__)


def running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and pod_ready(pod)


def healthy(pod: Obj) -> bool:
    return running_and_ready(pod) and not terminating(pod)


def finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded")


class StatefulSetController:
    def __init__(self, client: Any, sets: Informer, pods: Informer, revisions: Informer, claims: Informer, *,
                 clock: Clock, recorder: Any = None):
        self.client, self.sets, self.pods, self.revisions, self.claims = client, sets, pods, revisions, claims
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        sets.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                   on_delete=self._enqueue))
        # Names are fixed, so the pod handlers' expectations are never waited on here.
        self.owned = PodsOfOwner("StatefulSet", "apps", sets, self.queue.add, Expectations(clock=clock))
        pods.add_handlers(self.owned.handlers())
        for informer in (revisions, claims):
            informer.add_handlers(Handlers(on_add=self._owner_of, on_update=lambda old, new: self._owner_of(new),
                                           on_delete=self._owner_of))

    # --- handlers: objects to keys -------------------------------------------------------------

    def _enqueue(self, sts: Obj) -> None:
        self.queue.add(key_of(sts))

    def _owner_of(self, obj: Obj) -> None:
        """A revision or claim changed: look again at the set that owns it (claims: by label too)."""
        namespace = metadata(obj).get("namespace", "")
        for ref in metadata(obj).get("ownerReferences") or []:
            if ref.get("kind") == "StatefulSet":
                self.queue.add(f"{namespace}/{ref.get('name')}")

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        sts = self.sets.cache.get(key)
        if sts is None or terminating(sts):
            return DONE
        try:
            return await self.sync(sts)
        except errors.NotFound as exc:
            return retry(f"{key}: {exc}")
        except errors.AlreadyExists as exc:  # the cache has not seen what we made yet
            return retry(f"{key}: {exc}")

    async def sync(self, sts: Obj) -> Result:
        namespace = metadata(sts)["namespace"]
        # upstream's isMemberOf: only pods named <set>-<n> are adopted (and ours are released when they stray)
        candidates = [p for p in self.pods.cache.by_index("namespace", namespace)
                      if sp.ordinal_of(sts, p) is not None or (controller_ref(p) or {}).get("uid") == uid_of(sts)]
        members = [p for p in await claim(self.client, sts, STATEFULSETS, candidates, PODS)
                   if sp.ordinal_of(sts, p) is not None]
        history = sorted((r for r in self.revisions.cache.by_index("namespace", namespace)
                          if (controller_ref(r) or {}).get("uid") == uid_of(sts)), key=lambda r: r.get("revision", 0))
        current, update, collisions = await self.revisions_of(sts, history)
        start, count = sp.start_ordinal(sts), sp.replicas(sts)
        wanted: dict[int, Obj] = {}
        condemned: list[Obj] = []
        for pod in members:
            ordinal = sp.ordinal_of(sts, pod)
            assert ordinal is not None
            if start <= ordinal < start + count:
                wanted[ordinal] = pod
            else:
                condemned.append(pod)
        condemned.sort(key=lambda p: sp.ordinal_of(sts, p) or 0, reverse=True)
        await self.update_claim_owners(sts, wanted, condemned)
        try:
            outcome = await self.manage(sts, wanted, condemned, current, update)
        except errors.ApiError as exc:  # status and history are still brought up to date (upstream)
            outcome = DONE if namespace_terminating(exc) else retry(f"{key_of(sts)}: {exc}")
        pods = list(wanted.values()) + condemned
        await self.update_status(sts, pods, current, update, collisions)
        await self.truncate_history(sts, history, pods, current, update)
        return outcome

    # --- revisions ------------------------------------------------------------------------------

    async def revisions_of(self, sts: Obj, history: list[Obj]) -> tuple[Obj, Obj, int]:
        """(currentRevision, updateRevision, collisionCount), creating or renumbering the update one."""
        status = sts.get("status") or {}
        collisions = int(status.get("collisionCount") or 0)
        data = sp.revision_data(sts)
        latest = history[-1]["revision"] if history else 0
        update = next((r for r in reversed(history) if r.get("data") == data), None)
        if update is None:
            while True:
                candidate = sp.new_revision(sts, latest + 1, collisions)
                clash = next((r for r in history if metadata(r)["name"] == metadata(candidate)["name"]), None)
                if clash is None:
                    break
                collisions += 1  # same hash, other template: upstream bumps collisionCount
            update = await self.client.create(CONTROLLERREVISIONS, candidate, metadata(sts)["namespace"])
            history = history + [update]
        elif update.get("revision", 0) < latest:
            # An older template is back (a rollback): it becomes the newest revision again.
            body = dict(update, revision=latest + 1)
            update = await self.client.replace(CONTROLLERREVISIONS, body)
        by_name = {metadata(r)["name"]: r for r in history}
        current = by_name.get(status.get("currentRevision", ""), update)
        return current, update, collisions

    async def truncate_history(self, sts: Obj, history: list[Obj], pods: list[Obj], current: Obj,
                               update: Obj) -> None:
        limit = int(sp.spec(sts).get("revisionHistoryLimit", 10) or 0)
        live = {labels_of(p).get(sp.REVISION_LABEL) for p in pods}
        live |= {metadata(current)["name"], metadata(update)["name"]}
        old = [r for r in history if metadata(r)["name"] not in live]
        for revision in old[:max(0, len(old) - limit)]:
            try:
                await self.client.delete(CONTROLLERREVISIONS, metadata(revision)["name"], metadata(sts)["namespace"],
                                         preconditions={"uid": uid_of(revision)})
            except errors.NotFound:
                pass

    # --- pods and claims ------------------------------------------------------------------------

    def _claim(self, namespace: str, name: str) -> Obj | None:
        return self.claims.cache.get(f"{namespace}/{name}")

    async def create_claims(self, sts: Obj, pod_name: str) -> str:
        """Create the pod's missing claims; the reason to wait ("" when all exist and none is going)."""
        namespace = metadata(sts)["namespace"]
        for template in sp.claim_templates(sts):
            name = sp.claim_name(metadata(template).get("name", ""), pod_name)
            existing = self._claim(namespace, name)
            if existing is not None and terminating(existing):
                return f"claim {name} is being deleted"
            if existing is None:
                body = sp.new_claim(sts, template, pod_name)
                refs = sp.claim_owner_refs(sts, body, None, condemned=False)
                if refs:
                    body["metadata"]["ownerReferences"] = refs
                try:
                    await self.client.create(PERSISTENTVOLUMECLAIMS, body, namespace)
                except errors.AlreadyExists:
                    continue  # made earlier; the cache will show it
                except errors.ApiError as exc:
                    if not namespace_terminating(exc):
                        await self._event(sts, "Warning", "FailedCreate", f"create Claim {name} for Pod {pod_name} "
                                          f"in StatefulSet {metadata(sts)['name']} failed error: {exc}")
                    raise
                await self._event(sts, "Normal", "SuccessfulCreate",
                                  f"create Claim {name} Pod {pod_name} in StatefulSet {metadata(sts)['name']} success")
        return ""

    async def update_claim_owners(self, sts: Obj, wanted: dict[int, Obj], condemned: list[Obj]) -> None:
        namespace = metadata(sts)["namespace"]
        for pod, is_condemned in [(p, False) for p in wanted.values()] + [(p, True) for p in condemned]:
            for template in sp.claim_templates(sts):
                name = sp.claim_name(metadata(template).get("name", ""), metadata(pod)["name"])
                existing = self._claim(namespace, name)
                if existing is None or terminating(existing):
                    continue
                refs = sp.claim_owner_refs(sts, existing, pod, is_condemned)
                if refs is not None:
                    patch = {"metadata": {"ownerReferences": refs or None,
                                          "resourceVersion": metadata(existing)["resourceVersion"]}}
                    await self.client.patch(PERSISTENTVOLUMECLAIMS, metadata(existing)["name"], patch, namespace)

    async def create_pod(self, sts: Obj, revision: Obj, ordinal: int) -> str:
        name = sp.pod_name(sts, ordinal)
        why = await self.create_claims(sts, name)
        if why:
            return why
        try:
            await self.client.create(PODS, sp.new_pod(sts, revision, ordinal), metadata(sts)["namespace"])
        except errors.AlreadyExists:
            raise  # the cache has not seen it yet: no event, as upstream sinks these
        except errors.ApiError as exc:
            if not namespace_terminating(exc):
                await self._event(sts, "Warning", "FailedCreate",
                                  f"create Pod {name} in StatefulSet {metadata(sts)['name']} failed error: {exc}")
            raise
        await self._event(sts, "Normal", "SuccessfulCreate",
                          f"create Pod {name} in StatefulSet {metadata(sts)['name']} successful")
        return ""

    async def delete_pod(self, sts: Obj, pod: Obj) -> None:
        try:
            await self.client.delete(PODS, metadata(pod)["name"], metadata(pod)["namespace"],
                                     preconditions={"uid": uid_of(pod)})
        except errors.NotFound:
            return
        await self._event(sts, "Normal", "SuccessfulDelete",
                          f"delete Pod {metadata(pod)['name']} in StatefulSet {metadata(sts)['name']} successful")

    async def manage(self, sts: Obj, wanted: dict[int, Obj], condemned: list[Obj], current: Obj,
                     update: Obj) -> Result:
        """One pass of upstream's updateStatefulSet: create/repair, then scale down, then update."""
        ordered = sp.spec(sts).get("podManagementPolicy", "OrderedReady") != "Parallel"
        start, count = sp.start_ordinal(sts), sp.replicas(sts)
        strategy = sp.spec(sts).get("updateStrategy") or {}
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        for ordinal in range(start, start + count):
            pod = wanted.get(ordinal)
            if pod is not None and finished(pod) and not terminating(pod):
                await self.delete_pod(sts, pod)  # recreated under the same name on a later pass
                if ordered:
                    return DONE
                continue
            if pod is None:
                revision = current if rolling and ordinal < start + partition else update
                why = await self.create_pod(sts, revision, ordinal)
                if why or ordered:
                    return DONE
                continue
            if terminating(pod) or not running_and_ready(pod):
                if ordered:
                    return DONE  # each member Running and Ready before the next
                continue
            if not sp.identity_matches(sts, pod, ordinal):
                await self.client.patch(PODS, metadata(pod)["name"], sp.identity_patch(sts, pod, ordinal),
                                        metadata(pod)["namespace"])
            if await self.create_claims(sts, metadata(pod)["name"]):
                return DONE
        for pod in condemned:
            if terminating(pod):
                if ordered:
                    return DONE
                continue
            await self.delete_pod(sts, pod)
            if ordered:
                return DONE
        if condemned and ordered:
            return DONE
        if rolling:
            for ordinal in range(start + count - 1, start + partition - 1, -1):
                pod = wanted.get(ordinal)
                if pod is None:
                    continue
                if labels_of(pod).get(sp.REVISION_LABEL) != metadata(update)["name"] and not terminating(pod):
                    await self.delete_pod(sts, pod)
                    return DONE
                if not healthy(pod):
                    return DONE  # the next older member waits for this one
        return DONE

    # --- status ---------------------------------------------------------------------------------

    async def update_status(self, sts: Obj, pods: list[Obj], current: Obj, update: Obj, collisions: int) -> None:
        min_ready, now = int(sp.spec(sts).get("minReadySeconds") or 0), self.clock.now()
        live = [p for p in pods if not finished(p)]
        current_name, update_name = metadata(current)["name"], metadata(update)["name"]
        status = dict(sts.get("status") or {})
        status.update({
            "observedGeneration": metadata(sts).get("generation", 0),
            "replicas": len(live),
            "readyReplicas": sum(1 for p in live if running_and_ready(p)),
            "availableReplicas": sum(1 for p in live if running_and_ready(p) and pod_available(p, min_ready, now)),
            "currentReplicas": sum(1 for p in live if labels_of(p).get(sp.REVISION_LABEL) == current_name),
            "updatedReplicas": sum(1 for p in live if labels_of(p).get(sp.REVISION_LABEL) == update_name),
            "currentRevision": current_name, "updateRevision": update_name, "collisionCount": collisions,
        })
        want = sp.replicas(sts)
        rolling = (sp.spec(sts).get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if (rolling and status["updatedReplicas"] == want and status["readyReplicas"] == want
                and status["replicas"] == want):
            # upstream's completeRollingUpdate: the update is now the current revision
            status["currentRevision"], status["currentReplicas"] = update_name, status["updatedReplicas"]
        await write_status(self.client, STATEFULSETS, sts, status)

    async def _event(self, sts: Obj, type_: str, reason: str, message: str) -> None:
        if self.recorder:
            await self.recorder.record(sts, type_, reason, message)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    sets, pods = informers.get(STATEFULSETS), informers.get(PODS)
    revisions, claims = informers.get(CONTROLLERREVISIONS), informers.get(PERSISTENTVOLUMECLAIMS)
    controller = StatefulSetController(client, sets, pods, revisions, claims, clock=clock, recorder=recorder)
    return Runner("statefulset", controller.reconcile, controller.queue, [sets, pods, revisions, claims], workers=4)
