"""Requests and limits as the API server validates them, and the QoS class it stamps on a new pod."""

from __future__ import annotations

from control.kinds.pod_resources import canonical, pod_qos, resource_causes
from control.kinds.pods import prepare_pod_for_create, validate_pod

PATH = "spec.containers[0].resources"


def messages(resources):
    return [(c["field"], c["message"]) for c in resource_causes(resources, PATH)]


def pod(*resources, init=()):
    return {"spec": {"containers": [{"name": f"c{i}", "image": "nginx", "resources": r} for i, r in enumerate(resources)],
                     "initContainers": [{"name": f"i{i}", "image": "busybox", "resources": r} for i, r in enumerate(init)]}}


def test_canonical_quantities_as_go_prints_them():
    assert [canonical(v) for v in ("2", "0.5", "500m", "1000m", "1Gi", "1024Mi", "1536Mi", "100M", 1, "1.5")] == \
        ["2", "500m", "500m", "1", "1Gi", "1Gi", "1536Mi", "100M", "1", "1500m"]


def test_a_request_above_its_limit_is_invalid_in_upstream_words():
    assert messages({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}) == [
        (f"{PATH}.requests", 'Invalid value: "2": must be less than or equal to cpu limit of 1')]
    assert messages({"requests": {"memory": "256Mi"}, "limits": {"memory": "128Mi"}}) == [
        (f"{PATH}.requests", 'Invalid value: "256Mi": must be less than or equal to memory limit of 128Mi')]
    assert messages({"requests": {"cpu": "500m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "64Mi"}}) == []


def test_bad_names_negative_and_unreadable_quantities():
    assert messages({"limits": {"cpu": "-1"}}) == [(f"{PATH}.limits[cpu]", 'Invalid value: "-1": must be greater than '
                                                    "or equal to 0")]
    assert messages({"requests": {"memory": "lots"}}) == [(f"{PATH}.requests[memory]",
                                                           'Invalid value: "lots": must be a valid quantity')]
    assert messages({"limits": {"gpu": "1"}}) == [(f"{PATH}.limits[gpu]",
                                                   'Invalid value: "gpu": must be a standard resource for containers')]
    assert messages({"requests": {"nvidia.com/gpu": "1"}}) == [
        (f"{PATH}.limits", "Required value: Limit must be set for non overcommitable resources")]
    assert messages({"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}) == [
        (f"{PATH}.requests", 'Invalid value: "1": must be equal to nvidia.com/gpu limit of 2')]


def test_validate_pod_reports_resources_with_the_rest():
    bad = pod({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})
    assert [c["field"] for c in validate_pod(bad)] == [f"{PATH}.requests"]


def test_qos_classes_as_upstream():
    assert pod_qos(pod({}, {})) == "BestEffort"
    assert pod_qos(pod({"requests": {"ephemeral-storage": "1Gi"}})) == "BestEffort", "only cpu and memory count"
    both = {"cpu": "500m", "memory": "128Mi"}
    assert pod_qos(pod({"limits": both})) == "Guaranteed", "requests default to limits"
    assert pod_qos(pod({"limits": both, "requests": both})) == "Guaranteed"
    assert pod_qos(pod({"limits": both, "requests": {"cpu": "250m"}})) == "Burstable"
    assert pod_qos(pod({"limits": both}, {})) == "Burstable", "every container must be limited"
    assert pod_qos(pod({"limits": both}, init=[{}])) == "Burstable", "init containers count"
    assert pod_qos(pod({"requests": {"memory": "64Mi"}})) == "Burstable"
    assert pod_qos(pod({"limits": {"cpu": "1"}})) == "Burstable"


def test_a_new_pod_gets_its_qos_class_from_the_hub():
    created = pod({"limits": {"cpu": "1", "memory": "1Gi"}})
    prepare_pod_for_create(created)
    assert created["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
