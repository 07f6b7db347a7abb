"""client-go's EventCorrelator (tools/record/events_cache.go): what a component does with an event
before it reaches the hub, so a pod that fails again and again does not bury its namespace in
Events.

Guarantees, each as upstream with its defaults:
- Counting: an event identical to one already recorded (same source, involved object, type,
  reason and message) becomes a strategic-merge PATCH of that event: `count` + 1, the new
  `lastTimestamp` and `message`, `firstTimestamp` kept (the logger; LRU of 4096 events).
- Aggregation: once 10 events that differ only by message (same source, object, type, reason and
  reporting component) arrive within 10 minutes of each other, the next ones are recorded as ONE
  event "(combined from similar events): <latest message>", itself counted up (the aggregator).
- Spam filter: a source may send 25 events about one object, then one per 5 minutes (a token
  bucket per source + object); a filtered event is not sent, though the logger still counts it,
  so the next one sent carries the true count.
- `update_state` takes what the hub answered, so the next PATCH names the event it stored.
Pure and synchronous: the clock is injected and nothing here touches the network.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from control.clock import Clock
from control.kinds.meta import format_time

Obj = dict[str, Any]
K = TypeVar("K")
V = TypeVar("V")

CACHE_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
COMBINED = "(combined from similar events): "


class LRU(Generic[K, V]):
    """groupcache's lru.Cache: the least recently used entry goes first when full."""

    def __init__(self, size: int):
        self.size, self.entries = size, OrderedDict()  # type: OrderedDict[K, V]

    def get(self, key: K) -> V | None:
        if key not in self.entries:
            return None
        self.entries.move_to_end(key)
        return self.entries[key]

    def add(self, key: K, value: V) -> None:
        self.entries[key] = value
        self.entries.move_to_end(key)
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)


class TokenBucket:
    """flowcontrol's token bucket: `burst` tokens at first, refilled at `qps` up to `burst`."""

    def __init__(self, qps: float, burst: int, now: float):
        self.qps, self.burst, self.tokens, self.at = qps, burst, float(burst), now

    def try_accept(self, now: float) -> bool:
        self.tokens = min(float(self.burst), self.tokens + max(0.0, now - self.at) * self.qps)
        self.at = max(self.at, now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


def _object_key(event: Obj) -> tuple[str, ...]:
    source, involved = event.get("source") or {}, event.get("involvedObject") or {}
    return (str(source.get("component") or ""), str(source.get("host") or ""), str(involved.get("kind") or ""),
            str(involved.get("namespace") or ""), str(involved.get("name") or ""), str(involved.get("uid") or ""),
            str(involved.get("apiVersion") or ""))


def event_key(event: Obj) -> tuple[str, ...]:
    """getEventKey: source, involved object (with fieldPath), type, reason, message."""
    return _object_key(event) + (str((event.get("involvedObject") or {}).get("fieldPath") or ""),
                                 str(event.get("type") or ""), str(event.get("reason") or ""),
                                 str(event.get("message") or ""))


def spam_key(event: Obj) -> tuple[str, ...]:
    """getSpamKey: source and involved object."""
    return _object_key(event)


def aggregate_key(event: Obj) -> tuple[str, ...]:
    """EventAggregatorByReasonFunc's group: all but the message (the local key)."""
    return _object_key(event) + (str(event.get("type") or ""), str(event.get("reason") or ""),
                                 str(event.get("reportingComponent") or ""), str(event.get("reportingInstance") or ""))


@dataclass
class _Aggregate:
    messages: set[str]
    last: float


@dataclass(frozen=True)
class _Observation:
    count: int
    first: str
    name: str
    resource_version: str


@dataclass(frozen=True)
class Correlated:
    """What to send: `event` to create, or `patch` for the event named `event["metadata"]["name"]`;
    `skip`: nothing (the spam filter)."""

    event: Obj
    patch: Obj | None = None
    skip: bool = False


class EventCorrelator:
    def __init__(self, clock: Clock, *, max_events: int = AGGREGATE_MAX_EVENTS,
                 interval: float = AGGREGATE_INTERVAL, burst: int = SPAM_BURST, qps: float = SPAM_QPS,
                 cache_entries: int = CACHE_ENTRIES):
        self.clock, self.max_events, self.interval = clock, max_events, interval
        self.burst, self.qps = burst, qps
        self._aggregates: LRU[tuple[str, ...], _Aggregate] = LRU(cache_entries)
        self._observed: LRU[tuple[str, ...], _Observation] = LRU(cache_entries)
        self._buckets: LRU[tuple[str, ...], TokenBucket] = LRU(cache_entries)

    def correlate(self, event: Obj) -> Correlated:
        """Aggregate, then count, then filter, as EventCorrelate does (it never changes `event`)."""
        aggregated, key = self._aggregate(event)
        observed, patch = self._observe(aggregated, key)
        if self._filtered(observed):
            return Correlated(observed, skip=True)
        return Correlated(observed, patch)

    def update_state(self, stored: Obj) -> None:
        """The hub's answer for an event just created or patched (its name, count, version)."""
        meta = stored.get("metadata") or {}
        self._observed.add(event_key(stored), _Observation(
            int(stored.get("count") or 1), str(stored.get("firstTimestamp") or ""), str(meta.get("name") or ""),
            str(meta.get("resourceVersion") or "")))

    def _aggregate(self, event: Obj) -> tuple[Obj, tuple[str, ...]]:
        now = self.clock.now()
        group = aggregate_key(event)
        record = self._aggregates.get(group)
        if record is None or now - record.last > self.interval:
            record = _Aggregate(set(), now)
        record.messages.add(str(event.get("message") or ""))
        record.last = now
        self._aggregates.add(group, record)
        if len(record.messages) < self.max_events:
            return event, event_key(event)
        record.messages.pop()  # the set never grows past the threshold
        stamp = format_time(now)
        involved = event.get("involvedObject") or {}
        combined = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{involved.get('name') or 'object'}.{secrets.token_hex(8)}",
                         "namespace": (event.get("metadata") or {}).get("namespace")},
            "involvedObject": involved, "reason": event.get("reason"), "message": COMBINED + str(event.get("message")),
            "type": event.get("type"), "count": 1, "firstTimestamp": stamp, "lastTimestamp": stamp,
            "source": event.get("source") or {},
        }
        return combined, group  # one event per group: later combined ones count it up

    def _observe(self, event: Obj, key: tuple[str, ...]) -> tuple[Obj, Obj | None]:
        last = self._observed.get(key)
        observed, patch = event, None
        if last is not None and last.count > 0:
            observed = {**event, "metadata": {**(event.get("metadata") or {}), "name": last.name,
                                              **({"resourceVersion": last.resource_version}
                                                 if last.resource_version else {})},
                        "firstTimestamp": last.first or event.get("firstTimestamp"), "count": last.count + 1}
            # CreateTwoWayMergePatch against the same event with count 0, no lastTimestamp and no
            # message: exactly these three fields
            patch = {"count": observed["count"], "lastTimestamp": observed.get("lastTimestamp"),
                     "message": observed.get("message")}
        self._observed.add(key, _Observation(int(observed.get("count") or 1), str(observed.get("firstTimestamp") or ""),
                                             str(observed["metadata"].get("name") or ""),
                                             str(observed["metadata"].get("resourceVersion") or "")))
        return observed, patch

    def _filtered(self, event: Obj) -> bool:
        now = self.clock.now()
        key = spam_key(event)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(self.qps, self.burst, now)
        self._buckets.add(key, bucket)
        return not bucket.try_accept(now)
