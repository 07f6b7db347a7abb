"""The informer against canned list and watch streams: resume, relist on 410 after a back-off,
handler deltas, and a hub whose log was compacted past the informer's revision (no storm)."""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode

import httpx
import pytest

from control import errors
from control.clock import FakeClock
from control.client.http import HubClient, HubUnreachable
from control.client.informer import Handlers, Informer, by_node
from control.client.reflector import Backoff
from control.client.resources import CONFIGMAPS, PODS


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

    async def watch(self, resource, namespace=None, *, resource_version="", bookmarks=False, **_):
        assert bookmarks, "an informer always asks for bookmarks, so its revision advances while idle"
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
    informer.backoff.random = lambda: 0.0
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


def test_410_relists_after_a_back_off_and_handlers_hear_the_difference():
    hub = FakeHub([listing(10, pod("a", 5), pod("b", 6)), listing(40, pod("b", 30), pod("c", 31))], [
        [errors.Gone("too old resource version: 10 (20)")],
        [{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "41"}}}],
    ])
    clock = FakeClock()
    informer = Informer(hub, PODS, clock=clock)
    informer.backoff.random = lambda: 0.0
    seen = record(informer)

    async def scenario():
        expired = asyncio.create_task(informer.run_once())
        await clock.advance(0)
        await clock.advance(0.7)
        assert not expired.done(), "a 410 is followed by a back-off, not an instant relist"
        assert informer.resource_version == ""
        await clock.advance(0.2)
        await expired
        await informer.run_once()

    asyncio.run(scenario())
    assert hub.watch_from == ["10", "40"], "the relist's revision, not an object's"
    assert seen == [("add", "a"), ("add", "b"), ("delete", "a"), ("update", "b"), ("add", "c")]
    assert sorted(informer.cache.items) == ["default/b", "default/c"]


def test_indexes_follow_changes():
    hub = FakeHub([listing(1, pod("a", 1, "n1"), pod("b", 1, "n2"))],
                  [[{"type": "MODIFIED", "object": pod("b", 2, "n1")}, {"type": "DELETED", "object": pod("a", 3, "n1")}]])
    informer = Informer(hub, PODS, clock=FakeClock(), indexers={"node": by_node})
    asyncio.run(informer.run_once())
    assert [p["metadata"]["name"] for p in informer.cache.by_index("node", "n1")] == ["b"]
    assert informer.cache.by_index("node", "n2") == []


def test_backoff_doubles_to_its_cap_with_jitter_and_starts_over():
    draws = iter([0.0, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.9, 0.0])
    backoff = Backoff(random=lambda: next(draws))
    waits = [backoff.next() for _ in range(8)]
    assert waits[:3] == [0.8, 1.6 * 2, 3.2 * 1.5]
    assert waits[-1] == 30.0, "capped, jitter included"
    backoff.reset()
    assert backoff.next() == 0.8


def test_a_watch_that_ends_at_once_with_nothing_is_retried_after_a_back_off():
    hub = FakeHub([listing(7)], [[], []])
    clock = FakeClock()
    informer = Informer(hub, PODS, clock=clock)
    informer.backoff.random = lambda: 0.0

    async def scenario():
        task = asyncio.create_task(informer.run())
        await clock.advance(0)
        await clock.advance(0.5)
        assert hub.watch_from == ["7"]
        await clock.advance(0.4)
        assert hub.watch_from == ["7", "7"], "resumed after 0.8 s, from the same revision"
        task.cancel()

    asyncio.run(scenario())


class CompactedHub:
    """A hub whose log was compacted through `compacted`: a watch from before it ends in 410 (the
    ERROR event HubClient raises as Gone); any other watch stays open until its timeout, sending
    a bookmark every `bookmark_every` seconds. It counts every request."""

    def __init__(self, clock: FakeClock, *, current: int, compacted: int, bookmark_every: float = 60):
        self.clock, self.current, self.compacted, self.bookmark_every = clock, current, compacted, bookmark_every
        self.requests: list[tuple[str, str, float]] = []

    async def list(self, resource, namespace=None, **_):
        self.requests.append(("list", "", self.clock.now()))
        return listing(self.current, pod("a", 3))

    async def watch(self, resource, namespace=None, *, resource_version="", timeout_seconds=300, **_):
        self.requests.append(("watch", resource_version, self.clock.now()))
        if int(resource_version or 0) < self.compacted:
            raise errors.Gone(f"too old resource version: {resource_version} ({self.compacted})")
        open_for = 0.0
        while open_for < timeout_seconds:
            await self.clock.sleep(self.bookmark_every)
            open_for += self.bookmark_every
            yield {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": str(self.current)}}}


def test_a_compacted_log_costs_one_relist_then_the_informer_settles():
    clock = FakeClock()
    hub = CompactedHub(clock, current=900, compacted=850)
    informer = Informer(hub, PODS, clock=clock)
    informer.resource_version, informer.has_synced = "10", True  # synced long ago, idle since
    informer.cache.put(pod("a", 3))
    start = clock.now()

    async def scenario():
        task = asyncio.create_task(informer.run())
        await clock.advance(0)
        for _ in range(700):  # a simulated minute and a bookmark, in 0.1 s steps
            await clock.advance(0.1)
        task.cancel()

    asyncio.run(scenario())
    kinds = [(verb, rv) for verb, rv, _ in hub.requests]
    assert kinds == [("watch", "10"), ("list", ""), ("watch", "900")], "410, ONE relist, one lasting watch"
    relisted_after = hub.requests[1][2] - start
    assert 0.8 <= relisted_after < 1.6, "the relist waited the jittered back-off"
    assert informer.resource_version == "900" and informer.backoff.current == 0.0, "the bookmark reset the back-off"


# --- against a real hub whose log window is two seconds ------------------------------------------

class CountingClient(HubClient):
    """The one transport, every request it sends recorded as "METHOD path?query"."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.requests: list[str] = []

    async def request_bytes(self, method, path, *, params=None, **kwargs):
        self.requests.append(f"{method} {path}?{urlencode(params or {})}")
        return await super().request_bytes(method, path, params=params, **kwargs)

    def _streamed(self, method, path, params, read_timeout, what):
        self.requests.append(f"{method} {path}?{urlencode(params or {})}")
        return super()._streamed(method, path, params, read_timeout, what)


@pytest.mark.e2e
def test_against_a_hub_that_keeps_two_seconds_of_log_the_informer_stays_quiet(fast_compacting_hub):
    """Every spoke's informers (controllers, scheduler, kubelet, kube-proxy, the cooks, the garbage
    collector's CRD follower, examples/dish_counter.py) on a hub whose log keeps two seconds while
    others write and each watch lasts one second: bookmarks keep the revision inside the window."""
    client = transport = CountingClient(fast_compacting_hub.url, agent="test-informer", token=fast_compacting_hub.token)
    informer = Informer(client, CONFIGMAPS, namespace="kube-system", watch_timeout=1)

    async def scenario():
        following = asyncio.create_task(informer.run())
        async with httpx.AsyncClient(base_url=fast_compacting_hub.url, headers=fast_compacting_hub.auth,
                                     timeout=10) as writer:
            for _ in range(50):  # five seconds of another client writing
                await writer.post("/api/v1/namespaces/default/configmaps",
                                  json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "churn-"}})
                await asyncio.sleep(0.1)
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await client.close()

    asyncio.run(scenario())
    watches = [r for r in transport.requests if "watch=1" in r]
    lists = [r for r in transport.requests if "watch=1" not in r]
    assert informer.has_synced
    assert len(lists) == 1, f"only the first list: no 410 ever ({transport.requests})"
    assert 3 <= len(watches) <= 8, transport.requests
    assert all("allowWatchBookmarks=true" in w for w in watches)
