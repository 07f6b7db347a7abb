"""batch/v1 CronJob as a kind: defaults, validation of schedule, zone, policy and Job template, the
kubectl columns; and a bad CronJob refused by the hub with a 422."""

from __future__ import annotations

import copy
import json

import pytest

from control.kinds import by_kind
from control.kinds.cronjobs import CRONJOB, cronjob_cells, cronjob_defaults, validate_cronjob
from tests.api.conftest import api  # noqa: F401  (the in-process hub)


def cronjob(name: str = "daily", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "c", "image": "busybox", "command": ["date"]}],
                "restartPolicy": "OnFailure"}}}}, **spec}}


def defaulted(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    cronjob_defaults(obj)
    return obj


def messages(obj: dict) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in validate_cronjob(defaulted(obj))]


def test_registered_with_its_short_name():
    assert by_kind("batch/v1", "CronJob") is CRONJOB and CRONJOB.short_names == ("cj",)


def test_defaults_as_upstream():
    spec = defaulted(cronjob())["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    job_spec = spec["jobTemplate"]["spec"]
    assert "backoffLimit" not in job_spec and "selector" not in job_spec
    assert job_spec["template"]["spec"]["terminationGracePeriodSeconds"] == 30
    assert messages(cronjob()) == []


@pytest.mark.parametrize("change, expected", [
    ({"schedule": "61 * * * *"}, 'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum '
                                 "(59): 61"),
    ({"schedule": ""}, "spec.schedule: Required value"),
    ({"timeZone": "Mars/Olympus"}, 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'),
    ({"concurrencyPolicy": "Sometimes"}, 'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported '
                                         'values: "Allow", "Forbid", "Replace"'),
    ({"startingDeadlineSeconds": -5}, "spec.startingDeadlineSeconds: Invalid value: -5: must be greater than or "
                                      "equal to 0"),
])
def test_bad_specs(change, expected):
    assert messages(cronjob(**change)) == [expected]


def test_the_job_template_is_a_job_spec_without_a_selector():
    obj = cronjob()
    obj["spec"]["jobTemplate"]["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    obj["spec"]["jobTemplate"]["spec"]["completions"] = -1
    assert messages(obj) == [
        "spec.jobTemplate.spec.completions: Invalid value: -1: must be greater than or equal to 0",
        'spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated',
        'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
        '"OnFailure", "Never"']


def test_names_longer_than_52_are_refused_and_odd_input_never_raises():
    assert messages(cronjob("x" * 53)) == [f'metadata.name: Invalid value: "{"x" * 53}": must be no more than 52 '
                                           "characters"]
    for spec in (None, "x", {"jobTemplate": "x"}, {"schedule": 5, "jobTemplate": {"spec": {"template": None}}}):
        obj = {"metadata": {"name": "c"}, "spec": spec}
        cronjob_defaults(obj)
        assert validate_cronjob(obj)


def test_columns():
    assert [c.name for c in CRONJOB.columns][:7] == ["Name", "Schedule", "Timezone", "Suspend", "Active",
                                                     "Last Schedule", "Age"]
    obj = defaulted(cronjob())
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    t0 = 1767225600.0
    assert cronjob_cells(obj, t0 + 120)[:7] == ["daily", "*/1 * * * *", "<none>", "False", 0, "<none>", "2m"]
    obj["status"] = {"active": [{"name": "daily-1"}], "lastScheduleTime": "2026-01-01T00:01:00Z"}
    assert cronjob_cells(obj, t0 + 120)[4:6] == [1, "60s"]


@pytest.mark.django_db(transaction=True)
def test_the_hub_refuses_a_bad_schedule_with_a_422(api):  # noqa: F811
    path = "/apis/batch/v1/namespaces/default/cronjobs"
    bad = api.post(path, json.dumps(cronjob(schedule="every minute")))
    status = json.loads(bad.content)
    assert bad.status_code == 422 and status["message"] == (
        'CronJob.batch "daily" is invalid: spec.schedule: Invalid value: "every minute": expected exactly 5 '
        "fields, found 2: every minute")
    assert api.get(f"{path}/daily").status_code == 404
    assert api.post(path, json.dumps(cronjob())).status_code == 201
