"""The scheduler's event sender: events leave in the background, in order, so a worker never
waits on an event before its next binding (as kube-scheduler's event broadcaster).

Guarantees: at most `limit` events wait; beyond that the oldest is dropped (and logged); a failed
send is logged and never stops the sender loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from control.client.events import EventRecorder
from control.scheduler.demand import Obj

log = logging.getLogger(__name__)


class EventSender:
    """Events leave in the background, in order, one at a time, so a worker never waits on an
    event before its next binding (as kube-scheduler's event broadcaster); at most `limit` wait.
    `run` is the sender loop of the process; tests call `flush`."""

    def __init__(self, recorder: EventRecorder, *, limit: int = 10_000):
        self.recorder, self.limit = recorder, limit
        self._pending: deque[tuple[Obj, str, str, str]] = deque()
        self._wake = asyncio.Event()

    def emit(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        if len(self._pending) >= self.limit:
            dropped = self._pending.popleft()
            log.warning("event backlog full; dropping %s for %s", dropped[2], dropped[0]["metadata"].get("name"))
        self._pending.append((obj, type_, reason, message))
        self._wake.set()

    async def flush(self) -> None:
        """Send every pending event now."""
        while self._pending:
            try:
                await self.recorder.record(*self._pending.popleft())
            except asyncio.CancelledError:
                raise
            except Exception:  # an event is worth less than the sender loop
                log.exception("event not sent")

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self.flush()
