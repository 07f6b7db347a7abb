"""The one gate from the hub to a node (control.api.node_address): only IP literals inside the node
network, on the component's own port; a Node pointing elsewhere is refused with a Status and never
contacted — by pod logs, exec, metrics, /kubekitchen/traffic and /kubekitchen/proxyrules alike."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from control import errors
from control.api import node_address
from control.client import nodeaccess
from control.api.node_address import KUBELET_PORT, NodeTarget, bounded_lines, kube_proxy, kubelet, read_bounded, refusal

EPHEMERAL = node_address.EPHEMERAL_PORTS.start


def node(address, port=KUBELET_PORT, annotations=None):
    return {"metadata": {"name": "n1", "annotations": annotations or {}},
            "status": {"addresses": [{"type": "InternalIP", "address": address}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}


@pytest.mark.parametrize("address", [
    "169.254.169.254", "10.0.0.1", "8.8.8.8", "example.com", "http://example.com", "localhost",
    "127.0.0.1@evil.example", "evil.example#127.0.0.1", "127.0.0.1/admin", "127.0.0.1?x=1", "127.0.0.1:80",
    "[::1]", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "0177.0.0.1", "2130706433", "0x7f.0.0.1",
    "fe80::1%eth0", " 127.0.0.1", "", None, 2130706433,
])
def test_addresses_outside_the_plan_are_refused(address):
    assert refusal(address, KUBELET_PORT, KUBELET_PORT)


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.1.7", "::1"])
def test_loopback_node_addresses_pass(address):
    assert refusal(address, KUBELET_PORT, KUBELET_PORT) == ""
    assert refusal(address, EPHEMERAL, KUBELET_PORT) == ""


@pytest.mark.parametrize("port", [22, 80, 5432, 6379, 8000, 10256, 0, -1, 70000, "10250", True, None, 10250.0])
def test_ports_other_than_the_usual_or_an_ephemeral_one_are_refused(port):
    assert refusal("127.0.0.1", port, KUBELET_PORT)


def test_the_target_url_never_carries_more_than_an_ip_and_a_port():
    assert kubelet(node("127.0.1.3"), "n1").url("/stats/summary") == "http://127.0.1.3:10250/stats/summary"
    assert NodeTarget("n1", "::1", 10250).url("/x") == "http://[::1]:10250/x"


def test_a_refusal_names_the_node_and_why():
    with pytest.raises(errors.BadRequest) as refused:
        kubelet(node("169.254.169.254"), "n1")
    assert refused.value.message.startswith("node n1 publishes an address for its kubelet the hub does not contact: "
                                            "169.254.169.254 is outside the node network 127.0.0.0/8")
    with pytest.raises(errors.ServiceUnavailable):
        kubelet({"metadata": {"name": "n1"}}, "n1")
    with pytest.raises(errors.BadRequest):
        kubelet(node("127.0.0.1", "10250"), "n1")  # a port of the wrong type is named, not ignored


def test_kube_proxy_port_comes_from_its_annotation_and_is_checked():
    assert kube_proxy(node("127.0.0.1"), "n1").port == 10256
    assert kube_proxy(node("127.0.0.1", annotations={"kubekitchen.dev/kube-proxy-port": str(EPHEMERAL)}), "n1").port == EPHEMERAL
    for bad in ("6379", "80/evil", "10256@x", "999999"):
        with pytest.raises(errors.BadRequest):
            kube_proxy(node("127.0.0.1", annotations={"kubekitchen.dev/kube-proxy-port": bad}), "n1")


def _response(chunks: list[bytes], headers: dict | None = None) -> httpx.Response:
    return httpx.Response(200, headers=headers or {}, stream=_Stream(chunks))


class _Stream(httpx.AsyncByteStream):
    def __init__(self, chunks):
        self.chunks = chunks

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk


def test_answers_are_read_up_to_a_bound():
    assert asyncio.run(read_bounded(_response([b"ab", b"cd"]), 4)) == b"abcd"
    with pytest.raises(node_address.AnswerTooLarge):
        asyncio.run(read_bounded(_response([b"ab", b"cde"]), 4))
    with pytest.raises(node_address.AnswerTooLarge):
        asyncio.run(read_bounded(_response([b""], {"content-length": "5"}), 4))


def test_lines_are_bounded_too():
    async def lines(chunks, limit):
        return [line async for line in bounded_lines(_response(chunks), limit)]
    assert asyncio.run(lines([b"a\nb", b"c\r\nd"], 8)) == ["a", "bc", "d"]
    with pytest.raises(node_address.AnswerTooLarge):
        asyncio.run(lines([b"x" * 5, b"x" * 5], 8))


def test_the_client_follows_no_redirect_and_ignores_proxy_settings():
    client = node_address.client(httpx.Timeout(1.0))
    assert client.follow_redirects is False and client._trust_env is False
    asyncio.run(client.aclose())


def test_the_client_presents_the_hubs_node_access_secret():
    client = node_address.client(httpx.Timeout(1.0))
    assert client.headers["authorization"] == f"Bearer {nodeaccess.token()}"
    assert node_address.credential() == nodeaccess.token()
    asyncio.run(client.aclose())


# --- through the hub: a Node pointing outside is never fetched ------------------------------------



class Listener:
    """A TCP server on loopback that counts connections (a fetch that must not happen would show)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def accepted(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1


def put_node(api, name, address, port, annotations=None):
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "annotations": annotations or {}}}
    created = json.loads(api.post("/api/v1/nodes", json.dumps(body)).content)
    created["status"] = {"addresses": [{"type": "InternalIP", "address": address}],
                         "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
                         "conditions": [{"type": "Ready", "status": "True"}]}
    assert api.put(f"/api/v1/nodes/{name}/status", json.dumps(created)).status_code == 200


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("address", ["http://example.com", "169.254.169.254", "127.0.0.1@example.com", "::ffff:127.0.0.1"])
def test_the_hub_answers_a_status_and_fetches_nothing(api, address):
    trap = Listener()
    put_node(api, "evil", address, trap.port, {"kubekitchen.dev/kube-proxy-port": str(trap.port)})
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "evil", "containers": [{"name": "c", "image": "x"}]}}
    assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod)).status_code == 201
    for method, path, query in (("GET", "/api/v1/namespaces/default/pods/p/log", ""),
                                ("GET", "/api/v1/namespaces/default/pods/p/exec", "command=ls&stdout=1"),
                                ("GET", "/kubekitchen/proxyrules", "node=evil"),
                                ("POST", "/kubekitchen/traffic", "node=evil&target=web")):
        answer = api.request(method, path, QUERY_STRING=query)
        body = json.loads(answer.content)
        assert answer.status_code == 400 and body["kind"] == "Status", (path, body)
        assert "the hub does not contact" in body["message"]
    assert api.get("/apis/metrics.k8s.io/v1beta1/nodes").status_code == 200  # the node is left out
    assert trap.accepted() == 0
    trap.sock.close()
