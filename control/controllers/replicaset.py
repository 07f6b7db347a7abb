"""The ReplicaSet controller: keeps exactly `spec.replicas` active pods for every ReplicaSet.

Guarantees (kube-controller-manager's replicaset controller):
- Active pods (not terminating, not Succeeded/Failed) that match the selector and are controlled
  by the ReplicaSet (ownerReference uid, `controller: true`) are counted; matching orphans are
  adopted and owned pods that stopped matching are released, each by a patch guarded by the
  pod's resourceVersion.
- Creates and deletes are remembered as expectations until the informer shows them, so a lagging
  cache never over-creates or over-deletes; creates go out in slow-start batches (1, 2, 4, ...)
  and stop at the first failure; at most `BURST` pods are created or deleted per pass.
- Scaling down deletes the least valuable pods first: unscheduled, pending, not ready, most
  restarted, newest.
- A refused create (a ResourceQuota's or LimitRange's 403/422) is recorded on the owner as a
  Warning `FailedCreate` event ("Error creating: <the API's message>"), sets the `ReplicaFailure`
  condition (reason FailedCreate, or FailedDelete for a refused delete, message the API's) and
  sends the key back with the queue's rate-limited back-off, so the set heals by itself once the
  quota allows it; the first pass that manages without an error removes the condition. A create
  refused because the namespace is terminating is neither reported nor retried (upstream).
- Status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas, observedGeneration,
  conditions) goes through the status subresource, only when it changed, also after a failed
  pass; a stale write (409) is retried by the runner, never looped on here.
- The same logic serves every kind of the ReplicaSet's shape through a `Flavor` (its resource and
  how its selector reads): `control.controllers.replication` runs it for ReplicationControllers,
  as upstream's replication manager wraps this controller.
Not done: pod-deletion-cost, the sort by co-located pods.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass
from typing import Any, Callable

from control import errors
from control.client.expectations import Expectations
from control.client.informer import Handlers, Informer
from control.client.resources import PODS, REPLICASETS, Resource, key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.claiming import claim
from control.controllers.common import (
    Obj, Wakeups, created_at, delete_pods, namespace_terminating, pod_active, pod_available, pod_ready,
    record_creates, record_deletes, restarts, terminating, uid_of, write_status,
)
from control.controllers.owned import PodsOfOwner
from control.kinds.meta import (find_condition, get_condition, labels_of, metadata, new_condition, new_controller_ref,
                                parse_time, spec_selector)
from control.kinds.selectors import LabelSelector

log = logging.getLogger(__name__)

BURST = 500  # the most pods created or deleted in one pass (Kubernetes' burstReplicas)
REPLICA_FAILURE = "ReplicaFailure"  # the condition type, the same for ReplicaSets and ReplicationControllers
PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


@dataclass(frozen=True)
class Flavor:
    """What differs between the kinds this controller keeps pods for: the owner's resource (its
    pods' controller reference names its apiVersion and kind), how its selector reads, and the
    controller's name (its runner, its logs)."""

    resource: Resource
    selector: Callable[[Obj], LabelSelector]
    name: str


REPLICASET = Flavor(REPLICASETS, spec_selector, "replicaset")


def new_pod(rs: Obj, owner: Resource = REPLICASETS) -> Obj:
    """A pod from the owner's template, controlled by it."""
    template = (rs.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    pod_meta: dict[str, Any] = {"generateName": f"{metadata(rs)['name']}-", "namespace": metadata(rs)["namespace"],
                                "ownerReferences": [new_controller_ref(rs, api_version=owner.api_version,
                                                                       kind=owner.kind)]}
    for field in ("labels", "annotations"):
        if tmeta.get(field):
            pod_meta[field] = copy.deepcopy(tmeta[field])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(template.get("spec") or {})}


def deletion_order(pod: Obj) -> tuple:
    """Sort key: the pod to delete first sorts first (Kubernetes' ActivePods ordering)."""
    return (1 if (pod.get("spec") or {}).get("nodeName") else 0,
            PHASE_RANK.get((pod.get("status") or {}).get("phase", ""), 0),
            1 if pod_ready(pod) else 0,
            -restarts(pod),
            -created_at(pod))


def pods_to_delete(pods: list[Obj], count: int) -> list[Obj]:
    return sorted(pods, key=deletion_order)[:count]


def slow_start_batches(total: int, first: int = 1) -> list[int]:
    out, size = [], first
    while total > 0:
        out.append(min(size, total))
        total -= out[-1]
        size *= 2
    return out


def failure_conditions(rs: Obj, active: int, error: str | None, now: float) -> list[Obj] | None:
    """`status.conditions` after a pass (upstream calculateStatus): a failed pass adds
    ReplicaFailure when it is absent (an existing one is kept as it is, as upstream's SetCondition
    keeps one of the same status and reason), a pass without error removes it; None: unchanged."""
    conditions = list((rs.get("status") or {}).get("conditions") or [])
    present = find_condition(conditions, REPLICA_FAILURE)
    if error is not None and present is None:
        diff = active - int((rs.get("spec") or {}).get("replicas", 1))
        reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
        return conditions + [new_condition(REPLICA_FAILURE, "True", now, reason=reason, message=error)]
    if error is None and present is not None:
        return [c for c in conditions if c is not present]
    return None


def compute_status(rs: Obj, pods: list[Obj], now: float, error: str | None = None) -> dict[str, Any]:
    """The status a pass leaves; `error` is the message of the create or delete that failed in it."""
    spec = rs.get("spec") or {}
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    status = copy.deepcopy(rs.get("status") or {})
    status.update({
        "replicas": len(pods),
        "fullyLabeledReplicas": sum(1 for p in pods if template_labels.items() <= labels_of(p).items()),
        "readyReplicas": sum(1 for p in pods if pod_ready(p)),
        "availableReplicas": sum(1 for p in pods if pod_available(p, min_ready, now)),
        "observedGeneration": metadata(rs).get("generation", 0),
    })
    conditions = failure_conditions(rs, len(pods), error, now)
    if conditions is not None:
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
    return status


class ReplicaSetController:
    def __init__(self, client: Any, replicasets: Informer, pods: Informer, *, clock: Clock, recorder: Any = None,
                 flavor: Flavor = REPLICASET):
        self.client, self.replicasets, self.pods, self.flavor = client, replicasets, pods, flavor
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        self.expectations = Expectations(clock=clock)
        self.wakeups = Wakeups(clock)
        replicasets.add_handlers(Handlers(on_add=self._rs_changed, on_update=lambda old, new: self._rs_changed(new),
                                          on_delete=self._rs_deleted))
        self.owned = PodsOfOwner(flavor.resource.kind, flavor.resource.group, replicasets, self.queue.add,
                                 self.expectations, flavor.selector)
        pods.add_handlers(self.owned.handlers())

    # --- handlers: objects to keys -------------------------------------------------------------

    def _rs_changed(self, rs: Obj) -> None:
        self.queue.add(key_of(rs))

    def _rs_deleted(self, rs: Obj) -> None:
        self.expectations.forget(key_of(rs))
        self.queue.add(key_of(rs))

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        rs = self.replicasets.cache.get(key)
        if rs is None:
            self.expectations.forget(key)
            return DONE
        try:
            return await self.sync(key, rs)
        except errors.NotFound as exc:  # deleted under our feet: the next pass sees it in the cache
            return retry(f"{key}: {exc}")

    async def sync(self, key: str, rs: Obj) -> Result:
        pods = await self.claim_pods(rs)
        active = [p for p in pods if pod_active(p)]
        outcome: Result = DONE
        if self.expectations.satisfied(key) and not terminating(rs):
            outcome = await self.manage_replicas(key, rs, active)
        # a retry from manage_replicas carries the API's message of the write it could not make
        await self.update_status(rs, active, outcome.reason if outcome.outcome == "retry" else None)
        if outcome == DONE:
            return self._wake_for_availability(rs, active)
        return outcome

    async def claim_pods(self, rs: Obj) -> list[Obj]:
        """The pods this ReplicaSet controls after adopting matching orphans and releasing strays."""
        candidates = self.pods.cache.by_index("namespace", metadata(rs)["namespace"])
        return await claim(self.client, rs, self.flavor.resource, candidates, PODS, self.flavor.selector)

    async def manage_replicas(self, key: str, rs: Obj, active: list[Obj]) -> Result:
        wanted = int((rs.get("spec") or {}).get("replicas", 1))
        diff = len(active) - wanted
        if diff < 0:
            return await self.create_pods(key, rs, min(-diff, BURST))
        if diff > 0:
            return await self.delete_pods(key, rs, pods_to_delete(active, min(diff, BURST)))
        return DONE

    async def create_pods(self, key: str, rs: Obj, count: int) -> Result:
        self.expectations.expect(key, adds=count)
        batches = slow_start_batches(count)
        for i, size in enumerate(batches):
            results = await asyncio.gather(*(self.client.create(PODS, new_pod(rs, self.flavor.resource), metadata(rs)["namespace"])
                                             for _ in range(size)), return_exceptions=True)
            failures = [r for r in results if isinstance(r, BaseException)]
            for _ in failures:
                self.expectations.create_failed(key)
            await record_creates(self.recorder, rs, results)
            if failures:
                for _ in range(sum(batches[i + 1:])):  # never sent: do not wait for them
                    self.expectations.create_failed(key)
                first = failures[0]
                if namespace_terminating(first):
                    return DONE  # every later create fails too; the namespace's deletion ends the set
                if not isinstance(first, errors.ApiError):
                    raise first
                return retry(str(first))
        return DONE

    async def delete_pods(self, key: str, rs: Obj, victims: list[Obj]) -> Result:
        self.expectations.expect(key, deletes={uid_of(p) for p in victims})
        results = await delete_pods(self.client, PODS, self.expectations, key, victims)
        failures = [r for r in results if isinstance(r, BaseException) and not isinstance(r, errors.NotFound)]
        await record_deletes(self.recorder, rs, victims, results)
        if failures:
            if not isinstance(failures[0], errors.ApiError):
                raise failures[0]
            return retry(str(failures[0]))
        return DONE

    async def update_status(self, rs: Obj, active: list[Obj], error: str | None = None) -> None:
        status = compute_status(rs, active, self.clock.now(), error)
        await write_status(self.client, self.flavor.resource, rs, status)  # 409 → retried by the runner

    def _wake_for_availability(self, rs: Obj, active: list[Obj]) -> Result:
        """With minReadySeconds, look again when the next ready pod becomes available."""
        min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
        now, waits = self.clock.now(), []
        for pod in active:
            since = parse_time((get_condition(pod, "Ready") or {}).get("lastTransitionTime"))
            if min_ready and pod_ready(pod) and since is not None and since + min_ready > now:
                waits.append(since + min_ready - now)
        return self.wakeups.after(key_of(rs), min(waits) + 0.5) if waits else DONE


def build_for(flavor: Flavor, *, client: Any, informers: Any, clock: Clock, recorder: Any) -> Runner:
    """This controller's runner for one kind of owner, over the process's shared informers."""
    owners = informers.get(flavor.resource)
    pods = informers.get(PODS)
    controller = ReplicaSetController(client, owners, pods, clock=clock, recorder=recorder, flavor=flavor)
    return Runner(flavor.name, controller.reconcile, controller.queue, [owners, pods], workers=4)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    return build_for(REPLICASET, client=client, informers=informers, clock=clock, recorder=recorder)

