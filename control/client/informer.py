"""The informer: a reflector (`control.client.reflector`) into a read-only local cache with handlers.

Guarantees (client-go's shared informer, kopf's watching):
- It follows its resource (namespace, selectors) through the one `Reflector`: list, watch from the
  LIST's resourceVersion with bookmarks, resume after a break, relist once after a back-off on
  410; on a relist the handlers hear the difference (adds, updates, deletes) between the old cache
  and the new list, so nothing is missed. A compacted log costs one relist and one watch per
  informer, never a storm.
- `has_synced` turns true after the first complete list.
- Handlers only map objects to keys (they must not block); cached objects are shared and must be
  copied before being changed.
- The endless loop (`run`) is a few lines; one round of it (`run_once`) is what tests drive.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable

from control import errors
from control.clock import REAL, Clock
from control.kinds.meta import controller_ref, owner_references
from control.client.http import HubClient
from control.client.reflector import Backoff, Listing, Reflector
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


class _Watched:
    """The informer's ListerWatcher: its resource, namespace and selectors on the hub."""

    def __init__(self, informer: Informer):
        self.informer = informer

    async def list(self) -> Listing:
        i = self.informer
        listing = await i.client.list(i.resource, i.namespace, label_selector=i.label_selector,
                                      field_selector=i.field_selector)
        return Listing(listing.get("items") or [], listing["metadata"]["resourceVersion"])

    def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        i = self.informer
        return i.client.watch(i.resource, i.namespace, resource_version=resource_version,
                              label_selector=i.label_selector, field_selector=i.field_selector,
                              timeout_seconds=i.watch_timeout, bookmarks=True)


class Informer:
    def __init__(self, client: HubClient, resource: Resource, *, namespace: str | None = None,
                 label_selector: str = "", field_selector: str = "", indexers: dict[str, Indexer] | None = None,
                 clock: Clock | None = None, watch_timeout: int = 300):
        self.client, self.resource, self.namespace = client, resource, namespace
        self.label_selector, self.field_selector = label_selector, field_selector
        self.cache = Cache(indexers)
        self.clock = clock or REAL
        self.handlers: list[Handlers] = []
        self.has_synced = False
        self.synced = asyncio.Event()
        self.watch_timeout = watch_timeout
        self.reflector = Reflector(_Watched(self), self, name=f"{resource.plural} informer", clock=self.clock)

    # The reflector's state, read (and in tests set) through the informer.
    @property
    def resource_version(self) -> str:
        return self.reflector.resource_version

    @resource_version.setter
    def resource_version(self, value: str) -> None:
        self.reflector.resource_version = value

    @property
    def backoff(self) -> Backoff:
        return self.reflector.backoff

    def add_handlers(self, handlers: Handlers) -> None:
        self.handlers.append(handlers)

    async def run(self) -> None:
        await self.reflector.run()

    async def run_once(self) -> None:
        """One round of the reflector: list-or-resume plus one watch stream."""
        await self.reflector.run_once()

    async def relist(self) -> None:
        await self.reflector.relist()

    # --- the reflector's sink ---------------------------------------------------------------

    def replace(self, listing: Listing) -> None:
        """A (re)list: handlers hear the difference between the cache and the new list."""
        fresh = {key_of(obj): obj for obj in listing.items}
        for key in [k for k in self.cache.items if k not in fresh]:
            self._deleted(self.cache.pop(key))
        for obj in fresh.values():
            self._upserted(obj)
        self.has_synced = True
        self.synced.set()

    def apply(self, event: dict[str, Any]) -> None:
        """One watch event into the cache (and the handlers); the version it carries is the one to
        resume from (the reflector records it too; a test may feed events here directly)."""
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
