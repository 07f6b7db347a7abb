"""The replication manager: the ReplicaSet controller run for ReplicationControllers, against a
fake hub (their plain-map selector, core/v1 owner references, the RC status subresource)."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import PODS, REPLICATIONCONTROLLERS
from control.controllers import replication
from control.controllers.replicaset import ReplicaSetController
from control.kinds.meta import format_time

from .fakes import (
    START, FakeClient, Recorder, fill, informers, metadata, observe, pod, quota_refusal, replicaset, run, template, vanish,
)


def rc(name: str = "web", replicas: int = 3, *, labels: dict | None = None, selector: dict | None = None) -> dict:
    labels = labels or {"app": "web"}
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": metadata(name, labels=labels, generation=1),
            "spec": {"replicas": replicas, "selector": dict(selector if selector is not None else labels),
                     "template": template(labels)},
            "status": {}}


def setup(*objs, clock=None):
    clock = clock or FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    rcs, pods = shared.get(REPLICATIONCONTROLLERS), shared.get(PODS)
    controller = ReplicaSetController(client, rcs, pods, clock=clock, flavor=replication.REPLICATIONCONTROLLER)
    for obj in objs:
        fill(rcs if obj["kind"] == "ReplicationController" else pods, obj)
    return controller, client


def test_missing_replicas_are_created_owned_by_the_rc_through_core_v1():
    owner = rc("nginx", 3, labels={"app": "nginx"})
    controller, client = setup(owner, pod("nginx-a", labels={"app": "nginx"}, owners=[owner]))
    run(controller.reconcile("default/nginx"))
    bodies = [a.body for a in client.of("create", "pods")]
    assert len(bodies) == 2
    for body in bodies:
        assert body["metadata"]["generateName"] == "nginx-"
        assert body["metadata"]["labels"] == {"app": "nginx"}
        assert body["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "ReplicationController",
                                                        "name": "nginx", "uid": "uid-nginx", "controller": True,
                                                        "blockOwnerDeletion": True}]
    writes = client.of("replace/status", "replicationcontrollers")
    assert len(writes) == 1 and writes[0].body["status"]["replicas"] == 1
    assert not client.of("replace/status", "replicasets")


def test_the_plain_map_selector_adopts_matching_orphans_and_ignores_others():
    owner = rc("web", 2, labels={"app": "web", "tier": "front"}, selector={"app": "web"})
    controller, client = setup(owner, pod("orphan", labels={"app": "web"}), pod("other", labels={"app": "db"}))
    client.store(REPLICATIONCONTROLLERS, owner)
    run(controller.reconcile("default/web"))
    patches = {a.name: a.body for a in client.of("patch", "pods")}
    assert set(patches) == {"orphan"}
    assert patches["orphan"]["metadata"]["ownerReferences"][0]["kind"] == "ReplicationController"
    assert len(client.of("create", "pods")) == 1, "the adopted orphan counts"


def test_an_rc_without_a_selector_controls_nothing():
    owner = rc("web", 1, selector={})
    controller, client = setup(owner, pod("orphan"))
    client.store(REPLICATIONCONTROLLERS, owner)
    run(controller.reconcile("default/web"))
    assert not client.of("patch", "pods"), "an empty selector never adopts (it would match every pod)"


def test_scaling_down_deletes_and_a_lagging_cache_never_deletes_twice():
    owner = rc("web", 1)
    pods = [pod(f"web-{i}", owners=[owner], node="n1", phase="Running", ready=True, created=START - 100 + i)
            for i in range(3)]
    controller, client = setup(owner, *pods)
    run(controller.reconcile("default/web"))
    assert sorted(a.name for a in client.of("delete", "pods")) == ["web-1", "web-2"]  # the newest go first
    run(controller.reconcile("default/web"))
    assert len(client.of("delete", "pods")) == 2
    vanish(controller.pods, pods[1], pods[2])
    assert controller.expectations.satisfied("default/web")


def test_pod_events_reach_the_rc_not_a_replicaset_of_the_same_name():
    owner = rc("web", 1)
    same_name = replicaset("web", 1)
    controller, _ = setup(owner)
    observe(controller.pods, pod("by-rs", owners=[same_name]))
    assert len(controller.queue) == 0, "a pod controlled by an apps/v1 ReplicaSet is not the RC's"
    observe(controller.pods, pod("by-rc", owners=[owner]))
    assert len(controller.queue) == 1
    assert controller.owned.owner_key(pod("x", owners=[owner])) == "default/web"
    assert controller.owned.owner_key(pod("y", owners=[same_name])) is None


def test_an_orphan_enqueues_the_rc_whose_map_selects_it():
    owner = rc("web", 1)
    controller, _ = setup(owner)
    observe(controller.pods, pod("stranger", labels={"app": "db"}))
    assert len(controller.queue) == 0
    observe(controller.pods, pod("orphan", labels={"app": "web"}))
    assert len(controller.queue) == 1


def test_status_counts_ready_pods_and_terminating_ones_are_not_counted():
    owner = rc("web", 2)
    controller, client = setup(owner, pod("ready", owners=[owner], phase="Running", ready=True),
                               pod("going", owners=[owner], deleting=format_time(START)))
    run(controller.reconcile("default/web"))
    status = client.of("replace/status", "replicationcontrollers")[0].body["status"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (1, 1, 1)
    assert status["fullyLabeledReplicas"] == 1 and status["observedGeneration"] == 1
    assert len(client.of("create", "pods")) == 1


def test_the_controller_manager_runs_it_under_its_own_name():
    from control.controllers.manager import CONTROLLERS

    assert CONTROLLERS["replicationcontroller"] == "control.controllers.replication"
    runner = replication.build(client=FakeClient(), informers=informers(), clock=FakeClock(START), timings=None,
                               recorder=None)
    assert runner.name == "replicationcontroller"


def test_a_refused_create_is_reported_on_the_rc_and_retried():
    owner = rc("web", 3)
    controller, client = setup(owner, pod("web-a", owners=[owner]))
    controller.recorder = recorder = Recorder()
    refusal = quota_refusal()
    client.fail("create", "pods", refusal)
    assert run(controller.reconcile("default/web")).outcome == "retry"
    assert recorder.events == [("web", "Warning", "FailedCreate", f"Error creating: {refusal.message}")]
    condition = client.of("replace/status", "replicationcontrollers")[-1].body["status"]["conditions"][0]
    assert (condition["type"], condition["reason"]) == ("ReplicaFailure", "FailedCreate")
