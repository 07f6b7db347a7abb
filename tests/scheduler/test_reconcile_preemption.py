"""`reconcile` preempting: victims marked, evicted and told, the preemptor nominated and then bound,
the room kept for it, `Never` pods left waiting, and the queue ordered by priority."""

from __future__ import annotations

from tests.scheduler.fake import Harness
from tests.scheduler.objects import node, pod


def _full_node(h: Harness) -> None:
    h.add(node("n1", cpu="2"))
    for name, started in (("old", "2026-01-01T00:00:00Z"), ("new", "2026-01-02T00:00:00Z")):
        p = pod(name, cpu="1", node_name="n1", phase="Running", priority=0)
        p["status"]["startTime"] = started
        h.add(p)


def test_a_vip_evicts_the_least_important_guest_and_is_seated_when_it_leaves():
    h = Harness()
    _full_node(h)
    h.add(pod("vip", cpu="1", priority=1000))
    h.run(h.drain())
    assert h.client.binds == [] and h.client.deletes == ["default/new"], "the later-started one goes"
    marked = [patch for key, patch, _ in h.client.status_patches if key == "default/new"]
    [condition] = marked[0]["status"]["conditions"]
    assert (condition["type"], condition["reason"], condition["message"]) == (
        "DisruptionTarget", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
    preempted = [e for e in h.client.events if e["reason"] == "Preempted"]
    assert [(e["involvedObject"]["name"], e["type"], e["message"]) for e in preempted] == [
        ("new", "Normal", "Preempted by pod uid-default-vip on node n1")]
    [(_, nominated, _)] = [p for p in h.client.status_patches if p[0] == "default/vip"]
    assert nominated["status"]["nominatedNodeName"] == "n1"
    assert nominated["status"]["conditions"][0]["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    h.echo_status_patches()
    h.add(pod("walk-in", cpu="1", priority=0))  # a lower pod must not take the room being made
    h.delete(h.scheduler.pods.cache.get("default/new"))
    h.run(h.drain())
    assert h.client.binds == [("default/vip", "n1")]
    assert "default/walk-in" in h.scheduler.unschedulable


def test_a_vip_does_not_preempt_again_while_its_victim_terminates():
    h = Harness()
    _full_node(h)
    h.add(pod("vip", cpu="1", priority=1000))
    h.run(h.drain())
    h.echo_status_patches()
    victim = h.scheduler.pods.cache.get("default/new")
    victim = dict(victim, metadata={**victim["metadata"], "deletionTimestamp": "2026-01-03T00:00:00Z"})
    h.modify(victim)
    h.scheduler.queue.add("default/vip")
    h.run(h.drain())
    assert h.client.deletes == ["default/new"]
    assert h.client.events[-1]["message"].endswith(
        "preemption: not eligible due to a terminating pod on the nominated node..")


def test_a_never_pod_waits_and_an_equal_one_finds_no_victims():
    h = Harness()
    _full_node(h)
    h.add(pod("polite", cpu="1", priority=1000, preemptionPolicy="Never"), pod("peer", cpu="1", priority=0))
    h.run(h.drain())
    assert h.client.deletes == [] and h.client.binds == []
    messages = {e["involvedObject"]["name"]: e["message"] for e in h.client.events}
    assert messages["polite"] == ("0/1 nodes are available: 1 Insufficient cpu. "
                                  "preemption: not eligible due to preemptionPolicy=Never..")
    assert messages["peer"] == ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                                "1 No preemption victims found for incoming pod.")


def test_the_queue_hands_out_higher_priority_pods_first():
    h = Harness()
    h.add(pod("a", priority=1), pod("b", priority=100), pod("c", priority=1), pod("d", priority=50))
    assert h.queued() == ["default/b", "default/d", "default/a", "default/c"]
