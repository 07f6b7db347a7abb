"""The horizontal pod autoscaling controller: every sync period, each HorizontalPodAutoscaler reads
its target's `/scale`, the PodMetrics of the target's pods from the hub's metrics.k8s.io API and
the pods' requests from the pod cache, and writes a new replica count through `/scale`.

Guarantees (kube-controller-manager's horizontal.go):
- An HPA is looked at when it appears, when its spec changes (generation), and every sync
  period (15 s; 2 s at the workshop pace) — never more than once per change plus once per period.
- A target whose scale is 0 is left alone (ScalingActive=False ScalingDisabled); one outside
  [min, max] is brought back inside; otherwise each metric proposes a size (`hpa_replicas`), the
  largest proposal wins, and the behaviour (stabilisation windows, rate policies, bounds) decides
  the next size. A failed metric leaves the size as it is (ScalingActive=False with the reason).
- A rescale is one PUT of the Scale read (so a concurrent change is a 409 and a retry), then an
  Event SuccessfulRescale "New size: N; reason: ..."; a failure is an Event FailedRescale and
  AbleToScale=False.
- Status (observedGeneration, currentReplicas, desiredReplicas, currentMetrics, lastScaleTime,
  conditions AbleToScale / ScalingActive / ScalingLimited with upstream's reasons) is written
  only when it differs from the stored one; a condition's lastTransitionTime moves only when its
  status does.
Supported metrics: Resource (cpu, memory) with Utilization or AverageValue targets; other types
are reported as not supported.
"""

from __future__ import annotations

import copy
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import BY_KIND, PODS, Resource, key_of
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, Wakeups
from control.controllers.hpa_replicas import (
    Behaviour, MetricsUnavailable, Proposal, Readiness, Sample, pod_replicas,
)
from control.kinds.autoscaling import effective_behavior
from control.kinds.meta import format_time, labels_of, metadata, new_condition, parse_time
from control.kinds.quantity import parse_quantity
from control.kinds.selectors import SelectorError, parse_label_selector

HPAS = Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler")
METRICS_PATH = "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods"


def metric_name(resource: str, utilization: bool) -> str:
    return f"{resource} resource utilization (percentage of request)" if utilization else f"{resource} resource"


def samples_from(pod_metrics: list[Obj], resource: str) -> dict[str, Sample]:
    """{pod name: its summed container use} (millicores or bytes); pods missing a container value are left out."""
    out: dict[str, Sample] = {}
    for item in pod_metrics:
        total, complete = 0.0, True
        for container in item.get("containers") or []:
            value = (container.get("usage") or {}).get(resource)
            if value is None:
                complete = False
                break
            amount = parse_quantity(value)
            total += amount * 1000 if resource == "cpu" else amount
        window = str(item.get("window") or "0s").rstrip("s")
        if complete and item.get("containers"):
            out[item["metadata"]["name"]] = Sample(total, parse_time(item.get("timestamp")) or 0.0,
                                                   float(window or 0))
    return out


def _quantity_text(value: float, resource: str) -> str:
    return f"{int(round(value))}m" if resource == "cpu" else str(int(round(value)))


class HorizontalController:
    def __init__(self, client: Any, hpas: Informer, pods: Informer, *, clock: Clock, sync_period: float,
                 recorder: Any = None, readiness: Readiness | None = None):
        self.client, self.hpas, self.pods = client, hpas, pods
        self.clock, self.recorder, self.sync_period = clock, recorder, sync_period
        self.readiness = readiness or Readiness()
        self.queue = WorkQueue(clock=clock)
        self.wakeups = Wakeups(clock)
        self.behaviours: dict[str, Behaviour] = {}
        hpas.add_handlers(Handlers(on_add=self._enqueue, on_update=self._updated, on_delete=self._enqueue))

    def _enqueue(self, hpa: Obj) -> None:
        self.queue.add(key_of(hpa))

    def _updated(self, old: Obj, new: Obj) -> None:
        if metadata(old).get("generation") != metadata(new).get("generation"):
            self._enqueue(new)  # our own status writes do not cause a look; the sync period does

    async def _event(self, hpa: Obj, type_: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            await self.recorder.record(hpa, type_, reason, message)

    # --- reading -----------------------------------------------------------------------------------

    async def _scale(self, hpa: Obj) -> tuple[Resource, Obj]:
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        resource = BY_KIND.get((ref.get("apiVersion") or "", ref.get("kind") or ""))
        if resource is None:
            group = (ref.get("apiVersion") or "").rpartition("/")[0]
            raise errors.NotFound(f'no matches for kind "{ref.get("kind")}" in group "{group}"')
        path = resource.path(metadata(hpa).get("namespace"), ref.get("name"), "scale")
        return resource, await self.client.request("GET", path)

    async def _propose(self, hpa: Obj, metric: Obj, current: int, selector_text: str, now: float) -> tuple[Proposal, Obj]:
        """(proposal, MetricStatus) for one metric; MetricsUnavailable when it cannot be computed."""
        if metric.get("type") != "Resource":
            raise MetricsUnavailable(f"metric type {errors.go_text(metric.get('type'))} is not supported by this autoscaler")
        source = metric.get("resource") or {}
        resource, target = source.get("name"), source.get("target") or {}
        if resource not in ("cpu", "memory"):
            raise MetricsUnavailable(f"resource {resource} is not supported (cpu or memory)")
        utilization = target.get("type") == "Utilization"
        try:
            selector = parse_label_selector(selector_text)
            goal = float(target["averageUtilization"]) if utilization else parse_quantity(target.get("averageValue"))
        except (SelectorError, KeyError, TypeError, ValueError) as exc:
            raise MetricsUnavailable(f"invalid target or selector: {exc}") from None
        if resource == "cpu" and not utilization:
            goal *= 1000
        namespace = metadata(hpa)["namespace"]
        pods = [p for p in self.pods.cache.by_index("namespace", namespace) if selector.matches(labels_of(p))]
        try:
            answer = await self.client.request("GET", METRICS_PATH.format(namespace=namespace),
                                               params={"labelSelector": selector_text})
        except errors.ApiError as exc:
            raise MetricsUnavailable(f"unable to get metrics for resource {resource}: {exc}") from None
        samples = samples_from((answer or {}).get("items") or [], resource)
        if not samples:
            raise MetricsUnavailable(f"unable to get metrics for resource {resource}: no metrics returned from "
                                     "resource metrics API")
        proposal = pod_replicas(current=current, target=goal, pods=pods, samples=samples, resource=resource,
                                now=now, utilization=utilization, readiness=self.readiness)
        value: Obj = {"averageValue": _quantity_text(proposal.average, resource)}
        if proposal.utilization is not None:
            value["averageUtilization"] = proposal.utilization
        return proposal, {"type": "Resource", "resource": {"name": resource, "current": value}}

    # --- the loop ----------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        hpa = self.hpas.cache.get(key)
        if hpa is None:
            self.behaviours.pop(key, None)
            self.wakeups.forget(key)
            return DONE
        now = self.clock.now()
        status = copy.deepcopy(hpa.get("status") or {})
        conditions: dict[str, tuple[str, str, str]] = {}
        try:
            await self._sync(hpa, status, conditions, now)
        finally:
            await self._write_status(hpa, status, conditions, now)
        return self.wakeups.after(key, self.sync_period)

    async def _sync(self, hpa: Obj, status: Obj, conditions: dict, now: float) -> None:
        spec = hpa.get("spec") or {}
        minimum, maximum = int(spec.get("minReplicas") or 1), int(spec.get("maxReplicas") or 1)
        status["observedGeneration"] = metadata(hpa).get("generation")
        try:
            resource, scale = await self._scale(hpa)
        except errors.ApiError as exc:
            message = f"the HPA controller was unable to get the target's current scale: {exc}"
            conditions["AbleToScale"] = ("False", "FailedGetScale", message)
            await self._event(hpa, "Warning", "FailedGetScale", str(exc))
            return
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        status["currentReplicas"] = int((scale.get("status") or {}).get("replicas") or 0)
        conditions["AbleToScale"] = ("True", "SucceededGetScale", "the HPA controller was able to get the target's "
                                     "current scale")
        behaviour = self.behaviours.setdefault(key_of(hpa), Behaviour())
        behaviour.start(current, now)  # a new (or restarted) autoscaler does not shrink its target at once
        rules = effective_behavior(hpa)
        reason = ""
        if current == 0 and minimum != 0:
            desired = 0
            conditions["ScalingActive"] = ("False", "ScalingDisabled", "scaling is disabled since the replica count "
                                           "of the target is zero")
        elif current > maximum:
            desired, reason = maximum, "Current number of replicas above Spec.MaxReplicas"
        elif current < minimum:
            desired, reason = minimum, "Current number of replicas below Spec.MinReplicas"
        else:
            proposed, reason = await self._metrics(hpa, current, scale, status, conditions, now)
            if proposed is None:
                status["desiredReplicas"] = current
                return
            decision = behaviour.next_size(current=current, desired=proposed, minimum=minimum, maximum=maximum,
                                           rules=rules, now=now)
            desired = decision.replicas
            conditions["AbleToScale"] = ("True", decision.able_reason, decision.able_message)
            conditions["ScalingLimited"] = ("True" if decision.limited else "False", decision.limited_reason,
                                            decision.limited_message)
        status["desiredReplicas"] = desired
        if desired == current:
            return
        body = copy.deepcopy(scale)
        body.setdefault("spec", {})["replicas"] = desired
        try:
            await self.client.request("PUT", resource.path(metadata(hpa)["namespace"], metadata(scale)["name"], "scale"),
                                      body=body)
        except errors.ApiError as exc:
            conditions["AbleToScale"] = ("False", "FailedUpdateScale", "the HPA controller was unable to update the "
                                         f"target scale: {exc}")
            await self._event(hpa, "Warning", "FailedRescale", f"New size: {desired}; reason: {reason}; error: {exc}")
            raise
        behaviour.record_scale(current, desired, rules, now)
        status["lastScaleTime"] = format_time(now)
        conditions["AbleToScale"] = ("True", "SucceededRescale", f"the HPA controller was able to update the target "
                                     f"scale to {desired}")
        await self._event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")

    async def _metrics(self, hpa: Obj, current: int, scale: Obj, status: Obj, conditions: dict,
                       now: float) -> tuple[int | None, str]:
        """The largest proposal of the metrics (None when none could be computed) and the rescale reason."""
        selector = (scale.get("status") or {}).get("selector") or ""
        best, best_name, statuses, failures = None, "", [], []
        for metric in (hpa.get("spec") or {}).get("metrics") or []:
            source = metric.get("resource") or {}
            name = metric_name(source.get("name", ""), (source.get("target") or {}).get("type") == "Utilization")
            try:
                proposal, metric_status = await self._propose(hpa, metric, current, selector, now)
            except MetricsUnavailable as exc:
                failures.append(str(exc))
                statuses.append({"type": ""})  # upstream's empty MetricStatus keeps the list aligned with the spec
                continue
            statuses.append(metric_status)
            if best is None or proposal.replicas > best:
                best, best_name = proposal.replicas, name
        status["currentMetrics"] = statuses if best is not None else None
        if best is None:
            message = f"the HPA was unable to compute the replica count: {failures[0] if failures else 'no metrics'}"
            conditions["ScalingActive"] = ("False", "FailedGetResourceMetric", message)
            await self._event(hpa, "Warning", "FailedGetResourceMetric", failures[0] if failures else "no metrics")
            return None, ""
        conditions["ScalingActive"] = ("True", "ValidMetricFound", "the HPA was able to successfully calculate a "
                                       f"replica count from {best_name}")
        reason = f"{best_name} above target" if best > current else "All metrics below target"
        return best, reason

    async def _write_status(self, hpa: Obj, status: Obj, conditions: dict, now: float) -> None:
        old = {c.get("type"): c for c in (hpa.get("status") or {}).get("conditions") or []}
        merged = []
        for type_ in ("AbleToScale", "ScalingActive", "ScalingLimited"):
            if type_ not in conditions:
                if type_ in old:
                    merged.append(old[type_])
                continue
            value, reason, message = conditions[type_]
            merged.append(new_condition(type_, value, now, old.get(type_), reason=reason, message=message))
        status["conditions"] = merged
        status.setdefault("desiredReplicas", 0)
        status.setdefault("currentReplicas", 0)
        if status.get("currentMetrics") is None:
            status.pop("currentMetrics", None)
        if status == (hpa.get("status") or {}):
            return
        body = copy.deepcopy(hpa)
        body["status"] = status
        try:
            await self.client.replace_status(HPAS, body)
        except errors.NotFound:
            pass


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    hpas, pods = informers.get(HPAS), informers.get(PODS)
    period = float(getattr(timings, "hpa_sync", 15.0))
    # Upstream's 5 min CPU initialisation and 30 s readiness delay are 20 and 2 sync periods.
    readiness = Readiness(cpu_initialization=20 * period, initial_readiness_delay=2 * period)
    controller = HorizontalController(client, hpas, pods, clock=clock, sync_period=period, recorder=recorder,
                                      readiness=readiness)
    return Runner("horizontalpodautoscaling", controller.reconcile, controller.queue, [hpas, pods], workers=2)

