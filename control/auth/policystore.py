"""The RBAC objects the authorizer evaluates, read from the store and kept in memory.

Guarantees:
- `current()` answers from memory. The decoded RBAC objects are kept between snapshots: a commit
  of this process that touches an RBAC resource (a store listener, in the writing thread, before
  the write's caller gets its answer) is applied to them at once, so a RoleBinding created through
  this hub applies to the very next request; the `Policy` is then rebuilt from the objects already
  decoded (no read, no decode of the others).
- `MAX_AGE` seconds after the objects were last confirmed, the RBAC objects' stored fingerprint
  (`store.fingerprint`: count and newest revision) is compared with the one of the objects held;
  when they differ (another hub on the same PostgreSQL changed them) every RBAC object is read
  again, in one statement (one snapshot, `store.objects_of`). An unchanged policy costs one small
  query every `MAX_AGE`, not a decode of every role and binding.
- Changes heard while such a read is under way are applied on top of it when newer than the
  revision it was read at (revisions follow commit order), so none is lost or applied twice.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from control.auth.rbac import Policy
from control.clock import REAL, Clock
from control.storage import store
from control.storage.db import run_db

GROUP = "rbac.authorization.k8s.io"
RESOURCES = (f"{GROUP}/clusterroles", f"{GROUP}/roles", f"{GROUP}/clusterrolebindings", f"{GROUP}/rolebindings")
MAX_AGE = 2.0

Obj = dict[str, Any]
Objects = dict[str, dict[tuple[str, str], Obj]]  # resource -> (namespace, name) -> object


def read_objects() -> tuple[Objects, int]:
    """Every stored RBAC object, decoded, and the revision they are consistent with (database thread)."""
    bodies, revision = store.objects_of(list(RESOURCES))
    objects: Objects = {resource: {} for resource in RESOURCES}
    for resource, found in bodies.items():
        held = objects[resource]
        for body in found:
            obj = json.loads(body)
            meta = obj["metadata"]
            held[(meta.get("namespace") or "", meta["name"])] = obj
    return objects, revision


def apply(objects: Objects, change: store.Change) -> None:
    """One committed change of an RBAC object, applied to the objects held."""
    held = objects.get(change.resource)
    if held is None:
        return
    key = (change.namespace, change.name)
    if change.type == store.DELETED:
        held.pop(key, None)
    else:
        held[key] = change.obj()  # shared with other listeners: a Policy never changes it


def policy_of(objects: Objects) -> Policy:
    """The Policy of the objects held, in the order the store lists them (namespace, name)."""
    return Policy.of(*([obj for _, obj in sorted(objects[resource].items())] for resource in RESOURCES))


def fingerprint_of(objects: Objects) -> tuple[int, int]:
    """What `store.fingerprint` answers while the stored RBAC objects are these."""
    count = newest = 0
    for held in objects.values():
        count += len(held)
        for obj in held.values():
            newest = max(newest, int(obj["metadata"].get("resourceVersion") or 0))
    return count, newest


def _fingerprint() -> tuple[int, int]:
    return store.fingerprint(list(RESOURCES))


class PolicyCache:
    def __init__(self, clock: Clock = REAL):
        self.clock = clock
        self._lock = threading.Lock()
        self._objects: Objects | None = None
        self._policy: Policy | None = None  # of `_objects`; None: rebuild on the next request
        self._mark: tuple[int, int] | None = None  # `fingerprint_of(_objects)`; None: not worked out since a change
        self._checked_at = 0.0
        self._reads: list[list[store.Change]] = []  # per read under way, the changes heard since it began
        store.subscribe(self._changed)

    def _changed(self, changes: list[store.Change]) -> None:
        rbac = [change for change in changes if change.resource in RESOURCES]
        if not rbac:
            return
        with self._lock:
            for heard in self._reads:
                heard.extend(rbac)
            if self._objects is not None:
                for change in rbac:
                    apply(self._objects, change)
                self._policy = self._mark = None

    def _built(self) -> Policy | None:
        """The policy of the objects held (lock held); None when none are."""
        if self._policy is None and self._objects is not None:
            self._policy = policy_of(self._objects)
        return self._policy

    def _held_mark(self) -> tuple[int, int]:
        """The fingerprint of the objects held (lock held, objects held), worked out once per change."""
        if self._mark is None:
            self._mark = fingerprint_of(self._objects)  # type: ignore[arg-type]
        return self._mark

    async def current(self) -> Policy:
        now = self.clock.monotonic()
        with self._lock:
            policy = self._built()
            if policy is not None and now - self._checked_at < MAX_AGE:
                return policy
        if policy is not None:
            mark = await run_db(_fingerprint)
            with self._lock:
                # This hub's changes committed before the query were heard before its answer.
                if self._objects is not None and self._held_mark() == mark:
                    self._checked_at = now
                    return self._built()  # type: ignore[return-value]
        return await self._read(now)

    async def _read(self, now: float) -> Policy:
        heard: list[store.Change] = []
        with self._lock:
            self._reads.append(heard)
        try:
            objects, revision = await run_db(read_objects)
        except BaseException:
            with self._lock:
                self._reads = [other for other in self._reads if other is not heard]
            raise
        with self._lock:  # one section: a change heard now is applied either here or by the listener
            self._reads = [other for other in self._reads if other is not heard]
            for change in heard:
                if change.revision > revision:
                    apply(objects, change)
            self._objects, self._policy, self._mark, self._checked_at = objects, None, None, now
            return self._built()  # type: ignore[return-value]


_cache: PolicyCache | None = None


def cache() -> PolicyCache:
    global _cache
    if _cache is None:
        _cache = PolicyCache()
    return _cache


def forget() -> None:
    """Drop the snapshot (tests whose database is emptied behind the store's back)."""
    if _cache is not None:
        with _cache._lock:
            _cache._objects, _cache._policy, _cache._mark = None, None, None
