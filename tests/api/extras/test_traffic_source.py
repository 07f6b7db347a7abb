"""Who may name the pod traffic comes from (`source`) on /kubekitchen/traffic and
/kubekitchen/resolve: only the node itself, only for a running pod of that node (403 for a forged
source, 400 for one that is no address); a DNS query kube-proxy's /decide drops answers
`{"dropped"}`, an allowed one the name."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.conf import settings

from control.auth import policystore, tokenfile
from control.bootstrap import cluster_bootstrap
from tests.api.client import ApiClient
from tests.api.extras.test_services import node

pytestmark = pytest.mark.django_db(transaction=True)
DROPPED = {"direction": "egress", "policies": ["default/deny-out"], "from": "default/box", "to": "kube-system/coredns-1",
           "port": 53, "protocol": "UDP"}


class FakeProxy:
    """kube-proxy's /send (`self.lines`: one answered line) and /decide (`self.verdict`), remembering what it was asked."""

    def __init__(self):
        self.asked: list[tuple[str, dict]] = []
        self.verdict: dict = {"allowed": True}
        self.lines: list[dict] = [{"seq": 0, "code": 200, "pod": "web-0", "service": "default/web"}, {"done": True}]
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _reply(self, body: bytes, content_type="application/json"):
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                url = urlsplit(self.path)
                owner.asked.append((url.path, dict(parse_qsl(url.query))))
                self._reply(json.dumps(owner.verdict).encode())

            def do_POST(self):
                url = urlsplit(self.path)
                owner.asked.append((url.path, dict(parse_qsl(url.query))))
                self._reply(b"".join(json.dumps(line).encode() + b"\n" for line in owner.lines), "application/x-ndjson")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def cluster(settings):
    settings.KK_AUTHENTICATION = "on"
    policystore.forget()
    cluster_bootstrap()
    proxy = FakeProxy()
    admin = ApiClient()
    node(admin, "node-1", proxy.port)
    node(admin, "node-2", proxy.port)
    for name, where, ip in (("box", "node-1", "10.244.1.5"), ("other", "node-2", "10.244.2.5")):
        made = admin.post("/api/v1/namespaces/default/pods", json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": where, "containers": [{"name": "c", "image": "busybox"}]}}))
        assert made.status_code == 201, made.content
        patched = admin.patch(f"/api/v1/namespaces/default/pods/{name}/status",
                              json.dumps({"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}}),
                              content_type="application/merge-patch+json")
        assert patched.status_code == 200, patched.content
    kubelet = ApiClient(token=tokenfile.token_of(settings.DATA_DIR, "system:node:node-1", ("system:nodes",)))
    yield {"admin": admin, "kubelet": kubelet, "proxy": proxy}
    kubelet.close()
    admin.close()
    proxy.server.shutdown()
    proxy.server.server_close()


def _status(answer):
    return answer.status_code, json.loads(answer.content)


def test_the_node_names_its_own_pod_and_kube_proxy_hears_it(cluster):
    answer = cluster["kubelet"].post("/kubekitchen/traffic", QUERY_STRING="node=node-1&target=web&source=10.244.1.5")
    assert answer.status_code == 200, answer.content
    assert cluster["proxy"].asked == [("/send", {"target": "web", "source": "10.244.1.5"})]


@pytest.mark.parametrize("who,query,code", [
    ("kubelet", "node=node-1&target=web&source=10.244.2.5", 403),  # a pod of another node
    ("kubelet", "node=node-1&target=web&source=10.244.9.9", 403),  # no pod at all
    ("kubelet", "node=node-2&target=web&source=10.244.2.5", 403),  # speaking for another node
    ("admin", "node=node-1&target=web&source=10.244.1.5", 403),  # not a node
    ("kubelet", "node=node-1&target=web&source=box", 400),
])
def test_a_forged_source_is_refused_and_nothing_is_sent(cluster, who, query, code):
    status_code, status = _status(cluster[who].post("/kubekitchen/traffic", QUERY_STRING=query))
    assert status_code == code and status["kind"] == "Status"
    assert cluster["proxy"].asked == []


def test_a_dropped_dns_query_answers_dropped_and_an_allowed_one_the_name(cluster):
    admin, kubelet, proxy = cluster["admin"], cluster["kubelet"], cluster["proxy"]
    assert admin.post("/api/v1/namespaces/default/services", json.dumps({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}]}})).status_code == 201
    query = "name=web&namespace=default&node=node-1&source=10.244.1.5"
    proxy.verdict = {"allowed": False, "dropped": DROPPED}
    assert _status(kubelet.get("/kubekitchen/resolve", QUERY_STRING=query)) == (200, {"dropped": DROPPED})
    assert proxy.asked[-1] == ("/decide", {"target": "10.96.0.10", "port": "53", "protocol": "UDP",
                                           "source": "10.244.1.5", "namespace": "kube-system"})
    proxy.verdict = {"allowed": True, "allowedBy": ["default/allow-dns"]}
    code, answer = _status(kubelet.get("/kubekitchen/resolve", QUERY_STRING=query))
    assert code == 200 and answer["name"] == "web.default.svc.cluster.local"
    assert _status(admin.get("/kubekitchen/resolve", QUERY_STRING=query))[0] == 403


def test_a_dropped_line_keeps_its_policy_fields_in_the_traffic_record():
    from control.api.extras.services import request_record

    dropped = {"seq": 0, "from": "node-1", "target": "10.244.2.5", "service": "", "pod": "other",
               "podNamespace": "default", "code": 0, "error": "connection timed out (dropped by NetworkPolicy)",
               "dropped": {**DROPPED, "to": "default/other"}}
    record = request_record(dropped, who="kubelet/node-1", node="node-1", run="r")
    assert record["dropped"] == dropped["dropped"] and record["code"] == 0 and record["index"] == 0
    assert record["scope"] == {"namespace": "default", "group": "", "resource": "pods"}
    allowed = request_record({"seq": 1, "service": "default/web", "code": 200, "allowedBy": ["default/allow"]},
                             who="w", node="node-1", run="r")
    assert allowed["allowedBy"] == ["default/allow"]


def test_kube_proxy_may_watch_what_it_enforces():
    from control.auth.policy import cluster_roles

    role = next(r for r in cluster_roles() if r["metadata"]["name"] == "kubekitchen:kube-proxy")
    granted = {(group, resource) for rule in role["rules"] if "watch" in rule["verbs"]
               for group in rule["apiGroups"] for resource in rule["resources"]}
    assert {("", "pods"), ("", "namespaces"), ("networking.k8s.io", "networkpolicies")} <= granted
