"""The authorizer's RBAC snapshot: fresh after this hub's writes at once (applied to the objects held,
not read again), after another hub's within MAX_AGE, and not decoded again while nothing changed."""

from __future__ import annotations

import asyncio

import pytest

from control.auth import policystore
from control.bootstrap import cluster_bootstrap
from control.clock import FakeClock
from control.storage import store

pytestmark = pytest.mark.django_db(transaction=True)
ROLES = "rbac.authorization.k8s.io/roles"


def _role(name: str) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": "", "uid": name},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}


@pytest.fixture
def counted(monkeypatch):
    cluster_bootstrap()
    reads = []
    real = policystore.read_objects
    monkeypatch.setattr(policystore, "read_objects", lambda: reads.append(1) or real())
    return reads


def test_an_unchanged_policy_is_read_once_however_long_it_lives(counted):
    clock = FakeClock()
    cache = policystore.PolicyCache(clock)
    for _ in range(5):
        asyncio.run(cache.current())
        clock.t += policystore.MAX_AGE + 1
    assert len(counted) == 1


def test_a_change_through_this_hub_applies_to_the_next_request_without_a_read(counted):
    clock = FakeClock()
    cache = policystore.PolicyCache(clock)
    before = asyncio.run(cache.current())
    store.object_create(resource=ROLES, obj=_role("mine"), actor="test")
    created = asyncio.run(cache.current())
    assert ("default", "mine") in created.roles and ("default", "mine") not in before.roles
    store.object_update(resource=ROLES, namespace="default", name="mine", actor="test",
                        mutate=lambda o: {**o, "rules": []})
    assert asyncio.run(cache.current()).roles[("default", "mine")]["rules"] == []
    store.object_delete(resource=ROLES, namespace="default", name="mine", actor="test")
    assert ("default", "mine") not in asyncio.run(cache.current()).roles
    clock.t += policystore.MAX_AGE + 1  # the objects held match what is stored: no read either
    asyncio.run(cache.current())
    assert len(counted) == 1


def test_the_objects_held_equal_a_fresh_read_after_many_changes(counted):
    cache = policystore.PolicyCache(FakeClock())
    asyncio.run(cache.current())
    for i in range(5):
        store.object_create(resource=ROLES, obj=_role(f"r{i}"), actor="test")
    store.object_delete(resource=ROLES, namespace="default", name="r2", actor="test")
    fresh = policystore.policy_of(policystore.read_objects()[0])
    held = asyncio.run(cache.current())
    assert (held.cluster_roles, held.roles, held.cluster_role_bindings, held.role_bindings) == (
        fresh.cluster_roles, fresh.roles, fresh.cluster_role_bindings, fresh.role_bindings)
    assert policystore.fingerprint_of(cache._objects) == store.fingerprint(list(policystore.RESOURCES))


def test_changes_heard_during_a_read_are_applied_when_newer_than_it(counted, monkeypatch):
    cache = policystore.PolicyCache(FakeClock())
    real = policystore.read_objects

    def read_then_write():
        # the first write lands in the read's snapshot, the second only after it (as a later commit)
        store.object_create(resource=ROLES, obj=_role("before"), actor="test")
        found = real()
        store.object_create(resource=ROLES, obj=_role("after"), actor="test")
        return found

    monkeypatch.setattr(policystore, "read_objects", read_then_write)
    policy = asyncio.run(cache.current())
    assert {("default", "before"), ("default", "after")} <= set(policy.roles)
    assert cache._reads == []


def test_a_change_another_hub_made_is_seen_after_max_age(counted):
    clock = FakeClock()
    cache = policystore.PolicyCache(clock)
    asyncio.run(cache.current())
    store._listeners.remove(cache._changed)  # this process never hears of it: another hub's write
    store.object_create(resource=ROLES, obj=_role("theirs"), actor="other-hub")
    asyncio.run(cache.current())
    assert len(counted) == 1  # within MAX_AGE: the snapshot stands
    clock.t += policystore.MAX_AGE + 0.1
    asyncio.run(cache.current())
    assert len(counted) == 2
    store.object_delete(resource=ROLES, namespace="default", name="theirs", actor="other-hub")
    clock.t += policystore.MAX_AGE + 0.1
    asyncio.run(cache.current())
    assert len(counted) == 3  # a delete changes the fingerprint too


def test_the_fingerprint_moves_with_create_update_and_delete():
    before = store.fingerprint([ROLES])
    store.object_create(resource=ROLES, obj=_role("a"), actor="t")
    created = store.fingerprint([ROLES])
    store.object_update(resource=ROLES, namespace="default", name="a", actor="t",
                        mutate=lambda o: {**o, "rules": []})
    updated = store.fingerprint([ROLES])
    store.object_delete(resource=ROLES, namespace="default", name="a", actor="t")
    deleted = store.fingerprint([ROLES])
    assert len({before, created, updated}) == 3 and deleted != updated
    assert deleted == before  # the same objects as before: the same fingerprint
