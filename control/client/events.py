"""Recording core/v1 Events about objects (Scheduled, FailedScheduling, Killing, ...), as every
Kubernetes component does, through the hub.

Guarantees: recording never raises into the caller (an event is worth less than the work it
describes); repeated identical events within a short window update the first one's count.
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


class EventRecorder:
    def __init__(self, client: HubClient, component: str, host: str = "", *, clock: Clock | None = None, window: float = 600.0):
        self.client, self.component, self.host = client, component, host
        self.clock = clock or REAL
        self.window = window
        self._recent: dict[tuple, dict[str, Any]] = {}

    async def record(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        identity = (namespace, obj.get("kind"), meta.get("name"), meta.get("uid"), type_, reason, message)
        now = self.clock.now()
        try:
            previous = self._recent.get(identity)
            if previous and now - previous["_at"] < self.window:
                previous["count"] += 1
                previous["_at"] = now
                await self.client.patch(EVENTS, previous["name"], {"count": previous["count"], "lastTimestamp": format_time(now)},
                                        namespace)
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
        except (errors.ApiError, ValueError) as exc:
            log.debug("event %s/%s not recorded: %s", reason, meta.get("name"), exc)


class EventQueue:
    """Records events from a background task, so a worker never waits on them. When more than
    `limit` are waiting, new ones are dropped (and counted), as client-go's broadcaster does:
    an event is worth less than the work it describes.

    One queue (one broadcaster) serves a process; `named(component)` gives a recorder whose events
    carry their own `source.component`, as each controller of kube-controller-manager has its own
    (`job-controller`, `replicaset-controller`, ...), through the same queue and task."""

    def __init__(self, recorder: EventRecorder, *, limit: int = 1000):
        self.recorder, self.limit = recorder, limit
        self.waiting: deque[tuple[EventRecorder, dict[str, Any], str, str, str]] = deque()
        self.dropped = 0
        self._wake = asyncio.Event()
        self._named: dict[str, EventRecorder] = {}

    async def record(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self._enqueue(self.recorder, obj, type_, reason, message)

    def named(self, component: str) -> "NamedEvents":
        if component not in self._named:
            base = self.recorder
            self._named[component] = EventRecorder(base.client, component, base.host, clock=base.clock, window=base.window)
        return NamedEvents(self, self._named[component])

    def _enqueue(self, recorder: EventRecorder, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        if len(self.waiting) >= self.limit:
            self.dropped += 1
            return
        self.waiting.append((recorder, obj, type_, reason, message))
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.waiting:
                recorder, *event = self.waiting.popleft()
                await recorder.record(*event)


class NamedEvents:
    """A component's door into a shared `EventQueue` (what controllers are given as `recorder`)."""

    def __init__(self, queue: EventQueue, recorder: EventRecorder):
        self.queue, self.recorder = queue, recorder

    @property
    def component(self) -> str:
        return self.recorder.component

    async def record(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.queue._enqueue(self.recorder, obj, type_, reason, message)
