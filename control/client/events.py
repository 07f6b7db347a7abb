"""Recording core/v1 Events about objects (Scheduled, FailedScheduling, Killing, ...), as every
Kubernetes component does, through the hub.

Guarantees: recording never raises into the caller (an event is worth less than the work it
describes); repeated identical events within a short window update the first one's count. Like
client-go's EventAggregator, once an object has had `SIMILAR` events of one type and reason with
different messages within the window (a controller retrying a refused create, each naming its
generated pod), the next ones go into one event "(combined from similar events): <the latest
message>" whose count grows, so `kubectl get events` is not flooded.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import deque
from typing import Any

from control import errors
from control.clock import REAL, Clock
from control.kinds.meta import format_time
from control.client.http import HubClient
from control.client.resources import EVENTS

log = logging.getLogger(__name__)

SIMILAR = 10  # client-go's defaultAggregateMaxEvents
COMBINED = "(combined from similar events): "


class EventRecorder:
    def __init__(self, client: HubClient, component: str, host: str = "", *, clock: Clock | None = None, window: float = 600.0):
        self.client, self.component, self.host = client, component, host
        self.clock = clock or REAL
        self.window = window
        self._recent: dict[tuple, dict[str, Any]] = {}
        self._similar: dict[tuple, tuple[float, set[str]]] = {}  # same object, type, reason -> (last, messages)

    async def record(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        now = self.clock.now()
        message, identity = self._aggregate((namespace, obj.get("kind"), meta.get("name"), meta.get("uid"), type_, reason),
                                            message, now)
        try:
            previous = self._recent.get(identity)
            if previous and now - previous["_at"] < self.window:
                previous["count"] += 1
                previous["_at"] = now
                patch = {"count": previous["count"], "lastTimestamp": format_time(now)}
                if message.startswith(COMBINED):  # a combined event tells the latest of its messages
                    patch["message"] = message
                await self.client.patch(EVENTS, previous["name"], patch, namespace)
                return
            name = f"{meta.get('name', 'object')}.{secrets.token_hex(8)}"
            event = {
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": {"kind": obj.get("kind"), "apiVersion": obj.get("apiVersion"), "name": meta.get("name"),
                                   "namespace": meta.get("namespace", ""), "uid": meta.get("uid"),
                                   "resourceVersion": meta.get("resourceVersion")},
                "reason": reason, "message": message, "type": type_, "count": 1,
                "firstTimestamp": format_time(now), "lastTimestamp": format_time(now),
                "source": {"component": self.component, **({"host": self.host} if self.host else {})},
                "reportingComponent": self.component, "reportingInstance": self.host or self.component,
            }
            await self.client.create(EVENTS, event, namespace)
            self._recent[identity] = {"name": name, "count": 1, "_at": now}
            if len(self._recent) > 5000:
                self._recent.clear()
                self._similar.clear()
        except (errors.ApiError, ValueError) as exc:
            log.debug("event %s/%s not recorded: %s", reason, meta.get("name"), exc)

    def _aggregate(self, similar: tuple, message: str, now: float) -> tuple[str, tuple]:
        """The message to record and the identity it is counted under: itself, or once `SIMILAR`
        messages of the same object, type and reason were seen within the window, the combined one."""
        last, messages = self._similar.get(similar, (now, set()))
        if now - last > self.window:
            messages = set()
        messages.add(message)
        self._similar[similar] = (now, messages)
        if len(messages) < SIMILAR:
            return message, similar + (message,)
        messages.pop()  # the set never grows past the limit (client-go's PopAny)
        return COMBINED + message, similar + (COMBINED,)


class EventQueue:
    """Records events from a background task, so a worker never waits on them. When more than
    `limit` are waiting, new ones are dropped (and counted), as client-go's broadcaster does:
    an event is worth less than the work it describes."""

    def __init__(self, recorder: EventRecorder, *, limit: int = 1000):
        self.recorder, self.limit = recorder, limit
        self.waiting: deque[tuple[dict[str, Any], str, str, str]] = deque()
        self.dropped = 0
        self._wake = asyncio.Event()

    async def record(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        if len(self.waiting) >= self.limit:
            self.dropped += 1
            return
        self.waiting.append((obj, type_, reason, message))
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.waiting:
                await self.recorder.record(*self.waiting.popleft())
