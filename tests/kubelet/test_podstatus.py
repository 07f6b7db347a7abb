"""A pod record as a pod's status: phases, conditions, container statuses the official Python
client parses, stability (no write when nothing changed), and adoption after a kubelet restart."""

import json

from kubernetes.client import ApiClient

from control.kubelet.config import BackoffPolicy
from control.kubelet.podstate import new_record, pod_phase, step_pod
from control.kubelet.podstatus import image_id, record_from_status, render_status

T0 = 1_800_000_000.0
BACKOFF = BackoffPolicy(base=10, cap=300, reset_after=600)


def pod(annotations=None, policy="Always", containers=None, **extra):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default", "uid": "uid-1", "annotations": annotations or {}},
            "spec": {"nodeName": "node-1", "restartPolicy": policy,
                     "containers": containers or [{"name": "app", "image": "nginx:1.25"}]},
            "status": {"phase": "Pending", **extra}}


def at(p, seconds, record=None):
    record = record or new_record(p, T0, host_ip="127.0.1.1", pod_ip="10.244.1.2", default_start_delay=0.5)
    step = step_pod(p, record, T0 + seconds, backoff=BACKOFF, termination_seconds=1)
    return step.record, render_status(p, step.record, T0 + seconds)


def parse(obj, kind="V1Pod"):
    return ApiClient().deserialize(json.dumps(obj), kind, "application/json")


def conditions(status):
    return {c["type"]: c["status"] for c in status["conditions"]}


def test_pending_with_container_creating_and_no_ip_yet():
    p = pod()
    record, status = at(p, 0.1)
    assert status["phase"] == "Pending" and "podIP" not in status
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert status["containerStatuses"][0]["imageID"] == ""
    assert conditions(status) == {"PodReadyToStartContainers": "False", "Initialized": "True", "Ready": "False",
                                  "ContainersReady": "False", "PodScheduled": "True"}
    assert pod_phase(record) == "Pending"


def test_running_with_ip_host_ip_start_time_and_parseable_container_status():
    p = pod()
    _, status = at(p, 1)
    assert status["phase"] == "Running"
    assert (status["podIP"], status["hostIP"], status["podIPs"]) == ("10.244.1.2", "127.0.1.1", [{"ip": "10.244.1.2"}])
    assert status["startTime"] == "2027-01-15T08:00:00Z"
    cs = status["containerStatuses"][0]
    assert cs["ready"] and cs["started"] and cs["restartCount"] == 0
    assert cs["state"] == {"running": {"startedAt": "2027-01-15T08:00:00Z"}}
    assert cs["containerID"].startswith("kitchen://") and cs["imageID"] == image_id("nginx:1.25")
    assert cs["imageID"].startswith("docker-pullable://nginx@sha256:")
    assert all(v == "True" for v in conditions(status).values())
    parsed = parse({**p, "status": status})
    assert parsed.status.container_statuses[0].state.running.started_at.year == 2027
    assert parsed.status.conditions[0].last_transition_time is not None


def test_rendering_is_stable_so_an_unchanged_pod_is_not_written_again():
    p = pod()
    record, status = at(p, 1)
    written = {**p, "status": status}
    _, again = at(written, 50, record)
    assert again == status, "transition times are kept while nothing changes"


def test_crash_loop_shows_waiting_backoff_with_the_last_termination():
    p = pod({"kubekitchen.dev/crash-after": "2"})
    record, status = at(p, 3)
    cs = status["containerStatuses"][0]
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["state"]["waiting"]["message"] == "back-off 10s restarting failed container=app pod=web_default(uid-1)"
    assert cs["lastState"]["terminated"]["exitCode"] == 1 and cs["lastState"]["terminated"]["reason"] == "Error"
    assert status["phase"] == "Running" and not cs["ready"]
    assert conditions(status)["Ready"] == "False"
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "ContainersNotReady" and ready["message"] == "containers with unready status: [app]"
    parse({**p, "status": status})
    _, status = at(p, 13, record)
    cs = status["containerStatuses"][0]
    assert "running" in cs["state"] and cs["restartCount"] == 1 and cs["lastState"]["terminated"]["exitCode"] == 1


def test_phases_when_containers_end_for_good():
    _, ok = at(pod({"kubekitchen.dev/crash-after": "1", "kubekitchen.dev/exit-code": "0"}, policy="OnFailure"), 5)
    assert ok["phase"] == "Succeeded"
    assert ok["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    ready = next(c for c in ok["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")
    _, failed = at(pod({"kubekitchen.dev/crash-after": "1"}, policy="Never"), 5)
    assert failed["phase"] == "Failed"


def test_two_containers_one_ready_later():
    p = pod({"kubekitchen.dev/ready-after.side": "5"},
            containers=[{"name": "app", "image": "nginx"}, {"name": "side", "image": "busybox"}])
    record, status = at(p, 2)
    assert [c["ready"] for c in status["containerStatuses"]] == [True, False]
    assert conditions(status)["ContainersReady"] == "False"
    assert step_pod(p, record, T0 + 2, backoff=BACKOFF, termination_seconds=1).wake == T0 + 5.5


def test_conditions_owned_by_others_are_kept():
    p = pod(conditions=[{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"},
                        {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}],
            nominatedNodeName="node-2")
    _, status = at(p, 1)
    by_type = {c["type"]: c for c in status["conditions"]}
    assert by_type["PodScheduled"]["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    assert by_type["DisruptionTarget"]["reason"] == "DeletionByTaintManager"
    assert status["nominatedNodeName"] == "node-2"


def test_qos_class():
    assert at(pod(), 1)[1]["qosClass"] == "BestEffort"
    burstable = [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]
    assert at(pod(containers=burstable), 1)[1]["qosClass"] == "Burstable"
    guaranteed = [{"name": "app", "image": "nginx", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]
    assert at(pod(containers=guaranteed), 1)[1]["qosClass"] == "Guaranteed"


def test_a_restarted_kubelet_adopts_what_is_running():
    p = pod({"kubekitchen.dev/crash-after": "20"})
    record, status = at(p, 25)  # crashed at 20.5, waiting out 10 s
    record, status = at(p, 40, record)  # running again, restartCount 1
    found = {**p, "status": status}
    adopted = record_from_status(found, T0 + 41, host_ip="127.0.1.1", pod_ip="10.244.1.2", backoff=BACKOFF,
                                 default_start_delay=0.5)
    c, original = adopted.containers[0], record.containers[0]
    assert c.state == "running" and c.restart_count == 1
    assert c.current.container_id == original.current.container_id
    assert c.current.started_at == int(original.current.started_at)
    assert c.previous.exit_code == 1
    assert render_status(found, adopted, T0 + 41)["containerStatuses"] == status["containerStatuses"]


def test_adopting_a_pod_in_backoff_restarts_it_now():
    p = pod({"kubekitchen.dev/crash-after": "1"})
    _, status = at(p, 3)
    adopted = record_from_status({**p, "status": status}, T0 + 4, host_ip="h", pod_ip="i", backoff=BACKOFF,
                                 default_start_delay=0)
    c = adopted.containers[0]
    assert c.state == "backoff" and c.restart_at == T0 + 4 and c.previous.exit_code == 1
