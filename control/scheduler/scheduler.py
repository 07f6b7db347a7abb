"""The scheduler process: informers on pods (all namespaces) and nodes, handlers that queue the
pods it must place, and `reconcile(key)` that places one pod — filter, score, assume, bind.

Guarantees:
- It places only pods with no `spec.nodeName`, no `spec.schedulingGates` (the hub marks a gated
  pod PodScheduled=False, SchedulingGated; removing the last gate is an update that queues it),
  `spec.schedulerName` "default-scheduler" (or none), no deletionTimestamp and not finished;
  everything else is left alone.
- Every decision reads the scheduler's own cache (per-node sums kept from watch events plus its
  own assumed pods), so a burst of pods never overfills a node while the watch lags the binds.
  Filtering and scoring run without an await in between and the pod is assumed before its
  binding is sent, so concurrent workers always see each other's choices.
- Its one write to a pod's spec is `pods/NAME/binding`; a 409 (already bound or being deleted)
  or 404 means someone else decided — done. Events: `Scheduled`, and `FailedScheduling`
  (Warning) with kube-scheduler's wording, sent in order in the background so they never delay
  a binding; an unschedulable pod also gets the condition
  PodScheduled=False, reason Unschedulable, through a strategic merge patch of `pods/NAME/status`
  (conditions merge by type, so nothing else in the status is touched).
- Unschedulable pods are retried when a node appears, becomes Ready, changes allocatable, taints,
  labels or `unschedulable`, and when a counted pod is deleted or finishes (those with pod
  affinity or spread constraints also when a pod lands on a node); and periodically
  with backoff from `initial_backoff` doubling to `max_backoff` (60 s).
- Volumes (`volumes`, upstream's VolumeBinding): a pod whose claim is missing, being deleted or
  unbound with an Immediate class is unschedulable with upstream's message, and retried when a
  claim changes; a pod with unbound WaitForFirstConsumer claims is placed, and before it is bound
  its node is named on each claim (`volume.kubernetes.io/selected-node`) and the binding waits
  (at most `volume_bind_timeout`, upstream's 600 s) until the claims are bound. So a kubelet is
  never given a pod whose claim is unbound.
- Preemption (upstream's DefaultPreemption, `control.scheduler.preemption`): a pod that fits
  nowhere and may preempt picks the node where removing lower-priority pods does the least harm;
  each victim gets the DisruptionTarget condition (PreemptionByScheduler), a `Preempted` event
  ("Preempted by pod <uid> on node <node>") and a graceful delete; lower-priority pods nominated
  to that node lose their nomination; the pod gets `status.nominatedNodeName` and waits, and is
  placed when the victims are gone. While a pod is nominated to a node, pods of lower or equal
  priority see its requests taken there, so the room made is kept for it.
- The queue hands out higher-priority pods first (`control.scheduler.queue`, PrioritySort).
- Many workers (KK_SCHEDULER_WORKERS, default 32) overlap bindings; the hub's write rate, not
  the decisions (about 0.3 ms per pod for 10 nodes), bounds the throughput.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from control import config, errors
from control.clock import REAL, Clock
from control.client.component import connect, run_all
from control.client.events import EventRecorder
from control.client.http import HubClient
from control.client.informer import Handlers
from control.client.resources import (NODES, PERSISTENTVOLUMECLAIMS, PODDISRUPTIONBUDGETS, PODS, STORAGECLASSES, key_of,
                                     split_key)
from control.client.runner import DONE, Result, Runner, requeue_after
from control.client.shared import SharedInformers
from control.client.workqueue import WorkQueue
from control.kinds.meta import find_condition, is_node_ready, new_condition
from control.scheduler.cache import TERMINAL_PHASES, SchedulerCache
from control.scheduler.events import EventSender
from control.scheduler.demand import NodeInfo, Obj, Requests, pod_requests
from control.scheduler.filter import RESOURCE_REASONS, failure_message, node_reasons
from control.scheduler.interpod import ClusterFilters
from control.scheduler.preemption import (DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER, Candidate, eligibility,
                                          pick_candidate, priority_of, select_victims)
from control.scheduler.queue import PriorityOrder
from control.scheduler.score import pick_node
from control.scheduler.volumes import SELECTED_NODE, check_claims, is_bound, prefilter_message

log = logging.getLogger(__name__)

SCHEDULER_NAME = "default-scheduler"


def wants_scheduling(pod: Obj) -> bool:
    """Is this pod ours to place now?"""
    spec = pod.get("spec") or {}
    return (not spec.get("nodeName")
            and not spec.get("schedulingGates")  # gated: not even attempted until the gates are gone
            and (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
            and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES)


def depends_on_pods(pod: Obj) -> bool:
    """Could another pod arriving somewhere let this one fit (pod affinity, topology spread)?"""
    spec = pod.get("spec") or {}
    return bool(((spec.get("affinity") or {}).get("podAffinity")) or spec.get("topologySpreadConstraints"))


def node_fit_changed(old: Obj, new: Obj) -> bool:
    """Could this node update let a pod fit that did not fit before (or the reverse)?"""
    def shape(node: Obj) -> tuple:
        spec, status = node.get("spec") or {}, node.get("status") or {}
        return (is_node_ready(node), bool(spec.get("unschedulable")), spec.get("taints") or [],
                status.get("allocatable") or status.get("capacity") or {}, (node.get("metadata") or {}).get("labels") or {})
    return shape(old) != shape(new)


def _placement_inputs(pod: Obj) -> tuple:
    meta = pod.get("metadata") or {}
    return pod.get("spec"), meta.get("labels"), meta.get("deletionTimestamp"), meta.get("uid")


def _as_pod(pod: Obj) -> Obj:
    """List items carry no kind; events need it to find their pod (kubectl describe)."""
    return {**pod, "kind": "Pod", "apiVersion": "v1"}


class Scheduler:
    def __init__(self, client: HubClient, informers: SharedInformers, *, clock: Clock | None = None,
                 recorder: EventRecorder | None = None, workers: int | None = None, assumed_ttl: float = 30.0,
                 initial_backoff: float = 1.0, max_backoff: float = 60.0, volume_bind_timeout: float = 600.0):
        self.client = client
        self.clock = clock or REAL
        self.events = EventSender(recorder or EventRecorder(client, SCHEDULER_NAME, clock=self.clock))
        self.initial_backoff, self.max_backoff = initial_backoff, max_backoff
        self.pods = informers.get(PODS)
        self.nodes = informers.get(NODES)
        self.claims = informers.get(PERSISTENTVOLUMECLAIMS)
        self.classes = informers.get(STORAGECLASSES)
        self.budgets = informers.get(PODDISRUPTIONBUDGETS)
        self.volume_bind_timeout = volume_bind_timeout
        self._claim_waiters: set[asyncio.Event] = set()
        self.cache = SchedulerCache(clock=self.clock, ttl=assumed_ttl)
        self.queue = WorkQueue(clock=self.clock, order=PriorityOrder(self._priority_of))
        # pods waiting for the room their preemption makes: key -> (node, priority, requests)
        self.nominated: dict[str, tuple[str, int, Requests]] = {}
        self.unschedulable: set[str] = set()
        self.pod_dependent: set[str] = set()  # unschedulable pods with pod affinity or spread constraints
        self.attempts: dict[str, int] = {}
        self.pods.add_handlers(Handlers(on_add=self._pod_seen, on_update=self._pod_updated, on_delete=self._pod_gone))
        self.nodes.add_handlers(Handlers(on_add=self._node_added, on_update=self._node_updated,
                                         on_delete=self._node_gone))
        self.claims.add_handlers(Handlers(on_add=self._claim_changed, on_update=lambda old, new: self._claim_changed(new),
                                          on_delete=self._claim_changed))
        self.classes.add_handlers(Handlers(on_add=self._claim_changed, on_update=lambda old, new: self._claim_changed(new)))
        self.runner = Runner("scheduler", self.reconcile, self.queue,
                             [self.pods, self.nodes, self.claims, self.classes, self.budgets],
                             workers=workers if workers is not None else config.value("KK_SCHEDULER_WORKERS"))

    async def run(self) -> None:
        await asyncio.gather(self.runner.run(), self.events.run())

    # --- handlers: map events to keys, keep the sums ---------------------------------------------

    def _priority_of(self, key: str) -> int:
        pod = self.pods.cache.get(key)
        return priority_of(pod) if pod is not None else 0

    def _track_nomination(self, pod: Obj) -> None:
        key, node = key_of(pod), (pod.get("status") or {}).get("nominatedNodeName")
        if node and wants_scheduling(pod):
            self.nominated[key] = (node, priority_of(pod), pod_requests(pod))
        else:
            self.nominated.pop(key, None)

    def _pod_seen(self, pod: Obj) -> None:
        key = key_of(pod)
        self._track_nomination(pod)
        before = self.cache.counted(key)
        if self.cache.pod_observed(pod):
            self.retry_unschedulable("resources freed on a node")
        elif self.pod_dependent and self.cache.counted(key) is not None and (before is None or before.assumed):
            self.retry_pod_dependent()  # a pod now on a node may satisfy someone's pod affinity
        if wants_scheduling(pod):
            self.queue.add(key)
        else:
            self._settled(key)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        key = key_of(new)
        if key in self.unschedulable and _placement_inputs(old) == _placement_inputs(new):
            self._track_nomination(new)
            self.cache.pod_observed(new)  # e.g. our own PodScheduled=False patch: wait for the retry
            return
        self._pod_seen(new)

    def _pod_gone(self, pod: Obj) -> None:
        self.nominated.pop(key_of(pod), None)
        self._settled(key_of(pod))
        if self.cache.pod_deleted(pod):
            self.retry_unschedulable("a pod was deleted from a node")

    def _node_added(self, node: Obj) -> None:
        self.cache.set_node(node)
        self.retry_unschedulable("a node was added")

    def _node_updated(self, old: Obj, new: Obj) -> None:
        self.cache.set_node(new)
        if node_fit_changed(old, new):
            self.retry_unschedulable("a node changed")

    def _node_gone(self, node: Obj) -> None:
        self.cache.remove_node(node["metadata"]["name"])

    def _claim_changed(self, obj: Obj) -> None:
        for waiter in self._claim_waiters:
            waiter.set()
        self.retry_unschedulable("a claim or storage class changed")

    def retry_unschedulable(self, why: str) -> None:
        if self.unschedulable:
            log.debug("retrying %d unschedulable pods: %s", len(self.unschedulable), why)
        for key in self.unschedulable:
            self.queue.add(key)

    def retry_pod_dependent(self) -> None:
        """Queue the unschedulable pods whose fit depends on where other pods are."""
        for key in self.pod_dependent:
            self.queue.add(key)

    def _settled(self, key: str) -> None:
        self.unschedulable.discard(key)
        self.pod_dependent.discard(key)
        self.attempts.pop(key, None)

    # --- reconcile: place one pod ----------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        for expired in self.cache.expire():
            log.info("assumed pod %s was never confirmed by the watch; forgetting the assumption", expired)
            self.queue.add(expired)
        pod = self.pods.cache.get(key)
        if pod is None or not wants_scheduling(pod):
            self._settled(key)
            return DONE
        if self.cache.is_assumed(key):
            return DONE  # bound (or being bound) by us; the watch has not shown it yet

        requests = pod_requests(pod)
        infos = self.cache.nodes()
        volumes = check_claims(pod, lambda ns, name: self.claims.cache.get(f"{ns}/{name}"), self.classes.cache.list)
        if volumes.unresolvable:
            return await self._unschedulable(key, pod, prefilter_message(len(infos), volumes.unresolvable))
        others = ClusterFilters(pod, infos, self.cache.anti_affinity)
        cluster = others.reason if others.active else None
        feasible, reasons = [], {}
        for info in infos:
            why = node_reasons(pod, requests, self._with_nominated(info, key, pod), cluster)
            if why:
                reasons[info.name] = why
            else:
                feasible.append(info)
        if not feasible:
            post_filter, nominated = await self._preempt(key, pod, infos, reasons)
            return await self._unschedulable(key, pod, failure_message(len(infos), reasons, post_filter), nominated)

        node = pick_node(pod, pod_requests(pod, nonzero=True), feasible, infos).name
        self.cache.assume(pod, node)
        namespace, name = split_key(key)
        try:
            if volumes.delayed and not await self._claims_bound_on(node, volumes.delayed):
                self.cache.forget(key)
                return await self._unschedulable(key, pod, "binding volumes: timed out waiting for the condition")
            await self.client.bind(namespace, name, node)
        except (errors.Conflict, errors.NotFound) as exc:
            self.cache.forget(key)
            log.info("binding %s to %s refused (%s); someone else decided", key, node, exc)
            return DONE
        except BaseException:
            self.cache.forget(key)
            raise
        self.cache.finish_binding(key)
        self._settled(key)
        log.info('"Successfully bound pod to node" pod="%s" node="%s"', key, node)
        self.events.emit(_as_pod(pod), "Normal", "Scheduled", f"Successfully assigned {key} to {node}")
        return DONE

    async def _claims_bound_on(self, node: str, claims: list[Obj]) -> bool:
        """PreBind: name the node on each delayed claim, then wait until every one is bound."""
        for claim in claims:
            meta = claim["metadata"]
            if (meta.get("annotations") or {}).get(SELECTED_NODE) != node:
                await self.client.patch(PERSISTENTVOLUMECLAIMS, meta["name"],
                                        {"metadata": {"annotations": {SELECTED_NODE: node}}}, meta.get("namespace"))
        keys = [key_of(claim) for claim in claims]
        deadline = self.clock.monotonic() + self.volume_bind_timeout
        while True:
            current = [self.claims.cache.get(key) for key in keys]
            if any(c is None or (c.get("metadata") or {}).get("deletionTimestamp") for c in current):
                return False
            if all(is_bound(c) for c in current if c is not None):
                return True
            remaining = deadline - self.clock.monotonic()
            if remaining <= 0:
                return False
            changed = asyncio.Event()
            self._claim_waiters.add(changed)
            try:
                waits = [asyncio.ensure_future(changed.wait()), asyncio.ensure_future(self.clock.sleep(remaining))]
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                for waiting in waits:
                    waiting.cancel()
            finally:
                self._claim_waiters.discard(changed)

    # --- preemption (PostFilter) ----------------------------------------------------------------

    def _with_nominated(self, info: NodeInfo, key: str, pod: Obj) -> NodeInfo:
        """The node with the requests of the other pods nominated to it, of priority at least this
        pod's, counted as taken (upstream's addNominatedPods)."""
        own, extra, count = priority_of(pod), Requests(), 0
        for other, (node, priority, requests) in self.nominated.items():
            if node == info.name and other != key and priority >= own:
                extra, count = extra + requests, count + 1
        return replace(info, requested=info.requested + extra, pods=info.pods + count) if count else info

    async def _preempt(self, key: str, pod: Obj, infos: list[NodeInfo], reasons: dict[str, list[str]]
                       ) -> tuple[str | None, str]:
        """DefaultPreemption's PostFilter: (the sentence for the FailedScheduling message, as
        `failure_message` takes it, and the node nominated, "" when none)."""
        why = eligibility(pod, infos)
        if why:
            return f"preemption: {why}", ""
        requests, budgets = pod_requests(pod), self.budgets.cache.list()
        candidates = []
        for info in infos:
            if all(reason in RESOURCE_REASONS for reason in reasons.get(info.name, ["fits"])):
                found = select_victims(pod, requests, self._with_nominated(info, key, pod), budgets)
                if found is not None:
                    candidates.append(found)
        chosen = pick_candidate(candidates)
        if chosen is None:
            return None, ""
        self.nominated[key] = (chosen.node, priority_of(pod), requests)
        await self._evict_victims(pod, chosen)
        await self._clear_lower_nominations(pod, key, chosen.node)
        return "", chosen.node

    async def _evict_victims(self, pod: Obj, chosen: Candidate) -> None:
        """prepareCandidate: mark each victim DisruptionTarget, delete it gracefully, tell it why."""
        uid = (pod.get("metadata") or {}).get("uid") or ""
        for victim in chosen.victims:
            meta = victim["metadata"]
            condition = new_condition(DISRUPTION_TARGET, "True", self.clock.now(), reason=PREEMPTION_BY_SCHEDULER,
                                      message=f"{SCHEDULER_NAME}: preempting to accommodate a higher priority pod")
            try:
                await self.client.patch(PODS, meta["name"], {"status": {"conditions": [condition]}},
                                        meta.get("namespace"), patch_type="strategic", subresource="status")
                await self.client.delete(PODS, meta["name"], meta.get("namespace"))
            except errors.NotFound:
                continue  # gone already: nothing to preempt
            log.info("preempted %s on %s for %s", key_of(victim), chosen.node, key_of(pod))
            self.events.emit(_as_pod(victim), "Normal", "Preempted", f"Preempted by pod {uid} on node {chosen.node}")

    async def _clear_lower_nominations(self, pod: Obj, key: str, node: str) -> None:
        """Lower-priority pods nominated to that node may no longer fit there: they look again."""
        own = priority_of(pod)
        for other, (nominated_to, priority, _) in list(self.nominated.items()):
            if other == key or nominated_to != node or priority >= own:
                continue
            self.nominated.pop(other, None)
            namespace, name = split_key(other)
            try:
                await self.client.patch(PODS, name, {"status": {"nominatedNodeName": None}}, namespace,
                                        patch_type="strategic", subresource="status")
            except errors.ApiError as exc:
                log.info("could not clear the nomination of %s: %s", other, exc)
            self.queue.add(other)

    async def _unschedulable(self, key: str, pod: Obj, message: str, nominated: str = "") -> Result:
        self.unschedulable.add(key)  # before any await: a node event from now on retries it
        if depends_on_pods(pod):
            self.pod_dependent.add(key)
        attempts = self.attempts[key] = self.attempts.get(key, 0) + 1
        delay = min(self.max_backoff, self.initial_backoff * 2 ** (attempts - 1))
        log.info("%s is unschedulable (attempt %d, next in %.0fs): %s", key, attempts, delay, message)
        self.events.emit(_as_pod(pod), "Warning", "FailedScheduling", message)
        try:
            await self._mark_unschedulable(pod, message, nominated)
        except errors.NotFound:
            self._settled(key)
            return DONE
        except errors.ApiError as exc:
            log.info("could not set PodScheduled=False on %s: %s", key, exc)
        return requeue_after(delay)

    async def _mark_unschedulable(self, pod: Obj, message: str, nominated: str = "") -> None:
        """PodScheduled=False (and the node preemption nominated) on the pod's status."""
        current = find_condition((pod.get("status") or {}).get("conditions"), "PodScheduled")
        unchanged = current and (current.get("status"), current.get("reason"), current.get("message")) == (
            "False", "Unschedulable", message)
        if unchanged and nominated in ("", (pod.get("status") or {}).get("nominatedNodeName")):
            return
        status: Obj = {}
        if not unchanged:
            status["conditions"] = [new_condition("PodScheduled", "False", self.clock.now(), current,
                                                  reason="Unschedulable", message=message, lastProbeTime=None)]
        if nominated:
            status["nominatedNodeName"] = nominated
        meta = pod["metadata"]
        await self.client.patch(PODS, meta["name"], {"status": status}, meta.get("namespace"),
                                patch_type="strategic", subresource="status")


async def run_scheduler(server: str, *, clock: Clock | None = None, workers: int | None = None) -> None:
    """The `kube-scheduler` process: runs until cancelled."""
    clock = clock or REAL
    client = connect(server, "kube-scheduler")
    informers = SharedInformers(client, clock=clock)
    recorder = EventRecorder(client, SCHEDULER_NAME, clock=clock)
    scheduler = Scheduler(client, informers, clock=clock, recorder=recorder, workers=workers)
    await run_all(client, [informers.run(), scheduler.run()])
