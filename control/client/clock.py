"""Injected time: components never call time.sleep or loop.call_later directly.

Guarantees: `RealClock` uses the running event loop; `FakeClock` only moves when a test calls
`advance`, firing due timers and sleepers in deadline order, so tests never sleep.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from typing import Any, Callable


class RealClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Any:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback, *args)


class FakeClock:
    def __init__(self, start: float = 1_800_000_000.0):
        self.t = start
        self._timers: list[tuple[float, int, Callable[..., Any], tuple]] = []
        self._ids = itertools.count()

    def now(self) -> float:
        return self.t

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> tuple[float, int]:
        entry = (self.t + max(0.0, delay), next(self._ids), callback, args)
        heapq.heappush(self._timers, entry)
        return entry[:2]

    async def sleep(self, seconds: float) -> None:
        future = asyncio.get_running_loop().create_future()
        self.call_later(seconds, lambda: future.done() or future.set_result(None))
        await future

    def pending(self) -> int:
        return len(self._timers)

    async def advance(self, seconds: float) -> None:
        """Move time forward, firing every timer that falls due, and let woken tasks run."""
        target = self.t + seconds
        while self._timers and self._timers[0][0] <= target:
            due, _, callback, args = heapq.heappop(self._timers)
            self.t = max(self.t, due)
            callback(*args)
            await settle()
        self.t = target
        await settle()


async def settle(rounds: int = 20) -> None:
    """Give every ready task a few turns of the loop."""
    for _ in range(rounds):
        await asyncio.sleep(0)
