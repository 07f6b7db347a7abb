"""The dashboard's own watcher on fake time against a scripted hub: it follows the informer's rules.
A hub that is down is asked again after a jittered exponential back-off up to its cap (not once a
second), the back-off starts over after a healthy watch, and a compacted log ends in one relist of
its own after a back-off (a fresh snapshot, no `expired` for the page to act on)."""

from __future__ import annotations

import asyncio

from control import errors
from control.client.http import HubUnreachable
from control.client.reflector import Backoff
from control.clock import FakeClock
from dashboard.live import SNAPSHOT_PATH, LiveFeed

MINUTE = 60.0


class ScriptedHub:
    """Plays the hub for one `LiveFeed`: down, compacted through a revision, or serving a log.
    Records when (fake time) each snapshot and watch was asked for, and from which revision."""

    def __init__(self, clock: FakeClock, *, revision: int = 20):
        self.clock, self.revision = clock, revision
        self.down = False
        self.compacted_through = 0
        self.log: list[dict] = []
        self.snapshots: list[float] = []
        self.watches: list[tuple[float, str]] = []

    def asked(self) -> list[float]:
        return sorted([*self.snapshots, *(at for at, _ in self.watches)])

    async def request(self, method: str, path: str, **_):
        assert (method, path) == ("GET", SNAPSHOT_PATH)
        self.snapshots.append(self.clock.now())
        if self.down:
            raise HubUnreachable("connection refused")
        return {"revision": self.revision, "objects": {}}

    async def get(self, resource, name, namespace=None):
        raise errors.NotFound("configmaps \"kubekitchen-spokes\" not found")

    async def watch(self, resource, namespace=None, *, resource_version="", timeout_seconds=None, **_):
        self.watches.append((self.clock.now(), resource_version))
        if self.down:
            raise HubUnreachable("connection refused")
        if int(resource_version) < self.compacted_through:
            raise errors.Gone(f"too old resource version: {resource_version} ({self.compacted_through})")
        for change in self.log:
            if change["revision"] > int(resource_version):
                yield change
        await asyncio.Event().wait()  # an open watch with nothing more to say


def change(revision: int) -> dict:
    return {"type": "ADDED", "revision": revision, "resource": "pods", "group": "", "namespace": "default",
            "name": f"p{revision}", "actor": "kubectl",
            "object": {"kind": "Pod", "metadata": {"name": f"p{revision}", "namespace": "default"}}}


def follow(hub: ScriptedHub, clock: FakeClock, revision: int | None, script, *, jitter: float = 0.0,
           history: int = 0) -> list[dict]:
    """Run a feed from `revision` while `script(clock)` moves fake time; the messages the page got."""
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    feed = LiveFeed(hub, send, clock=clock, history=history, backoff=Backoff(random=lambda: jitter))

    async def scenario():
        task = asyncio.create_task(feed.run(revision))
        await clock.advance(0)
        await script(clock)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    return sent


def gaps(times: list[float]) -> list[float]:
    return [round(later - earlier, 3) for earlier, later in zip(times, times[1:])]


async def a_minute(clock: FakeClock) -> None:
    await clock.advance(MINUTE)


def test_a_hub_that_is_down_is_asked_again_after_a_growing_back_off_not_every_second():
    clock = FakeClock(0.0)
    hub = ScriptedHub(clock)
    hub.down = True
    sent = follow(hub, clock, 10, a_minute)
    assert gaps(hub.asked()) == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6], "7 tries in a minute, not 60"
    assert [r for _, r in hub.watches] == ["10"] * 7, "always resumed from the revision the page holds"
    assert [m["t"] for m in sent] == ["hub-down"] * 7 and not hub.snapshots


def test_the_back_off_is_jittered_and_capped():
    clock = FakeClock(0.0)
    hub = ScriptedHub(clock)
    hub.down = True

    async def ten_minutes(clock):
        await clock.advance(10 * MINUTE)

    follow(hub, clock, 10, ten_minutes, jitter=0.5)
    waits = gaps(hub.asked())
    assert waits[:3] == [1.2, 2.4, 4.8], "each wait is the doubled step times 1.5 (the jitter drawn)"
    assert max(waits) == 30.0 and waits[-3:] == [30.0] * 3, "capped at Backoff.limit, jitter included"


def test_a_broken_stream_after_a_healthy_watch_is_resumed_after_the_first_step_again():
    clock = FakeClock(0.0)
    hub = ScriptedHub(clock)
    hub.down = True
    breaks: list[float] = []
    original = hub.watch

    async def watch_that_breaks(resource, namespace=None, **options):
        async for item in original(resource, namespace, **options):
            yield item
            if not hub.down:
                breaks.append(clock.now())
                raise HubUnreachable("connection reset")

    hub.watch = watch_that_breaks

    async def script(clock):
        await clock.advance(12.5)  # tries at 0, 0.8, 2.4, 5.6 and 12 fail
        hub.down, hub.log = False, [change(11)]
        await clock.advance(14.0)  # the try at 24.8 gets revision 11, then the stream breaks

    follow(hub, clock, 10, script)
    assert [round(at, 3) for at in breaks] == [24.8]
    assert gaps([at for at, _ in hub.watches])[-1] == 0.8, "after a healthy watch the back-off starts over"
    assert [r for _, r in hub.watches][-2:] == ["10", "11"], "resumed from the newest revision seen"


def test_a_compacted_revision_is_relisted_once_after_a_back_off_with_no_expired_for_the_page():
    clock = FakeClock(0.0)
    hub = ScriptedHub(clock, revision=20)
    hub.compacted_through, hub.log = 8, [change(21)]
    sent = follow(hub, clock, 3, a_minute, history=200)
    assert hub.snapshots == [0.8], "one relist, after the back-off, not at once"
    assert [r for _, r in hub.watches] == ["3", "0", "20"], "the compacted history is skipped, then the changes"
    kinds = [m["t"] for m in sent]
    assert "expired" not in kinds and kinds[:2] == ["gone", "snapshot"] and sent[1]["revision"] == 20
    assert kinds.count("gone") == 1, "the page is told of the 410; the compacted history after it is skipped silently"
    assert [i["rv"] for m in sent if m["t"] == "changes" for i in m["items"]] == [21]


def test_a_hub_that_keeps_compacting_is_relisted_at_the_back_off_pace():
    clock = FakeClock(0.0)
    hub = ScriptedHub(clock, revision=20)
    hub.compacted_through = 10**9  # every watch is already too old
    sent = follow(hub, clock, 3, a_minute)
    assert gaps(hub.snapshots) == [1.6, 3.2, 6.4, 12.8, 25.6], "relists back off like any failure"
    assert len(hub.asked()) == 13 and "expired" not in [m["t"] for m in sent]


def test_a_page_that_falls_behind_gets_a_fresh_snapshot_instead_of_unbounded_memory():
    clock = FakeClock(0.0)
    hub = ScriptedHub(clock, revision=30)
    hub.log = [change(rv) for rv in range(11, 31)]
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    feed = LiveFeed(hub, send, clock=clock, history=0, limit=5, interval=10.0, backoff=Backoff(random=lambda: 0.0))

    async def scenario():
        task = asyncio.create_task(feed.run(10))
        await clock.advance(0)
        hub.log = []  # the relist finds the log quiet
        await clock.advance(MINUTE)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())
    assert hub.snapshots == [0.8]
    assert [m["t"] for m in sent if m["t"] == "snapshot"] == ["snapshot"] and "expired" not in [m["t"] for m in sent]
    assert [r for _, r in hub.watches] == ["10", "30"]


def test_a_watch_from_a_compacted_revision_tells_the_page_the_hubs_410_then_relists():
    clock = FakeClock(0.0)
    hub = ScriptedHub(clock, revision=20)
    hub.compacted_through, hub.log = 8, [change(21)]
    sent = follow(hub, clock, 1, a_minute, history=0)
    kinds = [m["t"] for m in sent]
    assert kinds.index("gone") < kinds.index("snapshot"), "the 410 is shown, then the relist"
    gone = sent[kinds.index("gone")]
    assert (gone["code"], gone["reason"], gone["revision"]) == (410, "Expired", 1)
    assert gone["message"] == "too old resource version: 1 (8)"
    assert hub.snapshots == [0.8] and [r for _, r in hub.watches] == ["1", "20"]
