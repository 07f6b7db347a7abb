"""Fairness seats: a bound on each flow's requests in flight (API Priority and Fairness' seats).

`control.api.fairness` says which priority level and flow a hub request belongs to; this module
holds the seats, so that the dashboard's manifest form, which decodes YAML in the same process,
takes its sender's seats from the same place (`LIMITER`).

Guarantees:
- The exempt level is never counted nor refused.
- A flow holds at most its level's `per_flow` seats; more wait, first come first served, in a queue
  of at most `queue_length` for at most `queue_wait` seconds of the injected clock; beyond either,
  the request is refused with 429 TooManyRequests, upstream's message "Too many requests, please
  try again later." and `Retry-After: 1` (client-go waits and retries).
- A request may hold several seats (`body_seats`: one more per KK_BYTES_PER_SEAT of a body decoded
  off the loop); a waiter is served only when its seats are free, and no later waiter passes it.
- Seats freed go to the flow's oldest waiters; a flow with nothing in flight or waiting is
  forgotten, so memory is bounded by the requests being served.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections import deque
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

from django.conf import settings

from control import errors
from control.clock import REAL, Clock

MESSAGE = "Too many requests, please try again later."
RETRY_AFTER = "1"
_NAMESPACE = uuid.UUID("6a1d1c2e-5b7f-4c1e-9f2a-6b6b6974636e")  # UIDs stable across restarts


@functools.lru_cache(maxsize=None)  # a handful of names; a SHA-1 per request is not worth it
def uid(kind: str, name: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{kind}/{name}"))


@dataclass(frozen=True)
class PriorityLevel:
    name: str
    per_flow: int = 0  # requests in flight per flow; 0 for the exempt level
    queue_length: int = 0
    queue_wait: float = 0.0

    @property
    def exempt(self) -> bool:
        return self.per_flow <= 0

    @property
    def uid(self) -> str:
        return uid("PriorityLevelConfiguration", self.name)


def levels() -> Mapping[str, PriorityLevel]:
    """The levels, sized by the settings (read each time: tests and `runhub` may change them).
    The same table for the same sizes: it is asked once per request, and the levels are frozen."""
    return _levels(settings.KK_FAIR_INFLIGHT_PER_USER, settings.KK_FAIR_QUEUE_LENGTH, settings.KK_FAIR_QUEUE_WAIT)


@functools.lru_cache(maxsize=8)
def _levels(per_user: int, queue: int, wait: float) -> Mapping[str, PriorityLevel]:
    return MappingProxyType({"exempt": PriorityLevel("exempt"),
                             "system": PriorityLevel("system", 4 * per_user, 4 * queue, wait),
                             "workload-low": PriorityLevel("workload-low", per_user, queue, wait),
                             "global-default": PriorityLevel("global-default", per_user, queue, wait)})


def too_many_requests() -> errors.TooManyRequests:
    return errors.TooManyRequests(MESSAGE, headers={"Retry-After": RETRY_AFTER})


def body_seats(level: PriorityLevel, body_bytes: int) -> int:
    """The seats a request whose body is decoded off the loop holds (`control.api.bodies`): one, and
    one more per KK_BYTES_PER_SEAT of body, at most the flow's all; as upstream's work estimator
    gives a request seats by the work it brings, so a sender's big bodies fill its own flow sooner."""
    if level.exempt:
        return 0
    return min(level.per_flow, 1 + body_bytes // max(1, settings.KK_BYTES_PER_SEAT))


@dataclass
class _Flow:
    in_flight: int = 0  # seats held
    per_flow: int = 1  # its level's seats (the level of its latest request)
    waiting: deque = field(default_factory=deque)  # (future, seats), first come first served


class Limiter:
    """Seats per flow. `acquire` returns a release function (call it exactly once) or raises
    TooManyRequests; it must run on the event loop that serves the requests. A request may hold
    several seats (`seats`, at most its level's `per_flow`); a waiter is served only when its
    seats are free, and no later waiter passes it."""

    def __init__(self, clock: Clock = REAL):
        self.clock = clock
        self.flows: dict[tuple[str, str], _Flow] = {}

    def in_flight(self, level: str, flow: str) -> int:
        entry = self.flows.get((level, flow))
        return entry.in_flight if entry else 0

    async def acquire(self, level: PriorityLevel, flow: str, seats: int = 1) -> Callable[[], None]:
        if level.exempt:
            return lambda: None
        seats = max(1, min(seats, level.per_flow))
        key = (level.name, flow)
        entry = self.flows.setdefault(key, _Flow())
        entry.per_flow = level.per_flow
        if entry.in_flight + seats <= level.per_flow and not entry.waiting:
            entry.in_flight += seats
            return self._releaser(key, seats)
        if len(entry.waiting) >= level.queue_length or level.queue_wait <= 0:
            self._forget_if_idle(key)
            raise too_many_requests()
        seat: asyncio.Future = asyncio.get_running_loop().create_future()
        waiter = (seat, seats)
        entry.waiting.append(waiter)
        # The timer only refuses a waiter still waiting; seats handed over meanwhile stand.
        self.clock.call_later(level.queue_wait, lambda: seat.done() or self._refuse_waiter(key, waiter))
        try:
            await seat
        except BaseException:
            if waiter in entry.waiting:
                entry.waiting.remove(waiter)
            if seat.done() and not seat.cancelled() and seat.exception() is None:
                self._release(key, seats)  # handed seats, then cancelled before using them: pass them on
            self._forget_if_idle(key)
            raise
        return self._releaser(key, seats)

    def _refuse_waiter(self, key: tuple[str, str], waiter: tuple[asyncio.Future, int]) -> None:
        """A waiter's time is up: refused with 429, and those behind it may now fit."""
        entry = self.flows.get(key)
        if entry is not None and waiter in entry.waiting:
            entry.waiting.remove(waiter)
        waiter[0].set_exception(too_many_requests())
        if entry is not None:
            self._hand_out(entry)

    def _releaser(self, key: tuple[str, str], seats: int) -> Callable[[], None]:
        done = False

        def release() -> None:
            nonlocal done
            if not done:
                done = True
                self._release(key, seats)

        return release

    def _release(self, key: tuple[str, str], seats: int) -> None:
        entry = self.flows.get(key)
        if entry is None:
            return
        entry.in_flight -= seats
        self._hand_out(entry)
        self._forget_if_idle(key)

    @staticmethod
    def _hand_out(entry: _Flow) -> None:
        """Seats freed go to the oldest waiters, in order, as long as each one's seats fit."""
        while entry.waiting:
            seat, wanted = entry.waiting[0]
            if seat.done():
                entry.waiting.popleft()
                continue
            if entry.in_flight + wanted > entry.per_flow and entry.in_flight > 0:
                return
            entry.waiting.popleft()
            entry.in_flight += wanted
            seat.set_result(None)

    def _forget_if_idle(self, key: tuple[str, str]) -> None:
        entry = self.flows.get(key)
        if entry is not None and entry.in_flight <= 0 and not entry.waiting:
            del self.flows[key]


LIMITER = Limiter()
