"""The reflector against a fake ListerWatcher (a hub with a log, a compaction point and a
connection that can drop) on a fake clock: list then watch from the list's version, resume after
a drop without a relist, one relist after a back-off on 410, events in order and none twice."""

from __future__ import annotations

import asyncio

from control import errors
from control.client.http import HubUnreachable
from control.client.reflector import Backoff, Listing, Reflector
from control.clock import FakeClock


def obj(name: str, rv: int) -> dict:
    return {"metadata": {"name": name, "resourceVersion": str(rv)}}


class LogHub:
    """A resource with a log of events; `drop_after` breaks the next stream after that many
    events; a watch from before `compacted` is answered 410; every request is recorded."""

    def __init__(self, log: list[dict], *, compacted: int = 0):
        self.log, self.compacted = log, compacted
        self.requests: list[tuple[str, str]] = []
        self.drop_after: int | None = None
        self.closed = 0

    def head(self) -> int:
        return max([0, *(int(e["object"]["metadata"]["resourceVersion"]) for e in self.log)])

    async def list(self) -> Listing:
        self.requests.append(("list", ""))
        state: dict[str, dict] = {}
        for event in self.log:
            name = event["object"]["metadata"]["name"]
            if event["type"] == "DELETED":
                state.pop(name, None)
            elif event["type"] != "BOOKMARK":
                state[name] = event["object"]
        return Listing(list(state.values()), str(self.head()))

    async def watch(self, resource_version: str):
        self.requests.append(("watch", resource_version))
        try:
            if int(resource_version) < self.compacted:
                raise errors.Gone(f"too old resource version: {resource_version} ({self.compacted})")
            sent = 0
            for event in self.log:
                if int(event["object"]["metadata"]["resourceVersion"]) <= int(resource_version):
                    continue
                if self.drop_after is not None and sent == self.drop_after:
                    self.drop_after = None
                    raise HubUnreachable("connection reset")
                yield event
                sent += 1
        finally:
            self.closed += 1


class Recorder:
    """A sink that records what it is given."""

    def __init__(self):
        self.replaced: list[tuple[list[str], str]] = []
        self.events: list[tuple[str, str]] = []

    def replace(self, listing: Listing) -> None:
        self.replaced.append((sorted(o["metadata"]["name"] for o in listing.items), listing.resource_version))

    async def apply(self, event: dict) -> None:  # a coroutine sink works too
        self.events.append((event["type"], event["object"]["metadata"]["resourceVersion"]))


def event(type_: str, name: str, rv: int) -> dict:
    return {"type": type_, "object": obj(name, rv)}


def reflector_on(hub, sink, clock, **options) -> Reflector:
    return Reflector(hub, sink, clock=clock, backoff=Backoff(random=lambda: 0.0), **options)


class Clock(FakeClock):
    """Fake time that also records how long each sleep asked for."""

    def __init__(self):
        super().__init__()
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        await super().sleep(seconds)


def drive(clock: Clock, round_) -> float:
    """Run one round to its end, letting fake time pass while it waits: the time it slept."""
    async def main():
        before = len(clock.slept)
        task = asyncio.ensure_future(round_)
        await clock.advance(0)
        while not task.done():
            await clock.advance(0.1)
        await task
        return round(sum(clock.slept[before:]), 3)

    return asyncio.run(main())


def test_lists_then_watches_from_the_lists_version_in_order():
    hub = LogHub([event("ADDED", "a", 3), event("ADDED", "b", 4)])
    sink, clock = Recorder(), Clock()
    reflector = reflector_on(hub, sink, clock)
    waited = drive(clock, reflector.run_once())  # list at 4; nothing after it: a very short watch
    assert waited == 0.8, "a watch that ends at once with nothing is followed by a back-off"
    hub.log += [event("MODIFIED", "a", 5), event("DELETED", "b", 6), event("BOOKMARK", "-", 9)]
    assert drive(clock, reflector.run_once()) == 0.0
    assert sink.replaced == [(["a", "b"], "4")]
    assert hub.requests == [("list", ""), ("watch", "4"), ("watch", "4")]
    assert sink.events == [("MODIFIED", "5"), ("DELETED", "6"), ("BOOKMARK", "9")]
    assert reflector.resource_version == "9", "the bookmark carried the version along"


def test_a_dropped_connection_resumes_from_the_last_version_seen_after_a_back_off_with_nothing_twice():
    hub = LogHub([event("ADDED", f"o{rv}", rv) for rv in range(1, 4)])
    sink, clock = Recorder(), Clock()
    reflector = reflector_on(hub, sink, clock)
    assert drive(clock, reflector.run_once()) == 0.8  # list at 3; nothing after it yet: a short watch
    hub.log += [event("ADDED", f"o{rv}", rv) for rv in range(4, 10)]
    hub.drop_after = 2
    # the stream had delivered two events, so the back-off started over
    assert drive(clock, reflector.run_once()) == 0.8, "the drop is followed by a back-off"
    assert drive(clock, reflector.run_once()) == 0.0
    assert [r for r in hub.requests if r[0] == "list"] == [("list", "")], "a drop never relists"
    assert hub.requests[-1] == ("watch", "5"), "resumed after the last event it saw"
    assert [rv for _, rv in sink.events] == [str(rv) for rv in range(4, 10)], "in order, none twice"
    assert hub.closed == len([r for r in hub.requests if r[0] == "watch"]), "every stream was closed"


def test_410_forgets_the_version_waits_the_back_off_and_relists_once():
    hub = LogHub([event("ADDED", "a", 40), event("DELETED", "a", 41), event("ADDED", "c", 42)], compacted=30)
    sink, clock = Recorder(), Clock()
    told: list[tuple[str, str]] = []
    reflector = reflector_on(hub, sink, clock, resource_version="10",
                             on_expired=lambda gone, version: told.append((gone.reason, version)))

    assert drive(clock, reflector.run_once()) == 0.8, "a 410 is followed by a back-off, not an instant relist"
    assert reflector.resource_version == "" and hub.requests == [("watch", "10")]
    drive(clock, reflector.run_once())
    assert told == [("Expired", "10")]
    assert hub.requests[:3] == [("watch", "10"), ("list", ""), ("watch", "42")]
    assert sink.replaced == [(["c"], "42")], "the relist is the whole truth: the deleted object is gone"


def test_a_sink_that_asks_for_a_relist_gets_one_and_the_stream_is_closed():
    hub = LogHub([event("ADDED", "a", 1)])
    clock = Clock()

    class Impatient(Recorder):
        def apply(self, event):
            super().apply(event).close()  # the recorder's coroutine, not awaited: record by hand
            self.events.append((event["type"], event["object"]["metadata"]["resourceVersion"]))
            raise errors.Gone("the page fell behind")

    sink = Impatient()
    reflector = reflector_on(hub, sink, clock, resource_version="0")
    assert drive(clock, reflector.run_once()) == 0.8
    assert reflector.resource_version == "" and hub.closed == 1
    drive(clock, reflector.run_once())
    assert hub.requests[-2:] == [("list", ""), ("watch", "1")]


def test_trouble_is_reported_then_backed_off_growing_and_a_delivered_event_starts_it_over():
    class Down:
        def __init__(self):
            self.left = 3

        async def list(self):
            if self.left:
                self.left -= 1
                raise HubUnreachable("refused")
            return Listing([], "5")

        async def watch(self, resource_version):
            yield event("BOOKMARK", "-", 6)

    clock, troubles = Clock(), []
    reflector = reflector_on(Down(), Recorder(), clock, on_trouble=troubles.append)
    waits = [drive(clock, reflector.run_once()) for _ in range(4)]
    assert waits == [0.8, 1.6, 3.2, 0.0]
    assert len(troubles) == 3 and reflector.backoff.current == 0.0 and reflector.resource_version == "6"
