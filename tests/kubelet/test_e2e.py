"""The kubelet as its own process against a real hub, driven by the real kubectl: the node turns
Ready and renews its Lease, a pod runs with an IP and logs what its command prints (kubernetes.io's
counter pod), a crashing pod loops with growing back-off, and `kubectl delete pod` returns after the graceful stop and final delete."""

from __future__ import annotations

import json
import time
from functools import partial

import pytest
from kubernetes import client

from tests.conftest import Hub, hub_with_kubelet, wait_for

pytestmark = pytest.mark.e2e

NODE = "node-1"
KUBELET_ENV = {"KK_PACE": "workshop", "KK_CRASH_BACKOFF": "1:4", "KK_START_DELAY": "0.1",
               "KK_LOG_INTERVAL": "0.5", "KK_TERMINATION_SECONDS": "0.5"}


@pytest.fixture(scope="module")
def hub():
    with hub_with_kubelet(NODE, KUBELET_ENV) as server:
        yield server


eventually = partial(wait_for, timeout=15)
COUNTER = 'i=0; while true; do echo "$i: $(date)"; i=$((i+1)); sleep 1; done'  # kubernetes.io's counter pod


def busybox(*command: str) -> list[dict]:
    return [{"name": "app", "image": "busybox:1.28", "command": list(command)}]

def pod_manifest(name: str, annotations: dict | None = None, **spec) -> str:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations or {}},
           "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "nginx:1.25"}], **spec}}
    return json.dumps(obj)


def get_json(hub: Hub, *args: str) -> dict:
    return json.loads(hub.kubectl("get", *args, "-o", "json").stdout)


def test_the_node_registers_ready_and_renews_its_lease(hub):
    line = eventually(lambda: next((l for l in hub.kubectl("get", "nodes", "-o", "wide").stdout.splitlines()
                                    if l.startswith(NODE) and " Ready " in l), None), what="node Ready")
    assert "127.0.1.1" in line and "kitchen://1.0" in line and "v1.32.0-kube-kitchen" in line and "worker" in line
    node = get_json(hub, "node", NODE)
    assert node["spec"]["podCIDR"] == "10.244.1.0/24"
    assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] > 0
    renewed = lambda: get_json(hub, "lease", NODE, "-n", "kube-node-lease")["spec"]["renewTime"]  # noqa: E731
    first = eventually(renewed, what="a lease")
    second = eventually(lambda: (t := renewed()) != first and t, timeout=5, what="a renewal")
    assert second > first and get_json(hub, "lease", NODE, "-n", "kube-node-lease")["spec"]["holderIdentity"] == NODE


def test_a_pod_runs_with_an_ip_and_prints_logs(hub):
    hub.kubectl("apply", "-f", "-", input=pod_manifest("web", containers=busybox("/bin/sh", "-c", COUNTER)))
    row = eventually(lambda: next((l for l in hub.kubectl("get", "pod", "web", "-o", "wide").stdout.splitlines()
                                   if " Running " in l and "10.244.1." in l), None), what="web Running")
    assert "1/1" in row and NODE in row
    logs = eventually(lambda: (out := hub.kubectl("logs", "web").stdout).count("\n") >= 2 and out, what="counting")
    assert logs.startswith("0: ") and logs.splitlines()[1].startswith("1: ") and " UTC 20" in logs
    assert "kitchen" not in logs, "the log is what the container printed, no narration"
    assert hub.kubectl("logs", "web", "--tail=1").stdout.count("\n") == 1
    with hub.python_client() as api:
        pod = client.CoreV1Api(api).read_namespaced_pod("web", "default")
    status = pod.status.container_statuses[0]
    assert status.ready and status.state.running and status.container_id.startswith("kitchen://")
    assert pod.status.pod_ip.startswith("10.244.1.") and pod.status.host_ip == "127.0.1.1"
    assert {c.type: c.status for c in pod.status.conditions}["Ready"] == "True"
    rv = get_json(hub, "pod", "web")["metadata"]["resourceVersion"]
    time.sleep(1.5)
    assert get_json(hub, "pod", "web")["metadata"]["resourceVersion"] == rv, "a running pod is not rewritten"
    events = hub.kubectl("get", "events", "--field-selector", "involvedObject.name=web").stdout
    assert "Pulled" in events and "Created" in events and "Started" in events


def test_a_crashing_pod_loops_with_growing_restarts(hub):
    hub.kubectl("apply", "-f", "-", input=pod_manifest("crash", containers=busybox("sh", "-c", "echo toasting; sleep 1; exit 1")))
    seen: set[str] = set()

    def looped():
        row = hub.kubectl("get", "pod", "crash", "--no-headers").stdout.split()
        seen.add(row[2])
        return int(row[3]) >= 2 and "CrashLoopBackOff" in seen and row

    eventually(looped, timeout=20, what="restarts and CrashLoopBackOff")
    previous = hub.kubectl("logs", "crash", "--previous").stdout
    assert previous == "toasting\n", "what the last run printed"
    status = get_json(hub, "pod", "crash")["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 1 and status["restartCount"] >= 2
    events = hub.kubectl("get", "events", "--field-selector", "involvedObject.name=crash").stdout
    assert "BackOff" in events and "Back-off restarting failed container app" in events


def test_logs_follow_until_the_run_ends_and_a_finished_pod_is_failed(hub):
    hub.kubectl("apply", "-f", "-", input=pod_manifest("once", {"kubekitchen.dev/narrate": "true"},
                                                        restartPolicy="Never", containers=busybox(
                                                            "sh", "-c", "echo start; sleep 2; echo done; exit 1")))
    eventually(lambda: "Running" in hub.kubectl("get", "pod", "once").stdout, what="once Running")
    started = time.monotonic()
    followed = hub.kubectl("logs", "-f", "once", timeout=15).stdout
    assert time.monotonic() - started < 10
    told = [line for line in followed.splitlines() if "is cooking (tick" not in line]
    assert told[1:] == ["start", "done", "kitchen: app crashed: exiting with code 1"], \
        "the narration, opted in, around what the command printed"
    assert eventually(lambda: get_json(hub, "pod", "once")["status"]["phase"] == "Failed", what="Failed")


def test_a_restarted_kubelet_adopts_its_running_pods(hub):
    before = get_json(hub, "pod", "web")
    hub.kubelet.stop()
    hub.kubelet.start()
    tries: list[str] = []
    logs = eventually(lambda: (r := hub.kubectl("logs", "web", check=False)).stdout or tries.append(r.stderr),
                      timeout=30, what=f"the new kubelet's logs (errors: {tries[-1:]})")
    assert logs.startswith("0: ") and logs.count("\n") >= 2, "the same run carries on (its log from its start)"
    after = get_json(hub, "pod", "web")
    assert after["status"]["containerStatuses"] == before["status"]["containerStatuses"]
    assert after["status"]["podIP"] == before["status"]["podIP"]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"], "adopted, not rewritten"


def test_delete_pod_stops_gracefully_then_deletes(hub):
    eventually(lambda: "Running" in hub.kubectl("get", "pod", "web").stdout, what="web Running")
    started = time.monotonic()
    result = hub.kubectl("delete", "pod", "web", timeout=20)
    assert result.stdout.strip() == 'pod "web" deleted' and time.monotonic() - started < 10
    gone = hub.kubectl("get", "pod", "web", check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr
    events = hub.kubectl("get", "events", "--field-selector", "involvedObject.name=web").stdout
    assert "Killing" in events and "Stopping container app" in events
    hub.kubectl("delete", "pod", "crash", "once", timeout=20)
    assert "No resources found" in hub.kubectl("get", "pods").stderr
