"""The horizontal pod autoscaler's arithmetic, pure: how many replicas a metric asks for, and how
the scaling behaviour (stabilisation windows, rate policies) turns that into the next size.

Guarantees (kube-controller-manager's podautoscaler, replica_calculator.go and horizontal.go):
- `pod_replicas`: utilisation = sum(usage) / sum(requests) over the pods that have a usable
  sample (upstream's ratio of sums, which is the average of usage/request when requests are
  equal); ratio = utilisation / target; within the tolerance (0.1) the count stays; otherwise
  ceil(ratio x pods with samples). Conservative handling of the rest, as upstream: deleted and
  failed pods are ignored; pending pods, and CPU samples of pods not yet ready (or taken less
  than one metrics window after they became ready, during the CPU initialisation period) are
  "unready"; pods without a sample are "missing". When scaling down, missing pods count as using
  100% of their request (or the target, if higher); when scaling up they count as 0%, and so do
  unready pods. If that reverses the direction, or lands within the tolerance, nothing changes.
- `Behaviour.next_size`: the recommendation is stabilised (scale up to at most the lowest
  recommendation of the scale-up window; scale down to at most the highest one of the scale-down
  window), then limited by the rate policies (Pods / Percent per period, selectPolicy Max / Min /
  Disabled) counted from the scale events inside each period, then by [min, max]; it says why,
  in upstream's condition reasons and messages.
- Everything takes `now` as an argument; nothing here reads a clock or does I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from control.controllers.common import terminating
from control.kinds.meta import get_condition, parse_time
from control.kinds.pod_requests import container_requests, sidecars_and_containers

DEFAULT_TOLERANCE = 0.1
Obj = dict[str, Any]


class MetricsUnavailable(Exception):
    """No usable samples (or no pods, or a pod without a request): the metric cannot drive scaling."""


@dataclass(frozen=True)
class Sample:
    """One pod's measured use of a resource: millicores for CPU, bytes for memory."""

    value: float
    timestamp: float
    window: float


@dataclass(frozen=True)
class Proposal:
    replicas: int
    utilization: int | None  # percent of requests, for Utilization targets
    average: float  # average use over the pods with a usable sample (raw units)
    ready_pods: int


@dataclass(frozen=True)
class Readiness:
    """Upstream's --horizontal-pod-autoscaler-cpu-initialization-period and initial readiness delay."""

    cpu_initialization: float = 300.0
    initial_readiness_delay: float = 30.0


def group_pods(pods: Iterable[Obj], samples: dict[str, Sample], resource: str, now: float,
               readiness: Readiness) -> tuple[int, set[str], set[str], set[str]]:
    """(ready pod count, unready, missing, ignored) as upstream's groupPods."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for pod in pods:
        name = pod["metadata"]["name"]
        phase = (pod.get("status") or {}).get("phase")
        if terminating(pod) or phase == "Failed":
            ignored.add(name)
            continue
        if phase == "Pending":
            unready.add(name)
            continue
        sample = samples.get(name)
        if sample is None:
            missing.add(name)
            continue
        if resource == "cpu" and _cpu_sample_unready(pod, sample, now, readiness):
            unready.add(name)
            continue
        ready += 1
    return ready, unready, missing, ignored


def _cpu_sample_unready(pod: Obj, sample: Sample, now: float, readiness: Readiness) -> bool:
    condition = get_condition(pod, "Ready")
    started = parse_time((pod.get("status") or {}).get("startTime"))
    if condition is None or started is None:
        return True
    changed = parse_time(condition.get("lastTransitionTime")) or started
    if started + readiness.cpu_initialization > now:
        # Still starting: trust only a sample of a ready pod taken one full window after it became ready.
        return condition.get("status") == "False" or sample.timestamp < changed + sample.window
    # Long running: ignore only a pod that has never been ready.
    return condition.get("status") == "False" and started + readiness.initial_readiness_delay > changed


def pod_requests(pods: Iterable[Obj], resource: str) -> dict[str, float]:
    """Each pod's summed requests of `resource` (millicores or bytes) over its containers and sidecars
    (upstream calculatePodRequests: no init-container peak, no overhead); a container without one
    makes the metric unavailable."""
    out: dict[str, float] = {}
    for pod in pods:
        total = 0.0
        for container in sidecars_and_containers(pod):
            request = container_requests(container).get(resource)
            if request is None:
                raise MetricsUnavailable(f"missing request for {resource} in container {container.get('name', '')} "
                                         f"of Pod {pod['metadata']['name']}")
            total += request * 1000 if resource == "cpu" else request
        out[pod["metadata"]["name"]] = total
    return out


def _ratio(values: dict[str, float], requests: dict[str, float], target: float, *, utilization: bool) -> tuple[float, float]:
    """(usage ratio, utilisation percent or average value) of `values` against the target."""
    if utilization:
        used = sum(v for name, v in values.items() if name in requests)
        requested = sum(requests[name] for name in values if name in requests)
        if requested <= 0:
            raise MetricsUnavailable("no pod with a request for the resource has a sample")
        percent = used * 100 / requested
        return percent / target, percent
    average = sum(values.values()) / len(values)
    return average / target, average


def pod_replicas(*, current: int, target: float, pods: list[Obj], samples: dict[str, Sample], resource: str,
                 now: float, utilization: bool = True, tolerance: float = DEFAULT_TOLERANCE,
                 readiness: Readiness = Readiness()) -> Proposal:
    """How many replicas the metric asks for (see the module docstring for the rules)."""
    if not pods:
        raise MetricsUnavailable("no pods returned by selector while calculating replica count")
    ready, unready, missing, ignored = group_pods(pods, samples, resource, now, readiness)
    values = {name: s.value for name, s in samples.items()
              if name not in unready and name not in ignored and name not in missing}
    values = {name: v for name, v in values.items() if any(p["metadata"]["name"] == name for p in pods)}
    if not values:
        raise MetricsUnavailable("did not receive metrics for targeted pods (pods might be unready)")
    requests = pod_requests(pods, resource) if utilization else {}
    ratio, measured = _ratio(values, requests, target, utilization=utilization)
    shown = int(measured) if utilization else None
    average = sum(values.values()) / len(values)
    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if abs(1.0 - ratio) <= tolerance:
            return Proposal(current, shown, average, ready)
        return Proposal(math.ceil(ratio * len(values)), shown, average, ready)
    if missing:
        if ratio < 1.0:
            for name in missing:
                values[name] = (requests.get(name, 0.0) * max(100.0, target) / 100) if utilization else target
        elif ratio > 1.0:
            for name in missing:
                values[name] = 0.0
    if scale_up_with_unready:
        for name in unready:
            values[name] = 0.0
    new_ratio, _ = _ratio(values, requests, target, utilization=utilization)
    if abs(1.0 - new_ratio) <= tolerance or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return Proposal(current, shown, average, ready)
    replicas = math.ceil(new_ratio * len(values))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return Proposal(current, shown, average, ready)
    return Proposal(replicas, shown, average, ready)


# --- behaviour: stabilisation and rate limits ---------------------------------------------------

@dataclass
class Decision:
    replicas: int
    able_reason: str  # AbleToScale: ScaleUpStabilized | ScaleDownStabilized | ReadyForNewScale
    able_message: str
    limited: bool  # ScalingLimited status
    limited_reason: str
    limited_message: str


@dataclass
class Behaviour:
    """One HPA's memory: recent recommendations and scale events (upstream keeps them in the controller)."""

    recommendations: list[tuple[float, int]] = field(default_factory=list)
    scale_up_events: list[tuple[float, int]] = field(default_factory=list)
    scale_down_events: list[tuple[float, int]] = field(default_factory=list)

    def start(self, current: int, now: float) -> None:
        """A new autoscaler must not shrink at once: seed the window with the current size."""
        if not self.recommendations:
            self.recommendations.append((now, current))

    def stabilise(self, current: int, desired: int, rules: dict[str, Any], now: float) -> tuple[int, str, str]:
        up_cutoff = now - int(rules["scaleUp"].get("stabilizationWindowSeconds") or 0)
        down_cutoff = now - int(rules["scaleDown"].get("stabilizationWindowSeconds") or 0)
        up, down = desired, desired
        for at, recommendation in self.recommendations:
            if at > up_cutoff:
                up = min(up, recommendation)
            if at > down_cutoff:
                down = max(down, recommendation)
        stabilised = min(max(current, up), down)
        keep_after = min(up_cutoff, down_cutoff)
        self.recommendations = [(at, r) for at, r in self.recommendations if at >= keep_after]
        self.recommendations.append((now, desired))
        if desired >= current:
            return stabilised, "ScaleUpStabilized", ("recent recommendations were lower than current one, applying "
                                                     "the lowest recent recommendation")
        return stabilised, "ScaleDownStabilized", ("recent recommendations were higher than current one, applying "
                                                   "the highest recent recommendation")

    def _changed_within(self, events: list[tuple[float, int]], period: float, now: float) -> int:
        return sum(change for at, change in events if at > now - period)

    def _limit(self, current: int, rules: dict[str, Any], now: float, *, up: bool) -> int:
        select = rules.get("selectPolicy") or "Max"
        if select == "Disabled":
            return current
        # Scaling up, Max means the largest proposal; scaling down, the largest change is the smallest size.
        pick = (max if select == "Max" else min) if up else (min if select == "Max" else max)
        proposals = []
        for policy in rules.get("policies") or []:
            period = int(policy.get("periodSeconds") or 0)
            start = (current - self._changed_within(self.scale_up_events, period, now)
                     + self._changed_within(self.scale_down_events, period, now))
            value = int(policy.get("value") or 0)
            if policy.get("type") == "Pods":
                proposals.append(start + value if up else start - value)
            elif up:
                proposals.append(math.ceil(start * (1 + value / 100)))
            else:
                proposals.append(int(start * (1 - value / 100)))
        return pick(proposals) if proposals else current

    def next_size(self, *, current: int, desired: int, minimum: int, maximum: int, rules: dict[str, Any],
                  now: float) -> Decision:
        stabilised, reason, message = self.stabilise(current, desired, rules, now)
        if stabilised == desired:
            reason, message = "ReadyForNewScale", "recommended size matches current size"
        limited_reason, limited_message = "DesiredWithinRange", "the desired count is within the acceptable range"
        final = stabilised
        if stabilised > current:
            limit = max(self._limit(current, rules["scaleUp"], now, up=True), current)
            if maximum > limit:
                allowed, why, text = limit, "ScaleUpLimit", ("the desired replica count is increasing faster than "
                                                             "the maximum scale rate")
            else:
                allowed, why, text = maximum, "TooManyReplicas", ("the desired replica count is more than the "
                                                                  "maximum replica count")
            if stabilised > allowed:
                final, limited_reason, limited_message = allowed, why, text
        elif stabilised < current:
            limit = min(self._limit(current, rules["scaleDown"], now, up=False), current)
            if minimum < limit:
                allowed, why, text = limit, "ScaleDownLimit", ("the desired replica count is decreasing faster "
                                                               "than the maximum scale rate")
            else:
                allowed, why, text = minimum, "TooFewReplicas", ("the desired replica count is less than the "
                                                                 "minimum replica count")
            if stabilised < allowed:
                final, limited_reason, limited_message = allowed, why, text
        return Decision(final, reason, message, final != stabilised, limited_reason, limited_message)

    def record_scale(self, previous: int, new: int, rules: dict[str, Any], now: float) -> None:
        """Remember a rescale for the rate policies; forget events older than every policy's period."""
        longest = max([int(p.get("periodSeconds") or 0) for side in ("scaleUp", "scaleDown")
                       for p in rules[side].get("policies") or []] or [0])
        self.scale_up_events = [(at, c) for at, c in self.scale_up_events if at > now - longest]
        self.scale_down_events = [(at, c) for at, c in self.scale_down_events if at > now - longest]
        if new > previous:
            self.scale_up_events.append((now, new - previous))
        elif new < previous:
            self.scale_down_events.append((now, previous - new))
