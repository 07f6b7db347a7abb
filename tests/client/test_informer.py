"""The informer against canned list and watch streams: resume, relist on 410, handler deltas."""

from __future__ import annotations

import asyncio

from control import errors
from control.client.clock import FakeClock
from control.client.http import HubUnreachable
from control.client.informer import Handlers, Informer, by_node
from control.client.resources import PODS


def pod(name: str, rv: int, node: str = "") -> dict:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv)},
            "spec": {"nodeName": node} if node else {}}


class FakeHub:
    """Lists and watch streams scripted in order; records what the informer asked for."""

    def __init__(self, lists, streams):
        self.lists, self.streams = list(lists), list(streams)
        self.watch_from: list[str] = []

    async def list(self, resource, namespace=None, **_):
        return self.lists.pop(0)

    async def watch(self, resource, namespace=None, *, resource_version="", **_):
        self.watch_from.append(resource_version)
        for item in self.streams.pop(0):
            if isinstance(item, Exception):
                raise item
            yield item


def listing(rv: int, *items):
    return {"metadata": {"resourceVersion": str(rv)}, "items": list(items)}


def record(informer: Informer) -> list[tuple]:
    seen: list[tuple] = []
    informer.add_handlers(Handlers(
        on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
        on_update=lambda old, new: seen.append(("update", new["metadata"]["name"])),
        on_delete=lambda o: seen.append(("delete", o["metadata"]["name"]))))
    return seen


def test_list_then_watch_from_the_list_revision_then_resume_after_a_break():
    hub = FakeHub([listing(10, pod("a", 5))], [
        [{"type": "ADDED", "object": pod("b", 11)}, HubUnreachable("reset")],
        [{"type": "MODIFIED", "object": pod("a", 12)}, {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "15"}}}],
    ])
    clock = FakeClock()
    informer = Informer(hub, PODS, clock=clock)
    seen = record(informer)

    async def scenario():
        first = asyncio.create_task(informer.run_once())
        await clock.advance(0)
        await clock.advance(1)  # the backoff after the broken stream
        await first
        await informer.run_once()

    asyncio.run(scenario())
    assert informer.has_synced
    assert hub.watch_from == ["10", "11"], "resumes from the last revision it saw, without relisting"
    assert seen == [("add", "a"), ("add", "b"), ("update", "a")]
    assert informer.resource_version == "15"


def test_410_relists_and_handlers_hear_the_difference():
    hub = FakeHub([listing(10, pod("a", 5), pod("b", 6)), listing(40, pod("b", 30), pod("c", 31))], [
        [errors.Gone("too old resource version: 10 (20)")],
        [],
    ])
    informer = Informer(hub, PODS, clock=FakeClock())
    seen = record(informer)

    async def scenario():
        await informer.run_once()
        assert informer.resource_version == ""
        await informer.run_once()

    asyncio.run(scenario())
    assert hub.watch_from == ["10", "40"]
    assert seen == [("add", "a"), ("add", "b"), ("delete", "a"), ("update", "b"), ("add", "c")]
    assert sorted(informer.cache.items) == ["default/b", "default/c"]


def test_indexes_follow_changes():
    hub = FakeHub([listing(1, pod("a", 1, "n1"), pod("b", 1, "n2"))],
                  [[{"type": "MODIFIED", "object": pod("b", 2, "n1")}, {"type": "DELETED", "object": pod("a", 3, "n1")}]])
    informer = Informer(hub, PODS, clock=FakeClock(), indexers={"node": by_node})
    asyncio.run(informer.run_once())
    assert [p["metadata"]["name"] for p in informer.cache.by_index("node", "n1")] == ["b"]
    assert informer.cache.by_index("node", "n2") == []
