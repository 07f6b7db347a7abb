"""A ReplicationController as a user sees it with the whole cluster running: the classic nginx RC of
kubernetes.io through the real kubectl (create, get rc, scale 3 -> 5, delete takes its pods with
it), then the official Python client (create, list, patch the scale, read the status)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.conftest import Cluster, ready_cluster, wait_for

pytestmark = pytest.mark.e2e

# https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/ (replication.yaml)
MANIFEST = """
apiVersion: v1
kind: ReplicationController
metadata:
  name: nginx
spec:
  replicas: 3
  selector:
    app: nginx
  template:
    metadata:
      name: nginx
      labels:
        app: nginx
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: nginx
        image: nginx
        ports:
        - containerPort: 80
"""


@pytest.fixture(scope="module")
def cluster():
    yield from ready_cluster(1)


def pods(cluster: Cluster, selector: str, namespace: str = "default") -> list[dict]:
    out = cluster.kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "json").stdout
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


def running(cluster: Cluster, selector: str, namespace: str = "default") -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods(cluster, selector, namespace)
                  if p["status"].get("phase") == "Running")


def test_kubectl_creates_lists_scales_and_deletes_the_classic_nginx_rc(cluster):
    out = cluster.kubectl("create", "-f", "-", input=MANIFEST).stdout
    assert out.strip() == "replicationcontroller/nginx created"
    wait_for(lambda: len(running(cluster, "app=nginx")) == 3, what="3 running nginx pods")
    owners = {(r["kind"], r["name"], r["apiVersion"]) for p in pods(cluster, "app=nginx")
              for r in p["metadata"]["ownerReferences"] if r.get("controller")}
    assert owners == {("ReplicationController", "nginx", "v1")}

    def table() -> list[list[str]]:
        return [line.split() for line in cluster.kubectl("get", "rc").stdout.splitlines()]
    rows = wait_for(lambda: (t := table()) and t[1][3] == "3" and t, what="READY 3 in kubectl get rc")
    assert rows[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert rows[1][:4] == ["nginx", "3", "3", "3"]
    wide = cluster.kubectl("get", "rc", "nginx", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"] and wide[1].split()[5:] == ["nginx", "nginx", "app=nginx"]
    assert "replicationcontroller/nginx" in cluster.kubectl("get", "all").stdout

    assert cluster.kubectl("scale", "rc", "nginx", "--replicas=5").stdout.strip() == "replicationcontroller/nginx scaled"
    wait_for(lambda: len(running(cluster, "app=nginx")) == 5, what="5 running nginx pods")
    rc = json.loads(cluster.kubectl("get", "rc", "nginx", "-o", "json").stdout)
    assert rc["spec"]["replicas"] == 5 and rc["spec"]["selector"] == {"app": "nginx"}
    wait_for(lambda: json.loads(cluster.kubectl("get", "rc", "nginx", "-o", "json").stdout)["status"]
             .get("readyReplicas") == 5, what="status.readyReplicas 5")

    assert cluster.kubectl("delete", "rc", "nginx").stdout.strip() == 'replicationcontroller "nginx" deleted'
    wait_for(lambda: not pods(cluster, "app=nginx"), what="the RC's pods collected")
    assert cluster.kubectl("get", "rc", "nginx", check=False).returncode != 0


def test_a_bad_rc_is_refused_with_kubernetes_causes(cluster):
    bad = MANIFEST.replace("  selector:\n    app: nginx\n", "  selector:\n    app: other\n")
    result = cluster.kubectl("create", "-f", "-", input=bad, check=False)
    assert result.returncode != 0
    assert 'ReplicationController "nginx" is invalid' in result.stderr
    assert "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"nginx\"}: " \
           "`selector` does not match template `labels`" in result.stderr


def test_the_python_client_creates_lists_and_scales_an_rc(cluster):
    with cluster.python_client() as api:
        v1 = client.CoreV1Api(api)
        v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-rc")))
        body = client.V1ReplicationController(
            metadata=client.V1ObjectMeta(name="web"),
            spec=client.V1ReplicationControllerSpec(
                replicas=2,
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels={"app": "web"}),
                    spec=client.V1PodSpec(termination_grace_period_seconds=1,
                                          containers=[client.V1Container(name="web", image="nginx:1.27")]))))
        created = v1.create_namespaced_replication_controller("py-rc", body)
        assert created.spec.selector == {"app": "web"} and created.metadata.labels == {"app": "web"}
        listed = v1.list_namespaced_replication_controller("py-rc")
        assert [rc.metadata.name for rc in listed.items] == ["web"]
        assert "web" in [rc.metadata.name for rc in v1.list_replication_controller_for_all_namespaces().items]
        wait_for(lambda: len(running(cluster, "app=web", "py-rc")) == 2, what="2 running web pods")

        scale = v1.patch_namespaced_replication_controller_scale("web", "py-rc", {"spec": {"replicas": 4}})
        assert scale.spec.replicas == 4 and scale.status.selector == "app=web"
        wait_for(lambda: len(running(cluster, "app=web", "py-rc")) == 4, what="4 running web pods")
        read = v1.read_namespaced_replication_controller_scale("web", "py-rc")
        assert read.spec.replicas == 4
        status = wait_for(lambda: (s := v1.read_namespaced_replication_controller_status("web", "py-rc").status)
                          and s.ready_replicas == 4 and s, what="4 ready replicas in the status")
        assert status.replicas == 4 and status.observed_generation == 2
        v1.delete_namespaced_replication_controller("web", "py-rc")
        wait_for(lambda: not pods(cluster, "app=web", "py-rc"), what="the RC's pods collected")
