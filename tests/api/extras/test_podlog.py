"""pods/NAME/log through the hub (control.api.extras.podlog): the kubelet is found through its Node
and the one gate to nodes; a small log comes back in one piece, a large one streamed; a redirect
from the 'kubelet' is not followed."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytestmark = pytest.mark.django_db(transaction=True)
BIG = 3 * 1024 * 1024


class Kubelet(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        Kubelet.seen.append(self.path)
        if "/redirect/" in self.path:
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"x" * BIG if "/big/" in self.path else b"hello\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def kubelet_on(api):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Kubelet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    created = json.loads(api.post("/api/v1/nodes", json.dumps(node)).content)
    created["status"] = {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                         "daemonEndpoints": {"kubeletEndpoint": {"Port": server.server_address[1]}}}
    assert api.put("/api/v1/nodes/n1/status", json.dumps(created)).status_code == 200
    for name in ("small", "big", "redirect"):
        pod = {"metadata": {"name": name}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}}
        assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod)).status_code == 201
    Kubelet.seen = []
    yield api
    server.shutdown()
    server.server_close()


def test_a_small_log_comes_in_one_piece(kubelet_on):
    answer = kubelet_on.get("/api/v1/namespaces/default/pods/small/log")
    assert answer.status_code == 200 and answer.content == b"hello\n"
    assert answer.headers["content-length"] == "6"
    assert Kubelet.seen == ["/containerLogs/default/small/c"]


def test_a_large_log_is_streamed_whole(kubelet_on):
    answer = kubelet_on.get("/api/v1/namespaces/default/pods/big/log")
    assert answer.status_code == 200 and len(answer.content) == BIG
    assert "content-length" not in answer.headers  # streamed on, not held whole by the hub


def test_a_redirect_is_not_followed(kubelet_on):
    answer = kubelet_on.get("/api/v1/namespaces/default/pods/redirect/log")
    assert answer.status_code == 400 and json.loads(answer.content)["message"] == "the kubelet answered 302"
    assert Kubelet.seen == ["/containerLogs/default/redirect/c"]
