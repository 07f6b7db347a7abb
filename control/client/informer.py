"""The informer: list, then watch from the list's resourceVersion, into a read-only local cache.

Guarantees (client-go's reflector, kopf's watching):
- It watches from the LIST's resourceVersion (never an object's), asks for bookmarks so that
  version keeps advancing on a quiet resource, and then from the last version it saw.
- After a broken stream (or one that ended at once with nothing in it) it resumes from the last
  resourceVersion it saw after a back-off; on 410 Expired it forgets that version, waits the
  back-off and relists once, and the handlers hear the difference (adds, updates, deletes)
  between the old cache and the new list, so nothing is missed.
- The back-off is client-go's: 0.8 s doubling, each wait jittered up to +100 % so that watchers
  broken together (a compaction, a hub restart) do not come back together, and never over 30 s
  (a workshop's restarted hub is found again within half a minute); it starts over after a watch
  that delivered an event. A compacted log therefore costs one relist and
  one watch per watcher, never a storm.
- `has_synced` turns true after the first complete list.
- Handlers only map objects to keys (they must not block); cached objects are shared and must be
  copied before being changed.
- The endless loop (`run`) is a few lines; one round of it (`run_once`) is what tests drive.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field
from typing import Any, Callable

from control import errors
from control.clock import REAL, Clock
from control.kinds.meta import controller_ref, owner_references
from control.client.http import HubClient
from control.client.resources import Resource, key_of

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Indexer = Callable[[Obj], list[str]]


def by_namespace(obj: Obj) -> list[str]:
    return [obj.get("metadata", {}).get("namespace", "")]


def by_controller(obj: Obj) -> list[str]:
    ref = controller_ref(obj)
    return [ref["uid"]] if ref and ref.get("uid") else []


def by_owner(obj: Obj) -> list[str]:
    return [ref["uid"] for ref in owner_references(obj)]


def by_node(obj: Obj) -> list[str]:
    node = (obj.get("spec") or {}).get("nodeName")
    return [node] if node else []


class Cache:
    """Objects by key, with secondary indexes; read-only for everyone but its informer."""

    def __init__(self, indexers: dict[str, Indexer] | None = None):
        self.indexers = {"namespace": by_namespace, **(indexers or {})}
        self.items: dict[str, Obj] = {}
        self._index: dict[str, dict[str, set[str]]] = {name: {} for name in self.indexers}

    def add_indexer(self, name: str, fn: Indexer) -> None:
        if name in self.indexers:
            return
        self.indexers[name] = fn
        self._index[name] = {}
        for key, obj in self.items.items():
            for value in fn(obj):
                self._index[name].setdefault(value, set()).add(key)

    def get(self, key: str) -> Obj | None:
        return self.items.get(key)

    def list(self) -> list[Obj]:
        return list(self.items.values())

    def by_index(self, index: str, value: str) -> list[Obj]:
        return [self.items[k] for k in sorted(self._index[index].get(value, ()))]

    def put(self, obj: Obj) -> Obj | None:
        key = key_of(obj)
        old = self.items.get(key)
        if old is not None:
            self._unindex(key, old)
        self.items[key] = obj
        for name, fn in self.indexers.items():
            for value in fn(obj):
                self._index[name].setdefault(value, set()).add(key)
        return old

    def pop(self, key: str) -> Obj | None:
        old = self.items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, fn in self.indexers.items():
            for value in fn(obj):
                keys = self._index[name].get(value)
                if keys:
                    keys.discard(key)
                    if not keys:
                        del self._index[name][value]


@dataclass
class Handlers:
    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None


SHORT_WATCH = 1.0  # seconds: a watch that ends this fast with no event is a failure (client-go's "very short watch")


@dataclass
class Backoff:
    """Jittered exponential back-off: `next()` is `current` times a factor in [1, 1 + jitter),
    at most `limit`."""

    initial: float = 0.8
    limit: float = 30.0
    jitter: float = 1.0
    random: Callable[[], float] = field(default=random.random, repr=False)
    current: float = field(default=0.0)

    def next(self) -> float:
        self.current = self.initial if self.current == 0 else min(self.limit, self.current * 2)
        return min(self.limit, self.current * (1.0 + self.jitter * self.random()))

    def reset(self) -> None:
        self.current = 0.0


class Informer:
    def __init__(self, client: HubClient, resource: Resource, *, namespace: str | None = None,
                 label_selector: str = "", field_selector: str = "", indexers: dict[str, Indexer] | None = None,
                 clock: Clock | None = None, watch_timeout: int = 300):
        self.client, self.resource, self.namespace = client, resource, namespace
        self.label_selector, self.field_selector = label_selector, field_selector
        self.cache = Cache(indexers)
        self.clock = clock or REAL
        self.handlers: list[Handlers] = []
        self.resource_version = ""
        self.has_synced = False
        self.synced = asyncio.Event()
        self.backoff = Backoff()
        self.watch_timeout = watch_timeout

    def add_handlers(self, handlers: Handlers) -> None:
        self.handlers.append(handlers)

    async def run(self) -> None:
        while True:
            await self.run_once()

    async def run_once(self) -> None:
        """One list-or-resume plus one watch stream; a failure ends in a back-off sleep (after a
        410, with the version forgotten, so the next round relists)."""
        events = 0
        try:
            if not self.resource_version:
                await self.relist()
            started = self.clock.now()
            async for event in self.client.watch(
                    self.resource, self.namespace, resource_version=self.resource_version,
                    label_selector=self.label_selector, field_selector=self.field_selector,
                    timeout_seconds=self.watch_timeout, bookmarks=True):
                self.apply(event)
                events += 1
                self.backoff.reset()
            if events == 0 and self.clock.now() - started < SHORT_WATCH:
                await self._back_off("the watch ended at once with no event")
        except errors.Gone:
            expired_at, self.resource_version = self.resource_version, ""
            await self._back_off(f"the watch expired at {expired_at}; relisting")
        except (errors.ApiError, ValueError, KeyError) as exc:
            await self._back_off(str(exc))

    async def _back_off(self, why: str) -> None:
        delay = self.backoff.next()
        log.info("%s informer: %s; again in %.1fs", self.resource.plural, why, delay)
        await self.clock.sleep(delay)

    async def relist(self) -> None:
        listing = await self.client.list(self.resource, self.namespace, label_selector=self.label_selector,
                                         field_selector=self.field_selector)
        fresh = {key_of(obj): obj for obj in listing.get("items") or []}
        for key in [k for k in self.cache.items if k not in fresh]:
            self._deleted(self.cache.pop(key))
        for obj in fresh.values():
            self._upserted(obj)
        self.resource_version = listing["metadata"]["resourceVersion"]
        self.has_synced = True
        self.synced.set()

    def apply(self, event: dict[str, Any]) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        self.resource_version = obj.get("metadata", {}).get("resourceVersion") or self.resource_version
        if kind in ("ADDED", "MODIFIED"):
            self._upserted(obj)
        elif kind == "DELETED":
            self.cache.pop(key_of(obj))
            self._deleted(obj)

    def _upserted(self, obj: Obj) -> None:
        old = self.cache.put(obj)
        for handler in self.handlers:
            if old is None and handler.on_add:
                handler.on_add(obj)
            elif old is not None and handler.on_update and old.get("metadata", {}).get("resourceVersion") != obj.get("metadata", {}).get("resourceVersion"):
                handler.on_update(old, obj)

    def _deleted(self, obj: Obj | None) -> None:
        if obj is None:
            return
        for handler in self.handlers:
            if handler.on_delete:
                handler.on_delete(obj)
