"""PriorityClass preemption as a user sees it with the real kubectl: `kubectl create priorityclass`
(protobuf), `kubectl get pc` with the system classes, a node full of low-priority guests, then a
VIP pod whose scheduler evicts one guest (Preempted event, graceful delete) and seats the VIP; the
guest's Deployment replacement waits Pending. A class above one billion is refused as upstream."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cluster, ready_cluster, wait_for

pytestmark = pytest.mark.e2e

GUESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: guests}
spec:
  replicas: 4
  selector: {matchLabels: {app: guests}}
  template:
    metadata: {labels: {app: guests}}
    spec:
      priorityClassName: walk-in
      terminationGracePeriodSeconds: 2
      containers:
      - {name: diner, image: nginx, resources: {requests: {cpu: "1"}}}
"""
VIP = """
apiVersion: v1
kind: Pod
metadata: {name: vip}
spec:
  priorityClassName: vip
  containers:
  - {name: diner, image: nginx, resources: {requests: {cpu: "1"}}}
"""


@pytest.fixture(scope="module")
def cluster():
    yield from ready_cluster(1)


def pods(cluster: Cluster) -> list[dict]:
    return json.loads(cluster.kubectl("get", "pods", "-o", "json").stdout)["items"]


def running(cluster: Cluster, prefix: str) -> list[str]:
    return [p["metadata"]["name"] for p in pods(cluster) if p["metadata"]["name"].startswith(prefix)
            and p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]


def test_classes_through_kubectl(cluster):
    made = cluster.kubectl("create", "priorityclass", "vip", "--value=1000000", "--description=VIP guests")
    assert made.stdout.strip() == "priorityclass.scheduling.k8s.io/vip created"
    cluster.kubectl("create", "priorityclass", "walk-in", "--value=10")
    listing = cluster.kubectl("get", "pc").stdout
    print(listing)
    table = listing.splitlines()
    assert table[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows["system-node-critical"][1:3] == ["2000001000", "false"]
    assert rows["system-cluster-critical"][1:3] == ["2000000000", "false"]
    assert rows["vip"][1] == "1000000" and rows["vip"][-1] == "PreemptLowerPriority"
    greedy = cluster.kubectl("create", "priorityclass", "greedy", "--value=1000000001", check=False)
    assert greedy.returncode == 1
    assert greedy.stderr.strip() == ('error: failed to create priorityclass: PriorityClass.scheduling.k8s.io "greedy" '
                                     "is invalid: value: Forbidden: maximum allowed value of a user defined priority "
                                     "is 1000000000")
    missing = cluster.kubectl("run", "lost", "--image=nginx", "--overrides",
                              json.dumps({"spec": {"priorityClassName": "platinum"}}), check=False)
    assert 'pods "lost" is forbidden: no PriorityClass with name platinum was found' in missing.stderr


def test_a_vip_preempts_one_guest_and_runs(cluster):
    cluster.kubectl("apply", "-f", "-", input=GUESTS)
    wait_for(lambda: len(running(cluster, "guests-")) == 4, timeout=60, what="4 guests Running")
    before = set(running(cluster, "guests-"))
    cluster.kubectl("apply", "-f", "-", input=VIP)
    wait_for(lambda: running(cluster, "vip"), timeout=60, what="the VIP Running")
    vip = json.loads(cluster.kubectl("get", "pod", "vip", "-o", "json").stdout)
    assert vip["spec"]["priority"] == 1000000 and vip["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    events = json.loads(cluster.kubectl("get", "events", "--field-selector", "reason=Preempted", "-o",
                                        "json").stdout)["items"]
    assert len(events) == 1, events
    [event] = events
    victim = event["involvedObject"]["name"]
    assert victim in before and event["message"] == f"Preempted by pod {vip['metadata']['uid']} on node " \
                                                     f"{vip['spec']['nodeName']}"
    wait_for(lambda: victim not in {p["metadata"]["name"] for p in pods(cluster)}, timeout=30, what="victim gone")
    assert len(running(cluster, "guests-")) == 3
    pending = [p for p in pods(cluster) if p["metadata"]["name"].startswith("guests-")
               and p["status"].get("phase") == "Pending"]
    assert len(pending) == 1, "the replacement guest waits: no lower-priority pod is left to evict"
    wait_for(lambda: "Insufficient cpu" in cluster.kubectl("get", "events", "--field-selector",
                                                           f"involvedObject.name={pending[0]['metadata']['name']}"
                                                           ).stdout, timeout=30, what="FailedScheduling")
    print(cluster.kubectl("get", "pods", "-o", "wide").stdout)
    print(cluster.kubectl("get", "events", "--sort-by=.lastTimestamp").stdout)
