"""LimitRange defaults, validation and the LimitRanger's bounds, as pure functions with a fake lister."""

from __future__ import annotations

from control.kinds.limitranges import apply_defaults, enforce, limitrange_defaults, validate_limitrange


def lister(*items):
    ranges = [{"metadata": {"name": f"lr{i}"}, "spec": {"limits": [item]}} for i, item in enumerate(items)]
    return lambda resource, namespace: ranges if resource == "/limitranges" else []


def pod(*containers):
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": list(containers)}}


def messages(causes):
    return [(c["field"], c["message"]) for c in causes]


def test_a_claim_item_needs_min_or_max_storage_and_ratio_fits_between_min_and_max():
    lr = {"spec": {"limits": [{"type": "PersistentVolumeClaim"},
                              {"type": "Container", "min": {"cpu": "100m"}, "max": {"cpu": "200m"},
                               "maxLimitRequestRatio": {"cpu": "3"}}]}}
    limitrange_defaults(lr)
    assert messages(validate_limitrange(lr)) == [
        ("spec.limits[0].limits", "Required value: either minimum or maximum storage value is required, but neither "
                                  "was provided"),
        ("spec.limits[1].maxLimitRequestRatio[cpu]", 'Invalid value: "3": ratio 3 is greater than max/min = 2.000000')]


def test_unknown_resource_names_are_refused_per_type():
    lr = {"spec": {"limits": [{"type": "Container", "max": {"pods": "1", "example.com/gpu": "1"}}]}}
    assert messages(validate_limitrange(lr)) == [
        ("spec.limits[0].max[pods]", 'Invalid value: "pods": must be a standard resource for containers')]


def test_defaults_never_replace_what_a_container_states():
    item = {"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "500m"}}
    obj = pod({"name": "a", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}})
    assert apply_defaults("/pods", obj, None, lister(item)) == ""
    assert obj["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}
    assert "annotations" not in obj["metadata"]
    assert apply_defaults("/configmaps", {"metadata": {}}, None, lister(item)) == ""


def test_a_pod_item_bounds_the_sum_of_its_containers():
    item = {"type": "Pod", "max": {"memory": "1Gi"}}
    big = pod({"name": "a", "resources": {"limits": {"memory": "600Mi"}}},
              {"name": "b", "resources": {"limits": {"memory": "600Mi"}}})
    assert enforce("/pods", big, None, lister(item)) == "maximum memory usage per Pod is 1Gi, but limit is 1200Mi"
    assert enforce("/pods", pod({"name": "a", "resources": {"limits": {"memory": "600Mi"}}}), None, lister(item)) == ""


def test_a_missing_limit_or_request_is_named():
    obj = pod({"name": "a"})
    got = enforce("/pods", obj, None, lister({"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "1Mi"}}))
    assert got == ("[minimum memory usage per Container is 1Mi.  No request is specified, "
                   "maximum cpu usage per Container is 1.  No limit is specified]")


def test_a_claim_is_bounded_by_its_storage_request():
    claim = {"metadata": {"name": "c", "namespace": "default"},
             "spec": {"resources": {"requests": {"storage": "5Gi"}}}}
    item = {"type": "PersistentVolumeClaim", "max": {"storage": "2Gi"}}
    assert enforce("/persistentvolumeclaims", claim, None, lister(item)) == (
        "maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi")
    claim["spec"]["resources"]["requests"]["storage"] = "1Gi"
    assert enforce("/persistentvolumeclaims", claim, None, lister(item, {"type": "PersistentVolumeClaim",
                                                                           "min": {"storage": "2Gi"}})) == (
        "minimum storage usage per PersistentVolumeClaim is 2Gi, but request is 1Gi")
