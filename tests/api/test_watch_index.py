"""The watcher index against the scan it replaces: for every kind of selector a watch may carry,
the events a watcher sends after the index's narrowing are exactly those a scan of every change
gives (including the DELETED / ADDED of an update that moves an object out of / into the selector)."""

from __future__ import annotations

import json
import random

import pytest

from control.api.selection import Selection
from control.api.watch import _Filter, trigger_of
from control.kinds.pods import POD
from control.storage.store import Change
from control.storage.watchers import Interest, WatcherIndex

NODES = ["", "node-1", "node-2", "node-3"]
NAMESPACES = ["team-a", "team-b"]
APPS = [None, "web", "db"]
PHASES = ["Pending", "Running"]

SELECTIONS = [
    ("", {}),
    ("team-a", {}),
    ("", {"fieldSelector": "spec.nodeName=node-1"}),
    ("", {"fieldSelector": "spec.nodeName=node-3"}),
    ("", {"fieldSelector": "spec.nodeName="}),  # the scheduler's unscheduled pods
    ("", {"fieldSelector": "spec.nodeName!=node-1"}),
    ("team-b", {"fieldSelector": "spec.nodeName=node-2,status.phase=Running"}),
    ("", {"labelSelector": "app=web"}),
    ("team-a", {"labelSelector": "app in (db)"}),
    ("", {"labelSelector": "app in (web,db)"}),
    ("", {"labelSelector": "!app"}),
    ("", {"labelSelector": "app=web", "fieldSelector": "metadata.name=p3"}),
]


def pod_obj(name: str, namespace: str, node: str, app: str | None, phase: str) -> dict:
    labels = {"app": app} if app else {}
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"nodeName": node}, "status": {"phase": phase}}


def history(seed: int, count: int = 400) -> tuple[dict, list[Change]]:
    """Objects at the start, then a random run of creations, updates that move objects between
    nodes, labels and phases, and deletions."""
    rng = random.Random(seed)
    live: dict[tuple[str, str], dict] = {}
    for i in range(6):
        obj = pod_obj(f"p{i}", rng.choice(NAMESPACES), rng.choice(NODES), rng.choice(APPS), rng.choice(PHASES))
        live[(obj["metadata"]["namespace"], f"p{i}")] = obj
    start = dict(live)
    changes = []
    for revision in range(1, count + 1):
        roll = rng.random()
        if roll < 0.25 or not live:
            name, namespace = f"p{rng.randrange(12)}", rng.choice(NAMESPACES)
            if (namespace, name) in live:
                continue
            obj, type_ = pod_obj(name, namespace, rng.choice(NODES), rng.choice(APPS), rng.choice(PHASES)), "ADDED"
            live[(namespace, name)] = obj
        elif roll < 0.4:
            key = rng.choice(sorted(live))
            obj, type_ = live.pop(key), "DELETED"
        else:
            key = rng.choice(sorted(live))
            old = live[key]
            obj = pod_obj(key[1], key[0], rng.choice(NODES) if rng.random() < 0.5 else old["spec"]["nodeName"],
                          rng.choice(APPS) if rng.random() < 0.5 else old["metadata"]["labels"].get("app"),
                          rng.choice(PHASES))
            live[key], type_ = obj, "MODIFIED"
        meta = obj["metadata"]
        changes.append(Change(revision=len(changes) + 1, type=type_, resource="pods", namespace=meta["namespace"],
                              name=meta["name"], actor="t", created_at=0.0, body=json.dumps(obj)))
    return start, changes


def listed(selection: Selection, namespace: str, objects: dict) -> set[tuple[str, str]]:
    return {key for key, obj in objects.items() if (not namespace or key[0] == namespace) and selection.matches(obj)}


@pytest.mark.parametrize("seed", range(8))
def test_each_watcher_sends_what_a_scan_of_every_change_sends(seed):
    start, changes = history(seed)
    index = WatcherIndex(0)
    watchers = []
    for namespace, query in SELECTIONS:
        selection = Selection.from_query(POD, query)
        scan = _Filter(selection, listed(selection, namespace, start))
        narrowed = _Filter(selection, listed(selection, namespace, start))
        joined = index.join("pods", Interest(namespace, trigger_of(selection), lambda f=narrowed: f.visible))
        watchers.append((namespace, query, scan, narrowed, joined, [], []))
    handed = 0
    for change in changes:
        index.dispatch(change)
        for namespace, _, scan, narrowed, joined, by_scan, by_index in watchers:
            if not namespace or change.namespace == namespace:
                event = scan.translate(change)
                if event:
                    by_scan.append((change.revision, event))
            taken, _ = joined.take()
            handed += len(taken)
            for c in taken:
                event = narrowed.translate(c)
                if event:
                    by_index.append((c.revision, event))
    for namespace, query, _, _, _, by_scan, by_index in watchers:
        assert by_index == by_scan, (namespace, query)
    assert any(event == "DELETED" for *_, by_scan, _ in watchers for _, event in by_scan)
    # the node watchers were not handed every change: the index narrowed
    assert handed < len(changes) * len(SELECTIONS) * 0.8


def test_the_trigger_is_an_exact_field_value_first_then_an_exact_label():
    assert trigger_of(Selection.from_query(POD, {})) is None
    assert trigger_of(Selection.from_query(POD, {"labelSelector": "app in (a,b)"})) is None
    assert trigger_of(Selection.from_query(POD, {"fieldSelector": "spec.nodeName!=x"})) is None
    both = trigger_of(Selection.from_query(POD, {"labelSelector": "app=web", "fieldSelector": "spec.nodeName=n1"}))
    assert (both.name, both.value) == ("field:spec.nodeName", "n1")
    assert both.get(pod_obj("p", "ns", "n1", None, "Running")) == "n1"
    label = trigger_of(Selection.from_query(POD, {"labelSelector": "tier,app=web"}))
    assert (label.name, label.value) == ("label:app", "web")
    assert label.get(pod_obj("p", "ns", "", None, "Running")) is None
    unscheduled = trigger_of(Selection.from_query(POD, {"fieldSelector": "spec.nodeName="}))
    assert unscheduled.get({"metadata": {"name": "p"}}) == ""


def test_a_stream_joins_the_index_falls_back_to_reading_when_dropped_and_leaves_at_its_end(settings):
    import asyncio

    from control.api.watch import change_stream
    from control.clock import FakeClock, settle
    from control.storage.feed import ChangeFeed

    settings.KK_BOOKMARK_INTERVAL = 3600
    node_1 = trigger_of(Selection.from_query(POD, {"fieldSelector": "spec.nodeName=node-1"}))

    def change(revision: int, node: str) -> Change:
        obj = pod_obj(f"p{revision}", "team-a", node, None, "Running")
        return Change(revision=revision, type="ADDED", resource="pods", namespace="team-a", name=f"p{revision}",
                      actor="t", created_at=0.0, body=json.dumps(obj))

    def render(changes):
        return [f"{c.revision}\n".encode() for c in changes if c.obj()["spec"]["nodeName"] == "node-1"]

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=0, batch_window=0)
        feed.watchers.limit = 2
        out: list[bytes] = []
        stream = change_stream(0, render=render, timeout=3600, feed=feed, clock=FakeClock(), resource="pods",
                               interest=Interest("", node_1))

        async def consume():
            async for chunk in stream:
                out.append(chunk)

        task = asyncio.ensure_future(consume())
        await settle()
        def member():
            (_, by_value), = feed.watchers.groups[("pods", "")].by_trigger.values()
            (watcher,) = by_value["node-1"]
            return watcher

        joined_at_start, first = feed.watchers.members, member()
        feed.offer([change(1, "node-1"), change(2, "node-2"), change(3, "node-1"), change(4, "node-1")])
        await settle()  # three handed over, over the limit of two: dropped, read from the feed instead
        rejoined = feed.watchers.members
        assert first.dropped and member() is not first
        feed.offer([change(5, "node-2"), change(6, "node-1")])
        await settle()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return joined_at_start, rejoined, b"".join(out), feed.watchers.members

    joined_at_start, rejoined, out, left = asyncio.run(scenario())
    assert joined_at_start == 1 and rejoined == 1 and left == 0
    assert out == b"1\n3\n4\n6\n"
