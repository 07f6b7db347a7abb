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

from tests.conftest import ROOT, Cluster, ready_cluster, wait_for

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
    yield from ready_cluster(1)


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
    # the tenth SuccessfulCreate about the set within ten minutes is combined, as client-go's correlator does
    assert set_events(cluster, "SuccessfulCreate")[-4:] == [
        "create Claim data-web-3 Pod web-3 in StatefulSet web success", "create Pod web-3 in StatefulSet web successful",
        "create Claim data-web-4 Pod web-4 in StatefulSet web success",
        "(combined from similar events): create Pod web-4 in StatefulSet web successful"]
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


def test_a_deleted_pod_comes_back_under_its_name_on_the_same_claim(cluster):
    old_uid = get_json(cluster, "pod", "web-0")["metadata"]["uid"]
    volume = get_json(cluster, "pvc", "data-web-0")["spec"]["volumeName"]
    cluster.kubectl("delete", "pod", "web-0", "--wait=false")
    wait_for(lambda: "web-0" in ready_pods(cluster) and get_json(cluster, "pod", "web-0")["metadata"]["uid"] != old_uid,
             timeout=60, what="a new web-0")
    pod = get_json(cluster, "pod", "web-0")
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}} in pod["spec"]["volumes"]
    assert get_json(cluster, "pvc", "data-web-0")["spec"]["volumeName"] == volume


def test_rolling_update_history_and_undo(cluster):
    cluster.kubectl("set", "image", "statefulset/web", "nginx=nginx:1.28")
    done = cluster.kubectl("rollout", "status", "statefulset/web", "--timeout=90s", timeout=120)
    assert "partitioned roll out complete" in done.stdout or "roll out complete" in done.stdout
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
              for p in get_json(cluster, "pods", "-l", "app=web")["items"]}
    assert images == {"web-0": "nginx:1.28", "web-1": "nginx:1.28"}
    assert set_events(cluster, "SuccessfulDelete")[-2:] == ["delete Pod web-1 in StatefulSet web successful",
                                                            "delete Pod web-0 in StatefulSet web successful"]
    history = cluster.kubectl("rollout", "history", "statefulset/web").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    revisions = get_json(cluster, "controllerrevisions")["items"]
    assert sorted(r["revision"] for r in revisions) == [1, 2]
    assert all(r["metadata"]["name"].startswith("web-") for r in revisions)
    cluster.kubectl("rollout", "undo", "statefulset/web")
    cluster.kubectl("rollout", "status", "statefulset/web", "--timeout=90s", timeout=120)
    sts = get_json(cluster, "sts", "web")
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert sorted(r["revision"] for r in get_json(cluster, "controllerrevisions")["items"]) == [2, 3]
    wait_for(lambda: {p["spec"]["containers"][0]["image"] for p in get_json(cluster, "pods", "-l", "app=web")["items"]}
             == {"nginx:1.27"}, timeout=60, what="pods back on nginx:1.27")


DELETING = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  podManagementPolicy: Parallel
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Delete}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: db, image: redis:7}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def claims_of(cluster: Cluster, app: str) -> list[str]:
    return sorted(c["metadata"]["name"] for c in get_json(cluster, "pvc", "-l", f"app={app}")["items"])


def volumes_of(cluster: Cluster, app: str) -> list[str]:
    return sorted(v["spec"]["claimRef"]["name"] for v in get_json(cluster, "pv")["items"]
                  if v["spec"]["claimRef"]["name"].startswith(f"data-{app}-"))


def test_the_delete_retention_policy_removes_claims_and_their_volumes(cluster):
    cluster.kubectl("apply", "-f", "-", input=DELETING)
    wait_for(lambda: volumes_of(cluster, "db") == ["data-db-0", "data-db-1"], timeout=60, what="db's two volumes")
    cluster.kubectl("scale", "statefulset", "db", "--replicas=1")
    wait_for(lambda: claims_of(cluster, "db") == ["data-db-0"], timeout=60, what="data-db-1 deleted with db-1")
    wait_for(lambda: volumes_of(cluster, "db") == ["data-db-0"], timeout=60, what="its volume deleted (Delete)")
    cluster.kubectl("delete", "statefulset", "db")
    wait_for(lambda: claims_of(cluster, "db") == [], timeout=60, what="data-db-0 deleted with the set")
    wait_for(lambda: volumes_of(cluster, "db") == [], timeout=60, what="every db volume deleted")
    assert claims_of(cluster, "web") == [f"data-web-{i}" for i in range(5)], "Retain keeps web's claims"


def test_a_claim_in_use_is_kept_until_its_pod_is_gone(cluster):
    claim = get_json(cluster, "pvc", "data-web-1")
    volume = claim["spec"]["volumeName"]
    cluster.kubectl("delete", "pvc", "data-web-1", "--wait=false")
    table = cluster.kubectl("get", "pvc", "data-web-1").stdout.splitlines()
    assert table[1].split()[:2] == ["data-web-1", "Terminating"]
    cluster.kubectl("scale", "statefulset", "web", "--replicas=1")
    wait_for(lambda: cluster.kubectl("get", "pvc", "data-web-1", check=False).returncode != 0, timeout=60,
             what="data-web-1 gone once web-1 is")
    wait_for(lambda: cluster.kubectl("get", "pv", volume, check=False).returncode != 0, timeout=60,
             what="its volume deleted (the default class reclaims with Delete)")
