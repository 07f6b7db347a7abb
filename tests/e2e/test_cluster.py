"""What a user sees with the whole cluster running (hub + controller-manager + scheduler + three
kubelets, each its own process), driven with the real kubectl."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from tests.conftest import Cluster, ready_cluster, wait_for

pytestmark = pytest.mark.e2e

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  strategy:
    rollingUpdate: {{maxSurge: 1, maxUnavailable: 1}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: {image}
"""


@pytest.fixture(scope="module")
def cluster():
    yield from ready_cluster(3)


def get_json(cluster: Cluster, *args: str) -> dict:
    return json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)


def running_pods(cluster: Cluster, selector: str) -> list[dict]:
    pods = get_json(cluster, "pods", "-l", selector)["items"]
    return [p for p in pods if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]


def apply(cluster: Cluster, name: str, replicas: int = 3, image: str = "nginx:1.27") -> None:
    cluster.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(name=name, replicas=replicas, image=image))


def test_deployment_runs_and_rollout_status_finishes(cluster):
    apply(cluster, "web")
    cluster.kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout=70)
    pods = wait_for(lambda: len(running_pods(cluster, "app=web")) == 3 and running_pods(cluster, "app=web"),
                    what="3 running pods")
    assert all(p["spec"]["nodeName"].startswith("node-") and p["status"]["podIP"] for p in pods)
    assert len({p["spec"]["nodeName"] for p in pods}) >= 2, "the scheduler spreads the replicas"
    wide = cluster.kubectl("get", "pods", "-l", "app=web", "-o", "wide").stdout
    assert wide.count("Running") == 3


def test_a_deleted_pod_is_replaced(cluster):
    apply(cluster, "heal", replicas=2)
    before = wait_for(lambda: len(running_pods(cluster, "app=heal")) == 2 and running_pods(cluster, "app=heal"),
                      what="2 running pods")
    victim = before[0]["metadata"]["name"]
    cluster.kubectl("delete", "pod", victim, timeout=30)
    after = wait_for(lambda: (len(p := running_pods(cluster, "app=heal")) == 2
                              and victim not in {x["metadata"]["name"] for x in p} and p), what="a replacement")
    assert victim not in {p["metadata"]["name"] for p in after}


def test_a_crashing_container_backs_off(cluster):
    pod = """
apiVersion: v1
kind: Pod
metadata:
  name: burnt
  annotations: {kubekitchen.dev/crash-after: "0.5"}
spec:
  containers: [{name: cook, image: busybox}]
"""
    cluster.kubectl("apply", "-f", "-", input=pod)

    def restarts() -> int:
        status = get_json(cluster, "pod", "burnt")["status"]
        return sum(c.get("restartCount", 0) for c in status.get("containerStatuses", []))

    wait_for(lambda: restarts() >= 2, timeout=40, what="two restarts")
    wait_for(lambda: "CrashLoopBackOff" in cluster.kubectl("get", "pod", "burnt").stdout, timeout=20,
             what="CrashLoopBackOff in kubectl get")
    events = cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=burnt").stdout
    assert "BackOff" in events


def test_scale_rolling_update_and_undo(cluster):
    apply(cluster, "roll", replicas=2)
    cluster.kubectl("rollout", "status", "deployment/roll", "--timeout=60s", timeout=70)
    cluster.kubectl("scale", "deployment/roll", "--replicas=4")
    wait_for(lambda: len(running_pods(cluster, "app=roll")) == 4, what="4 pods after scale")

    seen_running: list[int] = []
    stop = threading.Event()

    def watch_counts():
        while not stop.is_set():
            seen_running.append(len(running_pods(cluster, "app=roll")))

    watcher = threading.Thread(target=watch_counts)
    watcher.start()
    try:
        cluster.kubectl("set", "image", "deployment/roll", "web=nginx:1.28")
        cluster.kubectl("rollout", "status", "deployment/roll", "--timeout=60s", timeout=70)
    finally:
        stop.set()
        watcher.join()
    images = {p["spec"]["containers"][0]["image"] for p in running_pods(cluster, "app=roll")}
    assert images == {"nginx:1.28"}
    # maxUnavailable 1: never fewer than 3 running; maxSurge 1: never more than 5 pods
    assert min(seen_running) >= 3 and max(seen_running) <= 5
    assert len(get_json(cluster, "replicasets", "-l", "app=roll")["items"]) == 2

    cluster.kubectl("rollout", "undo", "deployment/roll")
    cluster.kubectl("rollout", "status", "deployment/roll", "--timeout=60s", timeout=70)
    wait_for(lambda: {p["spec"]["containers"][0]["image"] for p in running_pods(cluster, "app=roll")} == {"nginx:1.27"},
             what="pods back on the old image")
    assert len(get_json(cluster, "replicasets", "-l", "app=roll")["items"]) == 2, "undo re-uses the old ReplicaSet"


def test_delete_deployment_cascades_or_orphans(cluster):
    apply(cluster, "gone", replicas=2)
    wait_for(lambda: len(running_pods(cluster, "app=gone")) == 2, what="2 pods")
    cluster.kubectl("delete", "deployment", "gone", timeout=30)
    wait_for(lambda: not get_json(cluster, "replicasets", "-l", "app=gone")["items"]
             and not get_json(cluster, "pods", "-l", "app=gone")["items"], what="ReplicaSet and pods gone")

    apply(cluster, "kept", replicas=2)
    wait_for(lambda: len(running_pods(cluster, "app=kept")) == 2, what="2 pods")
    cluster.kubectl("delete", "deployment", "kept", "--cascade=orphan", timeout=30)
    with pytest.raises(AssertionError):
        get_json(cluster, "deployment", "kept")
    replicasets = get_json(cluster, "replicasets", "-l", "app=kept")["items"]
    assert len(replicasets) == 1 and not replicasets[0]["metadata"].get("ownerReferences")
    assert len(running_pods(cluster, "app=kept")) == 2


def test_stopped_scheduler_leaves_pods_pending_until_it_returns(cluster):
    cluster.stop_spoke("scheduler")
    try:
        cluster.kubectl("run", "waiting", "--image=nginx", "--restart=Never")
        with httpx.Client(base_url=cluster.url, headers=cluster.auth) as client:
            for _ in range(10):
                pod = client.get("/api/v1/namespaces/default/pods/waiting").json()
                assert not pod["spec"].get("nodeName") and pod["status"]["phase"] == "Pending"
    finally:
        cluster.start_spoke("scheduler")
    wait_for(lambda: get_json(cluster, "pod", "waiting")["status"].get("phase") == "Running", what="pod placed and running")


def test_a_stopped_kubelet_means_eviction_and_rescheduling(cluster):
    apply(cluster, "evict", replicas=3)
    pods = wait_for(lambda: len(p := running_pods(cluster, "app=evict")) == 3 and p, what="3 pods")
    node = pods[0]["spec"]["nodeName"]
    cluster.stop_spoke(f"kubelet/{node}")
    try:
        wait_for(lambda: node not in cluster.ready_nodes(), timeout=30, what=f"{node} NotReady")
        assert "NotReady" in cluster.kubectl("get", "node", node).stdout
        wait_for(lambda: (len(p := running_pods(cluster, "app=evict")) == 3
                          and all(x["spec"]["nodeName"] != node for x in p)), timeout=60,
                 what="3 pods running on the other nodes")
    finally:
        cluster.start_spoke("kubelet", node=node)
    wait_for(lambda: node in cluster.ready_nodes(), timeout=30, what=f"{node} Ready again")
    taints = get_json(cluster, "node", node)["spec"].get("taints") or []
    assert not [t for t in taints if t["key"] == "node.kubernetes.io/unreachable"]
