"""batch/v1 Job as a kind: the generated selector, upstream's defaults, validation, immutable fields,
the kubectl columns and the field selector; and the same through the hub (422 Status, store unchanged)."""

from __future__ import annotations

import copy
import json

import pytest

from control.kinds import by_kind
from control.kinds.jobs import (
    CONTROLLER_UID_LABEL, JOB, JOB_NAME_LABEL, job_cells, job_defaults, prepare_job_for_create, validate_job,
    validate_job_update,
)
from tests.api.conftest import api  # noqa: F401  (the in-process hub, for the tests at the end)

UID = "0b8f6c1e-1111-2222-3333-444455556666"


def job(name: str = "pi", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}],
                                           "restartPolicy": "Never"}}, **spec}}


def created(obj: dict) -> dict:
    """What the hub's create does before validation: uid, prepare, defaults."""
    obj = copy.deepcopy(obj)
    obj["metadata"]["uid"] = UID
    prepare_job_for_create(obj)
    job_defaults(obj)
    return obj


def messages(causes: list[dict]) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_registered_as_batch_v1_jobs_with_status():
    assert by_kind("batch/v1", "Job") is JOB
    assert JOB.plural == "jobs" and JOB.namespaced and JOB.subresources == ("status",) and "all" in JOB.categories


def test_create_generates_the_selector_and_the_four_template_labels_and_copies_them_to_the_job():
    obj = created(job())
    assert obj["spec"]["selector"] == {"matchLabels": {CONTROLLER_UID_LABEL: UID}}
    labels = {CONTROLLER_UID_LABEL: UID, JOB_NAME_LABEL: "pi", "controller-uid": UID, "job-name": "pi"}
    assert obj["spec"]["template"]["metadata"]["labels"] == labels
    assert obj["metadata"]["labels"] == labels  # defaulting copies the template's labels to a label-less Job
    assert obj["status"] == {} and validate_job(obj) == []


def test_upstream_defaults():
    spec = created(job())["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert spec["template"]["spec"]["terminationGracePeriodSeconds"] == 30
    only_parallel = created(job(parallelism=3))["spec"]
    assert "completions" not in only_parallel and only_parallel["parallelism"] == 3
    with_policy = created(job(podFailurePolicy={"rules": []}))["spec"]
    assert with_policy["podReplacementPolicy"] == "Failed"


def test_a_job_with_its_own_labels_keeps_them():
    obj = job()
    obj["metadata"]["labels"] = {"team": "a"}
    assert created(obj)["metadata"]["labels"] == {"team": "a"}


def test_manual_selector_is_left_alone_and_must_match_the_template():
    obj = job(manualSelector=True, selector={"matchLabels": {"app": "x"}})
    obj["spec"]["template"]["metadata"] = {"labels": {"app": "y"}}
    done = created(obj)
    assert done["spec"]["selector"] == {"matchLabels": {"app": "x"}}
    assert messages(validate_job(done)) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: '
        "`selector` does not match template `labels`"]


def test_a_wrong_controller_uid_label_set_by_hand_is_refused():
    obj = job()
    obj["spec"]["template"]["metadata"] = {"labels": {CONTROLLER_UID_LABEL: "someone-else"}}
    found = messages(validate_job(created(obj)))
    assert f'spec.template.metadata.labels: Invalid value: "someone-else": must be \'{UID}\'' in found


@pytest.mark.parametrize("field", ["completions", "parallelism", "activeDeadlineSeconds", "backoffLimit",
                                   "ttlSecondsAfterFinished"])
def test_counts_must_not_be_negative(field):
    assert messages(validate_job(created(job(**{field: -1})))) == [
        f"spec.{field}: Invalid value: -1: must be greater than or equal to 0"]


@pytest.mark.parametrize("policy", ["Always", None])
def test_restart_policy_must_be_on_failure_or_never(policy):
    obj = job()
    if policy is None:
        del obj["spec"]["template"]["spec"]["restartPolicy"]  # the pod defaults fill in Always
    else:
        obj["spec"]["template"]["spec"]["restartPolicy"] = policy
    assert messages(validate_job(created(obj))) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"']


def test_indexed_needs_completions_and_modes_are_checked():
    assert messages(validate_job(created(job(completionMode="Indexed", parallelism=2)))) == [
        "spec.completions: Required value: when completion mode is Indexed"]
    assert messages(validate_job(created(job(completionMode="Sometimes")))) == [
        'spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"']


def test_odd_input_gives_causes_never_an_exception():
    for spec in (None, "x", {"template": "x"}, {"template": {"spec": None}}, {"selector": "x", "template": {}}):
        obj = {"metadata": {"name": "j", "uid": UID}, "spec": spec}
        prepare_job_for_create(obj)
        job_defaults(obj)
        assert validate_job(obj)


def test_template_selector_completions_and_mode_are_immutable():
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    new["spec"]["completions"] = 3
    new["spec"]["completionMode"] = "Indexed"
    new["spec"]["selector"] = {"matchLabels": {"x": "y"}}
    fields = [c["field"] for c in validate_job_update(new, old)]
    assert fields == ["spec.selector", "spec.completionMode", "spec.completions", "spec.template"]
    assert all(c["message"].endswith(": field is immutable") for c in validate_job_update(new, old))


def test_parallelism_suspend_and_deadline_may_change():
    old = created(job())
    new = copy.deepcopy(old)
    new["spec"].update(parallelism=5, suspend=True, activeDeadlineSeconds=60)
    assert validate_job_update(new, old) == []


def test_a_suspended_job_that_never_started_may_move_its_pods():
    old = created(job(suspend=True))
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    assert validate_job_update(new, old) == []
    old["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    assert [c["field"] for c in validate_job_update(new, old)] == ["spec.template"]


def test_elastic_indexed_jobs_may_change_completions_with_parallelism():
    old = created(job(completionMode="Indexed", completions=2, parallelism=2))
    new = copy.deepcopy(old)
    new["spec"].update(completions=4, parallelism=4)
    assert validate_job_update(new, old) == []


def _at(obj: dict, **status) -> dict:
    obj = created(obj)
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    obj["status"] = status
    return obj


T0 = 1767225600.0  # 2026-01-01T00:00:00Z


@pytest.mark.parametrize("conditions, deleting, shown", [
    ([], False, "Running"),
    ([{"type": "Complete", "status": "True"}], False, "Complete"),
    ([{"type": "Failed", "status": "True"}], True, "Failed"),
    ([], True, "Terminating"),
    ([{"type": "Suspended", "status": "True"}], False, "Suspended"),
    ([{"type": "Suspended", "status": "False"}], False, "Running"),
    ([{"type": "FailureTarget", "status": "True"}], False, "FailureTarget"),
    ([{"type": "SuccessCriteriaMet", "status": "True"}], False, "SuccessCriteriaMet"),
])
def test_status_column(conditions, deleting, shown):
    obj = _at(job(), conditions=conditions)
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:09Z"
    assert job_cells(obj, T0 + 10)[1] == shown


def test_completions_and_duration_columns_as_kubectl_prints_them():
    running = _at(job(completions=3), succeeded=1, startTime="2026-01-01T00:00:00Z")
    assert job_cells(running, T0 + 75)[:5] == ["pi", "Running", "1/3", "75s", "75s"]
    done = _at(job(), succeeded=1, startTime="2026-01-01T00:00:00Z", completionTime="2026-01-01T00:00:07Z")
    assert job_cells(done, T0 + 600)[2:4] == ["1/1", "7s"]
    work_queue = _at(job(parallelism=4))
    assert job_cells(work_queue, T0)[2:4] == ["0/1 of 4", ""]
    assert [c.name for c in JOB.columns] == ["Name", "Status", "Completions", "Duration", "Age", "Containers",
                                             "Images", "Selector"]
    assert job_cells(work_queue, T0)[5:] == ["c", "busybox", f"{CONTROLLER_UID_LABEL}={UID}"]


def test_field_selector_status_successful():
    assert JOB.field_getters["status.successful"](_at(job(), succeeded=2)) == "2"
    assert JOB.field_getters["status.successful"](_at(job())) == "0"


# --- through the hub ---------------------------------------------------------------------------

JOBS = "/apis/batch/v1/namespaces/default/jobs"


@pytest.mark.django_db(transaction=True)
def test_the_hub_creates_a_job_and_refuses_bad_ones_with_a_422_status(api):
    answer = api.post(JOBS, json.dumps(job()))
    assert answer.status_code == 201, answer.content
    stored = json.loads(answer.content)
    uid = stored["metadata"]["uid"]
    assert stored["spec"]["selector"] == {"matchLabels": {CONTROLLER_UID_LABEL: uid}}
    assert stored["metadata"]["generation"] == 1 and stored["status"] == {}
    bad = api.post(JOBS, json.dumps(job("neg", completions=-1)))
    status = json.loads(bad.content)
    assert bad.status_code == 422 and status["reason"] == "Invalid"
    assert status["message"] == ('Job.batch "neg" is invalid: spec.completions: Invalid value: -1: '
                                 "must be greater than or equal to 0")
    assert api.get(f"{JOBS}/neg").status_code == 404
    changed = copy.deepcopy(stored)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    refused = api.put(f"{JOBS}/pi", json.dumps(changed))
    assert refused.status_code == 422 and "spec.template: Invalid value: " in json.loads(refused.content)["message"]
    assert json.loads(api.get(f"{JOBS}/pi").content)["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"


@pytest.mark.django_db(transaction=True)
def test_the_hub_serves_the_status_subresource_and_the_field_selector(api):
    stored = json.loads(api.post(JOBS, json.dumps(job())).content)
    stored["status"] = {"succeeded": 1, "startTime": "2026-01-01T00:00:00Z"}
    assert api.put(f"{JOBS}/pi/status", json.dumps(stored)).status_code == 200
    names = lambda q: [i["metadata"]["name"] for i in json.loads(api.get(JOBS, QUERY_STRING=q).content)["items"]]
    assert names("fieldSelector=status.successful%3D1") == ["pi"]
    assert names("fieldSelector=status.successful%3D0") == []


def test_pod_failure_policy_needs_never_and_well_formed_rules():
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
                        {"action": "Explode", "onPodConditions": [{"type": "DisruptionTarget"}]},
                        {"action": "Ignore"}]}
    obj = job(podFailurePolicy=policy)
    obj["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert messages(validate_job(created(obj))) == [
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
        "podFailurePolicy is specified",
        'spec.podFailurePolicy.rules[1].action: Unsupported value: "Explode": supported values: "Count", '
        '"FailIndex", "FailJob", "Ignore"',
        "spec.podFailurePolicy.rules[2]: Invalid value: specifying one of OnExitCodes and OnPodConditions is "
        "required"]
    assert validate_job(created(job(podFailurePolicy={"rules": policy["rules"][:1]}))) == []
