"""What kube-apiserver keeps on its own, seen with the real kubectl: the `default/kubernetes`
Service and Endpoints (back after a delete), and the revisions of a rollout undo
(`kubectl rollout history`, the re-used ReplicaSet's `revision-history`)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Hub, Spoke, wait_for

pytestmark = pytest.mark.e2e

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: hist}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: hist}}}}
  template:
    metadata: {{labels: {{app: hist}}}}
    spec: {{containers: [{{name: web, image: "{image}"}}]}}
"""


@pytest.fixture(scope="module")
def hub():
    """A hub and the controller-manager only: no node runs pods, the revisions are the point."""
    running = Hub().start()
    manager = Spoke(running, "controller-manager").start()
    yield running
    manager.stop()
    running.stop()


def get_json(hub: Hub, *args: str) -> dict:
    return json.loads(hub.kubectl("get", *args, "-o", "json").stdout)


def test_kubectl_get_svc_kubernetes(hub):
    row = wait_for(lambda: hub.kubectl("get", "svc", "kubernetes", "--no-headers", check=False).stdout.split(),
                   what="the kubernetes Service")
    assert row[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    svc = get_json(hub, "svc", "kubernetes")
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["ports"][0]["targetPort"] == hub.port
    endpoints = hub.kubectl("get", "endpoints", "kubernetes", "--no-headers").stdout.split()
    assert endpoints[:2] == ["kubernetes", f"127.0.0.1:{hub.port}"]


def test_a_deleted_kubernetes_service_comes_back(hub):
    wait_for(lambda: hub.kubectl("get", "svc", "kubernetes", check=False).returncode == 0, what="the Service")
    first_uid = get_json(hub, "svc", "kubernetes")["metadata"]["uid"]
    hub.kubectl("delete", "svc", "kubernetes")
    hub.kubectl("delete", "endpoints", "kubernetes")
    back = wait_for(lambda: (r := hub.kubectl("get", "svc", "kubernetes", "-o", "json", check=False)).returncode == 0
                    and json.loads(r.stdout), timeout=25, what="the Service recreated")
    assert back["metadata"]["uid"] != first_uid and back["spec"]["clusterIP"] == "10.96.0.1"
    wait_for(lambda: hub.kubectl("get", "endpoints", "kubernetes", check=False).returncode == 0, timeout=25,
             what="the Endpoints recreated")


def revisions(hub: Hub) -> dict[str, dict]:
    """image → the annotations of its ReplicaSet."""
    items = get_json(hub, "replicasets", "-l", "app=hist")["items"]
    return {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["metadata"].get("annotations") or {}
            for rs in items}


def test_rollout_undo_records_the_revision_history(hub):
    hub.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(image="nginx:1.27"))
    wait_for(lambda: "nginx:1.27" in revisions(hub), what="the first ReplicaSet")
    hub.kubectl("set", "image", "deployment/hist", "web=nginx:1.28")
    wait_for(lambda: revisions(hub).get("nginx:1.28", {}).get("deployment.kubernetes.io/revision") == "2",
             what="revision 2")
    hub.kubectl("rollout", "undo", "deployment/hist")
    wait_for(lambda: revisions(hub)["nginx:1.27"].get("deployment.kubernetes.io/revision") == "3", what="revision 3")
    assert revisions(hub)["nginx:1.27"]["deployment.kubernetes.io/revision-history"] == "1"

    history = hub.kubectl("rollout", "history", "deployment/hist").stdout.split("\n")
    assert [line.split()[0] for line in history[2:] if line.strip()] == ["2", "3"]
    shown = hub.kubectl("rollout", "history", "deployment/hist", "--revision=3").stdout
    assert "nginx:1.27" in shown

    hub.kubectl("rollout", "undo", "deployment/hist")
    wait_for(lambda: revisions(hub)["nginx:1.28"].get("deployment.kubernetes.io/revision") == "4", what="revision 4")
    assert revisions(hub)["nginx:1.28"]["deployment.kubernetes.io/revision-history"] == "2"
    hub.kubectl("rollout", "undo", "deployment/hist")
    wait_for(lambda: revisions(hub)["nginx:1.27"].get("deployment.kubernetes.io/revision") == "5", what="revision 5")
    assert revisions(hub)["nginx:1.27"]["deployment.kubernetes.io/revision-history"] == "1,3"
