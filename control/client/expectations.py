"""Expectations: a controller's memory of creates and deletes it sent but has not yet seen come
back through its informer, so a lagging cache never makes it act twice.

Guarantees (kube-controller-manager's ControllerExpectations): `satisfied(key)` is true when every
expected create/delete was observed, or when the expectations are older than `ttl` (a lost event
must not block a controller forever).
"""

from __future__ import annotations

from dataclasses import dataclass

from control.clock import REAL, Clock


@dataclass
class _Expected:
    adds: int
    deletes: set[str]
    since: float


class Expectations:
    def __init__(self, *, clock: Clock | None = None, ttl: float = 300.0):
        self.clock = clock or REAL
        self.ttl = ttl
        self._by_key: dict[str, _Expected] = {}

    def expect(self, key: str, *, adds: int = 0, deletes: set[str] | None = None) -> None:
        self._by_key[key] = _Expected(adds, set(deletes or ()), self.clock.now())

    def created(self, key: str) -> None:
        expected = self._by_key.get(key)
        if expected and expected.adds > 0:
            expected.adds -= 1

    def create_failed(self, key: str) -> None:
        self.created(key)

    def deleted(self, key: str, uid: str) -> None:
        expected = self._by_key.get(key)
        if expected:
            expected.deletes.discard(uid)

    def satisfied(self, key: str) -> bool:
        expected = self._by_key.get(key)
        if expected is None:
            return True
        if expected.adds <= 0 and not expected.deletes:
            return True
        return self.clock.now() - expected.since > self.ttl

    def forget(self, key: str) -> None:
        self._by_key.pop(key, None)
