"""The controller-manager as its own process against a real hub, driven with the real kubectl:
no scheduler and no kubelet, so pods stay Pending unless a test plays the kubelet's part by
writing pod status itself."""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta, timezone
from functools import partial

import httpx
import pytest

from tests.conftest import Hub, Spoke, wait_for

pytestmark = pytest.mark.e2e

PACE = {"KK_PACE": "workshop"}


@pytest.fixture(scope="module")
def cluster():
    hub = Hub(PACE).start()
    manager = Spoke(hub, "controller-manager").start()
    try:
        yield hub
    finally:
        manager.stop()
        hub.stop()


@pytest.fixture
def api(cluster):
    with httpx.Client(base_url=cluster.url, headers=cluster.auth, timeout=10) as client:
        yield client


@pytest.fixture
def ns(cluster):
    name = f"cm-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("apply", "-f", "-", input=f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n")
    return name


eventually = partial(wait_for, timeout=15.0, interval=0.1)


def items(api, path):
    return api.get(path).json().get("items") or []


def deployment(name, replicas=3, image="nginx:1.25"):
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: app, image: "{image}", ports: [{{name: http, containerPort: 8080}}]}}]
"""


def test_a_deployment_gets_a_replicaset_and_pods_and_scales(cluster, api, ns):
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=deployment("web"))
    pods = f"/api/v1/namespaces/{ns}/pods"
    eventually(lambda: len(items(api, pods)) == 3, timeout=20)
    [rs] = items(api, f"/apis/apps/v1/namespaces/{ns}/replicasets")
    assert rs["metadata"]["name"].startswith("web-") and rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert all(p["status"]["phase"] == "Pending" for p in items(api, pods))
    assert all(p["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"] for p in items(api, pods))
    cluster.kubectl("scale", "-n", ns, "deployment/web", "--replicas=5")
    eventually(lambda: len(items(api, pods)) == 5)
    victim = items(api, pods)[0]["metadata"]["name"]
    cluster.kubectl("delete", "-n", ns, "pod", victim)
    eventually(lambda: len(items(api, pods)) == 5 and victim not in {p["metadata"]["name"] for p in items(api, pods)})
    status = eventually(lambda: (d := api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json())["status"].get("replicas") == 5 and d["status"])
    assert status["updatedReplicas"] == 5 and status["observedGeneration"] == 2


def test_a_quota_that_refuses_a_pod_is_reported_and_the_set_heals_when_it_is_raised(cluster, api, ns):
    cluster.kubectl("create", "quota", "q", "--hard=pods=2", "-n", ns)
    replicaset = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "nginx:1.25"}]}
"""
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=replicaset)
    pods = f"/api/v1/namespaces/{ns}/pods"
    eventually(lambda: "FailedCreate" in cluster.kubectl("get", "events", "-n", ns).stdout, timeout=30)
    assert len(items(api, pods)) == 2
    events = cluster.kubectl("get", "events", "-n", ns, "--field-selector", "reason=FailedCreate", "-o", "json").stdout
    event = json.loads(events)["items"][0]  # one per refused create (each names its generated pod)
    assert event["type"] == "Warning" and event["involvedObject"]["name"] == "web"
    assert event["message"].startswith("Error creating: pods ") and "exceeded quota: q" in event["message"]
    described = cluster.kubectl("describe", "rs", "web", "-n", ns).stdout
    assert "ReplicaFailure" in described and "FailedCreate" in described and "exceeded quota: q" in described
    cluster.kubectl("patch", "quota", "q", "-n", ns, "--type=merge", "-p", '{"spec":{"hard":{"pods":"3"}}}')
    eventually(lambda: len(items(api, pods)) == 3, timeout=90, interval=0.5)  # the back-off, not the RS, brings it
    rs = api.get(f"/apis/apps/v1/namespaces/{ns}/replicasets/web").json()
    assert rs["metadata"]["generation"] == 1, "the ReplicaSet was not touched"
    eventually(lambda: not api.get(f"/apis/apps/v1/namespaces/{ns}/replicasets/web").json()["status"].get("conditions"))


def test_deleting_a_deployment_takes_its_replicaset_and_pods(cluster, api, ns):
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=deployment("web", 2))
    eventually(lambda: len(items(api, f"/api/v1/namespaces/{ns}/pods")) == 2, timeout=20)
    cluster.kubectl("delete", "-n", ns, "deployment", "web")
    eventually(lambda: not items(api, f"/apis/apps/v1/namespaces/{ns}/replicasets")
               and not items(api, f"/api/v1/namespaces/{ns}/pods"))


def test_foreground_deletion_removes_dependents_before_the_owner(cluster, api, ns):
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=deployment("web", 2))
    eventually(lambda: len(items(api, f"/api/v1/namespaces/{ns}/pods")) == 2, timeout=20)
    cluster.kubectl("delete", "-n", ns, "deployment", "web", "--cascade=foreground", timeout=30)
    assert items(api, f"/apis/apps/v1/namespaces/{ns}/replicasets") == []
    assert items(api, f"/api/v1/namespaces/{ns}/pods") == []


def test_cascade_orphan_leaves_the_replicaset_without_an_owner(cluster, api, ns):
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=deployment("web", 2))
    eventually(lambda: len(items(api, f"/api/v1/namespaces/{ns}/pods")) == 2, timeout=20)
    cluster.kubectl("delete", "-n", ns, "deployment", "web", "--cascade=orphan")
    eventually(lambda: api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").status_code == 404)
    [rs] = items(api, f"/apis/apps/v1/namespaces/{ns}/replicasets")
    assert not rs["metadata"].get("ownerReferences")
    time.sleep(1)
    assert len(items(api, f"/api/v1/namespaces/{ns}/pods")) == 2, "the orphaned ReplicaSet keeps its pods"


def test_a_service_gets_endpoints_from_ready_and_not_ready_pods(cluster, api, ns):
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=deployment("web", 2))
    service = f"""
apiVersion: v1
kind: Service
metadata: {{name: web}}
spec:
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: http}}]
"""
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=service)
    pods = eventually(lambda: len(p := items(api, f"/api/v1/namespaces/{ns}/pods")) == 2 and p, timeout=20)
    for i, (pod, ready) in enumerate(zip(pods, ("True", "False"))):
        patch = {"status": {"podIP": f"10.244.0.{10 + i}", "conditions": [{"type": "Ready", "status": ready}]}}
        response = api.patch(f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}/status", content=json.dumps(patch),
                             headers={"Content-Type": "application/merge-patch+json"})
        assert response.status_code == 200, response.text

    def subsets():
        found = api.get(f"/api/v1/namespaces/{ns}/endpoints/web").json().get("subsets") or []
        return found if found and found[0].get("addresses") and found[0].get("notReadyAddresses") else None

    [subset] = eventually(subsets)
    assert subset["addresses"][0]["ip"] == "10.244.0.10"
    assert subset["addresses"][0]["targetRef"]["name"] == pods[0]["metadata"]["name"]
    assert subset["notReadyAddresses"][0]["ip"] == "10.244.0.11"
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    shown = cluster.kubectl("get", "endpoints", "web", "-n", ns).stdout
    assert "10.244.0.10:8080" in shown
    cluster.kubectl("delete", "-n", ns, "service", "web")
    eventually(lambda: api.get(f"/api/v1/namespaces/{ns}/endpoints/web").status_code == 404)


def test_deleting_a_namespace_empties_it_and_it_disappears(cluster, api, ns):
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=deployment("web", 2))
    cluster.kubectl("apply", "-n", ns, "-f", "-", input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n")
    eventually(lambda: len(items(api, f"/api/v1/namespaces/{ns}/pods")) == 2, timeout=20)
    cluster.kubectl("delete", "namespace", ns, timeout=40)
    assert api.get(f"/api/v1/namespaces/{ns}").status_code == 404
    for path in (f"/api/v1/namespaces/{ns}/pods", f"/api/v1/namespaces/{ns}/configmaps",
                 f"/apis/apps/v1/namespaces/{ns}/deployments", f"/apis/apps/v1/namespaces/{ns}/replicasets"):
        assert items(api, path) == []


def test_a_node_with_a_stale_lease_turns_not_ready_and_is_tainted(cluster, api):
    name = f"node-{uuid.uuid4().hex[:6]}"
    then = datetime.now(timezone.utc) - timedelta(minutes=5)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}}
    assert api.post("/api/v1/nodes", json=node).status_code == 201
    status = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                         "message": "kubelet is posting ready status",
                                         "lastHeartbeatTime": then.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                         "lastTransitionTime": then.strftime("%Y-%m-%dT%H:%M:%SZ")}]}}
    response = api.patch(f"/api/v1/nodes/{name}/status", content=json.dumps(status),
                         headers={"Content-Type": "application/merge-patch+json"})
    assert response.status_code == 200, response.text
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": name, "namespace": "kube-node-lease"},
             "spec": {"holderIdentity": name, "leaseDurationSeconds": 4,
                      "renewTime": then.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}}
    api.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-node-lease"}})
    assert api.post("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", json=lease).status_code == 201
    # created just now: stale once the workshop grace (15 s) has passed since its creation
    eventually(lambda: "NotReady" in cluster.kubectl("get", "node", name).stdout, timeout=30, interval=0.5)
    node = eventually(lambda: (n := api.get(f"/api/v1/nodes/{name}").json())["spec"].get("taints") and n)
    assert {(t["key"], t["effect"]) for t in node["spec"]["taints"]} == {
        ("node.kubernetes.io/unreachable", "NoExecute"), ("node.kubernetes.io/unreachable", "NoSchedule")}
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("Unknown", "NodeStatusUnknown")
