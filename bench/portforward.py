"""HTTP through one `kubectl port-forward`: the real kubectl (SPDY/3.1 in a WebSocket to the hub),
the hub's relay, the kubelet's forwarded connection, the pod's simulated nginx.

    .venv/bin/python bench/portforward.py [--requests 1000] [--fresh 200]

It starts its own cluster (hub, one kubelet, the control plane; temp data dir), creates an nginx
pod, runs `kubectl port-forward pod/bench-web 0:80`, then times `--requests` GETs of `/` on one
kept-alive connection (httpx), then `--fresh` GETs each on a new connection (a new SPDY stream
pair and a new hub->kubelet connection per request), after a warm-up. Target: p99 <= 20 ms for the
kept-alive requests. Prints one JSON line on stdout; progress on stderr. kubectl, the spokes and
the hub are stopped at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import json
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, Cluster, emit, latency_summary, log, proc_cpu_seconds, stop_process  # noqa: E402

KUBECTL = "/usr/bin/kubectl"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bench-web"},
       "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}


def kubectl(cluster: Cluster, kubeconfig: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), *args], input=input, capture_output=True,
                          text=True, check=True, timeout=60).stdout


def forwarded_port(process: subprocess.Popen, timeout: float = 30) -> int:
    seen, deadline = b"", time.monotonic() + timeout
    while (found := re.search(rb"Forwarding from 127\.0\.0\.1:(\d+)", seen)) is None:
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"kubectl port-forward did not start: {seen!r}")
        if select.select([process.stdout], [], [], 0.2)[0]:
            seen += process.stdout.read1(4096)
    return int(found.group(1))


def timed(get, count: int) -> list[float]:
    took = []
    for _ in range(count):
        start = time.perf_counter()
        answer = get()
        took.append(time.perf_counter() - start)
        if answer.status_code != 200 or b"Welcome to nginx!" not in answer.content:
            raise RuntimeError(f"unexpected answer {answer.status_code}: {answer.content[:200]!r}")
    return took


def fresh_get(url: str) -> httpx.Response:
    """One GET on a connection of its own (a plain socket: an httpx.Client per request would time
    its own set-up, SSL context included, not the forward)."""
    port = int(url.rsplit(":", 1)[1].strip("/"))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return httpx.Response(int(head.split(b" ", 2)[1]) if head else 0, content=body)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--fresh", type=int, default=200)
    args = parser.parse_args()
    forward: subprocess.Popen | None = None
    with Cluster(nodes=1, env={"KK_PACE": "workshop", "KK_START_DELAY": "0.1"}) as cluster:
        try:
            cluster.wait_nodes_ready(1)
            kubeconfig = cluster.dir / "kubeconfig"
            kubeconfig.write_text(subprocess.run([sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--server",
                                                  cluster.url], env=cluster.env, cwd=ROOT, check=True,
                                                 capture_output=True, text=True).stdout)
            kubectl(cluster, kubeconfig, "apply", "-f", "-", input=json.dumps(POD))
            deadline = time.monotonic() + 60
            while " Running " not in kubectl(cluster, kubeconfig, "get", "pod", "bench-web"):
                if time.monotonic() > deadline:
                    raise RuntimeError("the pod never ran")
                time.sleep(0.2)
            forward = subprocess.Popen([KUBECTL, "--kubeconfig", str(kubeconfig), "port-forward", "pod/bench-web",
                                        "0:80"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            url = f"http://127.0.0.1:{forwarded_port(forward)}/"
            log(f"forwarding {url}")
            kubelet_pid = cluster.spoke_pids()["kubelet/node-1"]
            with httpx.Client(timeout=30) as http:
                timed(lambda: http.get(url), 50)  # warm-up
                cpu = (proc_cpu_seconds(cluster.pid), proc_cpu_seconds(kubelet_pid))
                kept = timed(lambda: http.get(url), args.requests)
                cpu = (proc_cpu_seconds(cluster.pid) - cpu[0], proc_cpu_seconds(kubelet_pid) - cpu[1])
            fresh = timed(lambda: fresh_get(url), args.fresh)
            emit({"bench": "portforward", "client": "kubectl " + kubectl(cluster, kubeconfig, "version", "--client",
                                                                           "-o", "json").split('"gitVersion": "')[1]
                  .split('"')[0], **latency_summary(kept, "kept_alive_"), **latency_summary(fresh, "new_connection_"),
                  "hub_cpu_ms_per_request": round(cpu[0] / args.requests * 1000, 3),
                  "kubelet_cpu_ms_per_request": round(cpu[1] / args.requests * 1000, 3),
                  "target_p99_ms": 20, "met": latency_summary(kept)["p99_ms"] <= 20})
        finally:
            stop_process(forward)


if __name__ == "__main__":
    main()
