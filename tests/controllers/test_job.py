"""The Job controller's and the TTL-after-finished controller's reconcile against a fake hub:
pods up to parallelism, Indexed pods, back-off, backoffLimit, deadline, suspend, completion
conditions in v1.32's order, status counts, and deleting finished Jobs after their TTL."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import JOBS, PODS
from control.controllers.job import JobController
from control.controllers.jobpods import index_ranges, new_pod
from control.controllers.ttlafterfinished import TTLAfterFinishedController
from control.kinds.meta import format_time

from .fakes import START, FakeClient, Recorder, fill, informers, metadata, observe, quota_refusal, ref, run, terminating_refusal

UID_LABEL = "batch.kubernetes.io/controller-uid"


def job(name: str = "pi", *, completions: int | None = 1, parallelism: int = 1, backoff: int = 6,
        mode: str = "NonIndexed", restart: str = "Never", suspend: bool = False, status: dict | None = None,
        **spec) -> dict:
    labels = {UID_LABEL: f"uid-{name}", "batch.kubernetes.io/job-name": name}
    body = {"parallelism": parallelism, "backoffLimit": backoff, "completionMode": mode, "suspend": suspend,
            "selector": {"matchLabels": {UID_LABEL: f"uid-{name}"}},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["echo", "hi"]}],
                                  "restartPolicy": restart}}, **spec}
    if completions is not None:
        body["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata(name, labels=labels, generation=1),
            "spec": body, "status": status or {}}


def job_pod(owner: dict, name: str, phase: str = "Running", *, index: int | None = None, ended: float | None = None,
            restarts: int = 0, ready: bool = False, deleting: bool = False) -> dict:
    labels = dict(owner["spec"]["template"]["metadata"]["labels"])
    extra: dict = {}
    if index is not None:
        extra["annotations"] = {"batch.kubernetes.io/job-completion-index": str(index)}
    if deleting:
        extra["deletionTimestamp"] = format_time(START)
    state = {"terminated": {"exitCode": 0 if phase == "Succeeded" else 1, "finishedAt": format_time(ended or START - 60)}} \
        if phase in ("Succeeded", "Failed") else {"running": {}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata(name, labels=labels, owners=[owner], **extra),
            "spec": owner["spec"]["template"]["spec"],
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "containerStatuses": [{"name": "c", "restartCount": restarts, "state": state}]}}


def setup(*objs, clock=None):
    clock = clock or FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    jobs, pods = shared.get(JOBS), shared.get(PODS)
    controller = JobController(client, jobs, pods, clock=clock)
    for obj in objs:
        fill(jobs if obj["kind"] == "Job" else pods, obj)
    return controller, client


def status_written(client) -> dict:
    return client.of("replace/status", "jobs")[-1].body["status"]


def conditions(status: dict) -> list[tuple[str, str, str]]:
    return [(c["type"], c["status"], c.get("reason", "")) for c in status.get("conditions") or []]


def test_creates_parallelism_pods_from_the_template_and_starts_the_clock():
    j = job(completions=5, parallelism=2)
    controller, client = setup(j)
    run(controller.reconcile("default/pi"))
    bodies = [a.body for a in client.of("create", "pods")]
    assert len(bodies) == 2
    assert bodies[0]["metadata"]["generateName"] == "pi-"
    assert bodies[0]["metadata"]["ownerReferences"] == [ref(j)]
    assert bodies[0]["metadata"]["labels"] == j["spec"]["template"]["metadata"]["labels"]
    assert bodies[0]["spec"] == j["spec"]["template"]["spec"]
    status = status_written(client)
    assert status["startTime"] == format_time(START) and status["uncountedTerminatedPods"] == {}
    assert status["ready"] == 0 and status["terminating"] == 0 and "active" not in status


def test_never_more_pods_than_the_completions_still_missing_nor_twice_on_a_lagging_cache():
    j = job(completions=3, parallelism=5)
    controller, client = setup(j, job_pod(j, "a", "Succeeded"))
    run(controller.reconcile("default/pi"))
    assert len(client.of("create", "pods")) == 2
    run(controller.reconcile("default/pi"))
    assert len(client.of("create", "pods")) == 2, "expectations hold back a second round"


def test_counts_by_phase_in_the_status():
    j = job(completions=4, parallelism=2)
    controller, client = setup(j, job_pod(j, "a", "Succeeded"), job_pod(j, "b", "Running", ready=True),
                               job_pod(j, "c", "Running", deleting=True), job_pod(j, "d", "Failed", ended=START - 600))
    run(controller.reconcile("default/pi"))
    status = status_written(client)
    assert (status["active"], status["ready"], status["terminating"], status["succeeded"], status["failed"]) == \
        (1, 1, 1, 1, 1)


def test_completion_sets_success_criteria_met_then_complete_with_completion_time():
    j = job(completions=2, parallelism=2, status={"startTime": format_time(START - 30)})
    controller, client = setup(j, job_pod(j, "a", "Succeeded"), job_pod(j, "b", "Succeeded"))
    run(controller.reconcile("default/pi"))
    status = status_written(client)
    assert conditions(status) == [("SuccessCriteriaMet", "True", "CompletionsReached"),
                                  ("Complete", "True", "CompletionsReached")]
    assert status["completionTime"] == format_time(START) and status["succeeded"] == 2
    assert status["conditions"][1]["message"] == "Reached expected number of succeeded pods"
    assert not client.of("create", "pods")


def test_a_finished_job_is_left_alone():
    j = job(status={"conditions": [{"type": "Complete", "status": "True"}]})
    controller, client = setup(j)
    run(controller.reconcile("default/pi"))
    assert client.summary() == []


def test_a_work_queue_job_completes_when_one_succeeded_and_none_runs():
    j = job(completions=None, parallelism=3)
    controller, client = setup(j, job_pod(j, "a", "Succeeded"), job_pod(j, "b", "Running"))
    run(controller.reconcile("default/pi"))
    assert not client.of("create", "pods") and "Complete" not in str(status_written(client))
    controller, client = setup(j, job_pod(j, "a", "Succeeded"))
    run(controller.reconcile("default/pi"))
    assert ("Complete", "True", "CompletionsReached") in conditions(status_written(client))


def test_indexed_pods_carry_their_index_and_completed_indexes_are_compressed():
    j = job(completions=5, parallelism=2, mode="Indexed")
    controller, client = setup(j, job_pod(j, "p0", "Succeeded", index=0), job_pod(j, "p2", "Succeeded", index=2),
                               job_pod(j, "p1", "Running", index=1))
    run(controller.reconcile("default/pi"))
    [body] = [a.body for a in client.of("create", "pods")]
    assert body["metadata"]["generateName"] == "pi-3-"
    assert body["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "3"
    assert body["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "3"
    assert body["spec"]["hostname"] == "pi-3"
    assert body["spec"]["containers"][0]["env"] == [{"name": "JOB_COMPLETION_INDEX", "value": "3"}]
    assert status_written(client)["completedIndexes"] == "0,2"
    assert index_ranges({0, 1, 2, 4, 6, 7}) == "0-2,4,6-7"


def test_a_failed_pod_delays_the_next_one_with_exponential_back_off():
    clock = FakeClock(START)
    j = job(completions=1)
    controller, client = setup(j, job_pod(j, "f1", "Failed", ended=START - 5), clock=clock)
    result = run(controller.reconcile("default/pi"))
    assert not client.of("create", "pods") and result.outcome == "requeue_after" and abs(result.after - 5) < 0.01
    controller, client = setup(j, job_pod(j, "f1", "Failed", ended=START - 100),
                               job_pod(j, "f2", "Failed", ended=START - 15), clock=clock)
    result = run(controller.reconcile("default/pi"))
    assert not client.of("create", "pods") and abs(result.after - 5) < 0.01, "two failures: 20 s after the last"
    clock.t += 6
    controller.wakeups.forget("default/pi")
    run(controller.reconcile("default/pi"))
    assert len(client.of("create", "pods")) == 1


def test_back_off_is_capped_at_six_minutes():
    j = job(completions=1, backoff=20)
    failed = [job_pod(j, f"f{i}", "Failed", ended=START - 1000 + i) for i in range(10)]
    controller, client = setup(j, *failed)
    run(controller.reconcile("default/pi"))
    assert len(client.of("create", "pods")) == 1, "the last failure was 991 s ago: past the 360 s cap"


def test_more_failures_than_backoff_limit_fail_the_job_after_its_pods_are_gone():
    j = job(completions=3, parallelism=2, backoff=1)
    running = job_pod(j, "r", "Running")
    controller, client = setup(j, job_pod(j, "f1", "Failed"), job_pod(j, "f2", "Failed"), running)
    run(controller.reconcile("default/pi"))
    assert [a.name for a in client.of("delete", "pods")] == ["r"]
    status = status_written(client)
    assert conditions(status) == [("FailureTarget", "True", "BackoffLimitExceeded")]
    assert status["conditions"][0]["message"] == "Job has reached the specified backoff limit"
    j2 = job(completions=3, parallelism=2, backoff=1, status=status)
    controller, client = setup(j2, job_pod(j2, "f1", "Failed"), job_pod(j2, "f2", "Failed"))
    run(controller.reconcile("default/pi"))
    assert conditions(status_written(client)) == [("FailureTarget", "True", "BackoffLimitExceeded"),
                                                  ("Failed", "True", "BackoffLimitExceeded")]
    assert "completionTime" not in status_written(client)


def test_restarts_count_against_the_limit_with_on_failure():
    j = job(restart="OnFailure", backoff=2)
    controller, client = setup(j, job_pod(j, "r", "Running", restarts=2))
    run(controller.reconcile("default/pi"))
    assert conditions(status_written(client)) == [("FailureTarget", "True", "BackoffLimitExceeded")]


def test_active_deadline_fails_the_job_and_deletes_its_pods():
    j = job(activeDeadlineSeconds=30, status={"startTime": format_time(START - 31)})
    controller, client = setup(j, job_pod(j, "r", "Running"))
    run(controller.reconcile("default/pi"))
    assert [a.name for a in client.of("delete", "pods")] == ["r"]
    assert conditions(status_written(client)) == [("FailureTarget", "True", "DeadlineExceeded")]


def test_a_running_job_looks_again_at_its_deadline():
    j = job(activeDeadlineSeconds=30, status={"startTime": format_time(START - 10)})
    controller, client = setup(j)
    result = run(controller.reconcile("default/pi"))
    assert result.outcome == "requeue_after" and abs(result.after - 20.5) < 0.01


def test_suspend_deletes_active_pods_and_resume_restarts_the_clock():
    j = job(suspend=True, status={"startTime": format_time(START - 100)})
    controller, client = setup(j, job_pod(j, "r", "Running"))
    run(controller.reconcile("default/pi"))
    assert [a.name for a in client.of("delete", "pods")] == ["r"] and not client.of("create", "pods")
    status = status_written(client)
    assert conditions(status) == [("Suspended", "True", "JobSuspended")]
    resumed = job(status=status)
    controller, client = setup(resumed)
    run(controller.reconcile("default/pi"))
    assert conditions(status_written(client)) == [("Suspended", "False", "JobResumed")]
    assert status_written(client)["startTime"] == format_time(START) and len(client.of("create", "pods")) == 1


def test_a_job_suspended_at_creation_has_no_start_time():
    controller, client = setup(job(suspend=True))
    run(controller.reconcile("default/pi"))
    assert "startTime" not in status_written(client) and not client.of("create", "pods")


def test_lowering_parallelism_deletes_the_extra_pods():
    j = job(completions=10, parallelism=1)
    controller, client = setup(j, job_pod(j, "a", "Running"), job_pod(j, "b", "Pending"))
    run(controller.reconcile("default/pi"))
    assert [a.name for a in client.of("delete", "pods")] == ["b"]


def test_pod_events_wake_the_owning_job():
    j = job()
    controller, _ = setup(j)
    assert len(controller.queue) == 0
    observe(controller.pods, job_pod(j, "a", "Succeeded"))
    assert len(controller.queue) == 1


def test_new_pod_leaves_the_template_untouched():
    j = job(mode="Indexed", completions=2)
    before = str(j)
    new_pod(j, 1)
    assert str(j) == before


# --- ttl after finished ---------------------------------------------------------------------------

def ttl_setup(*jobs, clock):
    client, shared = FakeClient(), informers(clock)
    informer = shared.get(JOBS)
    for obj in jobs:
        fill(informer, obj)
    return TTLAfterFinishedController(client, informer, clock=clock), client


def finished_job(ttl: int | None, done_at: float) -> dict:
    return job(ttlSecondsAfterFinished=ttl, status={
        "completionTime": format_time(done_at), "conditions": [{"type": "Complete", "status": "True",
                                                          "lastTransitionTime": format_time(done_at)}]})


def test_ttl_waits_then_deletes_in_background_with_a_uid_precondition():
    clock = FakeClock(START)
    controller, client = ttl_setup(finished_job(60, START - 20), clock=clock)
    result = run(controller.reconcile("default/pi"))
    assert result.outcome == "requeue_after" and abs(result.after - 40) < 0.01 and not client.of("delete")
    clock.t += 41
    run(controller.reconcile("default/pi"))
    [action] = client.of("delete", "jobs")
    assert action.options["propagation"] == "Background" and action.options["preconditions"] == {"uid": "uid-pi"}


def test_ttl_ignores_running_jobs_and_jobs_without_the_field():
    clock = FakeClock(START)
    controller, client = ttl_setup(job(ttlSecondsAfterFinished=0), clock=clock)
    run(controller.reconcile("default/pi"))
    controller2, client2 = ttl_setup(finished_job(None, START - 1000), clock=clock)
    run(controller2.reconcile("default/pi"))
    assert not client.of("delete") and not client2.of("delete")


def test_ttl_of_a_failed_job_counts_from_the_failed_condition():
    clock = FakeClock(START)
    failed = job(ttlSecondsAfterFinished=0, status={"conditions": [
        {"type": "Failed", "status": "True", "lastTransitionTime": format_time(START - 1)}]})
    controller, client = ttl_setup(failed, clock=clock)
    run(controller.reconcile("default/pi"))
    assert [a.name for a in client.of("delete", "jobs")] == ["pi"]


def test_a_job_at_full_parallelism_still_looks_again_at_its_deadline():
    j = job(completions=2, parallelism=1, activeDeadlineSeconds=30, status={"startTime": format_time(START - 20)})
    controller, client = setup(j, job_pod(j, "r", "Running"))
    result = run(controller.reconcile("default/pi"))
    assert not client.of("create", "pods") and result.outcome == "requeue_after" and abs(result.after - 10.5) < 0.01


def test_back_off_and_deadline_wake_at_whichever_comes_first():
    j = job(activeDeadlineSeconds=30, status={"startTime": format_time(START - 27)})
    controller, client = setup(j, job_pod(j, "f1", "Failed", ended=START - 1))
    result = run(controller.reconcile("default/pi"))
    assert not client.of("create", "pods") and abs(result.after - 3.5) < 0.01


def failed_with(owner: dict, name: str, code: int, *, conditions: list | None = None) -> dict:
    pod = job_pod(owner, name, "Failed")
    pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] = code
    pod["status"]["conditions"] += conditions or []
    return pod


def test_pod_failure_policy_fail_job_ignore_and_count():
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
                        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}}]}
    j = job(backoff=0, podFailurePolicy=policy)
    controller, client = setup(j, failed_with(j, "evicted", 1, conditions=[{"type": "DisruptionTarget",
                                                                            "status": "True"}]))
    run(controller.reconcile("default/pi"))
    status = status_written(client)
    assert "failed" not in status and not conditions(status), "an ignored failure does not count"
    assert len(client.of("create", "pods")) == 1, "nor does it delay the next pod"
    controller, client = setup(j, failed_with(j, "answer", 42))
    run(controller.reconcile("default/pi"))
    status = status_written(client)
    assert conditions(status) == [("FailureTarget", "True", "PodFailurePolicy"),
                                  ("Failed", "True", "PodFailurePolicy")]
    assert status["conditions"][1]["message"] == ("Container c for pod default/answer failed with exit code 42 "
                                                  "matching FailJob rule at index 0")
    controller, client = setup(j, failed_with(j, "plain", 3))
    run(controller.reconcile("default/pi"))
    assert conditions(status_written(client))[-1] == ("Failed", "True", "BackoffLimitExceeded")


def test_a_refused_create_is_a_failed_create_event_and_a_retry():
    j = job(completions=3, parallelism=2)
    controller, client = setup(j)
    controller.recorder = recorder = Recorder()
    refusal = quota_refusal("pi-x")
    client.fail("create", "pods", refusal)
    result = run(controller.reconcile("default/pi"))
    assert result.outcome == "retry"
    assert len(client.of("create", "pods")) == 1, "slow start: the first create failed, the second was not sent"
    assert recorder.events == [("pi", "Warning", "FailedCreate", f"Error creating: {refusal.message}")]
    assert controller.expectations.satisfied("default/pi")
    assert "startTime" in status_written(client), "status is written on a failed pass too"


def test_a_terminating_namespace_stops_the_job_creating_quietly():
    controller, client = setup(job(completions=3, parallelism=2))
    controller.recorder = recorder = Recorder()
    client.fail("create", "pods", terminating_refusal())
    assert run(controller.reconcile("default/pi")).outcome != "retry"
    assert recorder.events == []
