"""The scheduler as its own process (`manage.py runcomponent scheduler`) against a real hub, seen
through the real kubectl: pods get nodes, spread, an impossible pod says why and is placed once a
fitting node appears, and with the scheduler stopped pods stay Pending until it is back.

Nodes are plain Node objects created through the API (Ready, with allocatable); no kubelet runs,
so bound pods stay Pending — only `spec.nodeName` and the PodScheduled condition matter here.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from functools import partial
from typing import Any

import httpx
import pytest

from control.kinds.quantity import parse_quantity
from tests.conftest import Hub, Spoke
from tests.conftest import wait_for as conftest_wait_for

pytestmark = pytest.mark.e2e

NS = "default"


def node(name: str, *, cpu: str = "4", pods: int = 110, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": str(pods)},
                       "capacity": {"cpu": cpu, "memory": "8Gi", "pods": str(pods)},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def pod(name: str, *, cpu: str = "100m", owner: str = "", node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"app": owner or name}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                    "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, owner)),
                                    "controller": True}]
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "nginx:1.27",
                                            "resources": {"requests": {"cpu": cpu, "memory": "32Mi"}}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


wait_for = partial(conftest_wait_for, timeout=20.0, interval=0.1)


@pytest.fixture(scope="module")
def cluster():
    hub = Hub().start()
    scheduler = Spoke(hub, "scheduler")
    api = httpx.Client(base_url=hub.url, headers=hub.auth, timeout=30)
    try:
        for i in range(1, 4):
            assert api.post("/api/v1/nodes", json=node(f"node-{i}")).status_code == 201
        scheduler.start()
        yield hub, api, scheduler
    finally:
        scheduler.stop()
        api.close()
        hub.stop()


def create(api: httpx.Client, obj: dict[str, Any]) -> None:
    response = api.post(f"/api/v1/namespaces/{NS}/pods", json=obj)
    assert response.status_code == 201, response.text


def get(api: httpx.Client, name: str) -> dict[str, Any]:
    return api.get(f"/api/v1/namespaces/{NS}/pods/{name}").json()


def wide(hub: Hub) -> dict[str, str]:
    """pod name -> NODE column of `kubectl get pods -o wide`."""
    lines = hub.kubectl("get", "pods", "-n", NS, "-o", "wide").stdout.splitlines()
    header = lines[0].split()
    column = header.index("NODE")
    return {line.split()[0]: line.split()[column] for line in lines[1:]}


def test_pods_get_nodes_and_siblings_spread(cluster):
    hub, api, _ = cluster
    for i in range(12):
        create(api, pod(f"web-{i}", owner="web"))
    placed = wait_for(lambda: (lambda w: w if all(w.get(f"web-{i}", "<none>") != "<none>" for i in range(12)) else None)(wide(hub)),
                      what="12 pods to get nodes")
    assert Counter(placed[f"web-{i}"] for i in range(12)) == {"node-1": 4, "node-2": 4, "node-3": 4}
    conditions = {c["type"]: c["status"] for c in get(api, "web-0")["status"]["conditions"]}
    assert conditions["PodScheduled"] == "True"
    describe = hub.kubectl("describe", "pod", "web-0", "-n", NS).stdout
    assert "Scheduled" in describe and f"Successfully assigned {NS}/web-0 to {placed['web-0']}" in describe


def test_an_impossible_pod_says_why_and_is_placed_when_a_fitting_node_appears(cluster):
    hub, api, _ = cluster
    create(api, pod("needs-ssd", node_selector={"disk": "ssd"}))

    def failed() -> bool:
        return "FailedScheduling" in hub.kubectl("describe", "pod", "needs-ssd", "-n", NS).stdout
    wait_for(failed, what="a FailedScheduling event")
    describe = hub.kubectl("describe", "pod", "needs-ssd", "-n", NS).stdout
    assert "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector." in describe
    condition = wait_for(lambda: next((c for c in get(api, "needs-ssd")["status"].get("conditions") or []
                                       if c["type"] == "PodScheduled"), None), what="PodScheduled=False")
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert wide(hub)["needs-ssd"] == "<none>"

    assert api.post("/api/v1/nodes", json=node("node-ssd", labels={"disk": "ssd"})).status_code == 201
    wait_for(lambda: wide(hub)["needs-ssd"] == "node-ssd", what="needs-ssd to land on node-ssd")
    conditions = [c for c in get(api, "needs-ssd")["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert [c["status"] for c in conditions] == ["True"]


def test_with_the_scheduler_stopped_pods_stay_pending_until_it_is_back(cluster):
    hub, api, scheduler = cluster
    scheduler.stop()
    burst = 150
    for i in range(burst):
        create(api, pod(f"burst-{i}", cpu="100m", owner="burst"))
    time.sleep(1.0)  # a real process: give a (wrongly) running scheduler the chance to act
    listing = hub.kubectl("get", "pods", "-n", NS, "-o", "wide", "-l", "app=burst").stdout
    assert listing.count("Pending") == burst and "node-" not in listing

    scheduler.start()
    started = time.monotonic()

    def unbound() -> int:
        return len(api.get(f"/api/v1/namespaces/{NS}/pods", params={"fieldSelector": "spec.nodeName=",
                                                                      "labelSelector": "app=burst"}).json()["items"])
    # room left: 36 + 36 + 36 (4 cores, 4 web pods each) + 39 (node-ssd) pods of 100m
    room = 147
    wait_for(lambda: unbound() == burst - room, timeout=30, what=f"{room} pods to be bound")
    elapsed = time.monotonic() - started
    print(f"\n{room} pods bound in {elapsed:.2f}s after the scheduler started ({room / elapsed:.0f} pods/s)")

    # never overfilled, though every binding raced the watch: requests per node stay within allocatable
    pods = api.get(f"/api/v1/namespaces/{NS}/pods").json()["items"]
    used: Counter = Counter()
    for p in pods:
        if p["spec"].get("nodeName"):
            used[p["spec"]["nodeName"]] += sum(round(parse_quantity(c["resources"]["requests"]["cpu"]) * 1000)
                                               for c in p["spec"]["containers"])
    assert sorted(used.values()) == [4000, 4000, 4000, 4000], "millicores requested per node"
    left = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
    assert len(left) == burst - room
    wait_for(lambda: "0/4 nodes are available: 4 Insufficient cpu." in
             hub.kubectl("describe", "pod", left[0], "-n", NS).stdout, what="Insufficient cpu")
