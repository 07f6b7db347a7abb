"""Traffic attribution: who asked the hub what, with which answer, how fast; and which watch
events the hub delivered to whom. The dashboard draws these as movements along the spokes.

Guarantees: every HTTP request through the hub produces exactly one record (also errors and
unknown paths); recording never blocks or fails a request; records are kept in a bounded ring
and handed to in-process listeners and, in batches, to the channel layer group `kk.traffic`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from typing import Any, Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

log = logging.getLogger(__name__)

GROUP = "kk.traffic"
recent: deque[dict[str, Any]] = deque(maxlen=2000)
_listeners: list[Callable[[dict[str, Any]], None]] = []
_pending: list[dict[str, Any]] = []
_flusher: asyncio.Task | None = None
_sequence = itertools.count(1)


def listen(listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
    _listeners.append(listener)
    return lambda: _listeners.remove(listener) if listener in _listeners else None


def publish(record: dict[str, Any]) -> None:
    record["seq"] = next(_sequence)
    recent.append(record)
    for listener in list(_listeners):
        try:
            listener(record)
        except Exception:
            log.exception("traffic listener failed")
    _pending.append(record)
    _ensure_flusher()


def _ensure_flusher() -> None:
    global _flusher
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if _flusher is None or _flusher.done() or _flusher.get_loop() is not loop:
        _flusher = loop.create_task(_flush_forever())


async def _flush_forever() -> None:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    while True:
        await asyncio.sleep(0.05)
        if not _pending or layer is None:
            continue
        batch = _pending[:500]
        del _pending[:len(batch)]
        try:
            await layer.group_send(GROUP, {"type": "traffic.batch", "records": batch})
        except Exception:
            log.warning("could not publish traffic to the channel layer", exc_info=True)


def delivered(actor: str, kind: Any, count: int, revision: int) -> None:
    """A watch stream just carried `count` events up to `revision` to `actor`."""
    publish({"type": "watch", "who": actor, "resource": kind.plural, "group": kind.group,
             "count": count, "revision": revision, "ts": time.time()})


class TrafficMiddleware:
    """Times each request and publishes one record after the view answered."""

    async_capable = True
    sync_capable = False

    def __init__(self, get_response):
        self.get_response = get_response
        if iscoroutinefunction(self.get_response):
            markcoroutinefunction(self)

    async def __call__(self, request):
        from control.api.request import client_name

        started = time.perf_counter()
        response = await self.get_response(request)
        info = getattr(request, "kk_traffic", None) or {"verb": request.method.lower(), "resource": request.path}
        publish({"type": "request", "who": client_name(request.headers.get("User-Agent", "")),
                 **info, "code": response.status_code,
                 "latency_ms": round((time.perf_counter() - started) * 1000, 3), "ts": time.time()})
        return response
