"""kube-proxy as its own process next to real kubelets, a controller-manager and a scheduler:
traffic to a Service spreads over its ready pods, the kubelets count it as CPU, and a pod marked
not ready, or deleted, leaves every kube-proxy's table and gets no more requests. The node servers
answer only the hub's credential (the cluster's node-access secret): anyone else gets 401."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections import Counter

import pytest

from control.client import nodeaccess
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
    AS_HUB.update(nodeaccess.bearer(running.dir))
    try:
        for node in NODES:
            running.start_spoke("kube-proxy", node=node)
        yield running
    finally:
        running.stop()


AS_HUB: dict[str, str] = {}  # the header the hub sends node servers (this cluster's secret)


def http(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """A request to a node server, as the hub by default (`headers` {} or others: as someone else)."""
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None,
                                     headers=AS_HUB if headers is None else headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


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


def test_node_servers_answer_only_the_hub(cluster):
    proxy = proxy_url(cluster, "node-1")
    kubelet = node_json(cluster, "node-1")
    port = kubelet["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
    node_1 = f"http://127.0.1.1:{port}"
    forged = {"Authorization": "Bearer " + "x" * len(AS_HUB["Authorization"].split()[1])}
    for url, method in ((f"{node_1}/stats/summary", "GET"), (f"{node_1}/containerLogs/default/web/app", "GET"),
                        (f"{node_1}/healthz", "GET"), (f"{node_1}/serve/default/web?port=80", "POST"),
                        (f"{proxy}/rules", "GET"), (f"{proxy}/send?target=web", "POST")):
        for who in ({}, forged, {"Authorization": AS_HUB["Authorization"].replace("Bearer", "Basic")}):
            status, body = http(url, method, who)
            assert status == 401, (url, who)
            assert json.loads(body)["reason"] == "Unauthorized"
    assert http(f"{node_1}/stats/summary")[0] == 200
    assert http(f"{proxy}/rules")[0] == 200
    assert http(f"{proxy}/healthz", headers={}) == (200, b"ok\n"), "kube-proxy's healthz answers anyone"
