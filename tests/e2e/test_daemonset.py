"""DaemonSets as a user sees them with the whole cluster running and the real kubectl: every node
gets one pod, `kubectl rollout status` returns, a template change rolls out with a new
ControllerRevision, `kubectl rollout history` lists both and `kubectl rollout undo` brings the old
template back; a node that joins gets its pod; `kubectl get ds` shows kubectl's columns."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cluster, ready_cluster, wait_for

pytestmark = pytest.mark.e2e

AGENT = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - {name: c, image: busybox, command: ["sleep", "3600"]}
"""


@pytest.fixture(scope="module")
def cluster():
    yield from ready_cluster(2)


def agent_pods(cluster: Cluster) -> list[dict]:
    items = json.loads(cluster.kubectl("get", "pods", "-l", "app=agent", "-o", "json").stdout)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def running_on(cluster: Cluster) -> list[str]:
    return sorted(p["spec"].get("nodeName", "") for p in agent_pods(cluster) if p["status"].get("phase") == "Running")


def test_a_daemonset_puts_one_pod_on_every_node_and_rolls_out(cluster):
    assert cluster.kubectl("apply", "-f", "-", input=AGENT).stdout.strip() == "daemonset.apps/agent created"
    wait_for(lambda: running_on(cluster) == ["node-1", "node-2"], timeout=60, what="one agent pod per node")
    status = cluster.kubectl("rollout", "status", "ds/agent", "--timeout=60s", timeout=90)
    assert 'daemon set "agent" successfully rolled out' in status.stdout
    table = cluster.kubectl("get", "ds", "agent").stdout.splitlines()
    assert table[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR",
                                "AGE"]
    assert table[1].split()[:7] == ["agent", "2", "2", "2", "2", "2", "<none>"]
    pod = agent_pods(cluster)[0]
    assert {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"} in \
        pod["spec"]["tolerations"]

    cluster.kubectl("set", "image", "ds/agent", "c=busybox:1.36")
    cluster.kubectl("rollout", "status", "ds/agent", "--timeout=90s", timeout=120)
    images = {p["spec"]["containers"][0]["image"] for p in agent_pods(cluster)}
    assert images == {"busybox:1.36"}
    history = cluster.kubectl("rollout", "history", "ds/agent").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]

    undone = cluster.kubectl("rollout", "undo", "ds/agent")
    assert undone.stdout.strip() == "daemonset.apps/agent rolled back"
    ds = json.loads(cluster.kubectl("get", "ds", "agent", "-o", "json").stdout)
    assert ds["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"
    cluster.kubectl("rollout", "status", "ds/agent", "--timeout=90s", timeout=120)
    revisions = json.loads(cluster.kubectl("get", "controllerrevisions", "-o", "json").stdout)["items"]
    assert sorted(r["revision"] for r in revisions) == [2, 3], "the rolled-back revision is renumbered"


def test_a_node_that_joins_gets_its_pod(cluster):
    cluster.start_spoke("kubelet", node="node-3")
    wait_for(lambda: running_on(cluster) == ["node-1", "node-2", "node-3"], timeout=60, what="a pod on node-3")
    ds = json.loads(cluster.kubectl("get", "ds", "agent", "-o", "json").stdout)
    wait_for(lambda: json.loads(cluster.kubectl("get", "ds", "agent", "-o", "json").stdout)["status"].get(
        "numberAvailable") == 3, what="3 available")
    assert ds["metadata"]["generation"] >= 1


def test_describe_and_cascading_delete(cluster):
    described = cluster.kubectl("describe", "ds", "agent").stdout
    assert "Desired Number of Nodes Scheduled: 3" in described
    assert "SuccessfulCreate" in described
    detail = cluster.kubectl("rollout", "history", "ds/agent", "--revision=3").stdout
    assert "Image:" in detail and "busybox" in detail
    cluster.kubectl("delete", "ds", "agent")
    wait_for(lambda: not agent_pods(cluster), timeout=60, what="the agent pods collected")
    wait_for(lambda: not json.loads(cluster.kubectl("get", "controllerrevisions", "-o", "json").stdout)["items"],
             what="the revisions collected")
