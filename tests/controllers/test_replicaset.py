"""The ReplicaSet controller's reconcile against a fake hub: counts, expectations, deletion order,
adoption, status."""

from __future__ import annotations

from control import errors
from control.clock import FakeClock
from control.client.resources import PODS, REPLICASETS
from control.controllers.replicaset import ReplicaSetController, slow_start_batches
from control.kinds.meta import format_time

from .fakes import START, FakeClient, fill, informers, observe, pod, replicaset, run, vanish


def setup(*objs, clock=None):
    clock = clock or FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    rss, pods = shared.get(REPLICASETS), shared.get(PODS)
    controller = ReplicaSetController(client, rss, pods, clock=clock)
    for obj in objs:
        fill(rss if obj["kind"] == "ReplicaSet" else pods, obj)
    return controller, client


def created(client):
    return client.of("create", "pods")


def test_three_replicas_and_one_pod_make_two_pods_from_the_template():
    rs = replicaset("web", 3)
    controller, client = setup(rs, pod("web-a", owners=[rs]))
    run(controller.reconcile("default/web"))
    bodies = [a.body for a in created(client)]
    assert len(bodies) == 2
    for body in bodies:
        assert body["metadata"]["generateName"] == "web-"
        assert body["metadata"]["labels"] == {"app": "web"}
        assert body["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                                        "uid": "uid-web", "controller": True, "blockOwnerDeletion": True}]
        assert body["spec"] == rs["spec"]["template"]["spec"]
    status = client.of("replace/status", "replicasets")[0].body["status"]
    assert status["replicas"] == 1 and status["observedGeneration"] == 1


def test_a_lagging_cache_never_makes_it_create_twice():
    rs = replicaset("web", 3)
    controller, client = setup(rs)
    run(controller.reconcile("default/web"))
    assert len(created(client)) == 3
    run(controller.reconcile("default/web"))  # the cache has not seen the pods yet
    assert len(created(client)) == 3, "expectations hold back a second round of creates"
    observe(controller.pods, *(pod(f"web-{i}", owners=[rs]) for i in range(2)))
    run(controller.reconcile("default/web"))
    assert len(created(client)) == 3, "still one create outstanding"
    observe(controller.pods, pod("web-2", owners=[rs]))
    run(controller.reconcile("default/web"))
    assert len(created(client)) == 3, "all three seen: nothing to do"


def test_expectations_expire_so_a_lost_event_cannot_block_forever():
    clock = FakeClock(START)
    rs = replicaset("web", 2)
    controller, client = setup(rs, clock=clock)
    run(controller.reconcile("default/web"))
    clock.t += 301
    run(controller.reconcile("default/web"))
    assert len(created(client)) == 4


def test_creates_go_out_in_slow_start_batches_and_stop_at_the_first_failure():
    assert slow_start_batches(10) == [1, 2, 4, 3]
    rs = replicaset("web", 10)
    controller, client = setup(rs)
    client.fail("create", "pods", errors.InternalError("boom"))
    result = run(controller.reconcile("default/web"))
    assert result.outcome == "retry"
    assert len(created(client)) == 1, "the first batch (of one) failed, nothing more was sent"
    assert controller.expectations.satisfied("default/web"), "unsent creates are not waited for"
    run(controller.reconcile("default/web"))
    assert len(created(client)) == 11


def test_scale_down_deletes_unscheduled_pending_unready_restarted_newer_first():
    rs = replicaset("web", 1)
    old = START - 5000
    pods = [
        pod("ready-old", owners=[rs], node="n1", phase="Running", ready=True, created=old),
        pod("ready-new", owners=[rs], node="n1", phase="Running", ready=True, created=old + 100),
        pod("restarted", owners=[rs], node="n1", phase="Running", ready=True, restarts=5, created=old),
        pod("unready", owners=[rs], node="n1", phase="Running", ready=False, created=old),
        pod("pending", owners=[rs], node="n1", phase="Pending", created=old),
        pod("unscheduled", owners=[rs], phase="Pending", created=old),
    ]
    controller, client = setup(rs, *pods)
    run(controller.reconcile("default/web"))
    deleted = [a.name for a in client.of("delete", "pods")]
    assert deleted == ["unscheduled", "pending", "unready", "restarted", "ready-new"]
    assert all(a.options["preconditions"] == {"uid": f"uid-{a.name}"} for a in client.of("delete", "pods"))
    run(controller.reconcile("default/web"))
    assert len(client.of("delete", "pods")) == 5, "deletes not yet observed are not sent again"
    vanish(controller.pods, *[p for p in pods if p["metadata"]["name"] != "ready-old"])
    assert controller.expectations.satisfied("default/web")


def test_terminating_and_finished_pods_are_not_counted():
    rs = replicaset("web", 2)
    controller, client = setup(rs, pod("going", owners=[rs], deleting=format_time(START)),
                               pod("done", owners=[rs], phase="Succeeded"), pod("alive", owners=[rs]))
    run(controller.reconcile("default/web"))
    assert len(created(client)) == 1


def test_matching_orphans_are_adopted_and_strays_released():
    rs = replicaset("web", 2)
    stray = pod("stray", owners=[rs], labels={"app": "other"})
    controller, client = setup(rs, pod("orphan"), stray, pod("foreign", labels={"app": "web"}, owners=[replicaset("x")]))
    client.store(REPLICASETS, rs)
    run(controller.reconcile("default/web"))
    patches = {a.name: a.body for a in client.of("patch", "pods")}
    assert set(patches) == {"orphan", "stray"}
    assert patches["orphan"]["metadata"]["ownerReferences"][0]["uid"] == "uid-web"
    assert patches["orphan"]["metadata"]["resourceVersion"] == controller.pods.cache.get("default/orphan")["metadata"]["resourceVersion"]
    assert patches["stray"]["metadata"]["ownerReferences"] is None
    assert len(created(client)) == 1, "the adopted orphan counts; the stray and the foreign pod do not"


def test_no_adoption_when_the_replicaset_was_replaced():
    rs = replicaset("web", 1)
    controller, client = setup(rs, pod("orphan"))
    replacement = replicaset("web", 1)
    replacement["metadata"]["uid"] = "a-new-uid"
    client.store(REPLICASETS, replacement)
    run(controller.reconcile("default/web"))
    assert client.of("patch") == [] and created(client) == []


def test_status_counts_ready_and_available_and_is_written_only_when_changed():
    rs = replicaset("web", 3, min_ready=10, generation=4)
    pods = [pod("a", owners=[rs], ready=True, ready_since=START - 60), pod("b", owners=[rs], ready=True, ready_since=START - 4),
            pod("c", owners=[rs], labels={"app": "web", "extra": "1"})]
    controller, client = setup(rs, *pods)
    result = run(controller.reconcile("default/web"))
    status = client.of("replace/status")[0].body["status"]
    assert status == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 1,
                      "observedGeneration": 4}
    assert result.outcome == "requeue_after" and 6 <= result.after <= 7, "wakes when b has been ready 10 s"
    rs["status"] = status
    fill(controller.replicasets, rs)
    client.actions.clear()
    run(controller.reconcile("default/web"))
    assert client.of("replace/status") == []


def test_a_conflict_on_status_is_left_to_the_runner():
    rs = replicaset("web", 0)
    controller, client = setup(rs)
    client.fail("replace/status", "replicasets", errors.conflict("apps/replicasets", "web"))
    try:
        run(controller.reconcile("default/web"))
    except errors.Conflict:
        pass
    else:
        raise AssertionError("the 409 must reach the runner (which retries with backoff)")


def test_a_deleted_replicaset_forgets_its_expectations():
    rs = replicaset("web", 2)
    controller, client = setup(rs)
    run(controller.reconcile("default/web"))
    vanish(controller.replicasets, rs)
    assert controller.expectations.satisfied("default/web")
    assert run(controller.reconcile("default/web")).outcome == "done"
