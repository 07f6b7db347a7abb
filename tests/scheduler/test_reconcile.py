"""`reconcile` against a fake client and a fake clock: what it binds, records and patches."""

from __future__ import annotations

import asyncio

from control import errors
from control.clock import settle
from control.client.http import HubUnreachable
from control.client.runner import DONE
from control.scheduler.scheduler import node_fit_changed, wants_scheduling
from tests.scheduler.fake import Harness
from tests.scheduler.objects import node, pod, unreachable

UNREACHABLE_MESSAGE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, "
    "2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
    "2 No preemption victims found for incoming pod.")


def three_nodes(h: Harness) -> None:
    h.add(node("n1", cpu="4", ready="Unknown", taints=[unreachable("NoSchedule"), unreachable("NoExecute")]),
          node("n2", cpu="2"), node("n3", cpu="2"),
          pod("hog", cpu="1500m", node_name="n2", phase="Running"))


def test_tainted_and_full_nodes_are_skipped_and_the_pod_goes_to_the_third():
    h = Harness()
    three_nodes(h)
    h.add(pod("web", cpu="1"))
    assert h.queued() == ["default/web"]

    async def scenario():
        return await h.scheduler.reconcile("default/web")

    assert h.run(scenario()) == DONE
    assert h.client.binds == [("default/web", "n3")]
    event = h.client.events[0]
    assert (event["reason"], event["type"], event["message"]) == ("Scheduled", "Normal", "Successfully assigned default/web to n3")
    assert event["involvedObject"]["kind"] == "Pod" and event["involvedObject"]["name"] == "web"
    assert event["source"]["component"] == "default-scheduler"
    assert h.client.status_patches == []


def test_no_fit_records_failed_scheduling_sets_the_condition_and_backs_off():
    h = Harness()
    three_nodes(h)
    h.add(pod("big", cpu="1500m"), pod("other", cpu="1"))

    async def scenario():
        assert await h.scheduler.reconcile("default/other") == DONE  # fills n3
        results = []
        for _ in range(8):
            results.append(await h.scheduler.reconcile("default/big"))
            h.echo_status_patches()
        return results

    results = h.run(scenario())
    assert [r.after for r in results] == [1, 2, 4, 8, 16, 32, 60, 60]
    failed = [e for e in h.client.events if e["reason"] == "FailedScheduling"]
    assert len(failed) == 1 and len(h.client.event_patches) == 7  # one event, its count bumped
    assert failed[0]["type"] == "Warning" and failed[0]["message"] == UNREACHABLE_MESSAGE
    assert len(h.client.status_patches) == 1, "the condition is set once, not on every retry"
    key, patch, patch_type = h.client.status_patches[0]
    assert key == "default/big" and patch_type == "strategic"
    (condition,) = patch["status"]["conditions"]
    assert condition["type"] == "PodScheduled" and condition["status"] == "False"
    assert condition["reason"] == "Unschedulable" and condition["message"] == UNREACHABLE_MESSAGE
    assert condition["lastTransitionTime"]
    assert h.scheduler.unschedulable == {"default/big"}


def test_our_own_status_patch_coming_back_does_not_requeue_but_a_spec_change_would():
    h = Harness()
    h.add(node("n1", cpu="1"), pod("big", cpu="2"))
    h.run(h.drain())
    assert h.queued() == []
    h.echo_status_patches()
    assert h.queued() == []
    h.run(h.scheduler.reconcile("default/big"))  # the periodic retry: same message, no second patch
    assert len(h.client.status_patches) == 1


def test_six_siblings_spread_two_two_two_over_three_equal_nodes():
    for confirm in (False, True):
        h = Harness()
        h.add(node("a"), node("b"), node("c"))
        for i in range(6):
            h.add(pod(f"web-{i}", cpu="100m", owner="web"))
        for i in range(6):
            h.run(h.scheduler.reconcile(f"default/web-{i}"))
            if confirm:
                h.confirm_binds()
        assert h.placement() == {"a": 2, "b": 2, "c": 2}


def test_unschedulable_pod_is_placed_when_a_node_is_added():
    h = Harness()
    h.add(node("small", cpu="1"), pod("big", cpu="2"))
    results = h.run(h.drain())
    assert results[0][1].outcome == "requeue_after" and h.client.binds == []
    h.add(node("large", cpu="4"))
    assert h.queued() == ["default/big"]
    h.run(h.drain())
    assert h.client.binds == [("default/big", "large")]
    assert h.scheduler.unschedulable == set() and h.scheduler.attempts == {}


def test_unschedulable_pods_retry_when_a_node_changes_in_a_way_that_matters():
    h = Harness()
    tainted = node("n1", taints=[{"key": "maintenance", "effect": "NoSchedule"}])
    h.add(tainted, pod("p"))
    h.run(h.drain())
    heartbeat = h.modify(tainted)  # same shape, new resourceVersion: nothing to retry
    assert h.queued() == []
    untainted = {**heartbeat, "spec": {}}
    h.modify(untainted)
    assert h.queued() == ["default/p"]
    h.run(h.drain())
    assert h.client.binds == [("default/p", "n1")]


def test_unschedulable_pods_retry_when_a_pod_leaves_a_node():
    h = Harness()
    hog = pod("hog", cpu="2", node_name="n1", phase="Running")
    h.add(node("n1", cpu="2"), hog, pod("p", cpu="1"))
    h.run(h.drain())
    assert h.client.binds == []
    h.delete(hog)
    assert h.queued() == ["default/p"]
    h.run(h.drain())
    assert h.client.binds == [("default/p", "n1")]


def test_periodic_retry_through_the_runner_and_the_fake_clock():
    h = Harness()
    h.add(pod("p"))

    async def scenario():
        await h.drain()  # no nodes at all
        assert h.client.events[-1]["message"] == "no nodes available to schedule pods"
        h.scheduler.unschedulable.clear()  # pretend no node event will come: only the timer helps
        h.scheduler.nodes.cache.put(node("n1"))
        h.scheduler.cache.set_node(node("n1"))
        await h.clock.advance(0.9)
        assert h.queued() == []
        await h.clock.advance(0.2)
        assert h.queued() == ["default/p"]
        await h.drain()

    h.run(scenario())
    assert h.client.binds == [("default/p", "n1")]


def test_a_burst_never_overfills_a_node_while_the_watch_lags():
    h = Harness()
    h.add(node("a", cpu="1"), node("b", cpu="1"), node("c", cpu="1", pods=5))
    for i in range(40):
        h.add(pod(f"p-{i:02d}", cpu="100m", owner="burst"))
    h.run(h.drain())  # no watch confirmation at all: only the assumed pods keep count
    assert h.placement() == {"a": 10, "b": 10, "c": 5}
    assert len(h.scheduler.unschedulable) == 15


def test_an_assumed_pod_is_not_bound_twice():
    h = Harness()
    h.add(node("n1"), pod("p"))
    h.run(h.drain())
    h.scheduler.queue.add("default/p")  # e.g. a node event before the watch shows the binding
    h.run(h.drain())
    assert h.client.binds == [("default/p", "n1")]


def test_conflict_on_bind_is_done_and_the_assumption_is_dropped():
    h = Harness()
    h.add(node("n1", cpu="1"), pod("p", cpu="1"))
    h.client.bind_errors["default/p"] = errors.Conflict('pod p is already assigned to node "elsewhere"')
    assert h.run(h.scheduler.reconcile("default/p")) == DONE
    assert h.scheduler.cache.node("n1").pods == 0
    assert h.client.events == []


def test_unreachable_hub_on_bind_is_retried_and_the_assumption_dropped():
    h = Harness()
    h.add(node("n1", cpu="1"), pod("p", cpu="1"))
    h.client.bind_errors["default/p"] = HubUnreachable("connection refused")
    results = h.run(h.drain())
    assert results[0][1].outcome == "retry"
    assert h.scheduler.cache.node("n1").pods == 0
    del h.client.bind_errors["default/p"]
    h.run(h.clock.advance(1))
    h.run(h.drain())
    assert h.client.binds == [("default/p", "n1")]


def test_pods_that_are_not_ours_are_left_alone():
    h = Harness()
    gone = pod("going", deletionTimestamp=None)
    gone["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    h.add(node("n1"), pod("bound", node_name="n1"), pod("custom", schedulerName="my-scheduler"), gone,
          pod("done", phase="Succeeded"))
    assert h.queued() == []
    for key in ("default/bound", "default/custom", "default/going", "default/done", "default/missing"):
        assert h.run(h.scheduler.reconcile(key)) == DONE
    assert h.client.binds == []


def test_an_expired_assumption_frees_its_room():
    h = Harness(assumed_ttl=30)
    h.add(node("n1", cpu="1"), pod("first", cpu="1"), pod("second", cpu="1"))
    h.run(h.drain())
    assert h.client.binds == [("default/first", "n1")]
    h.scheduler.pods.cache.pop("default/first")  # the watch lost it entirely
    h.run(h.clock.advance(31))
    h.run(h.drain())
    assert h.client.binds == [("default/first", "n1"), ("default/second", "n1")]


def test_events_leave_in_order_in_the_background_and_a_failure_does_not_stop_the_sender():
    h = Harness()
    sent = []

    async def flaky_record(obj, type_, reason, message):
        if reason == "Boom":
            raise RuntimeError("client closed")
        sent.append(reason)

    h.scheduler.events.recorder.record = flaky_record

    async def scenario():
        sender = asyncio.ensure_future(h.scheduler.events.run())
        for reason in ("First", "Boom", "Second"):
            h.scheduler.events.emit({"metadata": {"name": "p"}}, "Normal", reason, "")
        await settle()
        sender.cancel()

    asyncio.run(scenario())
    assert sent == ["First", "Second"]


def test_what_counts_as_a_pod_to_place_and_a_node_change_that_matters():
    assert wants_scheduling(pod("p")) and wants_scheduling(pod("p", schedulerName=""))
    plain = node("n")
    assert not node_fit_changed(plain, {**plain, "metadata": {**plain["metadata"], "resourceVersion": "x"}})
    heartbeat = {**plain, "status": {**plain["status"], "conditions": [{"type": "Ready", "status": "True",
                                                                         "lastHeartbeatTime": "later"}]}}
    assert not node_fit_changed(plain, heartbeat)
    for changed in (node("n", ready="False"), node("n", cpu="8"), node("n", unschedulable=True),
                    node("n", labels={"disk": "ssd"}), node("n", taints=[unreachable()])):
        assert node_fit_changed(plain, changed)
