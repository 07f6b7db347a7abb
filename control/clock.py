"""Time, injected: the one place that reads the real clock or sleeps on it.

Guarantees:
- Every layer (storage, kinds, hub, spokes, dashboard) gets time from a `Clock`: `now()` is wall
  time in epoch seconds (what timestamps are made of), `monotonic()` never goes back (what
  deadlines and intervals are measured with), `sleep()` and `call_later()` wait on it. Nothing
  else in the project calls `time.time()`, `time.monotonic()`, `time.perf_counter()` or a non-zero
  `asyncio.sleep()` (tests/test_clock.py enforces it); entry points and benchmarks may.
- `REAL` is the process's real clock: spokes take a `clock` parameter that defaults to it, and the
  hub's module-level code keeps a module attribute `clock = REAL` that a test may replace.
- `FakeClock` only moves when a test calls `advance` (or sets `t`): due timers and sleepers fire
  in deadline order, and wall and monotonic time move together, so tests never sleep
  (client-go's `clock.FakeClock`, kopf's looptime).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from typing import Any, Callable, Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Wall time, epoch seconds."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin that never goes back."""

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time."""

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Any:
        """Run `callback(*args)` on the event loop after `delay` seconds of this clock's time."""


class RealClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Any:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback, *args)


REAL: Clock = RealClock()


class FakeClock:
    def __init__(self, start: float = 1_800_000_000.0):
        self.t = start
        self._timers: list[tuple[float, int, Callable[..., Any], tuple]] = []
        self._ids = itertools.count()

    def now(self) -> float:
        return self.t

    def monotonic(self) -> float:
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
    """Give every ready task a few turns of the loop (a yield, not a wait: no time passes)."""
    for _ in range(rounds):
        await asyncio.sleep(0)
