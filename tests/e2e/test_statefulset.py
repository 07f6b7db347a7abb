"""A StatefulSet as a user sees it with the whole cluster running and the real kubectl: a headless
Service and a StatefulSet of 3 with a volumeClaimTemplate; web-0..2 are created in order, each
after its claim, the claims are Bound to provisioned volumes; `web-0.web.default.svc.cluster.local`
resolves to web-0's IP; scaling 3 -> 5 -> 2 adds in order and removes in reverse, one at a time;
the claims of the removed pods stay; an immutable change is refused with Kubernetes' message."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, Cluster, wait_for

pytestmark = pytest.mark.e2e

MANIFEST = """
apiVersion: v1
kind: Service
metadata: {name: web, labels: {app: web}}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{name: http, containerPort: 80}]
        volumeMounts: [{name: data, mountPath: /usr/share/nginx/html}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=1).start()
    wait_for(lambda: len(running.ready_nodes()) == 1, what="1 Ready node")
    yield running
    running.stop()


def get_json(cluster: Cluster, *args: str) -> dict:
    return json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)


def ready_pods(cluster: Cluster) -> list[str]:
    pods = get_json(cluster, "pods", "-l", "app=web")["items"]
    return sorted(p["metadata"]["name"] for p in pods if p["status"].get("phase") == "Running"
                  and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
                  and not p["metadata"].get("deletionTimestamp"))


def pod_names(cluster: Cluster) -> list[str]:
    return sorted(p["metadata"]["name"] for p in get_json(cluster, "pods", "-l", "app=web")["items"])


def set_events(cluster: Cluster, reason: str) -> list[str]:
    """The StatefulSet's events of one reason, in the order the hub stored them."""
    events = get_json(cluster, "events", "--field-selector", "involvedObject.name=web,involvedObject.kind=StatefulSet")
    items = sorted(events["items"], key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [e["message"] for e in items if e["reason"] == reason]


def test_pods_come_up_in_order_each_with_a_bound_claim(cluster):
    cluster.kubectl("apply", "-f", "-", input=MANIFEST)
    wait_for(lambda: ready_pods(cluster) == ["web-0", "web-1", "web-2"], timeout=60, what="web-0..2 Ready")
    assert set_events(cluster, "SuccessfulCreate") == [
        "create Claim data-web-0 Pod web-0 in StatefulSet web success", "create Pod web-0 in StatefulSet web successful",
        "create Claim data-web-1 Pod web-1 in StatefulSet web success", "create Pod web-1 in StatefulSet web successful",
        "create Claim data-web-2 Pod web-2 in StatefulSet web success", "create Pod web-2 in StatefulSet web successful"]
    pods = {p["metadata"]["name"]: p for p in get_json(cluster, "pods", "-l", "app=web")["items"]}
    for i in range(3):
        pod = pods[f"web-{i}"]
        assert pod["spec"]["hostname"] == f"web-{i}" and pod["spec"]["subdomain"] == "web"
        assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == str(i)
        assert {"name": "data", "persistentVolumeClaim": {"claimName": f"data-web-{i}"}} in pod["spec"]["volumes"]
    # each pod was created only once the one before it was Ready
    for i in range(2):
        ready_at = next(c["lastTransitionTime"] for c in pods[f"web-{i}"]["status"]["conditions"] if c["type"] == "Ready")
        assert pods[f"web-{i + 1}"]["metadata"]["creationTimestamp"] >= ready_at
    wait_for(lambda: [c["status"]["phase"] for c in get_json(cluster, "pvc")["items"]] == ["Bound"] * 3,
             what="3 Bound claims")
    table = cluster.kubectl("get", "pvc").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                                "VOLUMEATTRIBUTESCLASS", "AGE"]
    rows = [line.split() for line in table[1:]]
    assert [(r[0], r[1], r[3], r[4], r[5]) for r in rows] == [(f"data-web-{i}", "Bound", "1Gi", "RWO", "standard")
                                                              for i in range(3)]
    volumes = get_json(cluster, "pv")["items"]
    assert sorted(v["spec"]["claimRef"]["name"] for v in volumes) == ["data-web-0", "data-web-1", "data-web-2"]
    assert all(v["status"]["phase"] == "Bound" and v["metadata"]["name"].startswith("pvc-") for v in volumes)
    sts_table = cluster.kubectl("get", "sts").stdout.splitlines()
    assert sts_table[0].split() == ["NAME", "READY", "AGE"] and sts_table[1].split()[:2] == ["web", "3/3"]
    status = get_json(cluster, "sts", "web")["status"]
    assert status["currentRevision"] == status["updateRevision"] and status["updatedReplicas"] == 3


def test_each_pod_has_a_stable_dns_name(cluster):
    ip = wait_for(lambda: get_json(cluster, "pod", "web-0")["status"].get("podIP"), what="web-0's IP")
    wait_for(lambda: any(a.get("hostname") == "web-0" for s in get_json(cluster, "endpoints", "web").get("subsets", [])
                         for a in s.get("addresses", [])), what="web-0's hostname in the Endpoints")
    out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "resolve", "web-0.web.default.svc.cluster.local",
                          "--server", cluster.url], cwd=ROOT, env=cluster.env, check=True, capture_output=True,
                         text=True, timeout=60).stdout
    assert "web-0.web.default.svc.cluster.local" in out and f"Address: {ip}" in out


def test_scaling_adds_in_order_removes_in_reverse_and_keeps_the_claims(cluster):
    cluster.kubectl("scale", "statefulset", "web", "--replicas=5")
    wait_for(lambda: ready_pods(cluster) == [f"web-{i}" for i in range(5)], timeout=60, what="web-0..4 Ready")
    assert set_events(cluster, "SuccessfulCreate")[-4:] == [
        "create Claim data-web-3 Pod web-3 in StatefulSet web success", "create Pod web-3 in StatefulSet web successful",
        "create Claim data-web-4 Pod web-4 in StatefulSet web success", "create Pod web-4 in StatefulSet web successful"]
    cluster.kubectl("scale", "statefulset", "web", "--replicas=2")
    wait_for(lambda: pod_names(cluster) == ["web-0", "web-1"], timeout=60, what="only web-0 and web-1 left")
    assert set_events(cluster, "SuccessfulDelete") == [f"delete Pod web-{i} in StatefulSet web successful"
                                                       for i in (4, 3, 2)]
    claims = get_json(cluster, "pvc")["items"]
    assert [(c["metadata"]["name"], c["status"]["phase"]) for c in claims] == [(f"data-web-{i}", "Bound")
                                                                              for i in range(5)]
    assert "data-web-3" in cluster.kubectl("get", "pvc").stdout and "data-web-4" in cluster.kubectl("get", "pvc").stdout


def test_an_immutable_change_is_refused_with_kubernetes_message(cluster):
    refused = cluster.kubectl("patch", "sts", "web", "--type=merge", "-p", '{"spec":{"serviceName":"other"}}',
                              check=False)
    assert refused.returncode != 0
    assert ('The StatefulSet "web" is invalid: spec: Forbidden: updates to statefulset spec for fields other than '
            "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
            "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden") in refused.stderr
    assert get_json(cluster, "sts", "web")["spec"]["serviceName"] == "web"
