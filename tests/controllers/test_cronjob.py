"""The CronJob controller's reconcile against a fake hub on a fake clock: a Job per scheduled time,
named by the minute; the most recent missed time only; startingDeadlineSeconds; Allow, Forbid and
Replace; suspend; status.active and lastScheduleTime; history limits; the next look timed."""

from __future__ import annotations

from control import errors
from control.clock import FakeClock
from control.client.resources import CRONJOBS, JOBS
from control.controllers.cronjob import SCHEDULED_ANNOTATION, CronJobController, most_recent_time
from control.kinds.cron import parse
from control.kinds.meta import format_time

from .fakes import FakeClient, fill, informers, metadata, observe, ref, run

T0 = 1767225600.0  # 2026-01-01T00:00:00Z
NOW = T0 + 3600 + 30  # 01:00:30


def cronjob(name: str = "tick", *, schedule: str = "*/1 * * * *", status: dict | None = None,
            created: float = T0, **spec) -> dict:
    body = {"schedule": schedule, "concurrencyPolicy": "Allow", "suspend": False,
            "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
            "jobTemplate": {"metadata": {"labels": {"team": "a"}},
                            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}],
                                                           "restartPolicy": "OnFailure"}}}}, **spec}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": metadata(name, created=created),
            "spec": body, "status": status or {}}


def owned_job(owner: dict, name: str, *, done: str | None = None, finished_at: float = T0) -> dict:
    status = {}
    if done:
        status = {"conditions": [{"type": done, "status": "True"}]}
        if done == "Complete":
            status["completionTime"] = format_time(finished_at)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata(name, owners=[owner], created=finished_at),
            "spec": {}, "status": status}


def setup(*objs, now: float = NOW):
    clock = FakeClock(now)
    client, shared = FakeClient(), informers(clock)
    cronjobs, jobs = shared.get(CRONJOBS), shared.get(JOBS)
    controller = CronJobController(client, cronjobs, jobs, clock=clock)
    for obj in objs:
        fill(cronjobs if obj["kind"] == "CronJob" else jobs, obj)
    return controller, client


def status_written(client) -> dict:
    return client.of("replace/status", "cronjobs")[-1].body["status"]


def test_creates_one_job_for_the_most_recent_time_named_by_its_minute():
    cj = cronjob()
    controller, client = setup(cj)
    result = run(controller.reconcile("default/tick"))
    [action] = client.of("create", "jobs")
    job = action.body
    assert job["metadata"]["name"] == f"tick-{int((T0 + 3600) // 60)}"
    assert job["metadata"]["labels"] == {"team": "a"}
    assert job["metadata"]["annotations"][SCHEDULED_ANNOTATION] == "2026-01-01T01:00:00Z"
    assert job["metadata"]["ownerReferences"] == [ref(cj)]
    assert job["spec"] == cj["spec"]["jobTemplate"]["spec"]
    status = status_written(client)
    assert status["lastScheduleTime"] == "2026-01-01T01:00:00Z"
    assert [r["name"] for r in status["active"]] == [job["metadata"]["name"]]
    assert result.outcome == "requeue_after" and abs(result.after - 30.1) < 0.01


def test_a_time_already_run_is_not_run_again():
    cj = cronjob(status={"lastScheduleTime": format_time(T0 + 3600)})
    controller, client = setup(cj)
    run(controller.reconcile("default/tick"))
    assert not client.of("create", "jobs")


def test_already_exists_counts_as_done():
    controller, client = setup(cronjob())
    client.fail("create", "jobs", errors.AlreadyExists("exists"))
    run(controller.reconcile("default/tick"))
    assert status_written(client)["lastScheduleTime"] == "2026-01-01T01:00:00Z"


def test_starting_deadline_skips_a_time_too_long_ago():
    cj = cronjob(schedule="0 * * * *", startingDeadlineSeconds=10)
    controller, client = setup(cj)
    run(controller.reconcile("default/tick"))
    assert not client.of("create", "jobs")
    controller, client = setup(cronjob(schedule="0 * * * *", startingDeadlineSeconds=60))
    run(controller.reconcile("default/tick"))
    assert len(client.of("create", "jobs")) == 1


def test_forbid_waits_for_the_active_job_and_replace_deletes_it():
    cj = cronjob(concurrencyPolicy="Forbid")
    controller, client = setup(cj, owned_job(cj, "tick-old"))
    run(controller.reconcile("default/tick"))
    assert not client.of("create", "jobs")
    cj = cronjob(concurrencyPolicy="Replace")
    controller, client = setup(cj, owned_job(cj, "tick-old"))
    run(controller.reconcile("default/tick"))
    assert [(a.verb, a.name) for a in client.actions if a.verb in ("delete", "create")] == \
        [("delete", "tick-old"), ("create", f"tick-{int((T0 + 3600) // 60)}")]
    assert client.of("delete", "jobs")[0].options["propagation"] == "Background"
    cj = cronjob()
    controller, client = setup(cj, owned_job(cj, "tick-old"))
    run(controller.reconcile("default/tick"))
    assert len(client.of("create", "jobs")) == 1 and len(status_written(client)["active"]) == 2


def test_suspended_creates_nothing_but_keeps_its_status():
    cj = cronjob(suspend=True)
    controller, client = setup(cj, owned_job(cj, "tick-1", done="Complete", finished_at=T0 + 60))
    run(controller.reconcile("default/tick"))
    assert not client.of("create", "jobs")
    assert status_written(client) == {"lastSuccessfulTime": format_time(T0 + 60)}


def test_finished_jobs_leave_active_and_old_ones_are_trimmed():
    cj = cronjob(successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0,
                 status={"lastScheduleTime": format_time(T0 + 3600),
                         "active": [{"name": "tick-3", "uid": "uid-tick-3"}]})
    jobs = [owned_job(cj, f"tick-{i}", done="Complete", finished_at=T0 + i) for i in (1, 2, 3)]
    controller, client = setup(cj, *jobs, owned_job(cj, "tick-f", done="Failed"))
    run(controller.reconcile("default/tick"))
    assert sorted(a.name for a in client.of("delete", "jobs")) == ["tick-1", "tick-2", "tick-f"]
    status = status_written(client)
    assert "active" not in status and status["lastSuccessfulTime"] == format_time(T0 + 3)


def test_the_scheduled_timestamp_is_in_the_schedules_zone():
    controller, client = setup(cronjob(schedule="0 10 * * *", timeZone="Asia/Seoul"))
    run(controller.reconcile("default/tick"))
    [action] = client.of("create", "jobs")
    assert action.body["metadata"]["annotations"][SCHEDULED_ANNOTATION] == "2026-01-01T10:00:00+09:00"


def test_a_job_event_wakes_its_cronjob():
    cj = cronjob()
    controller, _ = setup(cj)
    observe(controller.jobs, owned_job(cj, "tick-1", done="Complete"))
    assert len(controller.queue) == 1


def test_most_recent_time_skips_to_the_last_of_many_missed():
    every_minute = parse("*/1 * * * *")
    assert most_recent_time(every_minute, "UTC", T0, T0 + 30 * 86400 + 5) == T0 + 30 * 86400
    assert most_recent_time(every_minute, "UTC", T0, T0 + 59) is None
