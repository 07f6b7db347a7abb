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
- Many workers (KK_SCHEDULER_WORKERS, default 32) overlap bindings; the hub's write rate, not
  the decisions (about 0.3 ms per pod for 10 nodes), bounds the throughput.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from control import config, errors
from control.clock import REAL, Clock
from control.client.component import connect, run_all
from control.client.events import EventRecorder
from control.client.http import HubClient
from control.client.informer import Handlers
from control.client.resources import NODES, PERSISTENTVOLUMECLAIMS, PODS, STORAGECLASSES, key_of, split_key
from control.client.runner import DONE, Result, Runner, requeue_after
from control.client.shared import SharedInformers
from control.client.workqueue import WorkQueue
from control.kinds.meta import find_condition, is_node_ready, new_condition
from control.scheduler.cache import TERMINAL_PHASES, SchedulerCache
from control.scheduler.demand import Obj, pod_requests
from control.scheduler.filter import failure_message, node_reasons
from control.scheduler.interpod import ClusterFilters
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


class EventSender:
    """Events leave in the background, in order, one at a time, so a worker never waits on an
    event before its next binding (as kube-scheduler's event broadcaster); at most `limit` wait.
    `run` is the sender loop of the process; tests call `flush`."""

    def __init__(self, recorder: EventRecorder, *, limit: int = 10_000):
        self.recorder, self.limit = recorder, limit
        self._pending: deque[tuple[Obj, str, str, str]] = deque()
        self._wake = asyncio.Event()

    def emit(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        if len(self._pending) >= self.limit:
            dropped = self._pending.popleft()
            log.warning("event backlog full; dropping %s for %s", dropped[2], dropped[0]["metadata"].get("name"))
        self._pending.append((obj, type_, reason, message))
        self._wake.set()

    async def flush(self) -> None:
        """Send every pending event now."""
        while self._pending:
            try:
                await self.recorder.record(*self._pending.popleft())
            except asyncio.CancelledError:
                raise
            except Exception:  # an event is worth less than the sender loop
                log.exception("event not sent")

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self.flush()


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
        self.volume_bind_timeout = volume_bind_timeout
        self._claim_waiters: set[asyncio.Event] = set()
        self.cache = SchedulerCache(clock=self.clock, ttl=assumed_ttl)
        self.queue = WorkQueue(clock=self.clock)
        self.unschedulable: set[str] = set()
        self.pod_dependent: set[str] = set()  # unschedulable pods with pod affinity or spread constraints
        self.attempts: dict[str, int] = {}
        self.pods.add_handlers(Handlers(on_add=self._pod_seen, on_update=self._pod_updated, on_delete=self._pod_gone))
        self.nodes.add_handlers(Handlers(on_add=self._node_added, on_update=self._node_updated,
                                         on_delete=self._node_gone))
        self.claims.add_handlers(Handlers(on_add=self._claim_changed, on_update=lambda old, new: self._claim_changed(new),
                                          on_delete=self._claim_changed))
        self.classes.add_handlers(Handlers(on_add=self._claim_changed, on_update=lambda old, new: self._claim_changed(new)))
        self.runner = Runner("scheduler", self.reconcile, self.queue, [self.pods, self.nodes, self.claims, self.classes],
                             workers=workers if workers is not None else config.value("KK_SCHEDULER_WORKERS"))

    async def run(self) -> None:
        await asyncio.gather(self.runner.run(), self.events.run())

    # --- handlers: map events to keys, keep the sums ---------------------------------------------

    def _pod_seen(self, pod: Obj) -> None:
        key = key_of(pod)
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
            self.cache.pod_observed(new)  # e.g. our own PodScheduled=False patch: wait for the retry
            return
        self._pod_seen(new)

    def _pod_gone(self, pod: Obj) -> None:
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
            why = node_reasons(pod, requests, info, cluster)
            if why:
                reasons[info.name] = why
            else:
                feasible.append(info)
        if not feasible:
            return await self._unschedulable(key, pod, failure_message(len(infos), reasons))

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

    async def _unschedulable(self, key: str, pod: Obj, message: str) -> Result:
        self.unschedulable.add(key)  # before any await: a node event from now on retries it
        if depends_on_pods(pod):
            self.pod_dependent.add(key)
        attempts = self.attempts[key] = self.attempts.get(key, 0) + 1
        delay = min(self.max_backoff, self.initial_backoff * 2 ** (attempts - 1))
        log.info("%s is unschedulable (attempt %d, next in %.0fs): %s", key, attempts, delay, message)
        self.events.emit(_as_pod(pod), "Warning", "FailedScheduling", message)
        try:
            await self._mark_unschedulable(pod, message)
        except errors.NotFound:
            self._settled(key)
            return DONE
        except errors.ApiError as exc:
            log.info("could not set PodScheduled=False on %s: %s", key, exc)
        return requeue_after(delay)

    async def _mark_unschedulable(self, pod: Obj, message: str) -> None:
        current = find_condition((pod.get("status") or {}).get("conditions"), "PodScheduled")
        if current and (current.get("status"), current.get("reason"), current.get("message")) == (
                "False", "Unschedulable", message):
            return
        condition = new_condition("PodScheduled", "False", self.clock.now(), current, reason="Unschedulable",
                                  message=message, lastProbeTime=None)
        meta = pod["metadata"]
        await self.client.patch(PODS, meta["name"], {"status": {"conditions": [condition]}}, meta.get("namespace"),
                                patch_type="strategic", subresource="status")


async def run_scheduler(server: str, *, clock: Clock | None = None, workers: int | None = None) -> None:
    """The `kube-scheduler` process: runs until cancelled."""
    clock = clock or REAL
    client = connect(server, "kube-scheduler")
    informers = SharedInformers(client, clock=clock)
    recorder = EventRecorder(client, SCHEDULER_NAME, clock=clock)
    scheduler = Scheduler(client, informers, clock=clock, recorder=recorder, workers=workers)
    await run_all(client, [informers.run(), scheduler.run()])
