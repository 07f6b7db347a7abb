"""Pod events to owner keys (control/controllers/owned.py): the controlling owner only, or every
matching owner for an orphan; expectations hear of creations and deletions."""

from __future__ import annotations

from control.client.expectations import Expectations
from control.client.resources import PODS, REPLICASETS
from control.clock import FakeClock
from control.controllers.owned import PodsOfOwner

from .fakes import START, fill, informers, pod, replicaset


def wired():
    shared, keys = informers(), []
    expectations = Expectations(clock=FakeClock(START))
    owned = PodsOfOwner("ReplicaSet", "apps", shared.get(REPLICASETS), keys.append, expectations)
    shared.get(PODS).add_handlers(owned.handlers())
    return shared, owned, keys, expectations


def test_a_controlled_pod_enqueues_its_owner_only_and_counts_as_an_expected_creation():
    shared, owned, keys, expectations = wired()
    web, other = replicaset("web"), replicaset("other")
    fill(shared.get(REPLICASETS), web, other)
    expectations.expect("default/web", adds=1)
    owned.added(pod("web-1", owners=[web]))
    assert keys == ["default/web"] and expectations.satisfied("default/web")


def test_an_orphan_enqueues_every_owner_whose_selector_matches_it():
    shared, owned, keys, _ = wired()
    fill(shared.get(REPLICASETS), replicaset("web"), replicaset("web-canary"), replicaset("db", labels={"app": "db"}))
    owned.added(pod("stray"))
    assert sorted(keys) == ["default/web", "default/web-canary"]


def test_an_orphan_being_deleted_enqueues_nobody():
    shared, owned, keys, _ = wired()
    fill(shared.get(REPLICASETS), replicaset("web"))
    owned.added(pod("stray", deleting="2027-01-15T08:00:00Z"))
    assert keys == []


def test_a_pod_that_changes_owner_enqueues_the_old_and_the_new_one():
    shared, owned, keys, _ = wired()
    web, other = replicaset("web"), replicaset("other", labels={"app": "other"})
    fill(shared.get(REPLICASETS), web, other)
    owned.updated(pod("p", owners=[web]), pod("p", owners=[other], labels={"app": "other"}))
    assert keys == ["default/web", "default/other"]


def test_a_deletion_is_counted_for_the_owner():
    shared, owned, keys, expectations = wired()
    web = replicaset("web")
    fill(shared.get(REPLICASETS), web)
    gone = pod("web-1", owners=[web])
    expectations.expect("default/web", deletes={gone["metadata"]["uid"]})
    owned.deleted(gone)
    assert keys == ["default/web"] and expectations.satisfied("default/web")


def test_a_pod_of_another_kind_of_owner_is_not_ours():
    _, owned, _, _ = wired()
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "uid": "u"}}
    assert owned.owner_key(pod("j-1", owners=[job])) is None
