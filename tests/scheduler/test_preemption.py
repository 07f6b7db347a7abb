"""Victim selection and candidate ordering, as upstream's DefaultPreemption decides them."""

from __future__ import annotations

from control.scheduler.cache import SchedulerCache
from control.scheduler.demand import pod_requests
from control.scheduler.preemption import (Candidate, eligibility, importance, pick_candidate, priority_of,
                                          select_victims)
from tests.scheduler.objects import node, pod


def _on(node_name: str, name: str, cpu: str, priority: int, started: str = "2026-01-01T00:00:00Z", **extra):
    p = pod(name, cpu=cpu, node_name=node_name, phase="Running", priority=priority, **extra)
    p["status"]["startTime"] = started
    return p


def _info(*pods, cpu="4"):
    cache = SchedulerCache()
    cache.set_node(node("n1", cpu=cpu))
    for p in pods:
        cache.pod_observed(p)
    return cache.node("n1")


def _pdb(name, labels, allowed, disrupted=None):
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"selector": {"matchLabels": labels}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}}}


def _names(candidate):
    return [v["metadata"]["name"] for v in candidate.victims]


def test_only_lower_priority_pods_are_victims_and_the_least_important_go_first():
    vip = pod("vip", cpu="2", priority=1000)
    info = _info(_on("n1", "low-a", "1", 10), _on("n1", "low-b", "1", 5), _on("n1", "equal", "1", 1000),
                 _on("n1", "high", "1", 5000))
    found = select_victims(vip, pod_requests(vip), info, [])
    assert _names(found) == ["low-a", "low-b"] and found.pdb_violations == 0
    smaller = pod("small", cpu="1", priority=1000)
    assert _names(select_victims(smaller, pod_requests(smaller), info, [])) == ["low-b"], "the lowest one is enough"


def test_no_candidate_when_even_removing_every_lower_pod_is_not_enough():
    vip = pod("vip", cpu="3", priority=1000)
    info = _info(_on("n1", "low", "1", 10), _on("n1", "high", "2", 5000))
    assert select_victims(vip, pod_requests(vip), info, []) is None
    assert select_victims(pod("peer", cpu="1", priority=10), pod_requests(pod("peer", cpu="1")), info, []) is None


def test_a_budget_protected_pod_is_reprieved_when_another_victim_will_do():
    vip = pod("vip", cpu="1", priority=1000)
    guarded = _on("n1", "guarded", "1", 1)
    guarded["metadata"]["labels"] = {"app": "db"}
    free = _on("n1", "free", "1", 5)
    info = _info(guarded, free, _on("n1", "high", "2", 5000))
    budgets = [_pdb("db", {"app": "db"}, 0)]
    found = select_victims(vip, pod_requests(vip), info, budgets)
    assert _names(found) == ["free"] and found.pdb_violations == 0
    bigger = pod("big", cpu="2", priority=1000)
    found = select_victims(bigger, pod_requests(bigger), info, budgets)
    assert _names(found) == ["free", "guarded"] and found.pdb_violations == 1
    already = [_pdb("db", {"app": "db"}, 0, {"guarded": "2026-01-01T00:00:00Z"})]
    assert select_victims(bigger, pod_requests(bigger), info, already).pdb_violations == 0


def test_candidate_order_follows_upstream():
    low, mid, high = (_on("a", "low", "1", 1), _on("a", "mid", "1", 50), _on("a", "high", "1", 100))
    early, late = (_on("a", "early", "1", 100, "2026-01-01T00:00:00Z"), _on("a", "late", "1", 100, "2026-01-02T00:00:00Z"))
    assert pick_candidate([Candidate("n1", (low,), 1), Candidate("n2", (high,), 0)]).node == "n2"  # budgets first
    assert pick_candidate([Candidate("n1", (high,), 0), Candidate("n2", (mid, low), 0)]).node == "n2"  # lowest top
    assert pick_candidate([Candidate("n1", (mid, mid), 0), Candidate("n2", (mid, low), 0)]).node == "n2"  # sum
    assert pick_candidate([Candidate("n1", (low, low), 0), Candidate("n2", (low,), 0)]).node == "n2"  # count
    assert pick_candidate([Candidate("n1", (early,), 0), Candidate("n2", (late,), 0)]).node == "n2"  # latest start
    assert pick_candidate([Candidate("n1", (low,), 0), Candidate("n2", (low,), 0)]).node == "n1"
    assert pick_candidate([]) is None


def test_never_pods_and_pods_waiting_on_their_victims_do_not_preempt():
    assert eligibility(pod("polite", preemptionPolicy="Never", priority=10), []) == \
        "not eligible due to preemptionPolicy=Never."
    victim = _on("n1", "victim", "1", 1)
    victim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    victim["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    waiting = pod("vip", priority=1000)
    waiting["status"]["nominatedNodeName"] = "n1"
    assert eligibility(waiting, [_info(victim)]) == "not eligible due to a terminating pod on the nominated node."
    assert eligibility(pod("vip", priority=1000), [_info(victim)]) == ""
    assert priority_of(pod("none")) == 0 and importance(_on("n1", "x", "1", 7))[0] == -7
