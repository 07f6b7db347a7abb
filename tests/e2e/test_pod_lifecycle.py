"""Init containers and probes with the real kubectl against a real hub and kubelet: a pod with two
init containers shows Init:0/2, Init:1/2, then Running, and `kubectl logs -c` reads an init
container; the kubernetes.io liveness example (at a short pace) is restarted with Unhealthy and
Killing events; a probe with two handlers is refused with the API server's 422."""

from __future__ import annotations

import json
from functools import partial

import pytest

from tests.conftest import Hub, hub_with_kubelet, wait_for

pytestmark = pytest.mark.e2e

NODE = "node-1"
KUBELET_ENV = {"KK_PACE": "workshop", "KK_START_DELAY": "0.1", "KK_TERMINATION_SECONDS": "0.5",
               "KK_CRASH_BACKOFF": "1:4"}
eventually = partial(wait_for, timeout=20)

INIT_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "myapp"},
            "spec": {"nodeName": NODE, "initContainers": [
                {"name": "init-one", "image": "busybox:1.36", "command": ["sh", "-c", "echo first is done; sleep 3"]},
                {"name": "init-two", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 3"]}],
                "containers": [{"name": "app", "image": "nginx:1.25"}]}}

LIVENESS_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "liveness-exec"},
                "spec": {"nodeName": NODE, "containers": [{
                    "name": "liveness", "image": "registry.k8s.io/busybox",
                    "args": ["/bin/sh", "-c", "touch /tmp/healthy; sleep 3; rm -f /tmp/healthy; sleep 600"],
                    "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 1,
                                      "periodSeconds": 1, "failureThreshold": 2}}]}}


@pytest.fixture(scope="module")
def hub():
    with hub_with_kubelet(NODE, KUBELET_ENV) as server:
        server.kubectl("create", "serviceaccount", "default")  # no controller-manager here to make it
        yield server


def status_of(hub: Hub, name: str) -> str:
    lines = hub.kubectl("get", "pod", name, "--no-headers").stdout.split()
    return lines[2] if len(lines) > 2 else ""


def test_init_containers_then_running(hub: Hub):
    hub.kubectl("apply", "-f", "-", input=json.dumps(INIT_POD))
    seen: list[str] = []

    def running() -> bool:
        now = status_of(hub, "myapp")
        if not seen or seen[-1] != now:
            seen.append(now)
        return now == "Running"

    eventually(running, what="myapp Running", interval=0.1)
    assert "Init:0/2" in seen and "Init:1/2" in seen, seen
    assert seen.index("Init:0/2") < seen.index("Init:1/2") < seen.index("Running")
    assert hub.kubectl("logs", "myapp", "-c", "init-one").stdout.count("first is done") == 1
    statuses = json.loads(hub.kubectl("get", "pod", "myapp", "-o", "json").stdout)["status"]["initContainerStatuses"]
    assert [s["state"]["terminated"]["reason"] for s in statuses] == ["Completed", "Completed"]


def test_the_liveness_probe_restarts_the_container(hub: Hub):
    hub.kubectl("apply", "-f", "-", input=json.dumps(LIVENESS_POD))
    eventually(lambda: hub.kubectl("get", "pod", "liveness-exec", "--no-headers").stdout.split()[3] not in ("0",),
               what="a restart", timeout=30)
    events = hub.kubectl("get", "events", "--field-selector", "involvedObject.name=liveness-exec").stdout
    assert "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory" in events
    assert "Container liveness failed liveness probe, will be restarted" in events
    pod = json.loads(hub.kubectl("get", "pod", "liveness-exec", "-o", "json").stdout)
    assert pod["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 137


def test_a_probe_with_two_handlers_is_refused(hub: Hub):
    bad = json.loads(json.dumps(LIVENESS_POD))
    bad["metadata"]["name"] = "bad"
    bad["spec"]["containers"][0]["livenessProbe"]["tcpSocket"] = {"port": 80}
    answer = hub.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert answer.returncode != 0
    assert "spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type" \
        in answer.stderr
