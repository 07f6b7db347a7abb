"""The dashboard's form numbers (dashboard.actions.form_int): one reading, one wording for every
button that takes a count or a delta."""

from __future__ import annotations

import pytest

from dashboard.actions import ActionError, form_int


def test_a_whole_number_is_read_and_a_default_fills_an_empty_field():
    assert form_int({"delta": "-2"}, "delta") == -2
    assert form_int({}, "count", default="10", low=1, high=50) == 10
    assert form_int({"count": ""}, "count", default="10") == 10


@pytest.mark.parametrize("form, message", [
    ({"delta": "two"}, "delta must be an integer"),
    ({}, "delta must be an integer"),
    ({"delta": "1.5"}, "delta must be an integer"),
])
def test_not_a_number(form, message):
    with pytest.raises(ActionError, match=message):
        form_int(form, "delta")


@pytest.mark.parametrize("value", ["0", "51"])
def test_out_of_range(value):
    with pytest.raises(ActionError, match="count must be between 1 and 50"):
        form_int({"count": value}, "count", low=1, high=50)


# --- stale-write: the 409 on stage ----------------------------------------------------------------

DEPLOYMENT_PATH = "/apis/apps/v1/namespaces/default/deployments/pasta"
CONFLICT = ('Operation cannot be fulfilled on deployments.apps "pasta": the object has been modified; '
            "please apply your changes to the latest version and try again")


def deployment(resource_version: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "pasta", "namespace": "default", "resourceVersion": resource_version},
            "spec": {"replicas": 2}}


def test_a_stale_write_reads_lets_a_second_client_write_then_puts_the_old_read(fake):
    from django.test import Client

    from tests.dashboard.fakehub import status

    fake.answers[("GET", DEPLOYMENT_PATH)] = (200, deployment("12"))
    fake.answers[("PATCH", DEPLOYMENT_PATH)] = (200, deployment("15"))
    fake.answers[("PUT", DEPLOYMENT_PATH)] = (409, status(409, "Conflict", CONFLICT))
    response = Client().post("/actions/stale-write/", {"namespace": "default", "name": "pasta"})

    assert [(r.method, r.path) for r in fake.requests] == [
        ("GET", DEPLOYMENT_PATH), ("PATCH", DEPLOYMENT_PATH), ("PUT", DEPLOYMENT_PATH)]
    get, patch, put = fake.requests
    assert get.agent.startswith("dashboard ") and put.agent.startswith("dashboard ")
    assert patch.agent.startswith("dashboard/second-writer "), "the other writer is a client of its own"
    assert put.body == deployment("12"), "the PUT carries the first read, old resourceVersion and all"
    text = response.content.decode()
    assert response.status_code == 200
    assert 'class="result error"' in text, "the provoked refusal is shown as a refusal"
    for part in ("409", "Conflict", "resourceVersion 12", "15", "the object has been modified"):
        assert part in text, part


def test_a_stale_write_that_the_hub_accepts_says_no_409(fake):
    from django.test import Client

    fake.answers[("GET", DEPLOYMENT_PATH)] = (200, deployment("12"))
    fake.answers[("PATCH", DEPLOYMENT_PATH)] = (200, deployment("15"))
    fake.answers[("PUT", DEPLOYMENT_PATH)] = (200, deployment("16"))
    text = Client().post("/actions/stale-write/", {"namespace": "default", "name": "pasta"}).content.decode()
    assert "no 409" in text


def test_a_stale_write_to_a_missing_deployment_is_the_hubs_404_and_nothing_is_written(fake):
    from django.test import Client

    response = Client().post("/actions/stale-write/", {"namespace": "default", "name": "pasta"})
    assert response.status_code == 404
    assert fake.writes() == []


def test_a_stale_write_with_a_bad_name_sends_nothing(fake):
    from django.test import Client

    response = Client().post("/actions/stale-write/", {"namespace": "default", "name": "Pasta!"})
    assert response.status_code == 400
    assert fake.requests == []


# --- run-now: a Job from a CronJob, as `kubectl create job --from=cronjob/X` ---------------------

CRONJOB_PATH = "/apis/batch/v1/namespaces/default/cronjobs/daily-special"
JOBS_PATH = "/apis/batch/v1/namespaces/default/jobs"


def test_run_now_makes_the_job_kubectl_create_job_from_cronjob_makes(fake):
    from django.test import Client

    template = {"metadata": {"labels": {"dish": "special"}, "annotations": {"menu": "today"}},
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": "daily-special", "namespace": "default", "uid": "u-1"},
               "spec": {"schedule": "* * * * *", "jobTemplate": template}}
    fake.answers[("GET", CRONJOB_PATH)] = (200, cronjob)
    fake.answers[("POST", JOBS_PATH)] = (201, {"metadata": {"name": "daily-special-manual-abcde"}})
    response = Client().post("/actions/run-now/", {"namespace": "default", "name": "daily-special"})

    assert response.status_code == 200 and "job.batch/daily-special-manual-abcde created" in response.content.decode()
    assert [(r.method, r.path) for r in fake.requests] == [("GET", CRONJOB_PATH), ("POST", JOBS_PATH)]
    job = fake.requests[1].body
    # kubectl's createJobFromCronJob: the template's labels and spec, its annotations plus "manual"
    # (the template's own win), a controller reference to the CronJob; the name is generated here.
    assert job == {"apiVersion": "batch/v1", "kind": "Job", "spec": template["spec"], "metadata": {
        "generateName": "daily-special-manual-", "namespace": "default", "labels": {"dish": "special"},
        "annotations": {"cronjob.kubernetes.io/instantiate": "manual", "menu": "today"},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "daily-special", "uid": "u-1",
                             "controller": True}]}}


def test_a_long_cronjob_name_leaves_room_for_the_generated_suffix():
    from dashboard.actions import job_from_cronjob

    job = job_from_cronjob({"metadata": {"name": "a" * 52, "namespace": "d", "uid": "u"}, "spec": {"jobTemplate": {}}})
    assert len(job["metadata"]["generateName"]) + 5 == 63 and job["metadata"]["generateName"].endswith("-manual-")
    assert "labels" not in job["metadata"] and job["spec"] == {}
