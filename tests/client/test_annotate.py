"""A spoke's Node annotation: one merge patch, retried with back-off on the injected clock, giving up
after `attempts` when asked to."""

from __future__ import annotations

import asyncio

from control import errors
from control.client.annotate import annotate_node
from control.clock import FakeClock


class Hub:
    def __init__(self, refusals: int):
        self.refusals, self.patches = refusals, []

    async def patch(self, resource, name, patch, namespace=None):
        self.patches.append((resource.plural, name, patch))
        if len(self.patches) <= self.refusals:
            raise errors.ServiceUnavailable("hub restarting")
        return {}


def test_retried_with_back_off_until_taken():
    async def run():
        hub, clock = Hub(refusals=3), FakeClock(0.0)
        done = asyncio.ensure_future(annotate_node(hub, "node-1", {"a": "1"}, clock=clock, what="the ports"))
        for _ in range(3):
            await asyncio.sleep(0)
            await clock.advance(5.0)
        assert await done is True
        assert hub.patches == [("nodes", "node-1", {"metadata": {"annotations": {"a": "1"}}})] * 4
    asyncio.run(run())


def test_gives_up_after_its_attempts():
    async def run():
        hub, clock = Hub(refusals=10), FakeClock(0.0)
        done = asyncio.ensure_future(annotate_node(hub, "node-1", {"a": "1"}, clock=clock, what="x", attempts=2))
        for _ in range(3):
            await asyncio.sleep(0)
            await clock.advance(5.0)
        assert await done is False and len(hub.patches) == 2
    asyncio.run(run())
