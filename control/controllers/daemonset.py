"""The DaemonSet controller: one daemon pod on every eligible node, kept to the current template
(kube-controller-manager's `pkg/controller/daemon`).

Guarantees:
- Every pass reads nodes, the DaemonSet's ControllerRevisions and its pods from the informer
  caches; pods and revisions matching the selector are claimed (orphans adopted, strays released).
- History: the revision whose data equals the current template is the current one (renumbered
  past the others when a rollback brought it back); otherwise `<ds>-<hash>` is created with the
  next number (a name taken by different data bumps `status.collisionCount`); old revisions
  beyond `revisionHistoryLimit` that no pod still uses are deleted, oldest first.
- Manage: a node that should run the daemon pod and has none gets one (pinned to it by a
  required node affinity; the default scheduler binds it); a node that should not keep it (or a
  node that is gone) loses its pods; a failed daemon pod is deleted (at most once per per-node
  back-off, 1 s doubling to 15 min) and replaced once it is gone; extra pods on a node are
  deleted, oldest kept (with surge,
  the oldest old and oldest new pod are kept until the new one is available).
- Rolling update (when the expectations are met): without surge, old pods are deleted while at
  most maxUnavailable nodes are unavailable (unavailable old pods at once); with maxSurge, new
  pods start beside old ones on at most maxSurge nodes and old ones go when the new are
  available. OnDelete leaves old pods alone.
- A refused create (a quota, a LimitRange) is a Warning `FailedCreate` event "Error creating:
  <the API's message>" on the DaemonSet and a retry with the queue's back-off (none in a
  terminating namespace).
- Creates and deletes are expectations until the cache shows them; status (desired, current,
  ready, available, updated, misscheduled, unavailable, observedGeneration) is written through
  the status subresource only when it changed.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from control import errors
from control.client.expectations import Expectations
from control.client.informer import Handlers, Informer
from control.client.resources import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS, key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.claiming import claim
from control.controllers.common import (
    Obj, Wakeups, delete_pods, namespace_terminating, pod_available, pod_ready, record_creates, record_deletes,
    terminating, uid_of, write_status,
)
from control.controllers.daemonsetpods import (
    REVISION_HASH_LABEL, compute_status, is_updated, new_pod, new_revision, oldest_first,
    revision_data, rolling_update, should_run, surge_and_unavailable, target_node,
)
from control.controllers.owned import PodsOfOwner
from control.controllers.replicaset import slow_start_batches
from control.kinds.daemonsets import template_generation
from control.kinds.hashing import collision_count, template_hash
from control.kinds.meta import controller_ref, get_condition, labels_of, metadata, parse_time

log = logging.getLogger(__name__)

BURST = 250  # the most pods created or deleted in one pass (upstream's burstReplicas)
BACKOFF_BASE, BACKOFF_MAX = 1.0, 900.0


class DaemonSetController:
    def __init__(self, client: Any, daemonsets: Informer, pods: Informer, nodes: Informer, revisions: Informer, *,
                 clock: Clock, recorder: Any = None):
        self.client, self.daemonsets, self.pods, self.nodes, self.revisions = client, daemonsets, pods, nodes, revisions
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        self.expectations = Expectations(clock=clock)
        self.wakeups = Wakeups(clock)
        self.backoff: dict[tuple[str, str], tuple[float, float]] = {}  # (ds key, node) -> (delay, until)
        daemonsets.add_handlers(Handlers(on_add=self._ds_changed, on_update=lambda old, new: self._ds_changed(new),
                                         on_delete=self._ds_deleted))
        pods.add_handlers(PodsOfOwner("DaemonSet", "apps", daemonsets, self.queue.add, self.expectations).handlers())
        nodes.add_handlers(Handlers(on_add=self._all, on_update=self._node_updated, on_delete=self._all))
        revisions.add_handlers(Handlers(on_add=self._revision, on_update=lambda old, new: self._revision(new),
                                        on_delete=self._revision))

    # --- handlers: objects to keys -------------------------------------------------------------

    def _ds_changed(self, ds: Obj) -> None:
        self.queue.add(key_of(ds))

    def _ds_deleted(self, ds: Obj) -> None:
        self.expectations.forget(key_of(ds))
        self.wakeups.forget(key_of(ds))
        self.queue.add(key_of(ds))

    def _all(self, node: Obj) -> None:
        for ds in self.daemonsets.cache.list():
            self.queue.add(key_of(ds))

    def _node_updated(self, old: Obj, new: Obj) -> None:
        def shape(node: Obj) -> tuple:
            return labels_of(node), (node.get("spec") or {}).get("taints") or []
        if shape(old) != shape(new):  # only labels and taints decide where daemon pods belong
            self._all(new)

    def _revision(self, revision: Obj) -> None:
        ref = controller_ref(revision)
        if ref and ref.get("kind") == "DaemonSet":
            self.queue.add(f"{metadata(revision).get('namespace')}/{ref.get('name')}")

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        ds = self.daemonsets.cache.get(key)
        if ds is None:
            self.expectations.forget(key)
            return DONE
        if terminating(ds):
            return DONE
        try:
            return await self.sync(key, ds)
        except errors.NotFound as exc:
            return retry(f"{key}: {exc}")

    async def sync(self, key: str, ds: Obj) -> Result:
        namespace = metadata(ds)["namespace"]
        revisions = await claim(self.client, ds, DAEMONSETS, self.revisions.cache.by_index("namespace", namespace),
                                CONTROLLERREVISIONS)
        hash_, old = await self.construct_history(ds, revisions)
        if hash_ is None:
            return retry(f"{key}: revision name collision; collisionCount bumped")
        pods = await claim(self.client, ds, DAEMONSETS, self.pods.cache.by_index("namespace", namespace), PODS)
        nodes = sorted(self.nodes.cache.list(), key=lambda n: metadata(n)["name"])
        by_node: dict[str, list[Obj]] = {}
        for pod in pods:
            by_node.setdefault(target_node(pod), []).append(pod)
        outcome: Result = DONE
        if self.expectations.satisfied(key):
            outcome = await self.manage(key, ds, nodes, by_node, hash_)
            strategy = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type")
            if outcome == DONE and strategy == "RollingUpdate" and self.expectations.satisfied(key):
                wanting = [metadata(n)["name"] for n in nodes if should_run(ds, n)[0]]
                # a node that wants a pod and has none counts as unavailable (updatedDesiredNodeCounts)
                pods_by_node = {**{name: [] for name in wanting}, **{n: p for n, p in by_node.items() if n}}
                plan = rolling_update(ds, pods_by_node, len(wanting), hash_, self.clock.now())
                outcome = await self.sync_nodes(key, ds, plan.delete, plan.create, hash_)
            await self.cleanup_history(ds, old, pods)
        now = self.clock.now()
        await write_status(self.client, DAEMONSETS, ds, compute_status(ds, nodes, by_node, hash_, now))
        if outcome == DONE:
            return self._wake_for_availability(key, ds, pods)
        return outcome

    # --- history --------------------------------------------------------------------------------

    async def construct_history(self, ds: Obj, revisions: list[Obj]) -> tuple[str | None, list[Obj]]:
        """The current revision's hash (None after a name collision) and the old revisions."""
        data = revision_data(ds)
        current = [r for r in revisions if r.get("data") == data]
        old = [r for r in revisions if r.get("data") != data]
        newest = max((int(r.get("revision") or 0) for r in revisions), default=0)
        if current:
            keep = max(current, key=lambda r: int(r.get("revision") or 0))
            old += [r for r in current if r is not keep]  # duplicates age out with the history
            if int(keep.get("revision") or 0) < newest:  # rolled back to: it becomes the newest
                await self.client.patch(CONTROLLERREVISIONS, metadata(keep)["name"], {"revision": newest + 1},
                                        metadata(keep)["namespace"])
            # constructHistory: a revision without the label gets the template's hash
            return (labels_of(keep).get(REVISION_HASH_LABEL)
                    or template_hash((ds.get("spec") or {}).get("template"), collision_count(ds))), old
        collisions = int((ds.get("status") or {}).get("collisionCount") or 0)
        hash_ = template_hash((ds.get("spec") or {}).get("template"), collision_count(ds))
        try:
            await self.client.create(CONTROLLERREVISIONS, new_revision(ds, hash_, newest + 1), metadata(ds)["namespace"])
        except errors.AlreadyExists:
            existing = await self.client.get(CONTROLLERREVISIONS, f"{metadata(ds)['name']}-{hash_}",
                                             metadata(ds)["namespace"])
            if existing.get("data") == data and (controller_ref(existing) or {}).get("uid") == uid_of(ds):
                return hash_, old
            status = copy.deepcopy(ds.get("status") or {})
            status["collisionCount"] = collisions + 1
            await write_status(self.client, DAEMONSETS, ds, status)
            return None, old
        return hash_, old

    async def cleanup_history(self, ds: Obj, old: list[Obj], pods: list[Obj]) -> None:
        limit = (ds.get("spec") or {}).get("revisionHistoryLimit")
        limit = 10 if not isinstance(limit, int) else limit
        live = {labels_of(p).get(REVISION_HASH_LABEL) for p in pods}
        excess = len(old) - limit
        for revision in sorted(old, key=lambda r: int(r.get("revision") or 0)):
            if excess <= 0:
                break
            if labels_of(revision).get(REVISION_HASH_LABEL) in live:
                continue
            try:
                await self.client.delete(CONTROLLERREVISIONS, metadata(revision)["name"], metadata(revision)["namespace"],
                                         preconditions={"uid": uid_of(revision)})
            except errors.NotFound:
                pass
            excess -= 1

    # --- manage: the right number of pods on every node -----------------------------------------

    async def manage(self, key: str, ds: Obj, nodes: list[Obj], by_node: dict[str, list[Obj]], hash_: str) -> Result:
        surge = surge_and_unavailable(ds, 1)[0] > 0 and (
            ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type") == "RollingUpdate")
        now, generation = self.clock.now(), template_generation(ds)
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        create: list[str] = []
        delete: list[Obj] = []
        waits: list[float] = []
        events: list[tuple[str, str, str]] = []
        known = set()
        for node in nodes:
            name = metadata(node)["name"]
            known.add(name)
            run, keep = should_run(ds, node)
            pods = by_node.get(name, [])
            if run and not pods:
                create.append(name)
            elif keep:
                running = []
                for pod in pods:
                    phase = (pod.get("status") or {}).get("phase")
                    if terminating(pod):
                        continue
                    if phase == "Failed":  # replaced once gone; the back-off stops a fight with the kubelet
                        wait = self._backing_off(key, name, now)
                        if wait:
                            waits.append(wait)
                            continue
                        self._back_off(key, name, now)
                        delete.append(pod)
                        events.append(("Warning", "FailedDaemonPod", f"Found failed daemon pod {metadata(pod)['namespace']}/"
                                       f"{metadata(pod)['name']} on node {name}, will try to kill it"))
                    elif phase == "Succeeded":
                        delete.append(pod)
                    else:
                        running.append(pod)
                running = oldest_first(running)
                if not surge:
                    delete += running[1:]
                    continue
                new = [p for p in running if is_updated(p, hash_, generation)]
                old = [p for p in running if not is_updated(p, hash_, generation)]
                delete += new[1:] + old[1:]
                if new and old and (not pod_ready(old[0]) or pod_available(new[0], min_ready, now)):
                    delete.append(old[0])
            else:
                delete += [p for p in pods if not terminating(p)]
        for name, pods in by_node.items():  # pods pinned to nodes that are gone
            if name not in known:
                delete += [p for p in pods if not terminating(p)]
        if self.recorder:
            for type_, reason, message in events:
                await self.recorder.record(ds, type_, reason, message)
        outcome = await self.sync_nodes(key, ds, delete, create, hash_)
        if outcome == DONE and waits:
            return self.wakeups.after(key, min(waits))
        return outcome

    def _back_off(self, key: str, node: str, now: float) -> None:
        delay, until = self.backoff.get((key, node), (0.0, 0.0))
        delay = BACKOFF_BASE if delay == 0 or now > until + BACKOFF_MAX * 2 else min(BACKOFF_MAX, delay * 2)
        self.backoff[(key, node)] = (delay, now + delay)

    def _backing_off(self, key: str, node: str, now: float) -> float:
        _, until = self.backoff.get((key, node), (0.0, 0.0))
        return max(0.0, until - now)

    async def sync_nodes(self, key: str, ds: Obj, delete: list[Obj], create: list[str], hash_: str) -> Result:
        delete, create = delete[:BURST], create[:BURST]
        if not delete and not create:
            return DONE
        self.expectations.expect(key, adds=len(create), deletes={uid_of(p) for p in delete})
        outcome = await self._create(key, ds, create, hash_)
        failure = await self._delete(key, ds, delete)
        return failure or outcome

    async def _create(self, key: str, ds: Obj, nodes: list[str], hash_: str) -> Result:
        namespace, sent = metadata(ds)["namespace"], 0
        for size in slow_start_batches(len(nodes)):
            batch = nodes[sent:sent + size]
            sent += size
            results = await asyncio.gather(*(self.client.create(PODS, new_pod(ds, node, hash_), namespace)
                                             for node in batch), return_exceptions=True)
            failures = [r for r in results if isinstance(r, BaseException)]
            for _ in failures:
                self.expectations.create_failed(key)
            await record_creates(self.recorder, ds, results)
            if failures:
                for _ in nodes[sent:]:
                    self.expectations.create_failed(key)  # never sent: do not wait for them
                if namespace_terminating(failures[0]):
                    return DONE  # every later create fails too (upstream ignores it)
                if not isinstance(failures[0], errors.ApiError):
                    raise failures[0]
                return retry(f"creating daemon pods for {key}: {failures[0]}")
        return DONE

    async def _delete(self, key: str, ds: Obj, victims: list[Obj]) -> Result | None:
        results = await delete_pods(self.client, PODS, self.expectations, key, victims)
        await record_deletes(self.recorder, ds, victims, results)
        failures = [r for r in results if isinstance(r, BaseException) and not isinstance(r, errors.NotFound)]
        if failures:
            if not isinstance(failures[0], errors.ApiError):
                raise failures[0]
            return retry(f"deleting daemon pods of {key}: {failures[0]}")
        return None

    def _wake_for_availability(self, key: str, ds: Obj, pods: list[Obj]) -> Result:
        """With minReadySeconds, look again when the next ready pod becomes available."""
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now, waits = self.clock.now(), []
        for pod in pods:
            since = parse_time((get_condition(pod, "Ready") or {}).get("lastTransitionTime"))
            if min_ready and pod_ready(pod) and since is not None and since + min_ready > now:
                waits.append(since + min_ready - now)
        return self.wakeups.after(key, min(waits) + 0.5) if waits else DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    daemonsets, pods = informers.get(DAEMONSETS), informers.get(PODS)
    nodes, revisions = informers.get(NODES), informers.get(CONTROLLERREVISIONS)
    controller = DaemonSetController(client, daemonsets, pods, nodes, revisions, clock=clock, recorder=recorder)
    return Runner("daemonset", controller.reconcile, controller.queue, [daemonsets, pods, nodes, revisions], workers=2)
