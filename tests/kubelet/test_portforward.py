"""The kubelet's port-forward endpoint over a real loopback socket: the checks before the upgrade,
what listens on which port, the simulated servers' HTTP answers (keep-alive, pipelining, HEAD, bytes
that are not HTTP), containerd's connection-refused message, the CPU count per request."""

from __future__ import annotations

import asyncio
import json

import pytest

from control.client import nodeaccess
from control.client.serving import Exchange, HttpError, NodeServer, Request
from control.clock import FakeClock
from control.kubelet.behaviour import Script
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import advance, new_container
from control.kubelet.portforward import (PortForwardServer, listener_for, parse_forward, refused_message,
                                         sandbox_id)

AUTH = f"Authorization: Bearer {nodeaccess.token()}\r\n"  # the hub's proof, as node servers require it

T0 = 1_800_000_000.0
BACKOFF = BackoffPolicy(10, 300, 600)
POD = {"metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
       "spec": {"containers": [
           {"name": "nginx", "image": "docker.io/library/nginx:1.27"},
           {"name": "api", "image": "example/api:2", "ports": [{"containerPort": 8080}, {"containerPort": 53,
                                                                                        "protocol": "UDP"}]},
           {"name": "httpd", "image": "httpd:2.4", "ports": [{"containerPort": 9090}]},
           {"name": "late", "image": "example/late", "ports": [{"containerPort": 7070}]}]}}


class Record:
    pod_ip = "10.244.1.9"


def running(name: str, image: str):
    return advance(new_container(name, image, "u1", T0, 0), Script(), "Always", T0 + 1, BACKOFF)[0]


def found():
    return (POD, Record(), (running("nginx", "nginx"), running("api", "example/api:2"),
                            running("httpd", "httpd:2.4"), new_container("late", "example/late", "u1", T0, 60)))


class Server(NodeServer):
    def __init__(self, forwards: PortForwardServer):
        self.forwards = forwards

    async def answer(self, request: Request, exchange: Exchange) -> None:
        await self.forwards.answer(request, exchange)


class Node:
    def __init__(self):
        self.counted: list[str] = []
        self.forwards = PortForwardServer(lambda ns, name: found() if (ns, name) == ("shop", "web") else None,
                                          node="n1", clock=FakeClock(T0), count=self.counted.append)

    async def __aenter__(self):
        self.server = Server(self.forwards)
        self.port = await self.server.start("127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc):
        await self.server.close()

    async def exchange(self, target: str, sent: bytes = b"", *, upgrade: bytes = b"kubekitchen.dev/portforward",
                       half_close: bool = True) -> bytes:
        """Everything the kubelet answers to the request (and the bytes sent after it)."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(b"POST " + target.encode() + b" HTTP/1.1\r\nhost: n1\r\n" + AUTH.encode() + b"connection: Upgrade\r\nupgrade: "
                     + upgrade + b"\r\ncontent-length: 0\r\n\r\n" + sent)
        if half_close:
            writer.write_eof()
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        return answer


def test_the_target_and_port_are_checked_as_the_kubelet_does():
    assert parse_forward("/portForward/shop/web?port=80") == ("shop", "web", 80)
    for target, status, message in (("/portForward/shop/web", 400, 'query parameter "port" is required'),
                                    ("/portForward/shop/web?port=x", 400, 'unable to parse "x" as a port'),
                                    ("/portForward/shop/web?port=70000", 400, 'unable to parse "70000" as a port'),
                                    ("/portForward/shop/web?port=0", 400, 'port "0" must be > 0'),
                                    ("/portForward/shop?port=80", 404, "no such path: /portForward/shop")):
        with pytest.raises(HttpError) as caught:
            parse_forward(target)
        assert (caught.value.status, caught.value.message) == (status, message)


def test_what_listens_is_the_running_containers_declared_ports_and_their_images_usual_one():
    assert listener_for(found(), 80, "n1").flavour == "nginx"  # nginx's own port, undeclared
    api = listener_for(found(), 8080, "n1")
    assert (api.flavour, api.pod, api.namespace, api.pod_ip, api.port) == ("json", "web", "shop", "10.244.1.9", 8080)
    assert listener_for(found(), 9090, "n1").flavour == "httpd"
    assert listener_for(found(), 53, "n1") is None, "a UDP port is not a TCP listener"
    assert listener_for(found(), 7070, "n1") is None, "a container still creating listens on nothing"
    assert listener_for(found(), 81, "n1") is None


def test_the_refused_message_is_containerds_through_the_kubelet():
    sandbox = sandbox_id("u1")
    assert len(sandbox) == 64 and sandbox == sandbox_id("u1") != sandbox_id("u2")
    message = refused_message(81, "u1")
    assert message.startswith(f"error forwarding port 81 to pod {sandbox}, uid : failed to execute portforward in "
                              'network namespace "/var/run/netns/cni-')
    assert message.endswith(f'failed to connect to localhost:81 inside namespace "{sandbox}", IPv4: dial tcp4 '
                            "127.0.0.1:81: connect: connection refused IPv6 dial tcp6 [::1]:81: connect: "
                            "connection refused ")


def test_nginx_answers_its_pages_with_keep_alive_pipelining_and_head():
    async def scenario():
        async with Node() as node:
            answer = await node.exchange("/portForward/shop/web?port=80",
                                         b"GET / HTTP/1.1\r\nhost: x\r\n\r\nHEAD / HTTP/1.1\r\nhost: x\r\n\r\n"
                                         b"GET /nope HTTP/1.1\r\nhost: x\r\n\r\n")
            head, rest = answer.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.1 101 ")
            assert rest.count(b"HTTP/1.1 200 OK") == 2 and rest.count(b"HTTP/1.1 404 Not Found") == 1
            assert rest.count(b"<title>Welcome to nginx!</title>") == 1, "HEAD has no body"
            assert b"server: nginx/1.27.3" in rest and b"<hr><center>nginx/1.27.3</center>" in rest
            assert node.counted == ["u1", "u1", "u1"]

    asyncio.run(scenario())


def test_other_images_answer_what_serve_answers_and_httpd_it_works():
    async def scenario():
        async with Node() as node:
            answer = await node.exchange("/portForward/shop/web?port=8080",
                                         b"POST /x HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabc")
            body = answer.rsplit(b"\r\n\r\n", 1)[1]
            assert json.loads(body) == {"pod": "web", "namespace": "shop", "node": "n1", "podIP": "10.244.1.9",
                                        "port": 8080}
            answer = await node.exchange("/portForward/shop/web?port=9090", b"GET / HTTP/1.0\r\n\r\n",
                                         half_close=False)  # HTTP/1.0: the server closes after answering
            assert answer.endswith(b"<html><body><h1>It works!</h1></body></html>\n")

    asyncio.run(scenario())


def test_bytes_that_are_not_http_get_a_400_and_the_close():
    async def scenario():
        async with Node() as node:
            answer = await node.exchange("/portForward/shop/web?port=80", b"\x16\x03\x01 not http\r\n\r\n",
                                         half_close=False)
            assert answer.split(b"\r\n\r\n", 1)[1].startswith(b"HTTP/1.1 400 Bad Request\r\n")

    asyncio.run(scenario())


def test_refusals_before_the_upgrade():
    async def scenario():
        async with Node() as node:
            refused = await node.exchange("/portForward/shop/web?port=81")
            assert refused.startswith(b"HTTP/1.1 503 ")
            assert json.loads(refused.split(b"\r\n\r\n", 1)[1])["error"] == refused_message(81, "u1")
            gone = await node.exchange("/portForward/shop/nope?port=80")
            assert gone.startswith(b"HTTP/1.1 404 ") and b'"pod does not exist"' in gone
            plain = await node.exchange("/portForward/shop/web?port=80", upgrade=b"websocket")
            assert plain.startswith(b"HTTP/1.1 400 ") and b"needs an upgraded connection" in plain
            assert node.counted == []

    asyncio.run(scenario())
