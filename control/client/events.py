"""Recording core/v1 Events about objects (Scheduled, FailedScheduling, Killing, ...), as every
Kubernetes component does, through the hub.

Guarantees: recording never raises into the caller (an event is worth less than the work it
describes); events pass client-go's correlator first (`correlator`): an identical one counts up
the first, ten similar ones within ten minutes are combined into one, and one object's events
are rate-limited per source, so a crash loop or a pod that cannot be scheduled does not add an
Event at every retry.
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
from control.client.correlator import EventCorrelator
from control.client.http import HubClient
from control.client.resources import EVENTS

log = logging.getLogger(__name__)


class EventRecorder:
    """Makes each event as client-go's recorder does and sends it as its correlator says: a new
    Event (POST), a count on an existing one (strategic-merge PATCH; POST again if it was deleted
    meanwhile), or nothing (spam). Recorders that share one `correlator` share its caches, as the
    recorders of one client-go broadcaster do."""

    def __init__(self, client: HubClient, component: str, host: str = "", *, clock: Clock | None = None,
                 correlator: EventCorrelator | None = None):
        self.client, self.component, self.host = client, component, host
        self.clock = clock or REAL
        self.correlator = correlator or EventCorrelator(self.clock)

    def make_event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        now = format_time(self.clock.now())
        return {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{meta.get('name', 'object')}.{secrets.token_hex(8)}",
                         "namespace": meta.get("namespace") or "default"},
            "involvedObject": {"kind": obj.get("kind"), "apiVersion": obj.get("apiVersion"), "name": meta.get("name"),
                               "namespace": meta.get("namespace", ""), "uid": meta.get("uid"),
                               "resourceVersion": meta.get("resourceVersion")},
            "reason": reason, "message": message, "type": type_, "count": 1,
            "firstTimestamp": now, "lastTimestamp": now,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "reportingComponent": self.component, "reportingInstance": self.host or self.component,
        }

    async def record(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        event = self.make_event(obj, type_, reason, message)
        namespace = event["metadata"]["namespace"]
        try:
            result = self.correlator.correlate(event)
            if result.skip:
                return
            sent, stored = result.event, None
            if result.patch is not None:
                try:
                    stored = await self.client.patch(EVENTS, sent["metadata"]["name"], result.patch, namespace,
                                                     patch_type="strategic")
                except errors.NotFound:
                    stored = None  # deleted meanwhile: created again, as recordEvent does
            if stored is None:
                body = {**sent, "metadata": {k: v for k, v in sent["metadata"].items() if k != "resourceVersion"}}
                stored = await self.client.create(EVENTS, body, namespace)
            self.correlator.update_state({**sent, **(stored if isinstance(stored, dict) else {})})
        except (errors.ApiError, ValueError) as exc:
            log.debug("event %s/%s not recorded: %s", reason, (obj.get("metadata") or {}).get("name"), exc)


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
            self._named[component] = EventRecorder(base.client, component, base.host, clock=base.clock,
                                                   correlator=base.correlator)
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
