"""The autoscaler's arithmetic: replica proposals, unready/missing pods, stabilisation, rate policies."""

from __future__ import annotations

import pytest

from control.kinds.meta import format_time
from control.controllers.hpa_replicas import (
    Behaviour, MetricsUnavailable, Readiness, Sample, group_pods, pod_replicas, pod_requests,
)
from control.kinds.autoscaling import SCALE_DOWN_DEFAULT, SCALE_UP_DEFAULT

NOW = 1_800_000_000.0
LONG_AGO = NOW - 3600
RULES = {"scaleUp": SCALE_UP_DEFAULT, "scaleDown": SCALE_DOWN_DEFAULT}


def pod(name: str, *, request: str | None = "100m", phase: str = "Running", ready: bool = True,
        started: float = LONG_AGO, ready_since: float = LONG_AGO, deleting: bool = False) -> dict:
    resources = {"requests": {"cpu": request, "memory": "64Mi"}} if request else {}
    meta = {"name": name, "namespace": "default"}
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return {"metadata": meta, "spec": {"containers": [{"name": "app", "resources": resources}]},
            "status": {"phase": phase, "startTime": format_time(started),
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                       "lastTransitionTime": format_time(ready_since)}]}}


def samples(**millicores: float) -> dict[str, Sample]:
    return {name: Sample(value, NOW - 1, 3.0) for name, value in millicores.items()}


def propose(current: int, target: float, pods: list, got: dict, **kw):
    return pod_replicas(current=current, target=target, pods=pods, samples=got, resource="cpu", now=NOW, **kw)


def test_desired_is_ceil_of_current_times_ratio():
    pods = [pod("a"), pod("b")]
    result = propose(2, 50, pods, samples(a=90, b=90))  # 90% of request against 50%
    assert (result.replicas, result.utilization, result.ready_pods) == (4, 90, 2)
    assert propose(2, 50, pods, samples(a=20, b=20)).replicas == 1  # 20% → ceil(0.4 × 2)


def test_within_tolerance_nothing_changes():
    pods = [pod("a"), pod("b")]
    assert propose(2, 50, pods, samples(a=54, b=54)).replicas == 2  # ratio 1.08
    assert propose(2, 50, pods, samples(a=46, b=46)).replicas == 2  # ratio 0.92
    assert propose(2, 50, pods, samples(a=56, b=56)).replicas == 3  # ratio 1.12


def test_utilisation_is_sum_of_usage_over_sum_of_requests():
    pods = [pod("a", request="100m"), pod("b", request="300m")]
    result = propose(2, 50, pods, samples(a=100, b=100))  # 200m of 400m = 50%
    assert result.utilization == 50 and result.replicas == 2


def test_missing_pods_count_as_full_request_when_scaling_down():
    pods = [pod("a"), pod("b"), pod("c")]
    # a alone says 10% → scale down; c and b missing are assumed at 100% → ratio (10+100+100)/300/0.5 = 1.4 → up,
    # which reverses the direction: nothing changes.
    assert propose(3, 50, pods, samples(a=10)).replicas == 3


def test_missing_pods_count_as_zero_when_scaling_up():
    pods = [pod("a"), pod("b")]
    # a at 200% against 50% → ratio 4; b missing counts 0 → (200+0)/200/0.5 = 2 → ceil(2 × 2) = 4.
    assert propose(2, 50, pods, samples(a=200)).replicas == 4


def test_unready_pods_count_as_zero_only_when_scaling_up():
    pods = [pod("a"), pod("b", ready=False, started=NOW - 10, ready_since=NOW - 10)]
    got = samples(a=100, b=100)
    # b is unready: a alone is 100% against 50% → with b at 0%: 100/200/0.5 = 1.0 → within tolerance: stay.
    assert propose(2, 50, pods, got).replicas == 2
    # scaling down ignores unready pods: a at 10% → ceil(0.2 × 1) = 1
    assert propose(2, 50, pods, samples(a=10, b=100)).replicas == 1


def test_deleted_failed_and_pending_pods_are_set_aside():
    pods = [pod("a"), pod("gone", deleting=True), pod("dead", phase="Failed"), pod("new", phase="Pending")]
    ready, unready, missing, ignored = group_pods(pods, samples(a=50, gone=500, dead=500), "cpu", NOW, Readiness())
    assert (ready, unready, missing, ignored) == (1, {"new"}, set(), {"gone", "dead"})


def test_a_starting_pods_sample_counts_only_one_window_after_it_became_ready():
    fresh = pod("a", started=NOW - 20, ready_since=NOW - 2)  # ready 2 s ago, window 3 s: too early
    settled = pod("b", started=NOW - 20, ready_since=NOW - 10)
    ready, unready, _, _ = group_pods([fresh, settled], samples(a=50, b=50), "cpu", NOW, Readiness())
    assert ready == 1 and unready == {"a"}


def test_no_pods_no_samples_or_no_request_is_unavailable():
    with pytest.raises(MetricsUnavailable, match="no pods returned by selector"):
        propose(1, 50, [], samples(a=1))
    with pytest.raises(MetricsUnavailable, match="did not receive metrics"):
        propose(1, 50, [pod("a")], {})
    with pytest.raises(MetricsUnavailable, match="missing request for cpu in container app of Pod a"):
        pod_requests([pod("a", request=None)], "cpu")


def test_average_value_targets_use_the_raw_average():
    pods = [pod("a"), pod("b")]
    result = propose(2, 100, pods, samples(a=300, b=300), utilization=False)  # 300m against 100m
    assert result.replicas == 6 and result.utilization is None and result.average == 300


# --- behaviour ----------------------------------------------------------------------------------

def test_scale_up_is_limited_to_the_larger_of_four_pods_or_double_per_period():
    behaviour = Behaviour()
    decision = behaviour.next_size(current=1, desired=10, minimum=1, maximum=10, rules=RULES, now=NOW)
    assert (decision.replicas, decision.limited, decision.limited_reason) == (5, True, "ScaleUpLimit")
    behaviour.record_scale(1, 5, RULES, NOW)
    # 5 s later the period still holds the +4: the period started at 1 → max(1+4, 2) = 5 → no more.
    assert behaviour.next_size(current=5, desired=10, minimum=1, maximum=10, rules=RULES, now=NOW + 5).replicas == 5
    # after the 15 s period: max(5+4, 10) = 10
    assert behaviour.next_size(current=5, desired=10, minimum=1, maximum=10, rules=RULES, now=NOW + 16).replicas == 10


def test_scale_up_beyond_max_says_too_many_replicas():
    decision = Behaviour().next_size(current=4, desired=9, minimum=1, maximum=5, rules=RULES, now=NOW)
    assert (decision.replicas, decision.limited_reason) == (5, "TooManyReplicas")


def test_scale_down_waits_for_the_stabilisation_window():
    behaviour = Behaviour()
    rules = {"scaleUp": SCALE_UP_DEFAULT, "scaleDown": {**SCALE_DOWN_DEFAULT, "stabilizationWindowSeconds": 60}}
    assert behaviour.next_size(current=4, desired=4, minimum=1, maximum=10, rules=rules, now=NOW).replicas == 4
    held = behaviour.next_size(current=4, desired=1, minimum=1, maximum=10, rules=rules, now=NOW + 15)
    assert (held.replicas, held.able_reason) == (4, "ScaleDownStabilized")
    assert behaviour.next_size(current=4, desired=1, minimum=1, maximum=10, rules=rules, now=NOW + 59).replicas == 4
    # the recommendation of 4 (at NOW) has left the window; the highest inside is 1 now
    done = behaviour.next_size(current=4, desired=1, minimum=1, maximum=10, rules=rules, now=NOW + 61)
    assert (done.replicas, done.able_reason) == (1, "ReadyForNewScale")


def test_scale_down_goes_to_the_highest_recommendation_in_the_window():
    behaviour = Behaviour()
    rules = {"scaleUp": SCALE_UP_DEFAULT, "scaleDown": {**SCALE_DOWN_DEFAULT, "stabilizationWindowSeconds": 30}}
    behaviour.next_size(current=6, desired=6, minimum=1, maximum=10, rules=rules, now=NOW)
    behaviour.next_size(current=6, desired=3, minimum=1, maximum=10, rules=rules, now=NOW + 20)
    assert behaviour.next_size(current=6, desired=2, minimum=1, maximum=10, rules=rules, now=NOW + 40).replicas == 3


def test_scale_down_rate_and_minimum():
    rules = {"scaleUp": SCALE_UP_DEFAULT, "scaleDown": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                                                        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}
    behaviour = Behaviour()
    decision = behaviour.next_size(current=5, desired=1, minimum=1, maximum=10, rules=rules, now=NOW)
    assert (decision.replicas, decision.limited_reason) == (4, "ScaleDownLimit")
    behaviour.record_scale(5, 4, rules, NOW)
    assert behaviour.next_size(current=4, desired=1, minimum=1, maximum=10, rules=rules, now=NOW + 30).replicas == 4
    floor = Behaviour().next_size(current=3, desired=1, minimum=2, maximum=10, rules=RULES, now=NOW)
    assert (floor.replicas, floor.limited_reason) == (2, "TooFewReplicas")


def test_disabled_direction_never_moves():
    rules = {"scaleUp": {**SCALE_UP_DEFAULT, "selectPolicy": "Disabled"}, "scaleDown": SCALE_DOWN_DEFAULT}
    assert Behaviour().next_size(current=2, desired=8, minimum=1, maximum=10, rules=rules, now=NOW).replicas == 2


def test_min_select_policy_takes_the_smallest_change():
    rules = {"scaleUp": {**SCALE_UP_DEFAULT, "selectPolicy": "Min"}, "scaleDown": SCALE_DOWN_DEFAULT}
    # Pods +4 → 14, Percent 100% → 20: Min picks 14
    assert Behaviour().next_size(current=10, desired=30, minimum=1, maximum=50, rules=rules, now=NOW).replicas == 14


def test_a_new_autoscaler_does_not_shrink_at_once():
    behaviour = Behaviour()
    behaviour.start(4, NOW)
    assert behaviour.next_size(current=4, desired=1, minimum=1, maximum=10, rules=RULES, now=NOW + 1).replicas == 4
