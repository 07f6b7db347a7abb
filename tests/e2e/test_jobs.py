"""Jobs as a user sees them with the whole cluster running: the real kubectl creates a Job (a protobuf
POST), waits for it to complete and reads its log; a failing Job ends Failed after its backoffLimit;
`kubectl get jobs` shows kubectl's columns; the official Python client creates a Job and watches it
finish; ttlSecondsAfterFinished removes a finished Job and the garbage collector its pods; `kubectl
create cronjob` and `kubectl create job --from=cronjob/X`."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from kubernetes import client, watch

from tests.conftest import Cluster, ready_cluster, wait_for

pytestmark = pytest.mark.e2e

SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"

FAILING = """
apiVersion: batch/v1
kind: Job
metadata: {name: broken}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - {name: c, image: busybox, command: ["sh", "-c", "exit 1"]}
"""


@pytest.fixture(scope="module")
def cluster():
    # Pod failures back off 10 s, 20 s ... upstream; one failure is retried once here, so the
    # failing Job takes one back-off (about 10 s) before its second pod.
    yield from ready_cluster(2)


def get_json(cluster: Cluster, *args: str) -> dict:
    return json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)


def condition(job: dict, type_: str) -> dict | None:
    return next((c for c in (job.get("status") or {}).get("conditions") or []
                 if c["type"] == type_ and c["status"] == "True"), None)


def test_create_wait_and_logs_of_a_job(cluster):
    created = cluster.kubectl("create", "job", "hello", "--image=busybox", "--", "echo", "hi")
    assert created.stdout.strip() == "job.batch/hello created"
    waited = cluster.kubectl("wait", "--for=condition=complete", "job/hello", "--timeout=60s", timeout=90)
    assert waited.stdout.strip() == "job.batch/hello condition met"
    assert cluster.kubectl("logs", "job/hello").stdout == "hi\n", "what `echo hi` printed, and nothing else"
    job = get_json(cluster, "job", "hello")
    assert job["status"]["succeeded"] == 1 and job["status"]["completionTime"]
    assert [c["type"] for c in job["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    table = cluster.kubectl("get", "jobs").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    row = next(line.split() for line in table[1:] if line.startswith("hello "))
    assert row[1:3] == ["Complete", "1/1"]
    pods = get_json(cluster, "pods", "-l", "batch.kubernetes.io/job-name=hello")["items"]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
    described = cluster.kubectl("describe", "job", "hello").stdout
    assert "1 Succeeded / 0 Failed" in described and "SuccessfulCreate" in described
    assert "Completed" in described


def test_a_job_that_keeps_failing_ends_failed_after_its_backoff_limit(cluster):
    cluster.kubectl("apply", "-f", "-", input=FAILING)
    waited = cluster.kubectl("wait", "--for=condition=failed", "job/broken", "--timeout=60s", timeout=90)
    assert waited.stdout.strip() == "job.batch/broken condition met"
    job = get_json(cluster, "job", "broken")
    assert job["status"]["failed"] == 2 and condition(job, "Failed")["reason"] == "BackoffLimitExceeded"
    row = next(line.split() for line in cluster.kubectl("get", "jobs").stdout.splitlines()
               if line.startswith("broken "))
    assert row[1:3] == ["Failed", "0/1"]
    events = get_json(cluster, "events", "--field-selector", "involvedObject.name=broken")["items"]
    assert {"SuccessfulCreate", "BackoffLimitExceeded"} <= {e["reason"] for e in events}


def test_bad_jobs_are_refused_with_kubernetes_messages(cluster):
    bad = cluster.kubectl("create", "-f", "-", check=False, input=FAILING.replace("backoffLimit: 1",
                                                                                   "completions: -1"))
    assert bad.returncode != 0
    assert 'The Job "broken" is invalid: spec.completions: Invalid value: -1: must be greater than or equal to 0' \
        in bad.stderr or "already exists" in bad.stderr
    immutable = cluster.kubectl("patch", "job", "hello", "--type=merge", "-p",
                                '{"spec":{"template":{"spec":{"activeDeadlineSeconds":5}}}}', check=False)
    assert immutable.returncode != 0 and "spec.template: Invalid value: " in immutable.stderr
    assert "field is immutable" in immutable.stderr


def test_explain_job_spec(cluster):
    out = cluster.kubectl("explain", "job.spec").stdout
    assert "backoffLimit" in out and "completionMode" in out and "ttlSecondsAfterFinished" in out


def test_the_python_client_creates_a_job_and_watches_it_complete(cluster):
    with cluster.python_client() as api:
        batch = client.BatchV1Api(api)
        body = client.V1Job(
            metadata=client.V1ObjectMeta(name="py-job"),
            spec=client.V1JobSpec(ttl_seconds_after_finished=2, template=client.V1PodTemplateSpec(
                spec=client.V1PodSpec(restart_policy="Never", containers=[
                    client.V1Container(name="c", image="busybox", command=["sh", "-c", "echo py"])]))))
        created = batch.create_namespaced_job("default", body)
        assert created.spec.completions == 1 and created.spec.backoff_limit == 6
        done = None
        for event in watch.Watch().stream(batch.list_namespaced_job, "default", field_selector="metadata.name=py-job",
                                          timeout_seconds=60):
            conditions = event["object"].status.conditions or []
            if any(c.type == "Complete" and c.status == "True" for c in conditions):
                done = event["object"]
                break
        assert done is not None and done.status.succeeded == 1
    # ttlSecondsAfterFinished: the Job goes, and the garbage collector takes its pod
    wait_for(lambda: cluster.kubectl("get", "job", "py-job", check=False).returncode != 0, timeout=30,
             what="the finished Job deleted after its TTL")
    wait_for(lambda: not get_json(cluster, "pods", "-l", "batch.kubernetes.io/job-name=py-job")["items"],
             timeout=30, what="its pod collected")


def test_create_cronjob_and_a_job_from_it(cluster):
    created = cluster.kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=*/1 * * * *",
                              "--", "echo", "tock")
    assert created.stdout.strip() == "cronjob.batch/tick created"
    table = cluster.kubectl("get", "cronjobs").stdout.splitlines()
    assert table[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    row = table[1].split()  # the schedule's five fields are five words here
    assert row[:8] == ["tick", "*/1", "*", "*", "*", "*", "<none>", "False"]
    cj = get_json(cluster, "cronjob", "tick")
    assert cj["spec"]["concurrencyPolicy"] == "Allow" and cj["spec"]["successfulJobsHistoryLimit"] == 3
    cluster.kubectl("create", "job", "by-hand", "--from=cronjob/tick")
    cluster.kubectl("wait", "--for=condition=complete", "job/by-hand", "--timeout=60s", timeout=90)
    job = get_json(cluster, "job", "by-hand")
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert cluster.kubectl("logs", "job/by-hand").stdout == "tock\n"
    bad = cluster.kubectl("create", "cronjob", "bad", "--image=busybox", "--schedule=every minute", check=False)
    assert bad.returncode != 0 and 'spec.schedule: Invalid value: "every minute": expected exactly 5 fields' \
        in bad.stderr


def test_drain_deletes_with_a_protobuf_delete_options_body(cluster):
    # --disable-eviction: drain DELETEs with a protobuf DeleteOptions instead of evicting (evictions:
    # tests/e2e/test_drain.py).
    cluster.kubectl("run", "lonely", "--image=nginx", "--overrides", json.dumps({"spec": {"nodeName": "node-2"}}))
    wait_for(lambda: get_json(cluster, "pod", "lonely")["status"].get("phase") == "Running", what="lonely running")
    try:
        drained = cluster.kubectl("drain", "node-2", "--ignore-daemonsets", "--force", "--grace-period=1",
                                  "--disable-eviction",
                                  "--timeout=60s", timeout=90)
        assert "node/node-2 drained" in drained.stdout
        assert cluster.kubectl("get", "pod", "lonely", check=False).returncode != 0
    finally:
        cluster.kubectl("uncordon", "node-2")


def test_the_cronjob_fires_on_its_schedule(cluster):
    # `tick` (created above) runs every minute: within 75 s the controller has made a Job named by
    # the minute it was scheduled for.
    def scheduled() -> list[dict]:
        return [j for j in get_json(cluster, "jobs")["items"]
                if SCHEDULED in (j["metadata"].get("annotations") or {}) and j["metadata"]["name"].startswith("tick-")]

    job = wait_for(scheduled, timeout=75, interval=1, what="a Job made by the CronJob's schedule")[0]
    minute = int(job["metadata"]["name"].rsplit("-", 1)[1])
    at = dt.datetime.fromtimestamp(minute * 60, dt.timezone.utc)
    assert job["metadata"]["annotations"][SCHEDULED] == at.strftime("%Y-%m-%dT%H:%M:%SZ")
    cj = wait_for(lambda: get_json(cluster, "cronjob", "tick")["status"].get("lastScheduleTime"),
                  what="lastScheduleTime")
    assert cj >= at.strftime("%Y-%m-%dT%H:%M:%SZ")
