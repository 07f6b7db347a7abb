"""kubernetes.io's scheduling examples as documented, with the real kubectl: a pod with scheduling
gates stays SchedulingGated until its gates are removed, then runs; a pod with required pod
affinity no pod satisfies stays Pending with kube-scheduler's FailedScheduling message, and is
placed beside its partner once one runs."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cluster, ready_cluster, wait_for

pytestmark = pytest.mark.e2e

GATED = """
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/foo}, {name: example.com/bar}]
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: busybox, command: ["sleep", "3600"]}]
"""

CACHE = """
apiVersion: v1
kind: Pod
metadata: {name: cache, labels: {app: cache}}
spec:
  terminationGracePeriodSeconds: 0
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
  containers: [{name: c, image: busybox, command: ["sleep", "3600"]}]
"""

WEB = """
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: busybox, command: ["sleep", "3600"]}]
"""


@pytest.fixture(scope="module")
def cluster():
    yield from ready_cluster(2)


def get(cluster: Cluster, name: str) -> dict:
    return json.loads(cluster.kubectl("get", "pod", name, "-o", "json").stdout)


def test_a_gated_pod_waits_for_its_gates(cluster):
    cluster.kubectl("apply", "-f", "-", input=GATED)
    row = cluster.kubectl("get", "pod", "gated").stdout.splitlines()[1].split()
    assert row[2] == "SchedulingGated"
    condition = next(c for c in get(cluster, "gated")["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (condition["status"], condition["reason"]) == ("False", "SchedulingGated")
    added = cluster.kubectl("patch", "pod", "gated", "--type=json", "-p",
                            '[{"op": "add", "path": "/spec/schedulingGates/-", "value": {"name": "x"}}]', check=False)
    assert "only deletion is allowed, but found new scheduling gate 'x'" in added.stderr
    cluster.kubectl("patch", "pod", "gated", "--type=json", "-p", '[{"op": "remove", "path": "/spec/schedulingGates"}]')
    wait_for(lambda: get(cluster, "gated")["status"].get("phase") == "Running", what="the ungated pod running")


def test_required_pod_affinity_waits_with_the_upstream_message(cluster):
    cluster.kubectl("apply", "-f", "-", input=CACHE)

    def failed() -> str:
        events = json.loads(cluster.kubectl("get", "events", "--field-selector",
                                            "involvedObject.name=cache,reason=FailedScheduling", "-o", "json").stdout)
        return events["items"][0]["message"] if events["items"] else ""

    message = wait_for(failed, what="a FailedScheduling event")
    assert message == ("0/2 nodes are available: 2 node(s) didn't match pod affinity rules. preemption: 0/2 nodes are "
                       "available: 2 Preemption is not helpful for scheduling.")
    assert get(cluster, "cache")["status"]["phase"] == "Pending"
    cluster.kubectl("apply", "-f", "-", input=WEB)
    web_node = wait_for(lambda: get(cluster, "web")["spec"].get("nodeName"), what="web placed")
    assert wait_for(lambda: get(cluster, "cache")["spec"].get("nodeName"), timeout=60, what="cache placed") == web_node
