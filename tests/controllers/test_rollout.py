"""The pure arithmetic of rollouts: fences, hashes, step sizes, proportional scaling, conditions."""

from __future__ import annotations

from control.controllers import rollout
from control.kinds.meta import format_time

from .fakes import START, replicaset, template


def deployment(replicas=4, surge=1, unavailable=1, strategy="RollingUpdate", generation=1, status=None):
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template({"app": "web"}),
            "strategy": {"type": strategy}, "progressDeadlineSeconds": 600}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "uid": "uid-d", "generation": generation,
                         "resourceVersion": "7", "creationTimestamp": format_time(START - 7200)},
            "spec": spec, "status": status or {}}


def test_surge_rounds_up_unavailable_rounds_down_and_both_zero_means_one_unavailable():
    assert rollout.fenceposts(deployment(3, "25%", "25%")) == (1, 0)
    assert rollout.fenceposts(deployment(10, "25%", "25%")) == (3, 2)
    assert rollout.fenceposts(deployment(10, "0%", "0%")) == (0, 1)
    assert rollout.fenceposts(deployment(10, 2, "50%")) == (2, 5)
    assert rollout.max_unavailable(deployment(2, 0, 5)) == 2, "never more than replicas"
    assert rollout.max_surge(deployment(3, strategy="Recreate")) == 0


def test_new_replicaset_grows_up_to_replicas_plus_surge():
    d = deployment(4, surge=1)
    old = replicaset("old", 4)
    assert rollout.new_rs_target(d, [old], 0) == 1
    assert rollout.new_rs_target(d, [replicaset("old", 3), replicaset("new", 1)], 1) == 2
    assert rollout.new_rs_target(d, [replicaset("old", 0), replicaset("new", 1)], 1) == 4
    assert rollout.new_rs_target(deployment(4, strategy="Recreate"), [old], 0) == 4


def test_old_replicasets_shrink_unhealthy_first_and_never_below_min_available():
    d = deployment(4, surge=1, unavailable=1)
    new = replicaset("new", 1, status={"availableReplicas": 0})
    old = replicaset("old", 4, status={"availableReplicas": 4})
    assert rollout.old_scale_down(d, new, [old]) == {"old": 3}
    new_ready = replicaset("new", 2, status={"availableReplicas": 2})
    assert rollout.old_scale_down(d, new_ready, [replicaset("old", 3, status={"availableReplicas": 3})]) == {"old": 1}
    unhealthy = replicaset("old", 3, status={"availableReplicas": 1})
    assert rollout.old_scale_down(d, new_ready, [unhealthy]) == {"old": 1}, "the two broken ones go first"


def test_an_old_replicaset_whose_status_still_counts_a_deleted_pod_is_not_scaled_down_twice():
    d = deployment(4, surge=1, unavailable=1)
    new = replicaset("new", 2, status={"availableReplicas": 1})
    # scaled 4 → 3 a moment ago; its controller has not yet seen the fourth pod go
    stale = replicaset("old", 3, status={"availableReplicas": 4})
    assert rollout.old_scale_down(d, new, [stale]) == {"old": 2}, "3 old + 1 new available: one may go"
    settled = replicaset("old", 3, status={"availableReplicas": 3})
    assert rollout.old_scale_down(d, new, [settled]) == {"old": 2}


def test_scaling_mid_rollout_is_proportional():
    d = deployment(20, surge="25%", unavailable="25%")
    marks = {rollout.DESIRED: "10", rollout.MAX_REPLICAS: "13"}
    old = replicaset("old", 8, annotations=marks, created=START - 100)
    new = replicaset("new", 5, annotations=marks, created=START - 10)
    assert rollout.is_scaling_event(d, [old, new])
    assert rollout.scale_targets(d, new, [old]) == {"old": 15, "new": 10}
    assert rollout.scale_targets(deployment(2), replicaset("new", 5), [replicaset("old", 0)]) == {"new": 2}


def test_conditions_available_progressing_complete_and_timed_out():
    d = deployment(2, generation=3)
    new = replicaset("web-x", 2, status={"replicas": 2, "readyReplicas": 2, "availableReplicas": 2})
    status = rollout.calculate_status(d, {}, [new], new, START, estimate_progress=True)
    assert status["observedGeneration"] == 3 and status["updatedReplicas"] == 2 and status["unavailableReplicas"] == 0
    assert rollout.condition(status, "Available")["reason"] == "MinimumReplicasAvailable"
    assert rollout.condition(status, "Progressing")["reason"] == "NewReplicaSetAvailable"
    assert rollout.complete(d, status)

    stuck = replicaset("web-x", 2, status={"replicas": 2})
    base = {"conditions": [{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                            "lastUpdateTime": format_time(START - 700), "lastTransitionTime": format_time(START - 700)}],
            "replicas": 2, "updatedReplicas": 2}
    status = rollout.calculate_status(d, base, [stuck], stuck, START, estimate_progress=True)
    progressing = rollout.condition(status, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert rollout.condition(status, "Available")["status"] == "False"


def test_a_replicaset_made_new_again_keeps_its_old_revisions_in_the_history():
    annotations = {rollout.REVISION: "1"}
    rollout.advance_revision(annotations, 3)
    assert annotations == {rollout.REVISION: "3", rollout.REVISION_HISTORY: "1"}
    rollout.advance_revision(annotations, 5)
    assert annotations == {rollout.REVISION: "5", rollout.REVISION_HISTORY: "1,3"}
    rollout.advance_revision(annotations, 5)
    rollout.advance_revision(annotations, 4)
    assert annotations == {rollout.REVISION: "5", rollout.REVISION_HISTORY: "1,3"}, "never goes down, nothing twice"


def test_a_fresh_or_unreadable_revision_records_no_history():
    fresh: dict[str, str] = {}
    rollout.advance_revision(fresh, 1)
    assert fresh == {rollout.REVISION: "1"}
    broken = {rollout.REVISION: "x"}
    rollout.advance_revision(broken, 2)
    assert broken == {rollout.REVISION: "x"}, "left alone, as upstream"


def test_the_revision_history_drops_its_oldest_entries_past_the_length_limit():
    annotations = {rollout.REVISION: "7", rollout.REVISION_HISTORY: "1,3,5"}
    rollout.advance_revision(annotations, 9, limit=6)
    assert annotations == {rollout.REVISION: "9", rollout.REVISION_HISTORY: "3,5,7"}
    too_long = {rollout.REVISION: "123456", rollout.REVISION_HISTORY: "1"}
    rollout.advance_revision(too_long, 123457, limit=5)
    assert too_long == {rollout.REVISION: "123457", rollout.REVISION_HISTORY: "1"}, "not appended when it cannot fit"
