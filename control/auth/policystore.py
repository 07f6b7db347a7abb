"""The RBAC objects the authorizer evaluates, read from the store and kept in memory.

Guarantees: `current()` answers from memory; the snapshot is read again (on the database thread)
after any commit of this process touches an RBAC resource (a store listener), and when, `MAX_AGE`
seconds after it was read, the RBAC objects' fingerprint (`store.fingerprint`: count and newest
revision) differs from the one read with it (another hub on the same PostgreSQL may have changed
them), so a RoleBinding created through this hub applies to the very next request. An unchanged
policy costs one small query every `MAX_AGE`, not a decode of every role and binding.
"""

from __future__ import annotations

import json
import threading

from control.auth.rbac import Policy
from control.clock import REAL, Clock
from control.storage import store
from control.storage.db import run_db

GROUP = "rbac.authorization.k8s.io"
RESOURCES = (f"{GROUP}/clusterroles", f"{GROUP}/roles", f"{GROUP}/clusterrolebindings", f"{GROUP}/rolebindings")
MAX_AGE = 2.0


def read_policy() -> Policy:
    """The stored RBAC objects (database thread)."""
    loaded = [[json.loads(body) for body in store.object_list(resource=resource)[0]] for resource in RESOURCES]
    return Policy.of(*loaded)


def _fingerprint() -> tuple[int, int]:
    return store.fingerprint(list(RESOURCES))


def _read_with_fingerprint() -> tuple[Policy, tuple[int, int]]:
    """The fingerprint first: a change landing between the two is seen as a change next time."""
    mark = _fingerprint()
    return read_policy(), mark


class PolicyCache:
    def __init__(self, clock: Clock = REAL):
        self.clock = clock
        self._policy: Policy | None = None
        self._read_at = 0.0
        self._generation = 0
        self._lock = threading.Lock()
        store.subscribe(self._changed)

    def _changed(self, changes: list[store.Change]) -> None:
        if any(change.resource in RESOURCES for change in changes):
            with self._lock:
                self._generation += 1

    async def current(self) -> Policy:
        now = self.clock.monotonic()
        with self._lock:
            fresh = self._policy is not None and now - self._read_at < MAX_AGE
            generation = self._generation
        if self._policy is not None and self._policy_generation == generation:
            if fresh:
                return self._policy
            if await run_db(_fingerprint) == self._mark:
                with self._lock:
                    self._read_at = now
                return self._policy
        policy, mark = await run_db(_read_with_fingerprint)
        with self._lock:
            self._policy, self._read_at, self._policy_generation, self._mark = policy, now, generation, mark
        return policy

    _policy_generation = -1
    _mark: tuple[int, int] = (-1, -1)


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
            _cache._policy, _cache._generation = None, _cache._generation + 1
