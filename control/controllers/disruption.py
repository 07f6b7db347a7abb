"""The disruption controller: keeps every PodDisruptionBudget's status, so the eviction subresource
knows how many pods may go.

Guarantees (kube-controller-manager's `pkg/controller/disruption`):
- the pods of a budget are those in its namespace its selector matches (a null selector: none;
  an empty one: all); a pod is healthy when Ready, not being deleted and not recorded in
  disruptedPods within the last `DELETION_TIMEOUT` (2 minutes);
- desiredHealthy is minAvailable as an integer (expectedPods then the number of pods), or, for a
  percentage minAvailable or any maxUnavailable, computed from the scale of the pods' controllers
  (a Deployment's replicas through its ReplicaSet, a ReplicaSet's, or any controller's `scale`
  subresource), rounding up as upstream; disruptionsAllowed = currentHealthy - desiredHealthy,
  never below 0, and 0 while no pods are expected;
- status (currentHealthy, desiredHealthy, disruptionsAllowed, expectedPods, disruptedPods,
  observedGeneration, the DisruptionAllowed condition: True/SufficientPods, False/InsufficientPods)
  goes through the status subresource only when it changed; when the expected count cannot be
  computed (a pod with no controller, a controller without scale) the budget fails safe:
  disruptionsAllowed 0 and DisruptionAllowed False with reason SyncFailed and the error;
- disruptedPods entries the eviction wrote are dropped once the pod is gone or being deleted, or
  after `DELETION_TIMEOUT` (with a NotDeleted event on the pod); the budget is looked at again
  when the next entry expires.
Not done: the stale DisruptionTarget pod condition clean-up.
"""

from __future__ import annotations

import copy
import logging
import math
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import BY_KIND, DEPLOYMENTS, PODDISRUPTIONBUDGETS, PODS, REPLICASETS, key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, Wakeups, pod_ready, terminating, uid_of, write_status
from control.kinds.disruption import allowed_condition, condition_for
from control.kinds.meta import controller_ref, labels_of, metadata, parse_time
from control.kinds.selectors import LabelSelector, SelectorError, label_selector_from_object

log = logging.getLogger(__name__)

DELETION_TIMEOUT = 120.0  # seconds an evicted pod may take to be deleted before it counts again


class ExpectedCountError(Exception):
    """Why the expected number of pods cannot be known (the budget then fails safe)."""


def pdb_selector(pdb: Obj) -> LabelSelector:
    try:
        return label_selector_from_object((pdb.get("spec") or {}).get("selector"))
    except SelectorError:
        return LabelSelector.nothing()


def scaled_value(value: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with rounding up."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return math.ceil(int(value[:-1]) * total / 100)
    raise ExpectedCountError(f"invalid value for IntOrString: invalid value {value!r}")


def disrupted_map(pdb: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], list[Obj], float | None]:
    """(entries still pending, pods whose eviction timed out, when the next entry expires)."""
    recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
    kept: dict[str, str] = {}
    overdue: list[Obj] = []
    recheck: float | None = None
    for pod in pods:
        name = metadata(pod)["name"]
        if terminating(pod) or name not in recorded:
            continue
        at = parse_time(recorded[name])
        expires = (at or 0.0) + DELETION_TIMEOUT
        if expires < now:
            overdue.append(pod)
        else:
            kept[name] = recorded[name]
            recheck = expires if recheck is None else min(recheck, expires)
    return kept, overdue, recheck


def count_healthy(pods: list[Obj], disrupted: dict[str, str], now: float) -> int:
    healthy = 0
    for pod in pods:
        if terminating(pod):
            continue
        at = parse_time(disrupted.get(metadata(pod)["name"]))
        if at is not None and at + DELETION_TIMEOUT > now:
            continue
        if pod_ready(pod):
            healthy += 1
    return healthy


def new_status(pdb: Obj, *, current: int, desired: int, expected: int, disrupted: dict[str, str],
               now: float) -> Obj:
    allowed = current - desired
    if expected <= 0 or allowed <= 0:  # a budget that expects no pods is safe when its first pods appear
        allowed = 0
    status = {"observedGeneration": int(metadata(pdb).get("generation") or 0), "disruptionsAllowed": allowed,
              "currentHealthy": current, "desiredHealthy": desired, "expectedPods": expected}
    if disrupted:
        status["disruptedPods"] = disrupted
    status["conditions"] = (pdb.get("status") or {}).get("conditions") or []
    status["conditions"] = condition_for(status, now)
    return status


class DisruptionController:
    def __init__(self, client: Any, pdbs: Informer, pods: Informer, replicasets: Informer, deployments: Informer, *,
                 clock: Clock, recorder: Any = None):
        self.client, self.pdbs, self.pods = client, pdbs, pods
        self.replicasets, self.deployments = replicasets, deployments
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        self.wakeups = Wakeups(clock)
        pdbs.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                   on_delete=self._forget))
        pods.add_handlers(Handlers(on_add=self._pod_changed, on_update=self._pod_updated,
                                   on_delete=self._pod_changed))

    # --- handlers: objects to keys -------------------------------------------------------------

    def _enqueue(self, pdb: Obj) -> None:
        self.queue.add(key_of(pdb))

    def _forget(self, pdb: Obj) -> None:
        self.wakeups.forget(key_of(pdb))

    def _pod_changed(self, pod: Obj) -> None:
        for pdb in self.budgets_of(pod):
            self._enqueue(pdb)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        self._pod_changed(new)
        if labels_of(old) != labels_of(new):
            self._pod_changed(old)

    def budgets_of(self, pod: Obj) -> list[Obj]:
        namespace = metadata(pod).get("namespace", "")
        return [p for p in self.pdbs.cache.by_index("namespace", namespace) if pdb_selector(p).matches(labels_of(pod))]

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        pdb = self.pdbs.cache.get(key)
        if pdb is None:
            self.wakeups.forget(key)
            return DONE
        try:
            return await self.sync(key, pdb)
        except errors.Conflict as exc:  # the eviction wrote the status meanwhile: look again
            return retry(f"{key}: {exc}")
        except errors.NotFound:
            return DONE  # deleted under our feet: the informer will tell

    async def sync(self, key: str, pdb: Obj) -> Result:
        namespace = metadata(pdb)["namespace"]
        selector = pdb_selector(pdb)
        pods = [p for p in self.pods.cache.by_index("namespace", namespace) if selector.matches(labels_of(p))]
        if not pods:
            await self._event(pdb, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = await self.expected_count(pdb, pods)
        except (ExpectedCountError, errors.ApiError) as exc:
            await self._event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                              f"Failed to calculate the number of expected pods: {exc}")
            await self.fail_safe(pdb, str(exc))
            return DONE
        if unmanaged:
            await self._event(pdb, "Normal", "UnmanagedPods",
                              f"Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be "
                              "unmanaged. As a result, the status of the PDB cannot be calculated correctly, which "
                              "may result in undefined behavior. To account for these pods please set "
                              '".spec.minAvailable" field of the PDB to an integer value.')
        now = self.clock.now()
        disrupted, overdue, recheck = disrupted_map(pdb, pods, now)
        for pod in overdue:
            await self._event(pod, "Warning", "NotDeleted", f"Pod was expected by PDB {namespace}/"
                              f"{metadata(pdb)['name']} to be deleted but it wasn't")
        current = count_healthy(pods, disrupted, now)
        status = new_status(pdb, current=current, desired=desired, expected=expected, disrupted=disrupted, now=now)
        await write_status(self.client, PODDISRUPTIONBUDGETS, pdb, status)  # 409 -> retried
        if recheck is not None:
            return self.wakeups.after(key, max(0.0, recheck - now) + 0.5)
        return DONE

    async def fail_safe(self, pdb: Obj, why: str) -> None:
        status = copy.deepcopy(pdb.get("status") or {})
        status["disruptionsAllowed"] = 0
        status["conditions"] = allowed_condition(status.get("conditions"), status="False", reason="SyncFailed",
                                                 message=why, generation=int(status.get("observedGeneration") or 0),
                                                 now=self.clock.now())
        await write_status(self.client, PODDISRUPTIONBUDGETS, pdb, status)

    # --- the expected number of pods ------------------------------------------------------------

    async def expected_count(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int, list[str]]:
        """(expectedPods, desiredHealthy, names of pods without a controller), as getExpectedPodCount."""
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = await self.expected_scale(pods)
            return expected, max(0, expected - scaled_value(spec["maxUnavailable"], expected)), unmanaged
        minimum = spec.get("minAvailable")
        if isinstance(minimum, int) and not isinstance(minimum, bool):
            return len(pods), minimum, []
        if minimum is not None:
            expected, unmanaged = await self.expected_scale(pods)
            return expected, scaled_value(minimum, expected), unmanaged
        return 0, 0, []

    async def expected_scale(self, pods: list[Obj]) -> tuple[int, list[str]]:
        """The sum of the scales of the pods' controllers, each counted once; a pod without a
        controller is unmanaged; a controller none of the finders knows is an error."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None:
                unmanaged.append(metadata(pod)["name"])
                continue
            if ref.get("uid") in scales:
                continue
            found = await self.find_controller(ref, metadata(pod)["namespace"])
            if found is None:
                raise ExpectedCountError(f'found no controllers for pod "{metadata(pod)["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    async def find_controller(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        """(uid, replicas) of the controller `ref` names, trying upstream's finders in order."""
        group = (ref.get("apiVersion") or "").rpartition("/")[0]
        if ref.get("kind") == "ReplicaSet" and group in ("apps", "extensions"):
            rs = self.replicasets.cache.get(f"{namespace}/{ref.get('name')}")
            if rs is not None and uid_of(rs) == ref.get("uid"):
                owner = controller_ref(rs)
                if owner is None or owner.get("kind") != "Deployment":
                    return uid_of(rs), int((rs.get("spec") or {}).get("replicas", 1))
                deploy = self.deployments.cache.get(f"{namespace}/{owner.get('name')}")
                if deploy is not None and uid_of(deploy) == owner.get("uid"):
                    return uid_of(deploy), int((deploy.get("spec") or {}).get("replicas", 1))
        return await self.scale_of(ref, namespace)

    async def scale_of(self, ref: Obj, namespace: str) -> tuple[str, int] | None:
        """Any other controller through its `scale` subresource (getScaleController)."""
        resource = BY_KIND.get((ref.get("apiVersion") or "", ref.get("kind") or ""))
        if resource is None:
            raise ExpectedCountError(f'no matches for kind "{ref.get("kind")}" in version "{ref.get("apiVersion")}"')
        try:
            scale = await self.client.request("GET", resource.path(namespace, ref.get("name"), "scale"))
        except errors.NotFound:
            return None
        except errors.MethodNotAllowed:
            raise ExpectedCountError(f"{resource.plural}.{resource.group} does not implement the scale "
                                     "subresource") from None
        if metadata(scale).get("uid") != ref.get("uid"):
            return None
        return ref["uid"], int((scale.get("spec") or {}).get("replicas") or 0)

    async def _event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            await self.recorder.record(obj, type_, reason, message)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    pdbs, pods = informers.get(PODDISRUPTIONBUDGETS), informers.get(PODS)
    replicasets, deployments = informers.get(REPLICASETS), informers.get(DEPLOYMENTS)
    controller = DisruptionController(client, pdbs, pods, replicasets, deployments, clock=clock, recorder=recorder)
    return Runner("disruption", controller.reconcile, controller.queue, [pdbs, pods, replicasets, deployments],
                  workers=2)

