"""The workqueue: keys, not objects; each key at most once in the queue and at most one worker at
a time; exponential backoff per key on failure; delayed adds. Time comes from an injected clock.

Guarantees (client-go's workqueue): a key added while it is being processed is queued again when
its worker calls `done`, never handed to a second worker; `add_rate_limited` waits
base·2^(failures-1) up to `max_delay`; `forget` resets a key's failures. Keys leave in the order
they were added, unless the queue is given another `order` (a container with append, popleft,
len and iteration: kube-scheduler's queue hands out higher-priority pods first).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Iterator, Protocol

from control.clock import REAL, Clock


class Order(Protocol):
    """Where queued keys wait: a FIFO deque by default."""

    def append(self, key: str) -> None: ...

    def popleft(self) -> str: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[str]: ...


class ShutDown(Exception):
    """The queue was shut down; workers stop."""


class WorkQueue:
    def __init__(self, *, clock: Clock | None = None, base_delay: float = 0.005, max_delay: float = 30.0,
                 order: Order | None = None):
        self.clock = clock or REAL
        self.base_delay, self.max_delay = base_delay, max_delay
        self._queue: Order = order if order is not None else deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._failures: dict[str, int] = {}
        self._ready = asyncio.Event()
        self._shut = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: str) -> None:
        if self._shut or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._ready.set()

    def add_after(self, key: str, delay: float) -> None:
        if delay <= 0:
            self.add(key)
        else:
            self.clock.call_later(delay, self.add, key)

    def add_rate_limited(self, key: str) -> float:
        failures = self._failures.get(key, 0) + 1
        self._failures[key] = failures
        delay = min(self.max_delay, self.base_delay * 2 ** (failures - 1))
        self.add_after(key, delay)
        return delay

    def forget(self, key: str) -> None:
        self._failures.pop(key, None)

    def failures(self, key: str) -> int:
        return self._failures.get(key, 0)

    async def get(self) -> str:
        while not self._queue:
            if self._shut:
                raise ShutDown()
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._ready.set()

    def shutdown(self) -> None:
        self._shut = True
        self._ready.set()
