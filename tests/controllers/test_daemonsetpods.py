"""The DaemonSet controller's pure decisions (its hash: tests/kinds/test_hashing.py): daemon tolerations, the rolling
update's budget (percentages rounded up, a node without its pod counting as unavailable)."""

from __future__ import annotations

from control.controllers.daemonsetpods import (
    DAEMON_TOLERATIONS, HOST_NETWORK_TOLERATION, rolling_update, scaled, surge_and_unavailable,
    with_daemon_tolerations,
)

from control.kinds.hashing import template_hash

from .fakes import START
from .test_daemonset import daemon_pod, daemonset


def test_daemon_tolerations_are_added_once_and_host_network_adds_one_more():
    spec = with_daemon_tolerations({"tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                                     "effect": "NoExecute", "tolerationSeconds": 5}]})
    assert len(spec["tolerations"]) == len(DAEMON_TOLERATIONS)
    assert spec["tolerations"][0]["tolerationSeconds"] == 5, "the pod's own toleration is kept"
    assert HOST_NETWORK_TOLERATION in with_daemon_tolerations({"hostNetwork": True})["tolerations"]


def test_budgets_round_percentages_up_and_never_allow_nothing():
    assert scaled("25%", 10, 1) == 3 and scaled(2, 10, 1) == 2 and scaled(None, 10, 1) == 1
    ds = daemonset(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}})
    assert surge_and_unavailable(ds, 4) == (0, 1)


def test_a_node_waiting_for_its_pod_uses_up_the_unavailability_budget():
    old_ds, ds = daemonset(), daemonset(image="busybox:2", template_generation=2)
    old_hash = template_hash(old_ds["spec"]["template"])
    new_hash = template_hash(ds["spec"]["template"])
    by_node = {"n0": [daemon_pod("p0", old_ds, "n0", hash_=old_hash)], "n1": []}
    assert rolling_update(ds, by_node, 2, new_hash, START).delete == []
    by_node["n1"] = [daemon_pod("p1", old_ds, "n1", hash_=old_hash)]
    assert [p["metadata"]["name"] for p in rolling_update(ds, by_node, 2, new_hash, START).delete] == ["p0"]
