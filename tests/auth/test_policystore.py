"""The authorizer's RBAC snapshot: fresh after this hub's writes at once, after another hub's within
MAX_AGE, and not decoded again while nothing changed."""

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
    real = policystore.read_policy
    monkeypatch.setattr(policystore, "read_policy", lambda: reads.append(1) or real())
    return reads


def test_an_unchanged_policy_is_read_once_however_long_it_lives(counted):
    clock = FakeClock()
    cache = policystore.PolicyCache(clock)
    for _ in range(5):
        asyncio.run(cache.current())
        clock.t += policystore.MAX_AGE + 1
    assert len(counted) == 1


def test_a_change_through_this_hub_applies_to_the_next_request(counted):
    clock = FakeClock()
    cache = policystore.PolicyCache(clock)
    asyncio.run(cache.current())
    store.object_create(resource=ROLES, obj=_role("mine"), actor="test")
    asyncio.run(cache.current())
    assert len(counted) == 2


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
