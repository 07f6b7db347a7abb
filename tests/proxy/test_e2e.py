"""kube-proxy as its own process next to real kubelets, a controller-manager and a scheduler:
traffic to a Service spreads over its ready pods, the kubelets count it as CPU, and a pod marked
not ready, or deleted, leaves every kube-proxy's table and gets no more requests."""

from __future__ import annotations

import json
import urllib.request
from collections import Counter

import pytest

from tests.conftest import Cluster, wait_for

pytestmark = pytest.mark.e2e
NODES = ("node-1", "node-2")
MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx:1.27, ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: 10.96.0.77
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
"""


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=len(NODES)).start()
    try:
        for node in NODES:
            running.start_spoke("kube-proxy", node=node)
        yield running
    finally:
        running.stop()


def http(url: str, method: str = "GET") -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=20) as answer:
        return answer.status, answer.read()


def node_json(cluster: Cluster, name: str) -> dict:
    found = cluster.kubectl("get", "node", name, "-o", "json", check=False)
    return json.loads(found.stdout) if found.returncode == 0 else {"metadata": {}}


def proxy_url(cluster: Cluster, node: str) -> str:
    obj = wait_for(lambda: (n := node_json(cluster, node))["metadata"].get("annotations", {}).get(
        "kubekitchen.dev/kube-proxy-port") and n, what=f"kube-proxy of {node} listening")
    address = next(a["address"] for a in obj["status"]["addresses"] if a["type"] == "InternalIP")
    return f"http://{address}:{obj['metadata']['annotations']['kubekitchen.dev/kube-proxy-port']}"


def table_pods(url: str) -> set[str]:
    rules = json.loads(http(f"{url}/rules?service=default/web")[1])
    return {e["pod"] for s in rules["services"] for e in s["endpoints"]}


def send(url: str, count: int) -> list[dict]:
    status, body = http(f"{url}/send?target=web&count={count}&interval=0", "POST")
    assert status == 200
    return [json.loads(line) for line in body.splitlines()]


def ready_pods(cluster: Cluster) -> set[str]:
    pods = json.loads(cluster.kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    return {p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp") and any(
        c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", []))}


def test_traffic_follows_readiness_through_every_kube_proxy(cluster):
    urls = {node: proxy_url(cluster, node) for node in NODES}
    assert urls["node-1"].startswith("http://127.0.1.1:")
    cluster.kubectl("apply", "-f", "-", input=MANIFESTS)
    pods = wait_for(lambda: len(p := ready_pods(cluster)) == 3 and p, what="3 ready pods")
    for url in urls.values():
        wait_for(lambda: table_pods(url) == pods, what="every kube-proxy lists the 3 pods")

    lines = send(urls["node-1"], 12)
    assert all(line["code"] == 200 and line["from"] == "node-1" for line in lines[:-1])
    assert Counter(line["pod"] for line in lines[:-1]) == {pod: 4 for pod in pods}, "round robin"
    assert lines[-1]["done"] and lines[-1]["failed"] == 0

    text = http(f"{urls['node-2']}/rules?format=text")[1].decode()
    assert "-A KUBE-SERVICES -d 10.96.0.77/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-" in text
    assert text.count("-j DNAT --to-destination 10.244.") == 3, "one per pod (the kubernetes Service points at the hub)"

    kubelet = node_json(cluster, "node-1")
    port = kubelet["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
    summary = json.loads(http(f"http://127.0.1.1:{port}/stats/summary")[1])
    assert summary["node"]["nodeName"] == "node-1"
    busy = [p for p in summary["pods"] if p["podRef"]["name"] in pods]
    assert busy and all(p["cpu"]["usageNanoCores"] > 1_000_000 for p in busy), "traffic shows as CPU"

    victim = sorted(pods)[0]
    cluster.kubectl("annotate", "pod", victim, "kubekitchen.dev/unready=true")
    for url in urls.values():
        wait_for(lambda: victim not in table_pods(url), what=f"{victim} out of every table")
    assert victim not in ready_pods(cluster)
    assert all(line["pod"] != victim and line["code"] == 200 for line in send(urls["node-2"], 8)[:-1])

    cluster.kubectl("annotate", "pod", victim, "kubekitchen.dev/unready-")
    wait_for(lambda: victim in table_pods(urls["node-2"]), what=f"{victim} back in the table")
    assert victim in {line["pod"] for line in send(urls["node-2"], 6)[:-1]}

    cluster.kubectl("delete", "pod", victim, "--wait=false")
    wait_for(lambda: victim not in table_pods(urls["node-1"]), what=f"deleted {victim} out of the table")
    assert all(line["pod"] != victim for line in send(urls["node-1"], 8)[:-1])
