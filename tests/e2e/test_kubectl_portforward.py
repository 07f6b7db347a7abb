"""Port-forward end to end: a real hub and kubelet, driven by the real kubectl (SPDY/3.1 tunnelled
in WebSocket, `SPDY/3.1+portforward.k8s.io`) and the official Python client (v4.channel.k8s.io)."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import time
from functools import partial

import httpx
import pytest
from kubernetes import client
from kubernetes.stream import portforward

from tests.conftest import Hub, KUBECTL, hub_with_kubelet, wait_for

pytestmark = pytest.mark.e2e

NODE = "node-1"
KUBELET_ENV = {"KK_PACE": "workshop", "KK_START_DELAY": "0.1", "KK_TERMINATION_SECONDS": "0.5"}
eventually = partial(wait_for, timeout=20)


@pytest.fixture(scope="module")
def hub():
    with hub_with_kubelet(NODE, KUBELET_ENV) as server:
        for name, image, ports in (("web", "nginx:1.27", []), ("api", "memcached:1.6", [8080])):
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
                   "spec": {"nodeName": NODE, "containers": [
                       {"name": "app", "image": image, "ports": [{"containerPort": p} for p in ports]}]}}
            server.kubectl("apply", "-f", "-", input=json.dumps(pod))
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "front"},
                   "spec": {"selector": {"app": "web"}, "ports": [{"port": 8000, "targetPort": 80}]}}
        server.kubectl("apply", "-f", "-", input=json.dumps(service))
        for name in ("web", "api"):
            eventually(lambda: " Running " in server.kubectl("get", "pod", name).stdout, what=f"{name} Running")
        yield server


class Forward:
    """`kubectl port-forward` as a subprocess: the local port it prints, and a sure end."""

    def __init__(self, hub: Hub, *args: str, env: dict[str, str] | None = None):
        self.process = subprocess.Popen([KUBECTL, "--kubeconfig", str(hub.kubeconfig), "--cache-dir",
                                         str(hub.dir / "kube-cache"), "port-forward", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env={**os.environ, **(env or {})})
        self.output = b""

    def __enter__(self) -> "Forward":
        return self

    def local_port(self, timeout: float = 15) -> int:
        deadline = time.monotonic() + timeout
        while (found := re.search(rb"Forwarding from 127\.0\.0\.1:(\d+)", self.output)) is None:
            assert time.monotonic() < deadline and self.process.poll() is None, \
                f"kubectl never forwarded: {self.output!r} {self.process.stderr.read() if self.process.poll() is not None else b''!r}"
            if select.select([self.process.stdout], [], [], 0.2)[0]:
                self.output += self.process.stdout.read1(4096)
        return int(found.group(1))

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()


def test_kubectl_forwards_to_nginx_over_keep_alive_and_new_connections(hub):
    with Forward(hub, "pod/web", "0:80") as forward:
        port = forward.local_port()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            for _ in range(5):  # one kept-alive connection
                page = http.get("/")
                assert page.status_code == 200 and "<title>Welcome to nginx!</title>" in page.text
                assert page.headers["server"].startswith("nginx/")
            assert http.get("/missing").status_code == 404
        for _ in range(3):  # a new forwarded connection each time
            assert "Welcome to nginx!" in httpx.get(f"http://127.0.0.1:{port}/", timeout=10,
                                                     headers={"connection": "close"}).text
        assert forward.process.poll() is None  # still forwarding


def test_kubectl_forwards_to_a_declared_port(hub):
    with Forward(hub, "api", ":8080") as forward:
        port = forward.local_port()
        answer = httpx.get(f"http://127.0.0.1:{port}/anything", timeout=10).json()
        assert answer["pod"] == "api" and answer["namespace"] == "default" and answer["port"] == 8080
        assert answer["node"] == NODE and answer["podIP"]


def test_kubectl_without_websockets_speaks_spdy_over_a_plain_http_upgrade(hub):
    # kubectl's fallback (and kubectl < 1.30): POST with Upgrade: SPDY/3.1, no WebSocket at all
    with Forward(hub, "pod/web", "0:80", "-v=6", env={"KUBECTL_PORT_FORWARD_WEBSOCKETS": "false"}) as forward:
        port = forward.local_port()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            for _ in range(3):
                assert "Welcome to nginx!" in http.get("/").text
        forward.process.kill()
        stderr = forward.process.stderr.read().decode()
    assert "POST " in stderr and "/pods/web/portforward 101 Switching Protocols" in stderr
    assert "tunneling_dialer" not in stderr, "no WebSocket was tried"


def test_kubectl_forwards_a_services_port_to_its_pods_target_port(hub):
    with Forward(hub, "svc/front", "0:8000") as forward:
        assert "Welcome to nginx!" in httpx.get(f"http://127.0.0.1:{forward.local_port()}/", timeout=10).text


def test_a_port_nothing_listens_on_is_kubernetes_error_and_the_hub_goes_on(hub):
    with Forward(hub, "pod/web", "0:81") as forward:
        port = forward.local_port()
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
        forward.process.wait(timeout=15)  # kubectl >= 1.31 gives up on the forward: "lost connection to pod"
        stderr = forward.process.stderr.read().decode()
    assert "error forwarding port 81 to pod " in stderr and "uid : failed to execute portforward" in stderr
    assert "dial tcp4 127.0.0.1:81: connect: connection refused" in stderr
    with Forward(hub, "pod/web", "0:80") as forward:  # the hub still serves
        assert "Welcome to nginx!" in httpx.get(f"http://127.0.0.1:{forward.local_port()}/", timeout=10).text


def test_kubectl_errors_for_a_missing_pod(hub):
    gone = hub.kubectl("port-forward", "pod/nope", "0:80", check=False, timeout=30)
    assert gone.returncode == 1 and 'pods "nope" not found' in gone.stderr


def test_the_python_client_forwards_over_v4(hub):
    with hub.python_client() as api:
        core = client.CoreV1Api(api)
        forward = portforward(core.connect_get_namespaced_pod_portforward, "web", "default", ports="80,81")
        sock = forward.socket(80)
        sock.setblocking(True)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        sock.close()
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"Welcome to nginx!" in answer
        eventually(lambda: forward.error(81) is not None, what="the error of port 81")
        assert "dial tcp4 127.0.0.1:81: connect: connection refused" in forward.error(81)
        assert forward.error(80) is None
        forward.close()
