"""The runner: waits for its informers' caches, then runs N workers that take keys from the
queue and call `reconcile(key)`.

Guarantees (controller-runtime): `reconcile` returns a `Result` with one meaning each — done
(forget the key's failures), requeue_after(s) (look again later), retry(reason) (transient:
back off), drop(reason) (terminal: log and forget). Conflicts, timeouts and an unreachable hub
raised inside reconcile count as retry; any other exception is logged and retried with backoff.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable

from control import errors
from control.client.workqueue import ShutDown, WorkQueue

log = logging.getLogger(__name__)

TRANSIENT = (errors.Conflict, errors.ServiceUnavailable, errors.Timeout, errors.TooManyRequests,
             errors.AlreadyExists, errors.InternalError)


@dataclass(frozen=True)
class Result:
    outcome: str = "done"  # done | requeue_after | retry | drop
    after: float = 0.0
    reason: str = ""


DONE = Result()


def requeue_after(seconds: float) -> Result:
    return Result("requeue_after", after=seconds)


def retry(reason: str) -> Result:
    return Result("retry", reason=reason)


def drop(reason: str) -> Result:
    return Result("drop", reason=reason)


class Runner:
    def __init__(self, name: str, reconcile: Callable[[str], Awaitable[Result | None]], queue: WorkQueue,
                 informers: Iterable[Any], *, workers: int = 1):
        self.name, self.reconcile, self.queue = name, reconcile, queue
        self.informers = list(informers)
        self.workers = workers

    async def wait_for_sync(self) -> None:
        await asyncio.gather(*(informer.synced.wait() for informer in self.informers))

    async def run(self) -> None:
        await self.wait_for_sync()
        await asyncio.gather(*(self.work() for _ in range(self.workers)))

    async def work(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except ShutDown:
                return
            try:
                await self.process(key)
            finally:
                self.queue.done(key)

    async def process(self, key: str) -> Result:
        try:
            result = await self.reconcile(key) or DONE
        except TRANSIENT as exc:
            result = retry(f"{type(exc).__name__}: {exc}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("%s: reconcile(%s) failed", self.name, key)
            result = retry(f"unexpected {type(exc).__name__}")
        if result.outcome == "retry":
            delay = self.queue.add_rate_limited(key)
            log.debug("%s: %s retried in %.3fs: %s", self.name, key, delay, result.reason)
        elif result.outcome == "requeue_after":
            self.queue.forget(key)
            self.queue.add_after(key, result.after)
        else:
            if result.outcome == "drop":
                log.warning("%s: dropping %s: %s", self.name, key, result.reason)
            self.queue.forget(key)
        return result
