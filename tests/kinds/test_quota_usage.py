"""What an object counts against a quota, and quantities printed as Quantity.String() does."""

from __future__ import annotations

from control.kinds.quota_usage import count_name, missing_compute, pretty, show, usage
from control.kinds.resourcequotas import matches, quota_cells, validate_quota


def c(name, requests=None, limits=None):
    return {"name": name, "resources": {k: v for k, v in (("requests", requests), ("limits", limits)) if v}}


def test_a_pod_counts_app_containers_summed_and_the_largest_init_container():
    pod = {"spec": {"containers": [c("a", {"cpu": "200m", "memory": "64Mi"}, {"cpu": "1"}), c("b", {"cpu": "300m"})],
                    "initContainers": [c("i", {"cpu": "2"})]}}
    got = usage("/pods", pod)
    assert got["pods"] == got["count/pods"] == 1
    assert got["requests.cpu"] == got["cpu"] == 2.0  # the init container's 2 beats the sum 0.5
    assert got["limits.cpu"] == 1.0 and got["requests.memory"] == 64 * 2**20


def test_overhead_counts_in_requests_always_and_in_limits_where_one_is_set():
    """upstream podComputeUsageHelper reads PodRequests and PodLimits, which add spec.overhead."""
    pod = {"spec": {"containers": [c("a", limits={"memory": "64Mi"})], "overhead": {"cpu": "250m", "memory": "16Mi"}}}
    got = usage("/pods", pod)
    assert got["requests.cpu"] == got["cpu"] == 0.25  # no container asks for CPU: the overhead alone
    assert got["requests.memory"] == 80 * 2**20  # the request defaulted from the limit, plus overhead
    assert got["limits.memory"] == 80 * 2**20 and "limits.cpu" not in got


def test_terminal_pods_count_nothing_and_other_kinds_count_by_name():
    assert usage("/pods", {"status": {"phase": "Failed"}}) == {}
    assert usage("apps/deployments", {}) == {"count/deployments.apps": 1.0}
    assert usage("/services", {"spec": {"type": "NodePort", "ports": [{}, {}]}}) == {
        "count/services": 1.0, "services": 1.0, "services.nodeports": 2.0}
    assert usage("/persistentvolumeclaims", {"spec": {"resources": {"requests": {"storage": "1Gi"}}}})[
        "requests.storage"] == 2**30
    assert count_name("/secrets") == "count/secrets"


def test_missing_compute_names_containers_per_resource_in_order():
    pod = {"spec": {"containers": [c("z"), c("a", {"memory": "1Mi"})], "initContainers": [c("init")]}}
    assert missing_compute(pod, ["pods", "requests.memory", "cpu"]) == (
        "must specify cpu for: a,init,z; must specify requests.memory for: init,z")
    assert missing_compute(pod, ["pods"]) == ""


def test_show_prints_like_a_quantity():
    assert [show("requests.cpu", v) for v in (0, 0.25, 1, 1.5)] == ["0", "250m", "1", "1500m"]
    assert [show("limits.memory", v) for v in (2**30, 3 * 2**20, 10**9, 1000)] == ["1Gi", "3Mi", "1G", "1k"]
    assert pretty({"pods": 1, "limits.cpu": 0.5}) == "limits.cpu=500m,pods=1"


def test_scopes_select_pods_by_qos_and_deadline():
    best_effort = {"spec": {"containers": [c("a")]}}
    sized = {"spec": {"containers": [c("a", {"cpu": "1"})], "activeDeadlineSeconds": 5}}
    quota = {"spec": {"scopes": ["BestEffort"]}}
    assert matches(quota, "/pods", best_effort) and not matches(quota, "/pods", sized)
    assert matches({"spec": {"scopes": ["Terminating", "NotBestEffort"]}}, "/pods", sized)
    assert not matches(quota, "/configmaps", {})


def test_quota_validation_refuses_unknown_scopes_and_conflicts():
    causes = validate_quota({"spec": {"hard": {"count/deployments.apps": "1"}, "scopes": ["Nope", "BestEffort",
                                                                                           "NotBestEffort"]}})
    assert [(x["field"], x["message"]) for x in causes] == [
        ("spec.scopes", 'Invalid value: []core.ResourceQuotaScope{"Nope", "BestEffort", "NotBestEffort"}: '
                        'unsupported scope'),
        ("spec.scopes", 'Invalid value: []core.ResourceQuotaScope{"Nope", "BestEffort", "NotBestEffort"}: '
                        'conflicting scopes')]


def test_the_printer_splits_requests_and_limits():
    quota = {"metadata": {"name": "q", "creationTimestamp": "2026-01-01T00:00:00Z"},
             "spec": {"hard": {"pods": "2", "limits.cpu": "1", "requests.cpu": "1"}},
             "status": {"hard": {"pods": "2", "limits.cpu": "1", "requests.cpu": "1"},
                        "used": {"pods": "1", "limits.cpu": "500m", "requests.cpu": "0"}}}
    assert quota_cells(quota, 0)[2:] == ["pods: 1/2, requests.cpu: 0/1", "limits.cpu: 500m/1"]


def test_scopes_bound_pod_resources_only():
    causes = validate_quota({"spec": {"hard": {"pods": "1", "requests.cpu": "1", "services": "2"},
                                      "scopes": ["BestEffort"]}})
    assert [x["message"] for x in causes] == [
        'Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource'] * 2
    assert validate_quota({"spec": {"hard": {"pods": "1", "limits.memory": "1Gi"}, "scopes": ["NotBestEffort"]}}) == []
