"""The hub's Service endpoints: /kubekitchen/resolve from the store, and /kubekitchen/traffic and
/kubekitchen/proxyrules through a node's kube-proxy (here a fake one on a loopback port)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest

from control.api import traffic
from tests.api.client import ApiClient
from tests.conftest import free_port

pytestmark = pytest.mark.django_db(transaction=True)

SVCS = "/api/v1/namespaces/default/services"
RULES = {"node": "node-1", "balance": "round-robin", "version": 7, "services": [], "iptables": ["-A KUBE-SERVICES -j X"]}


class FakeKubeProxy:
    """Answers /rules and /send like kube-proxy; remembers what it was asked."""

    def __init__(self):
        self.asked: list[tuple[str, str, dict]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _reply(self, status, content_type, body: bytes):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                url = urlsplit(self.path)
                query = dict(parse_qsl(url.query))
                owner.asked.append(("GET", url.path, query))
                if query.get("format") == "text":
                    self._reply(200, "text/plain; charset=utf-8", b"*nat\n-A KUBE-SERVICES -j X\nCOMMIT\n")
                else:
                    self._reply(200, "application/json", json.dumps(RULES).encode())

            def do_POST(self):
                url = urlsplit(self.path)
                query = dict(parse_qsl(url.query))
                owner.asked.append(("POST", url.path, query))
                if query.get("count") == "0":
                    self._reply(400, "application/json", b'{"error": "count must be between 1 and 10000"}')
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                count = int(query.get("count", "2"))
                lines = [{"seq": i, "from": "node-1", "target": query["target"], "service": "default/web",
                          "clusterIP": "10.96.0.20", "endpoint": f"10.244.1.{i + 2}:8080", "pod": f"web-{i}",
                          "podNode": "node-2", "code": 200, "endpointsResourceVersion": "42"} for i in range(count)]
                lines.append({"done": True, "sent": count, "answered": {f"web-{i}": 1 for i in range(count)}, "failed": 0})
                for line in lines:
                    data = json.dumps(line).encode() + b"\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy():
    fake = FakeKubeProxy()
    yield fake
    fake.stop()


def send(api: ApiClient, method: str, path: str, body=None, **extra):
    data = "" if body is None else json.dumps(body)
    response = getattr(api, method)(path, data=data, **extra)
    return response


def as_json(response):
    return response.status_code, json.loads(response.content)


def node(api: ApiClient, name: str, port: int | None) -> None:
    annotations = {"kubekitchen.dev/kube-proxy-port": str(port)} if port else {}
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "annotations": annotations}}
    assert send(api, "post", "/api/v1/nodes", body).status_code == 201
    status = {**body, "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]}}
    assert send(api, "patch", f"/api/v1/nodes/{name}/status", {"status": status["status"]},
                content_type="application/merge-patch+json").status_code == 200


# --- resolve ---------------------------------------------------------------------------------

def test_resolve_answers_a_cluster_ip_a_headless_service_and_an_external_name(api):
    web = json.loads(send(api, "post", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                                              "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}).content)
    code, answer = as_json(send(api, "get", "/kubekitchen/resolve", QUERY_STRING="name=web"))
    assert code == 200 and answer == {"name": "web.default.svc.cluster.local", "type": "A",
                                      "records": [web["spec"]["clusterIP"]], "service": "default/web", "headless": False}
    send(api, "post", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
                             "spec": {"clusterIP": "None", "selector": {"app": "db"}, "ports": [{"port": 5432}]}})
    send(api, "post", "/api/v1/namespaces/default/endpoints", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "db"},
        "subsets": [{"addresses": [{"ip": "10.244.1.5"}], "notReadyAddresses": [{"ip": "10.244.1.6"}],
                     "ports": [{"port": 5432}]}]})
    code, answer = as_json(send(api, "get", "/kubekitchen/resolve",
                                QUERY_STRING="name=db.default.svc.cluster.local&namespace=kube-system"))
    assert code == 200 and (answer["records"], answer["headless"]) == (["10.244.1.5"], True)
    send(api, "post", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "mail"},
                             "spec": {"type": "ExternalName", "externalName": "mail.example.com"}})
    code, answer = as_json(send(api, "get", "/kubekitchen/resolve", QUERY_STRING="name=mail.default"))
    assert code == 200 and (answer["type"], answer["records"]) == ("CNAME", ["mail.example.com"])


def test_resolve_refuses_bad_input_and_answers_nxdomain_as_not_found(api):
    code, status = as_json(send(api, "get", "/kubekitchen/resolve", QUERY_STRING="name=nothing"))
    assert (code, status["kind"], status["reason"]) == (404, "Status", "NotFound")
    assert "nothing.default.svc.cluster.local" in status["message"]
    for query in ("", "name=a%20b", "name=web&namespace=Not_A_Namespace"):
        code, status = as_json(send(api, "get", "/kubekitchen/resolve", QUERY_STRING=query))
        assert (code, status["reason"]) == (400, "BadRequest"), query
    code, status = as_json(send(api, "post", "/kubekitchen/resolve", QUERY_STRING="name=web"))
    assert code == 405


# --- traffic ---------------------------------------------------------------------------------

def test_traffic_streams_kube_proxys_answers_and_publishes_each_as_a_record(api, proxy):
    node(api, "node-1", proxy.port)
    heard = []
    stop = traffic.listen(lambda record: heard.append(record) if record["type"] == "service.request" else None)
    try:
        response = send(api, "post", "/kubekitchen/traffic",
                        QUERY_STRING="node=node-1&target=web&namespace=default&count=3&interval=10&port=")
    finally:
        stop()
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in response.content.decode().splitlines()]
    assert [line.get("pod") for line in lines[:3]] == ["web-0", "web-1", "web-2"] and lines[3]["done"] is True
    assert proxy.asked == [("POST", "/send", {"target": "web", "namespace": "default", "count": "3", "interval": "10"})]
    assert [r["pod"] for r in heard] == ["web-0", "web-1", "web-2"]
    first = heard[0]
    assert first["index"] == 0 and first["node"] == "node-1" and first["who"] == "pytest"
    assert first["service"] == "default/web" and first["code"] == 200 and first["endpoint"] == "10.244.1.2:8080"
    assert len({r["run"] for r in heard}) == 1


def test_traffic_refusals_are_statuses(api, proxy):
    code, status = as_json(send(api, "post", "/kubekitchen/traffic", QUERY_STRING="node=node-9&target=web"))
    assert (code, status["reason"], status["message"]) == (404, "NotFound", 'nodes "node-9" not found')
    code, status = as_json(send(api, "post", "/kubekitchen/traffic", QUERY_STRING="target=web"))
    assert (code, status["reason"]) == (400, "BadRequest")
    node(api, "node-1", proxy.port)
    code, status = as_json(send(api, "post", "/kubekitchen/traffic", QUERY_STRING="node=node-1&target=web&count=0"))
    assert (code, status["reason"], status["message"]) == (400, "BadRequest", "count must be between 1 and 10000")
    node(api, "node-2", free_port())  # nothing listens there
    code, status = as_json(send(api, "post", "/kubekitchen/traffic", QUERY_STRING="node=node-2&target=web"))
    assert (code, status["reason"]) == (503, "ServiceUnavailable")
    assert "cannot reach the kube-proxy of node node-2" in status["message"]
    code, _ = as_json(send(api, "get", "/kubekitchen/traffic", QUERY_STRING="node=node-1&target=web"))
    assert code == 405


# --- rules -----------------------------------------------------------------------------------

def test_proxyrules_passes_kube_proxys_rules_through(api, proxy):
    node(api, "node-1", proxy.port)
    code, rules = as_json(send(api, "get", "/kubekitchen/proxyrules", QUERY_STRING="node=node-1"))
    assert code == 200 and rules == RULES
    response = send(api, "get", "/kubekitchen/proxyrules", QUERY_STRING="node=node-1&format=text&service=default/web")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    assert b"-A KUBE-SERVICES -j X" in response.content
    assert proxy.asked[-1] == ("GET", "/rules", {"format": "text", "service": "default/web"})
    code, status = as_json(send(api, "get", "/kubekitchen/proxyrules", QUERY_STRING="node=nope"))
    assert (code, status["reason"]) == (404, "NotFound")


def test_a_service_request_record_names_its_user_and_the_services_namespace():
    from control.api.extras.services import request_record

    line = {"seq": 0, "from": "node-1", "target": "pasta", "service": "shop/pasta", "pod": "pasta-b", "code": 200}
    record = request_record(line, who="kubectl · alice", node="node-1", run="r", user="alice", namespace="default")
    assert (record["user"], record["scope"]) == ("alice", {"namespace": "shop", "group": "", "resource": "services"})
    unroutable = request_record({**line, "service": ""}, who="kubectl", node="node-1", run="r", namespace="shop")
    assert unroutable["scope"]["namespace"] == "shop"  # no Service found: the namespace it was asked in
    to_pod = request_record({**line, "service": "", "podNamespace": "kitchen"}, who="kubectl", node="node-1", run="r",
                            namespace="shop")
    assert to_pod["scope"] == {"namespace": "kitchen", "group": "", "resource": "pods"}  # a pod IP: the pod's
    assert "source" not in record  # sent by a node
    from_pod = request_record({**line, "allowedBy": ["shop/waiters"]}, who="kubelet/node-1", node="node-1", run="r",
                              source="10.244.1.7")
    assert from_pod["source"] == "10.244.1.7"  # the sending pod: the dashboard draws its line from that pod
