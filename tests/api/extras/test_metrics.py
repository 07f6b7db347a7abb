"""metrics.k8s.io/v1beta1 on the hub: discovery, NodeMetrics and PodMetrics from kubelet summaries,
selectors, 404s, and unreachable or not-ready nodes left out."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from control.api.extras import metrics
from tests.conftest import free_port

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "/apis/metrics.k8s.io/v1beta1"
STAMP = "2027-01-15T08:00:00Z"


def summary(node: str, pods: list[tuple[str, str, int]]) -> dict:
    """pods: (namespace, name, nanocores) each with one container."""
    cpu = lambda n: {"time": STAMP, "usageNanoCores": n, "usageCoreNanoSeconds": n * 10}  # noqa: E731
    memory = {"time": STAMP, "workingSetBytes": 16 * 2**20, "usageBytes": 16 * 2**20}
    return {"node": {"nodeName": node, "startTime": STAMP, "cpu": cpu(sum(p[2] for p in pods) + 25_000_000),
                     "memory": {**memory, "workingSetBytes": 200 * 2**20}},
            "pods": [{"podRef": {"name": name, "namespace": ns, "uid": f"uid-{name}"}, "startTime": STAMP,
                      "cpu": cpu(n), "memory": memory,
                      "containers": [{"name": "app", "startTime": STAMP, "cpu": {"time": STAMP, "usageNanoCores": n},
                                      "memory": {"time": STAMP, "workingSetBytes": 16 * 2**20}}]}
                     for ns, name, n in pods]}


class FakeKubelet:
    def __init__(self, body: dict):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.asked += 1
                data = json.dumps(outer.body).encode()
                self.send_response(200 if self.path == "/stats/summary" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.body, self.asked = body, 0
        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def api(api):
    metrics._last.update(at=0.0, summaries=None)  # no scrape of an earlier test is shared
    return api


def send(api, method, path, body=None, **extra):
    data = "" if body is None else json.dumps(body)
    response = getattr(api, "request")(method, path, data=data, **extra)
    return response.status_code, json.loads(response.content or b"null")


def add_node(api, name: str, port: int, *, ready: bool = True, labels: dict | None = None) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}}}
    code, created = send(api, "POST", "/api/v1/nodes", node)
    assert code == 201, created
    created["status"] = {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                         "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
                         "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    code, _ = send(api, "PUT", f"/api/v1/nodes/{name}/status", created)
    assert code == 200


def add_pod(api, kubelet: FakeKubelet, name: str, node: str, labels: dict) -> None:
    """Create the pod and give the kubelet's summary its real uid (an entry with another uid is a stranger)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
           "spec": {"nodeName": node, "containers": [{"name": "app", "image": "nginx"}]}}
    code, created = send(api, "POST", "/api/v1/namespaces/default/pods", pod)
    assert code == 201, created
    for entry in kubelet.body["pods"]:
        if entry["podRef"]["name"] == name:
            entry["podRef"]["uid"] = created["metadata"]["uid"]


@pytest.fixture
def cluster(api):
    one = FakeKubelet(summary("node-1", [("default", "web-a", 250_000_000), ("default", "db", 5_000_000)]))
    two = FakeKubelet(summary("node-2", [("default", "web-b", 100_000_000), ("default", "stranger", 1)]))
    add_node(api, "node-1", one.port, labels={"zone": "a"})
    add_node(api, "node-2", two.port, labels={"zone": "b"})
    add_pod(api, one, "web-a", "node-1", {"app": "web"})
    add_pod(api, one, "db", "node-1", {"app": "db"})
    add_pod(api, two, "web-b", "node-2", {"app": "web"})
    yield api, one, two
    one.stop()
    two.stop()


def test_discovery_lists_the_metrics_group(api):
    _, groups = send(api, "GET", "/apis")
    assert {"name": "metrics.k8s.io", "versions": [{"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}],
            "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}} in groups["groups"]
    code, resources = send(api, "GET", BASE)
    assert code == 200 and [(r["name"], r["kind"], r["namespaced"], r["verbs"]) for r in resources["resources"]] == [
        ("nodes", "NodeMetrics", False, ["get", "list"]), ("pods", "PodMetrics", True, ["get", "list"])]
    assert send(api, "GET", "/apis/metrics.k8s.io")[1]["preferredVersion"]["version"] == "v1beta1"


def test_node_metrics_like_metrics_server(cluster):
    api, _, _ = cluster
    code, listed = send(api, "GET", f"{BASE}/nodes")
    assert code == 200 and listed["kind"] == "NodeMetricsList" and listed["apiVersion"] == "metrics.k8s.io/v1beta1"
    first = listed["items"][0]
    assert first["metadata"]["name"] == "node-1" and first["metadata"]["labels"] == {"zone": "a"}
    assert first["timestamp"] == STAMP and first["window"].endswith("s")
    assert first["usage"] == {"cpu": f"{250_000_000 + 5_000_000 + 25_000_000}n", "memory": f"{200 * 1024}Ki"}
    code, one = send(api, "GET", f"{BASE}/nodes/node-2")
    assert code == 200 and one["kind"] == "NodeMetrics" and one["usage"]["cpu"] == "125000001n"
    assert [i["metadata"]["name"] for i in send(api, "GET", f"{BASE}/nodes?labelSelector=zone%3Db")[1]["items"]] == [
        "node-2"]


def test_pod_metrics_with_containers_selector_and_namespaces(cluster):
    api, kubelet, _ = cluster
    code, listed = send(api, "GET", f"{BASE}/namespaces/default/pods?labelSelector=app%3Dweb")
    assert code == 200 and listed["kind"] == "PodMetricsList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["web-a", "web-b"]
    item = listed["items"][0]
    assert item["metadata"]["namespace"] == "default" and item["metadata"]["labels"] == {"app": "web"}
    assert item["containers"] == [{"name": "app", "usage": {"cpu": "250000000n", "memory": "16384Ki"}}]
    everywhere = send(api, "GET", f"{BASE}/pods")[1]
    assert [i["metadata"]["name"] for i in everywhere["items"]] == ["db", "web-a", "web-b"]  # "stranger" is unknown
    kubelet.body["pods"][0]["podRef"]["uid"] = "uid-of-an-older-pod-of-that-name"
    metrics._last.update(at=0.0, summaries=None)
    assert [i["metadata"]["name"] for i in send(api, "GET", f"{BASE}/pods")[1]["items"]] == ["db", "web-b"]
    assert send(api, "GET", f"{BASE}/namespaces/other/pods")[1]["items"] == []
    code, one = send(api, "GET", f"{BASE}/namespaces/default/pods/db")
    assert code == 200 and one["kind"] == "PodMetrics" and one["containers"][0]["usage"]["cpu"] == "5000000n"
    assert [i["metadata"]["name"] for i in send(
        api, "GET", f"{BASE}/pods?fieldSelector=metadata.name%3Dweb-b")[1]["items"]] == ["web-b"]


def test_not_found_and_bad_requests_are_statuses(cluster):
    api, _, _ = cluster
    code, status = send(api, "GET", f"{BASE}/namespaces/default/pods/nope")
    assert code == 404 and status["reason"] == "NotFound"
    assert status["message"] == 'podmetrics.metrics.k8s.io "default/nope" not found'
    assert send(api, "GET", f"{BASE}/nodes/node-9")[1]["message"] == 'nodemetrics.metrics.k8s.io "node-9" not found'
    assert send(api, "GET", f"{BASE}/pods?labelSelector=a%20in%20")[0] == 400
    assert send(api, "GET", f"{BASE}/pods?fieldSelector=spec.nodeName%3Dx")[0] == 400
    assert send(api, "GET", f"{BASE}/services")[0] == 404
    assert send(api, "GET", "/apis/metrics.k8s.io/v1/nodes")[0] == 404
    assert send(api, "DELETE", f"{BASE}/nodes/node-1")[0] == 405


def test_unreachable_and_not_ready_nodes_are_left_out(api):
    alive = FakeKubelet(summary("node-1", []))
    try:
        add_node(api, "node-1", alive.port)
        add_node(api, "node-2", free_port())  # nobody listens there
        add_node(api, "node-3", alive.port, ready=False)
        code, listed = send(api, "GET", f"{BASE}/nodes")
        assert code == 200 and [i["metadata"]["name"] for i in listed["items"]] == ["node-1"]
        assert alive.asked == 1  # node-3 is not Ready: not asked
    finally:
        alive.stop()


def test_a_fresh_scrape_is_shared(cluster):
    api, one, _ = cluster
    send(api, "GET", f"{BASE}/nodes")
    send(api, "GET", f"{BASE}/pods")
    assert one.asked == 1
