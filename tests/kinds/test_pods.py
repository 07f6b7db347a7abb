"""Pod scheduling gates as the API server treats them: a gated pod is created PodScheduled=False
(SchedulingGated) and printed so, its gates may only be removed, and it cannot be bound."""

from __future__ import annotations

from control.kinds.pods import bind_pod, pod_display_status, prepare_pod_for_create, validate_pod_update


def gated(*names):
    return {"metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "schedulingGates": [{"name": n} for n in names]}}


def test_a_gated_pod_starts_scheduling_gated_and_prints_so():
    pod = gated("example.com/a")
    prepare_pod_for_create(pod)
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
         "message": "Scheduling is blocked due to non-empty scheduling gates"}]}
    assert pod_display_status(pod) == "SchedulingGated"
    plain = gated()
    prepare_pod_for_create(plain)
    assert plain["status"] == {"phase": "Pending", "qosClass": "BestEffort"} and pod_display_status(plain) == "Pending"


def test_gates_may_be_removed_never_added_and_a_gated_pod_is_not_bound():
    old = gated("a", "b")
    assert validate_pod_update(gated("b"), old) == []
    assert validate_pod_update(gated(), old) == []
    assert validate_pod_update(gated("a", "b", "c"), old) == [{
        "reason": "FieldValueForbidden", "field": "spec.schedulingGates",
        "message": "Forbidden: only deletion is allowed, but found new scheduling gate 'c'"}]
    assert bind_pod(gated("a"), "n1", "2026-01-01T00:00:00Z") == "pod p has non-empty .spec.schedulingGates"
    opened = gated()
    prepare_pod_for_create(gated("a"))
    assert bind_pod(opened, "n1", "2026-01-01T00:00:00Z") == "" and opened["spec"]["nodeName"] == "n1"
