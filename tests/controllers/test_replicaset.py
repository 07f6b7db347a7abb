"""The ReplicaSet controller's reconcile against a fake hub: counts, expectations, deletion order,
adoption, status."""

from __future__ import annotations

import re

from control import errors
from control.clock import FakeClock
from control.client.resources import PODS, REPLICASETS
from control.client.runner import Runner
from control.controllers.replicaset import ReplicaSetController, slow_start_batches
from control.kinds.meta import format_time

from .fakes import (
    START, FakeClient, Recorder, fill, informers, observe, pod, quota_refusal, replicaset, run, terminating_refusal, vanish,
)


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


def test_a_refused_create_is_an_event_a_condition_and_a_rate_limited_retry():
    rs = replicaset("web", 3)
    clock = FakeClock(START)
    controller, client = setup(rs, pod("web-a", owners=[rs]), pod("web-b", owners=[rs]), clock=clock)
    controller.recorder = recorder = Recorder()
    refusal = quota_refusal()
    client.fail("create", "pods", refusal)
    runner = Runner("replicaset", controller.reconcile, controller.queue, [])
    result = run(runner.process("default/web"))
    assert result.outcome == "retry" and result.reason == refusal.message
    assert recorder.events == [("web", "Warning", "FailedCreate", f"Error creating: {refusal.message}")]
    status = client.of("replace/status", "replicasets")[-1].body["status"]
    assert status["conditions"] == [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                     "message": refusal.message, "lastTransitionTime": format_time(START)}]
    assert controller.expectations.satisfied("default/web"), "the refused pod is not waited for"
    assert controller.queue.failures("default/web") == 1, "the key went back through the rate limiter"

    async def back_off() -> list[str]:
        await clock.advance(60)  # no pod changed: only the back-off brings the key back
        return [await controller.queue.get()] if len(controller.queue) else []
    assert run(back_off()) == ["default/web"]


def test_the_set_heals_when_the_quota_allows_and_the_condition_goes():
    rs = replicaset("web", 3)
    controller, client = setup(rs, pod("web-a", owners=[rs]), pod("web-b", owners=[rs]))
    client.fail("create", "pods", quota_refusal())
    run(controller.reconcile("default/web"))
    failed = client.of("replace/status", "replicasets")[-1].body
    controller.replicasets.cache.put(failed)  # the cache shows the condition it wrote
    assert run(controller.reconcile("default/web")).outcome == "done", "the quota allows it now"
    assert len(client.of("create", "pods")) == 2
    status = client.of("replace/status", "replicasets")[-1].body["status"]
    assert "conditions" not in status, "a pass without error removes ReplicaFailure"


def test_a_failure_condition_is_kept_as_it_is_while_creates_keep_failing():
    rs = replicaset("web", 3)
    controller, client = setup(rs, pod("web-a", owners=[rs]))
    client.fail("create", "pods", quota_refusal("first"), quota_refusal("second"))
    run(controller.reconcile("default/web"))
    controller.replicasets.cache.put(client.of("replace/status", "replicasets")[-1].body)
    writes = len(client.of("replace/status", "replicasets"))
    assert run(controller.reconcile("default/web")).outcome == "retry"
    assert len(client.of("replace/status", "replicasets")) == writes, "same condition: nothing to write"


def test_a_refused_delete_sets_the_condition_with_reason_failed_delete():
    rs = replicaset("web", 1)
    controller, client = setup(rs, pod("web-a", owners=[rs]), pod("web-b", owners=[rs]))
    client.fail("delete", "pods", errors.Forbidden('pods "web-b" is forbidden: no'))
    assert run(controller.reconcile("default/web")).outcome == "retry"
    condition = client.of("replace/status", "replicasets")[-1].body["status"]["conditions"][0]
    assert (condition["reason"], condition["message"]) == ("FailedDelete", 'pods "web-b" is forbidden: no')


def test_a_terminating_namespace_is_neither_reported_nor_retried():
    rs = replicaset("web", 3)
    controller, client = setup(rs)
    controller.recorder = recorder = Recorder()
    client.fail("create", "pods", terminating_refusal())
    assert run(controller.reconcile("default/web")).outcome == "done"
    assert len(created(client)) == 1, "no more creates after the first refusal"
    assert recorder.events == []
    assert "conditions" not in client.of("replace/status", "replicasets")[-1].body["status"]
    assert controller.expectations.satisfied("default/web")


def test_every_pod_created_or_deleted_is_its_own_event_as_upstreams_pod_control_records():
    rs = replicaset("web", 2)
    controller, client = setup(rs)
    controller.recorder = recorder = Recorder()
    run(controller.reconcile("default/web"))
    created = [e for e in recorder.events if e[2] == "SuccessfulCreate"]
    assert len(created) == 2 and all(e[0] == "web" and re.fullmatch(r"Created pod: web-\S+", e[3]) for e in created)
    assert len({e[3] for e in created}) == 2, "each names its own pod"

    shrunk = replicaset("web", 1)
    controller, client = setup(shrunk, pod("web-a", owners=[shrunk]), pod("web-b", owners=[shrunk]))
    controller.recorder = recorder = Recorder()
    run(controller.reconcile("default/web"))
    deleted = [e for e in recorder.events if e[2] == "SuccessfulDelete"]
    assert len(deleted) == 1 and deleted[0][3] in ("Deleted pod: web-a", "Deleted pod: web-b")
