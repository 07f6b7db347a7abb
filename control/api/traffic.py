"""Traffic attribution: who asked the hub what, with which answer, how fast; and which watch
events the hub delivered to whom. The dashboard draws these as movements along the spokes.

Guarantees: every HTTP request through the hub produces exactly one record (also errors and
unknown paths), naming the client (`who`) and the authenticated user (`user`, "" when the gate let nobody in); recording never blocks or fails a request; records are kept in a bounded ring
and handed to in-process listeners and, in batches (bounded), to the channel layer group
`protocol.TRAFFIC_GROUP`; watch deliveries are summed per client and resource between flushes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections import deque
from typing import Any, Callable

from control import protocol
from control.clock import REAL as clock

log = logging.getLogger(__name__)

GROUP = protocol.TRAFFIC_GROUP
MAX_PENDING = 10_000
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
    if len(_pending) > MAX_PENDING:  # nobody is draining fast enough: keep the newest
        del _pending[:len(_pending) - MAX_PENDING]
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
        await clock.sleep(0.05)
        _drain_deliveries()
        if not _pending or layer is None:
            continue
        batch = _pending[:500]
        del _pending[:len(batch)]
        try:
            await layer.group_send(GROUP, {"type": protocol.TRAFFIC_BATCH, "records": batch})
        except Exception:
            log.warning("could not publish traffic to the channel layer", exc_info=True)


FAILURE_MESSAGE_CHARS = 200


def failed(tag: dict[str, str], path: str, query: dict[str, str], body: bytes) -> dict[str, str]:
    """The tag of a request answered 4xx/5xx, with what the dashboard names a failure by: the path,
    the answer's Status reason and message (cut short), and whether it was a dry run."""
    try:
        status = json.loads(body) if body else {}
    except ValueError:
        status = {}
    status = status if isinstance(status, dict) else {}
    return {**tag, "path": path, "reason": str(status.get("reason") or ""),
            "message": str(status.get("message") or "")[:FAILURE_MESSAGE_CHARS],
            "dryRun": "All" if query.get("dryRun") == "All" else ""}


def request_done(actor: str, tag: dict[str, str], code: int, started: float, user: str = "") -> None:
    """One request answered (called once per request by the hub's ASGI app). `user` is who the
    hub authenticated ("" when nobody was): the instructor's board counts each attendee's requests
    by it, since every attendee's kubectl has the same client name."""
    publish({"type": protocol.RECORD_REQUEST, "who": actor, "user": user, **tag, "code": code,
             "latency_ms": round((clock.monotonic() - started) * 1000, 3), "ts": clock.now()})


_deliveries: dict[tuple[str, str, str], list[int]] = {}


def delivered(actor: str, kind: Any, count: int, revision: int) -> None:
    """A watch stream just carried `count` events up to `revision` to `actor`. Deliveries are
    summed per (client, resource) and published every flush, so a busy fan-out (100 watchers ×
    500 events/s) costs a dictionary update per batch, not a record."""
    key = (actor, kind.plural, kind.group)
    total = _deliveries.get(key)
    if total is None:
        _deliveries[key] = [count, revision]
    else:
        total[0] += count
        total[1] = max(total[1], revision)
    _ensure_flusher()


def _drain_deliveries() -> None:
    if not _deliveries:
        return
    now = clock.now()
    items = list(_deliveries.items())
    _deliveries.clear()
    for (actor, plural, group), (count, revision) in items:
        publish({"type": protocol.RECORD_WATCH, "who": actor, "resource": plural, "group": group,
                 "count": count, "revision": revision, "ts": now})
