"""The scheduler cache: incremental per-node sums and the assumed-pods lifecycle."""

from __future__ import annotations

import copy

from control.clock import FakeClock
from control.scheduler.cache import SchedulerCache
from control.scheduler.demand import Requests
from tests.scheduler.objects import next_rv, node, pod


def bound(p: dict, node_name: str, phase: str = "Pending") -> dict:
    out = copy.deepcopy(p)
    out["spec"]["nodeName"] = node_name
    out["status"]["phase"] = phase
    out["metadata"]["resourceVersion"] = next_rv()
    return out


def test_sums_follow_informer_events_without_rescanning():
    cache = SchedulerCache(clock=FakeClock())
    cache.set_node(node("n1"))
    a = pod("a", cpu="500m", memory="1Gi", owner="web")
    assert cache.pod_observed(a) is False  # unbound: counts nowhere
    assert cache.node("n1").pods == 0
    cache.pod_observed(bound(a, "n1"))
    info = cache.node("n1")
    assert (info.requested, info.pods, info.owners) == (Requests(500, 2**30), 1, {"uid-rs-web": 1})
    assert info.nonzero == Requests(500, 2**30)
    cache.pod_observed(bound(a, "n1", "Running"))  # a status update changes nothing
    assert info.pods == 1
    assert cache.pod_observed(bound(a, "n1", "Succeeded")) is True  # finished: resources freed
    assert (info.requested, info.pods, info.owners) == (Requests(0, 0), 0, {})


def test_deleting_a_counted_pod_frees_its_resources():
    cache = SchedulerCache(clock=FakeClock())
    cache.set_node(node("n1"))
    b = bound(pod("b", cpu="1"), "n1")
    cache.pod_observed(b)
    assert cache.pod_deleted(b) is True
    assert cache.node("n1").requested == Requests(0, 0)
    assert cache.pod_deleted(pod("never-seen")) is False


def test_sums_survive_a_node_being_deleted_and_recreated():
    cache = SchedulerCache(clock=FakeClock())
    cache.set_node(node("n1"))
    cache.pod_observed(bound(pod("c", cpu="1"), "n1"))
    cache.remove_node("n1")
    assert cache.nodes() == []
    cache.set_node(node("n1"))
    assert cache.node("n1").requested.cpu == 1000
    # pods naming a node that does not exist yet are counted too
    cache.pod_observed(bound(pod("d", cpu="2"), "n9"))
    assert [i.name for i in cache.nodes()] == ["n1"]
    cache.set_node(node("n9"))
    assert cache.node("n9").requested.cpu == 2000


def test_assumed_pod_counts_at_once_and_is_replaced_by_the_confirmed_one():
    cache = SchedulerCache(clock=FakeClock())
    cache.set_node(node("n1"))
    p = pod("p", cpu="1", owner="web")
    cache.pod_observed(p)
    cache.assume(p, "n1")
    assert cache.is_assumed("default/p") and cache.node("n1").requested.cpu == 1000
    cache.pod_observed(p)  # a stale unbound view arrives after the assumption: keep it
    assert cache.is_assumed("default/p") and cache.node("n1").pods == 1
    cache.finish_binding("default/p")
    cache.pod_observed(bound(p, "n1"))  # the watch confirms
    assert not cache.is_assumed("default/p")
    assert (cache.node("n1").pods, cache.node("n1").requested.cpu, cache.node("n1").owners) == (1, 1000, {"uid-rs-web": 1})


def test_forget_undoes_an_assumption_after_a_failed_bind():
    cache = SchedulerCache(clock=FakeClock())
    cache.set_node(node("n1"))
    p = pod("p", cpu="1")
    cache.assume(p, "n1")
    cache.forget("default/p")
    assert not cache.is_assumed("default/p") and cache.node("n1").pods == 0
    cache.pod_observed(bound(p, "n1"))
    cache.forget("default/p")  # forgetting never removes a confirmed pod
    assert cache.node("n1").pods == 1


def test_assumptions_expire_only_ttl_after_the_binding_finished():
    clock = FakeClock()
    cache = SchedulerCache(clock=clock, ttl=30)
    cache.set_node(node("n1"))
    p, q = pod("p", cpu="1"), pod("q", cpu="1")
    cache.assume(p, "n1")
    cache.assume(q, "n1")
    clock.t += 100
    assert cache.expire() == []  # bindings still in flight never expire
    cache.finish_binding("default/p")
    clock.t += 29
    assert cache.expire() == []
    clock.t += 2
    assert cache.expire() == ["default/p"]
    assert cache.node("n1").pods == 1 and cache.is_assumed("default/q")
    assert cache.in_flight() == 1


def test_a_confirmed_pod_is_not_expired_later():
    clock = FakeClock()
    cache = SchedulerCache(clock=clock, ttl=30)
    cache.set_node(node("n1"))
    p = pod("p", cpu="1")
    cache.assume(p, "n1")
    cache.finish_binding("default/p")
    cache.pod_observed(bound(p, "n1"))
    clock.t += 60
    assert cache.expire() == []
    assert cache.node("n1").pods == 1


def test_deleting_an_assumed_pod_drops_the_assumption():
    cache = SchedulerCache(clock=FakeClock())
    cache.set_node(node("n1"))
    p = pod("p", cpu="1")
    cache.assume(p, "n1")
    assert cache.pod_deleted(p) is False  # nothing the watch knew of was freed
    assert cache.node("n1").pods == 0 and not cache.is_assumed("default/p")


def test_a_recreated_pod_with_the_same_name_replaces_the_assumption():
    cache = SchedulerCache(clock=FakeClock())
    cache.set_node(node("n1"))
    p = pod("p", cpu="1")
    cache.assume(p, "n1")
    again = copy.deepcopy(p)
    again["metadata"]["uid"] = "another"
    cache.pod_observed(again)
    assert cache.node("n1").pods == 0 and not cache.is_assumed("default/p")
