"""The watcher index: a watcher is handed exactly the changes that can concern it, in order, and
a slow watcher or a restarted feed drops it back to reading for itself."""

from __future__ import annotations

import asyncio
import json

from control.storage.store import Change
from control.storage.watchers import Interest, Trigger, WatcherIndex


def pod(revision: int, name: str, node: str = "", *, namespace: str = "team-a", type_: str = "MODIFIED") -> Change:
    body = {"metadata": {"name": name, "namespace": namespace}, "spec": {"nodeName": node}}
    return Change(revision=revision, type=type_, resource="pods", namespace=namespace, name=name, actor="t",
                  created_at=0.0, body=json.dumps(body))


def node_trigger(node: str, calls: list[str] | None = None) -> Trigger:
    def get(obj):
        if calls is not None:
            calls.append(obj["metadata"]["name"])
        return obj["spec"]["nodeName"]
    return Trigger("field:spec.nodeName", node, get)


def revisions(watcher) -> list[int]:
    return [change.revision for change in watcher.take()[0]]


def test_a_change_is_handed_to_its_node_namespace_and_everyone_watchers_only():
    index = WatcherIndex(0)
    everyone = index.join("pods", Interest())
    team_a = index.join("pods", Interest("team-a"))
    team_b = index.join("pods", Interest("team-b"))
    kubelets = {n: index.join("pods", Interest("", node_trigger(n))) for n in ("node-1", "node-2", "node-3")}
    configmaps = index.join("configmaps", Interest())
    index.dispatch(pod(1, "p", "node-3", type_="ADDED"))
    index.dispatch(pod(2, "q", "", namespace="team-b", type_="ADDED"))
    assert revisions(everyone) == [1, 2] and revisions(team_a) == [1] and revisions(team_b) == [2]
    assert revisions(kubelets["node-3"]) == [1]
    assert revisions(kubelets["node-1"]) == revisions(kubelets["node-2"]) == []
    assert revisions(configmaps) == []
    assert index.head == 2


def test_the_trigger_value_is_read_once_per_change_however_many_watchers_share_it():
    calls: list[str] = []
    index = WatcherIndex(0)
    for n in range(10):
        index.join("pods", Interest("", node_trigger(f"node-{n}", calls)))
    for revision in range(1, 101):
        index.dispatch(pod(revision, f"p{revision}", f"node-{revision % 10}", type_="ADDED"))
    assert len(calls) == 100


def test_an_object_moving_away_is_handed_once_more_to_the_watcher_that_held_it():
    index = WatcherIndex(0)
    node_1 = index.join("pods", Interest("", node_trigger("node-1"), lambda: [("team-a", "listed")]))
    node_2 = index.join("pods", Interest("", node_trigger("node-2")))
    index.dispatch(pod(1, "listed", "node-2"))  # from its starting list to node-2
    assert revisions(node_1) == [1] and revisions(node_2) == [1]
    index.dispatch(pod(2, "listed", "node-2"))  # node-1 no longer holds it
    assert revisions(node_1) == [] and revisions(node_2) == [2]
    index.dispatch(pod(3, "listed", "node-2", type_="DELETED"))
    index.dispatch(pod(4, "listed", "node-2", type_="ADDED"))
    assert revisions(node_2) == [3, 4]
    assert node_1.held == set() and node_2.held == {("team-a", "listed")}


def test_a_slow_watcher_is_dropped_with_nothing_pending_and_leaves_the_index():
    index = WatcherIndex(0, limit=3)
    slow = index.join("pods", Interest())
    held = index.join("pods", Interest("", node_trigger("node-1"), lambda: [("team-a", "x")]))
    for revision in range(1, 5):
        index.dispatch(pod(revision, "p", "node-1"))
    assert slow.dropped and slow.pending == [] and held.dropped
    assert index.groups == {} and index.members == 0
    index.dispatch(pod(5, "p", "node-1"))
    assert slow.pending == []


def test_drop_all_and_closing_remove_every_watcher_and_wake_its_reader():
    async def scenario():
        index = WatcherIndex(0)
        first = index.join("pods", Interest())
        second = index.join("pods", Interest("team-a", node_trigger("node-1")))
        waiting = asyncio.ensure_future(first.wait(60))
        await asyncio.sleep(0)
        index.drop_all(41)
        await asyncio.wait_for(waiting, 1)
        return index, first, second

    index, first, second = asyncio.run(scenario())
    assert first.dropped and second.dropped and index.groups == {} and index.head == 41


def test_a_handed_change_wakes_its_waiting_reader_on_wake():
    async def scenario():
        index = WatcherIndex(0)
        watcher = index.join("pods", Interest("", node_trigger("node-1")))
        other = index.join("pods", Interest("", node_trigger("node-2")))
        waiting = asyncio.ensure_future(watcher.wait(60))
        idle = asyncio.ensure_future(other.wait(60))
        await asyncio.sleep(0)
        index.dispatch(pod(1, "p", "node-1"))
        index.wake()
        await asyncio.wait_for(waiting, 1)
        assert not idle.done()
        idle.cancel()
        return watcher.take()

    changes, head = asyncio.run(scenario())
    assert [c.revision for c in changes] == [1] and head == 1


def test_a_wait_ends_at_its_timeout_and_leaves_no_timer_behind():
    async def scenario():
        loop = asyncio.get_running_loop()
        index = WatcherIndex(0)
        watcher = index.join("pods", Interest())
        started = loop.time()
        await watcher.wait(0.01)  # nothing came: back after the timeout, nothing taken
        waited = loop.time() - started
        woken = asyncio.ensure_future(watcher.wait(60))
        await asyncio.sleep(0)
        watcher.wake()
        await asyncio.wait_for(woken, 1)
        cancelled = asyncio.ensure_future(watcher.wait(60))
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        timers = [t for t in loop._scheduled if not t.cancelled()]
        return waited, watcher.take(), timers, watcher._wake

    waited, (changes, _), timers, wake = asyncio.run(scenario())
    assert 0.009 <= waited < 1 and changes == []  # (asyncio may run a timer a clock tick early)
    assert timers == [] and wake is None


def test_a_watcher_holding_a_change_the_feed_let_go_of_is_dropped():
    index = WatcherIndex(0)
    behind = index.join("pods", Interest("team-a"))
    current = index.join("pods", Interest())
    for revision in range(1, 4):
        index.dispatch(pod(revision, "p", namespace="team-b" if revision < 3 else "team-a"))
    current.take()
    index.forget_before(2)
    assert not behind.dropped and not current.dropped, "team-a's watcher holds only revision 3"
    for revision in range(4, 6):
        index.dispatch(pod(revision, "p"))
    index.forget_before(4)
    assert behind.dropped and behind.pending == [] and not current.dropped


def configmap(revision: int, name: str, namespace: str) -> Change:
    body = {"metadata": {"name": name, "namespace": namespace}}
    return Change(revision=revision, type="ADDED", resource="configmaps", namespace=namespace, name=name, actor="t",
                  created_at=0.0, body=json.dumps(body))


def test_a_watcher_of_every_resource_is_handed_what_it_admits_and_is_woken_by_nothing_else():
    async def scenario():
        index = WatcherIndex(0)
        asked: list[tuple[str, str]] = []

        def team_a_only(resource: str, namespace: str) -> bool:
            asked.append((resource, namespace))
            return namespace == "team-a"
        page = index.join(None, Interest(admits=team_a_only))
        admin = index.join(None, Interest())
        kubelet = index.join("pods", Interest("", node_trigger("node-1")))
        waiting = asyncio.ensure_future(page.wait(60))
        await asyncio.sleep(0)
        index.dispatch(pod(1, "p", "node-1", namespace="team-b"))
        index.dispatch(configmap(2, "c", "team-b"))
        index.wake()
        await asyncio.sleep(0)
        assert not waiting.done(), "nothing it may see: not woken"
        index.dispatch(configmap(3, "c", "team-a"))
        index.wake()
        await asyncio.wait_for(waiting, 1)
        return index, page, admin, kubelet, asked

    index, page, admin, kubelet, asked = asyncio.run(scenario())
    assert revisions(page) == [3]
    assert revisions(admin) == [1, 2, 3] and revisions(kubelet) == [1]
    assert asked == [("pods", "team-b"), ("configmaps", "team-b"), ("configmaps", "team-a")]
    assert index.members == 3
    page.drop()
    assert index.members == 2 and page not in index.everywhere.everyone
    index.drop_all(9)
    assert admin.dropped and kubelet.dropped and index.members == 0 and not index.everywhere.everyone


def test_a_watcher_of_every_resource_falling_behind_is_dropped_like_any_other():
    index = WatcherIndex(0, limit=2)
    page = index.join(None, Interest())
    for revision in range(1, 4):
        index.dispatch(configmap(revision, f"c{revision}", "team-a"))
    assert page.dropped and page.pending == [] and index.members == 0
    behind = index.join(None, Interest())
    index.dispatch(configmap(4, "c4", "team-a"))
    index.forget_before(5)
    assert behind.dropped
