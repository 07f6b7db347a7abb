"""The garbage collector's reconcile: background, foreground and orphan deletion, uid-exact owners."""

from __future__ import annotations

import copy

from control.clock import FakeClock
from control.client.resources import DEPLOYMENTS, PODS, REPLICASETS
from control.controllers.garbagecollector import WATCHED, GarbageCollector, item_key
from control.kinds.meta import format_time

from .fakes import START, FakeClient, fill, informers, pod, replicaset, run, vanish
from .test_rollout import deployment


def setup(*objs):
    client, shared = FakeClient(), informers()
    collector = GarbageCollector(client, {r: shared.get(r) for r in WATCHED}, clock=FakeClock(START))
    by_kind = {"Pod": PODS, "ReplicaSet": REPLICASETS, "Deployment": DEPLOYMENTS}
    for obj in objs:
        fill(collector.informers[by_kind[obj["kind"]]], obj)
        client.store(by_kind[obj["kind"]], obj)  # the hub has what the caches hold
    return collector, client


def key(obj):
    resource = {"Pod": PODS, "ReplicaSet": REPLICASETS, "Deployment": DEPLOYMENTS}[obj["kind"]]
    return item_key(resource, obj)


def deleting(obj, *finalizers):
    obj["metadata"].update({"deletionTimestamp": format_time(START), "finalizers": list(finalizers)})
    return obj


def test_a_dependent_whose_owner_is_gone_is_deleted_after_a_live_check():
    d = deployment()
    rs = replicaset("web-1", owners=[d])
    collector, client = setup(rs)
    run(collector.reconcile(key(rs)))
    assert client.summary() == [("delete", "replicasets", "web-1")]
    assert [(a.verb, a.name) for a in client.actions][0] == ("get", "web"), "a cache miss is confirmed with the hub"
    delete = client.of("delete")[0]
    assert delete.options["propagation"] == "Background"
    assert delete.options["preconditions"] == {"uid": "uid-web-1", "resourceVersion": rs["metadata"]["resourceVersion"]}


def test_a_dependent_orphaned_since_the_cache_saw_it_is_not_deleted():
    """`kubectl delete --cascade=orphan`: the owner's collection removed the reference, then the owner
    went; the dependent's cache entry can still show the reference when the owner's deletion arrives."""
    d = deployment()
    rs = replicaset("web-1", owners=[d])
    collector, client = setup(rs)
    orphaned = copy.deepcopy(rs)
    del orphaned["metadata"]["ownerReferences"]
    orphaned["metadata"]["resourceVersion"] = "99"
    client.store(REPLICASETS, orphaned)
    run(collector.reconcile(key(rs)))
    assert client.summary() == [], "the hub's copy has no owner left to judge"
    assert ("get", "web-1") in [(a.verb, a.name) for a in client.actions], "the dependent is read live first"


def test_a_dependent_gone_from_the_hub_is_left_alone():
    d = deployment()
    rs = replicaset("web-1", owners=[d])
    collector, client = setup(rs)
    del client.objects[("replicasets", rs["metadata"].get("namespace", ""), "web-1")]
    run(collector.reconcile(key(rs)))
    assert client.summary() == []


def test_a_live_owner_keeps_its_dependents_even_when_the_cache_lags():
    d = deployment()
    rs = replicaset("web-1", owners=[d])
    collector, client = setup(rs)
    client.store(DEPLOYMENTS, d)
    run(collector.reconcile(key(rs)))
    assert client.summary() == []
    collector, client = setup(d, rs)
    run(collector.reconcile(key(rs)))
    assert client.actions == [], "found in the cache by uid: no request at all"


def test_an_object_with_the_owners_name_but_another_uid_is_not_the_owner():
    d = deployment()
    rs = replicaset("web-1", owners=[d])
    impostor = deployment()
    impostor["metadata"]["uid"] = "someone-else"
    collector, client = setup(impostor, rs)
    client.store(DEPLOYMENTS, impostor)
    run(collector.reconcile(key(rs)))
    assert client.summary() == [("delete", "replicasets", "web-1")]


def test_references_to_gone_owners_are_dropped_while_another_owner_lives():
    live, gone = replicaset("live"), replicaset("gone")
    p = pod("shared", owners=[live, gone])
    collector, client = setup(live, p)
    run(collector.reconcile(key(p)))
    [patch] = client.of("patch", "pods")
    assert [r["uid"] for r in patch.body["metadata"]["ownerReferences"]] == ["uid-live"]
    assert client.of("delete") == []


def test_foreground_deletes_dependents_first_then_lets_the_owner_go():
    d = deleting(deployment(), "foregroundDeletion")
    rs = replicaset("web-1", owners=[d])
    pods = [pod(f"web-1-{i}", owners=[rs]) for i in range(2)]
    collector, client = setup(d, rs, *pods)
    run(collector.reconcile(key(d)))
    assert client.summary() == [("delete", "replicasets", "web-1")]
    assert client.of("delete")[0].options["propagation"] == "Foreground", "it has dependents of its own"
    deleting(rs, "foregroundDeletion")
    fill(collector.informers[REPLICASETS], rs)
    client.actions.clear()
    run(collector.reconcile(key(rs)))
    assert sorted(client.summary()) == [("delete", "pods", "web-1-0"), ("delete", "pods", "web-1-1")]
    assert client.of("patch") == [], "the owner waits while blocking dependents exist"
    vanish(collector.informers[PODS], *pods)
    assert key(rs) in collector.queue._queue, "a dependent's disappearance brings its owner back"
    client.actions.clear()
    run(collector.reconcile(key(rs)))
    [patch] = client.of("patch")
    assert patch.name == "web-1" and patch.body["metadata"]["finalizers"] is None
    assert patch.body["metadata"]["resourceVersion"] == rs["metadata"]["resourceVersion"]


def test_orphan_removes_the_owner_references_then_the_finalizer():
    d = deleting(deployment(), "orphan")
    rs = replicaset("web-1", owners=[d])
    collector, client = setup(d, rs)
    run(collector.reconcile(key(d)))
    assert client.summary() == [("patch", "replicasets", "web-1"), ("patch", "deployments", "web")]
    assert client.actions[0].body["metadata"]["ownerReferences"] is None
    assert client.actions[1].body["metadata"]["finalizers"] is None
    assert client.of("delete") == []


def test_an_owner_going_enqueues_its_dependents():
    d = deployment()
    rs = replicaset("web-1", owners=[d])
    collector, _ = setup(d, rs)
    vanish(collector.informers[DEPLOYMENTS], d)
    assert list(collector.queue._queue) == [key(rs)]


def test_owners_of_kinds_the_hub_does_not_serve_are_not_judged():
    p = pod("custom-owned")
    p["metadata"]["ownerReferences"] = [{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "uid-w"}]
    collector, client = setup(p)
    run(collector.reconcile(key(p)))
    assert client.actions == []


def test_the_pods_of_a_gone_replication_controller_are_collected_and_a_live_ones_kept():
    from control.client.resources import REPLICATIONCONTROLLERS

    from .test_replication import rc

    owner = rc("nginx", 2)
    orphaned, kept = pod("nginx-a", owners=[owner]), pod("nginx-b", owners=[owner])
    collector, client = setup(orphaned)
    assert REPLICATIONCONTROLLERS in collector.informers, "the collector watches replicationcontrollers"
    run(collector.reconcile(key(orphaned)))
    assert client.summary() == [("delete", "pods", "nginx-a")]
    assert client.of("get")[0].name == "nginx", "the RC's absence is confirmed with the hub first"
    collector, client = setup(kept)
    fill(collector.informers[REPLICATIONCONTROLLERS], owner)
    run(collector.reconcile(key(kept)))
    assert client.of("delete") == []
