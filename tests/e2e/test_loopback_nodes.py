"""The whole cluster with every node on 127.0.0.1 (as on macOS, where 127.0.1.N cannot be bound):
`runcluster --node-addresses loopback`, driven by the real kubectl. Each Node reports 127.0.0.1 and
a kubelet port of its own; a Deployment behind a Service runs, `kubectl exec` reaches a pod and,
from it, the Service through the node's kube-proxy; `kubectl port-forward` reaches a pod; traffic
sent from each node is answered by the Service's pods; and stopping runcluster leaves no process."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from control.auth.tokenfile import admin_token, bearer
from tests.conftest import KUBECTL, ROOT, free_server_port, wait_for
from tests.e2e.test_runcluster import alive, kill_cluster, processes_mentioning

pytestmark = pytest.mark.e2e

NODES = 2
MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers:
      - name: web
        image: nginx:1.27
        ports: [{name: http, containerPort: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
"""


class LoopbackCluster:
    def __init__(self):
        self.port = free_server_port()
        self.marker = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.marker}"
        self.data = tempfile.mkdtemp(prefix="kk-loopback-")
        self.log = Path(self.data, "runcluster.log")
        env = {**os.environ, "KK_START_DELAY": "0.05", "KK_TERMINATION_SECONDS": "0.5"}
        env.pop("KK_NODE_ADDRESSES", None)  # the option alone asks for the mode
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "runcluster", "--addr", self.marker, "--nodes", str(NODES),
             "--data", self.data, "--pace", "workshop", "--node-addresses", "loopback"], cwd=ROOT, env=env,
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
        self.kubeconfig = Path(self.data, "kubeconfig.yaml")

    def get(self, path: str) -> dict:
        return httpx.get(f"{self.url}{path}", headers=bearer(admin_token(self.data)), timeout=10).json()

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                               str(Path(self.data, "kube-cache")), *args], input=input, capture_output=True,
                              text=True, timeout=60)
        assert not check or done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done

    def kill_everything(self) -> None:
        kill_cluster(self.process, self.process.pid, self.marker, self.data)


def ready_nodes(cluster: LoopbackCluster) -> list[dict]:
    try:
        nodes = cluster.get("/api/v1/nodes").get("items") or []
    except (httpx.HTTPError, ValueError):
        return []
    return [n for n in nodes if any(c.get("type") == "Ready" and c.get("status") == "True"
                                     for c in (n.get("status") or {}).get("conditions") or [])]


@pytest.fixture(scope="module")
def cluster():
    running = LoopbackCluster()
    try:
        wait_for(lambda: len(ready_nodes(running)) == NODES, timeout=90,
                 what=f"{NODES} Ready nodes; runcluster said:\n{running.log.read_text()[-2000:] if running.log.exists() else ''}")
        wait_for(lambda: all(n.get("metadata", {}).get("annotations", {}).get("kubekitchen.dev/kube-proxy-port")
                             for n in ready_nodes(running)), timeout=30, what="every kube-proxy's port on its Node")
        config = subprocess.run([sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--server", running.url],
                                cwd=ROOT, env={**os.environ, "KK_DATA_DIR": running.data}, check=True,
                                capture_output=True, text=True).stdout
        running.kubeconfig.write_text(config)
        running.kubectl("apply", "-f", "-", input=MANIFEST)
        wait_for(lambda: len(ready_endpoints(running)) == 2, timeout=60, what="2 ready endpoints of web")
        yield running
    finally:
        running.kill_everything()


def ready_endpoints(cluster: LoopbackCluster) -> list[str]:
    subsets = cluster.get("/api/v1/namespaces/default/endpoints/web").get("subsets") or []
    return [a["ip"] for s in subsets for a in s.get("addresses") or []]


def test_every_node_reports_127_0_0_1_and_a_kubelet_port_of_its_own(cluster):
    nodes = ready_nodes(cluster)
    internal = {n["metadata"]["name"]: [a["address"] for a in n["status"]["addresses"] if a["type"] == "InternalIP"]
                for n in nodes}
    assert internal == {f"node-{i}": ["127.0.0.1"] for i in range(1, NODES + 1)}
    ports = [n["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] for n in nodes]
    assert len(set(ports)) == NODES and 10250 not in ports, ports
    proxies = [n["metadata"]["annotations"]["kubekitchen.dev/kube-proxy-port"] for n in nodes]
    assert len(set(proxies)) == NODES
    assert "nodes:     2 on 127.0.0.1" in cluster.log.read_text()
    wide = cluster.kubectl("get", "nodes", "-o", "wide").stdout
    assert wide.count("127.0.0.1") == NODES


def test_exec_into_a_pod_and_from_it_reach_the_service(cluster):
    pods = cluster.kubectl("get", "pods", "-l", "app=web", "-o", "name").stdout.split()
    assert len(pods) == 2
    assert cluster.kubectl("exec", pods[0], "--", "echo", "hi").stdout == "hi\n"
    page = cluster.kubectl("exec", pods[0], "--", "wget", "-qO-", "http://web/").stdout
    assert "Welcome to nginx!" in page
    # a pod IP of the other node: routed to the kubelet at the port its Node reports
    other = cluster.kubectl("get", pods[1], "-o", "jsonpath={.status.podIP}").stdout
    head = cluster.kubectl("exec", pods[0], "--", "curl", "-si", f"http://{other}/").stdout
    assert head.startswith("HTTP/1.1 200 OK") and f"x-kubekitchen-pod: default/{pods[1].split('/')[1]}" in head, head
    logs = cluster.kubectl("logs", pods[1]).stdout
    assert "Configuration complete; ready for start up" in logs, "nginx's start, fetched from its node's kubelet"


def test_port_forward_reaches_a_pod(cluster):
    forward = subprocess.Popen([KUBECTL, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir",
                                str(Path(cluster.data, "kube-cache")), "port-forward", "svc/web", "0:80"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        output, deadline = b"", time.monotonic() + 20
        while (found := re.search(rb"Forwarding from 127\.0\.0\.1:(\d+)", output)) is None:
            assert time.monotonic() < deadline and forward.poll() is None, f"kubectl never forwarded: {output!r}"
            if select.select([forward.stdout], [], [], 0.2)[0]:
                output += forward.stdout.read1(4096)
        page = httpx.get(f"http://127.0.0.1:{int(found.group(1))}/", timeout=10)
        assert page.status_code == 200 and "Welcome to nginx!" in page.text
    finally:
        forward.kill()
        forward.wait(timeout=10)
        forward.stdout.close()
        forward.stderr.close()


def test_the_service_answers_traffic_from_every_node(cluster):
    pods = set(cluster.kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}").stdout.split())
    for i in range(1, NODES + 1):
        out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "traffic", "web", "--from", f"node-{i}",
                              "-n", "10", "--interval", "5", "--server", cluster.url], cwd=ROOT,
                             env={**os.environ, "KK_DATA_DIR": cluster.data}, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        answered = {name for name in pods if name in out.stdout}
        assert answered == pods, out.stdout


def test_stopping_leaves_no_process_behind(cluster):
    before = processes_mentioning(cluster.marker) - {cluster.process.pid}
    assert len(before) >= 1 + 4 + 2 * NODES
    cluster.process.send_signal(signal.SIGINT)
    wait_for(lambda: not alive(before) and not processes_mentioning(cluster.marker) - {cluster.process.pid},
             timeout=15, what="every process of the cluster gone")
    assert cluster.process.wait(timeout=5) == 0
