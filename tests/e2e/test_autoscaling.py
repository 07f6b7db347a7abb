"""Metrics and autoscaling with the whole cluster running at the workshop's pace, driven with the
real kubectl: `kubectl top`, `kubectl autoscale`, `kubectl get hpa`, and an HPA that adds pods when
their CPU rises (the `kubekitchen.dev/cpu` knob, or traffic sent through kube-proxy) and removes
them only after its scale-down stabilisation window."""

from __future__ import annotations

import json
import re
import threading
import time

import httpx
import pytest

from tests.conftest import Cluster, Spoke, wait_for

pytestmark = pytest.mark.e2e

WINDOW = 8  # spec.behavior.scaleDown.stabilizationWindowSeconds of the test's HPA
SYNC = 2.0  # the controller's sync period at the workshop pace

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: {name}}}
  strategy:
    rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata:
      labels: {{app: {name}}}
      annotations: {{kubekitchen.dev/cpu: "{cpu}"}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: nginx
        resources:
          requests: {{cpu: 100m}}
"""


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=2).start()
    yield running
    running.stop()


def ok(result):
    return result if result.returncode == 0 else None


def replicas(cluster: Cluster, name: str) -> int:
    return json.loads(cluster.kubectl("get", "deployment", name, "-o", "json").stdout)["spec"]["replicas"]


def set_cpu(cluster: Cluster, name: str, cpu: str) -> None:
    patch = {"spec": {"template": {"metadata": {"annotations": {"kubekitchen.dev/cpu": cpu}}}}}
    cluster.kubectl("patch", "deployment", name, "--type=merge", "-p", json.dumps(patch))


def test_kubectl_top_nodes_and_pods(cluster):
    cluster.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(name="burner", cpu="200m"))
    wait_for(lambda: "1/1" in cluster.kubectl("get", "deployment", "burner").stdout, timeout=30, what="a ready pod")
    nodes = wait_for(lambda: ok(cluster.kubectl("top", "nodes", check=False)), timeout=30, what="kubectl top nodes")
    lines = nodes.stdout.splitlines()
    assert lines[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert sorted(line.split()[0] for line in lines[1:]) == ["node-1", "node-2"]
    # idle + knob = 201m once the pod has run for a metrics window
    pods = wait_for(lambda: (lambda r: r if r and re.search(r"burner-\S+\s+201m\s+16Mi", r.stdout) else None)(
        ok(cluster.kubectl("top", "pods", "-l", "app=burner", check=False))), timeout=30, what="kubectl top pods")
    assert pods.stdout.splitlines()[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    raw = json.loads(cluster.kubectl("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods").stdout)
    assert raw["kind"] == "PodMetricsList" and raw["items"][0]["containers"][0]["name"] == "app"
    cluster.kubectl("delete", "deployment", "burner")


def test_autoscale_adds_pods_on_cpu_and_removes_them_after_the_window(cluster):
    cluster.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(name="web", cpu="10m"))
    wait_for(lambda: "1/1" in cluster.kubectl("get", "deployment", "web").stdout, timeout=30, what="a ready pod")
    created = cluster.kubectl("autoscale", "deployment", "web", "--cpu-percent=50", "--min=1", "--max=4")
    assert created.stdout.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    window = {"spec": {"behavior": {"scaleDown": {"stabilizationWindowSeconds": WINDOW}}}}
    cluster.kubectl("patch", "hpa", "web", "--type=merge", "-p", json.dumps(window))
    table = wait_for(lambda: (lambda out: out if re.search(r"cpu: \d+%/50%", out) else None)(
        cluster.kubectl("get", "hpa").stdout), timeout=30, what="a measured utilisation")
    header = table.splitlines()[0].split()
    assert header == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert table.splitlines()[1].split()[:2] == ["web", "Deployment/web"]
    assert replicas(cluster, "web") == 1  # 11% of the request is under the 50% target

    set_cpu(cluster, "web", "150m")  # 151% of the request: the HPA must add pods, up to its max
    wait_for(lambda: replicas(cluster, "web") == 4, timeout=60, what="the HPA to scale up to 4")
    described = cluster.kubectl("describe", "hpa", "web").stdout
    assert "SuccessfulRescale" in described and "above target" in described

    set_cpu(cluster, "web", "5m")
    # The controller records one recommendation per sync and writes the status only when it changes, so a
    # high reading stays visible from the last high recommendation until at most one sync after it.
    last_high, deadline = time.monotonic(), time.monotonic() + 90
    while replicas(cluster, "web") == 4:
        assert time.monotonic() < deadline, "the HPA did not scale down"
        if re.search(r"cpu: (1\d\d|[5-9]\d)%/50%", cluster.kubectl("get", "hpa", "web").stdout):
            last_high = time.monotonic()
        time.sleep(0.1)
    held = time.monotonic() - last_high
    # Without a window the pods would go at the first low reading; with it, WINDOW s after the last high one.
    assert held >= WINDOW - SYNC - 0.5, f"scaled down {held:.1f} s after the last high reading; window {WINDOW} s"
    wait_for(lambda: replicas(cluster, "web") == 1, timeout=30, what="back to the minimum")
    hpa = json.loads(cluster.kubectl("get", "hpa", "web", "-o", "json").stdout)
    assert hpa["status"]["desiredReplicas"] == 1 and hpa["status"]["lastScaleTime"]
    assert {c["type"] for c in hpa["status"]["conditions"]} == {"AbleToScale", "ScalingActive", "ScalingLimited"}


SERVED_APP = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: nginx
        ports: [{containerPort: 8080}]
        resources: {requests: {cpu: 100m}}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 1
  maxReplicas: 4
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
  behavior: {scaleDown: {stabilizationWindowSeconds: 6}}
"""


@pytest.fixture
def kube_proxies(cluster):
    proxies = [Spoke(cluster, "kube-proxy", node=f"node-{i}").start() for i in range(1, cluster.nodes + 1)]
    yield proxies
    for proxy in proxies:
        proxy.stop()


def test_traffic_raises_replicas_and_its_end_lowers_them(cluster, kube_proxies):
    cluster.kubectl("apply", "-f", "-", input=SERVED_APP)
    wait_for(lambda: "1/1" in cluster.kubectl("get", "deployment", "api").stdout, timeout=30, what="a ready pod")

    def proxy_knows_the_endpoint() -> bool:
        answer = httpx.get(f"{cluster.url}/kubekitchen/proxyrules", headers=cluster.auth, params={"node": "node-1"})
        services = answer.json().get("services", []) if answer.status_code == 200 else []
        return any(s["service"] == "default/api" and s["endpoints"] for s in services)

    wait_for(proxy_knows_the_endpoint, timeout=30, what="node-1's kube-proxy to route to the pod")
    answers: dict[str, int] = {}
    summary: dict = {}

    def send() -> None:  # 20 requests/s for 20 s: 10m per request/s is 200m, twice the request of one pod
        params = {"node": "node-1", "target": "api", "namespace": "default", "count": 400, "interval": 50}
        with httpx.stream("POST", f"{cluster.url}/kubekitchen/traffic", headers=cluster.auth, params=params, timeout=None) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                record = json.loads(line)
                if record.get("done"):
                    summary.update(record)
                elif record.get("code") == 200:
                    answers[record["pod"]] = answers.get(record["pod"], 0) + 1

    sender = threading.Thread(target=send)
    sender.start()
    try:
        wait_for(lambda: replicas(cluster, "api") >= 3, timeout=30, what="the HPA to scale up under traffic")
        wait_for(lambda: len(answers) >= 3, timeout=30, what="the new pods to answer requests")
    finally:
        sender.join(timeout=60)
    assert summary.get("sent") == 400 and summary.get("failed") == 0, summary
    wait_for(lambda: replicas(cluster, "api") == 1, timeout=60, what="the HPA to scale down after the traffic")


def test_python_client_reads_hpas_in_v2_and_v1(cluster):
    from kubernetes import client

    with cluster.python_client() as api:
        v1 = client.AutoscalingV1Api(api)
        body = client.V1HorizontalPodAutoscaler(
            metadata=client.V1ObjectMeta(name="py"),
            spec=client.V1HorizontalPodAutoscalerSpec(
                scale_target_ref=client.V1CrossVersionObjectReference(api_version="apps/v1", kind="Deployment",
                                                                      name="py"),
                max_replicas=3, target_cpu_utilization_percentage=70))
        created = v1.create_namespaced_horizontal_pod_autoscaler("default", body)
        assert created.spec.target_cpu_utilization_percentage == 70 and created.spec.min_replicas == 1
        # the target does not exist: the controller says so in the status, which the client must decode
        v2 = client.AutoscalingV2Api(api)

        def failed_get_scale():
            got = v2.read_namespaced_horizontal_pod_autoscaler("py", "default")
            reasons = {c.type: c.reason for c in (got.status.conditions or [])} if got.status else {}
            return got if reasons.get("AbleToScale") == "FailedGetScale" else None

        got = wait_for(failed_get_scale, timeout=30, what="the controller to report the missing target")
        assert got.spec.metrics[0].resource.target.average_utilization == 70
        v2.delete_namespaced_horizontal_pod_autoscaler("py", "default")
