"""Node filters, each reason, toleration matching, requests arithmetic and the FailedScheduling text."""

from __future__ import annotations

import pytest

from control.scheduler.demand import NodeInfo, Requests, node_allocatable, pod_requests
from control.scheduler.filter import (
    INSUFFICIENT_CPU, INSUFFICIENT_MEMORY, NOT_READY, SELECTOR_MISMATCH, TOO_MANY_PODS, UNSCHEDULABLE,
    failure_message, node_reasons, tolerates, untolerated_taint,
)
from tests.scheduler.objects import node, pod, unreachable


def info(obj: dict, *, cpu: int = 0, memory: int = 0, pods: int = 0) -> NodeInfo:
    return NodeInfo(obj["metadata"]["name"], obj, node_allocatable(obj), Requests(cpu, memory), Requests(cpu, memory), pods)


def reasons(p: dict, n: NodeInfo) -> list[str]:
    return node_reasons(p, pod_requests(p), n)


# --- tolerations -----------------------------------------------------------------------------

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


@pytest.mark.parametrize("toleration, expected", [
    ({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, True),
    ({"key": "dedicated", "value": "gpu"}, True),  # operator defaults to Equal, empty effect = all effects
    ({"key": "dedicated", "operator": "Equal", "value": "cpu"}, False),
    ({"key": "dedicated", "operator": "Exists"}, True),
    ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "other", "operator": "Exists"}, False),
    ({"operator": "Exists"}, True),  # empty key + Exists tolerates everything
    ({"operator": "Exists", "effect": "NoExecute"}, False),
    # An empty key matches every key; validation refuses it without Exists, but upstream's
    # ToleratesTaint still compares the value (k8s.io/api core/v1 toleration.go).
    ({"operator": "Equal", "value": "gpu"}, True),
    ({"value": "cpu"}, False),
    ({"key": "dedicated", "operator": "Bogus", "value": "gpu"}, False),
])
def test_toleration_matching(toleration, expected):
    assert tolerates(toleration, TAINT) is expected


def test_only_hard_effects_keep_pods_away():
    soft = {"key": "a", "effect": "PreferNoSchedule"}
    assert untolerated_taint([], [soft]) is None
    hard = {"key": "b", "effect": "NoExecute"}
    assert untolerated_taint([], [soft, hard]) == hard
    assert untolerated_taint([{"key": "b", "operator": "Exists"}], [soft, hard]) is None


def test_default_not_ready_tolerations_do_not_tolerate_the_noschedule_taint():
    defaults = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300}]
    assert untolerated_taint(defaults, [unreachable("NoExecute")]) is None
    assert untolerated_taint(defaults, [unreachable("NoSchedule")]) == unreachable("NoSchedule")


# --- each reason -----------------------------------------------------------------------------

def test_a_ready_roomy_node_fits():
    assert reasons(pod("p", cpu="1"), info(node("n"))) == []


def test_taint_reason_names_key_and_value():
    tainted = node("n", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
    assert reasons(pod("p"), info(tainted)) == ["node(s) had untolerated taint {dedicated: gpu}"]
    assert reasons(pod("p"), info(node("m", taints=[unreachable()]))) == [
        "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"]
    tolerant = pod("p", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu"}])
    assert reasons(tolerant, info(tainted)) == []


def test_not_ready_and_unknown_and_missing_ready_condition():
    for status in ("False", "Unknown"):
        assert reasons(pod("p"), info(node("n", ready=status))) == [NOT_READY]
    bare = node("n")
    bare["status"]["conditions"] = []
    assert reasons(pod("p"), info(bare)) == [NOT_READY]


def test_cordoned_node_unless_tolerated():
    cordoned = node("n", unschedulable=True)
    assert reasons(pod("p"), info(cordoned)) == [UNSCHEDULABLE]
    tolerant = pod("p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])
    assert reasons(tolerant, info(cordoned)) == []


def test_node_selector_and_required_affinity():
    labelled = info(node("n", labels={"disk": "ssd", "gen": "5"}))
    assert reasons(pod("p", nodeSelector={"disk": "ssd"}), labelled) == []
    assert reasons(pod("p", nodeSelector={"disk": "hdd"}), labelled) == [SELECTOR_MISMATCH]
    assert reasons(pod("p", nodeSelector={"zone": "a"}), labelled) == [SELECTOR_MISMATCH]

    def affinity(*terms):
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}

    gen_gt_4 = {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]}
    gen_gt_5 = {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["5"]}]}
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
    no_gpu = {"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"},
                                   {"key": "disk", "operator": "NotIn", "values": ["hdd"]}]}
    assert reasons(pod("p", affinity=affinity(gen_gt_4)), labelled) == []
    assert reasons(pod("p", affinity=affinity(gen_gt_5)), labelled) == [SELECTOR_MISMATCH]
    assert reasons(pod("p", affinity=affinity(gen_gt_5, by_name)), labelled) == []  # terms are ORed
    assert reasons(pod("p", affinity=affinity(no_gpu)), labelled) == []
    assert reasons(pod("p", affinity=affinity({})), labelled) == [SELECTOR_MISMATCH]  # an empty term matches nothing


def test_resources_every_short_resource_is_named():
    small = node("n", cpu="2", memory="1Gi", pods=3)
    assert reasons(pod("p", cpu="1", memory="512Mi"), info(small, cpu=1000, memory=512 * 2**20, pods=2)) == []
    assert reasons(pod("p", cpu="1500m"), info(small, cpu=1000, pods=1)) == [INSUFFICIENT_CPU]
    assert reasons(pod("p", memory="600Mi"), info(small, memory=512 * 2**20)) == [INSUFFICIENT_MEMORY]
    assert reasons(pod("p"), info(small, pods=3)) == [TOO_MANY_PODS]
    assert reasons(pod("p", cpu="3", memory="2Gi"), info(small, pods=3)) == [TOO_MANY_PODS, INSUFFICIENT_CPU,
                                                                             INSUFFICIENT_MEMORY]
    # a pod asking for nothing fits even a node whose CPU is all taken
    assert reasons(pod("p"), info(small, cpu=2000, memory=2**30)) == []


def test_placement_filters_stop_at_the_first_reason():
    bad = node("n", ready="Unknown", taints=[unreachable()], cpu="0")
    assert reasons(pod("p", cpu="1"), info(bad)) == ["node(s) had untolerated taint {node.kubernetes.io/unreachable: }"]


# --- requests arithmetic ---------------------------------------------------------------------

def test_pod_requests_sum_containers_and_take_the_largest_init_container():
    p = pod("p", cpu="250m", memory="64Mi")
    p["spec"]["containers"].append({"name": "side", "resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "1Gi"}}})
    p["spec"]["initContainers"] = [{"name": "i1", "resources": {"requests": {"cpu": "2"}}},
                                   {"name": "i2", "resources": {"requests": {"memory": "16Mi"}}}]
    assert pod_requests(p) == Requests(cpu=2000, memory=64 * 2**20 + 2**30)
    assert pod_requests(pod("q")) == Requests(0, 0)
    assert pod_requests(pod("q"), nonzero=True) == Requests(100, 200 * 2**20)
    assert pod_requests(pod("q", cpu="0.1")) == Requests(100, 0)
    assert pod_requests(pod("q", cpu="nonsense")) == Requests(0, 0)


def test_tenths_of_cores_add_up_exactly():
    total = Requests()
    for _ in range(10):
        total += pod_requests(pod("p", cpu="0.1"))
    assert total.cpu == 1000


def test_allocatable_falls_back_to_capacity_and_defaults_pods():
    n = node("n", cpu="3500m", memory="2Gi")
    del n["status"]["allocatable"]
    del n["status"]["capacity"]["pods"]
    assert node_allocatable(n).cpu == 3500 and node_allocatable(n).memory == 2 * 2**30
    assert node_allocatable(n).pods == 110


# --- the message -----------------------------------------------------------------------------

def test_failure_message_in_kube_scheduler_wording():
    message = failure_message(3, {
        "n1": ["node(s) had untolerated taint {node.kubernetes.io/unreachable: }"],
        "n2": [INSUFFICIENT_CPU], "n3": [INSUFFICIENT_CPU]})
    assert message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, "
        "2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod.")


def test_failure_message_counts_each_reason_of_a_node_and_handles_no_nodes():
    message = failure_message(2, {"a": [INSUFFICIENT_CPU, INSUFFICIENT_MEMORY], "b": [SELECTOR_MISMATCH]})
    assert message.startswith("0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, "
                              "1 node(s) didn't match Pod's node affinity/selector. preemption:")
    assert failure_message(0, {}) == "no nodes available to schedule pods"
