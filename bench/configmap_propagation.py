"""ConfigMap propagation: change a ConfigMap -> every pod's mounted file has the new content.

    .venv/bin/python bench/configmap_propagation.py [--pods 1000] [--nodes 5] [--sync-period 2] [--poll 0.1]

Starts its own cluster (bench/common.py Cluster: hub + controller-manager + scheduler + one
kubelet per node, each its own process, free loopback port, temp data dir, KK_PACE=workshop,
KK_SYNC_PERIOD=--sync-period), creates the ConfigMap `propagation` (`value: v1`) and --pods pods,
each mounting it at /etc/propagation and placed round-robin on the nodes (spec.nodeName: the
scheduler is not what is measured), and waits until every pod runs.

Then one shell per pod is opened through the hub, as `kubectl exec -i POD -- sh` speaks it (the
exec WebSocket, v5.channel.k8s.io, one thread per pod), and each reads `cat /etc/propagation/value`
once: every pod must show v1 (the file as the container sees it, not the kubelet's copy). With
every shell ready, the ConfigMap is replaced by `value: v2-<random>` (a PUT of the object read,
as `kubectl replace` sends) and each shell reads the file again every --poll s until it shows the new value.

Latency per pod: from just before the PUT was sent to the first read that showed the new value
(an upper bound by at most one read round; `read_round_p50_s` says how long a round took, which
grows with --pods on a busy machine). Target: max <= kubelet sync period + 1 s (issue 11).

Prints ONE JSON line (figures) on stdout; progress on stderr. --keep keeps the temp dir.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Cluster, CpuMeter, emit, exec_read_until, http_json, log, percentile, token_for  # noqa: E402

import websocket  # noqa: E402  (websocket-client, a test dependency)

NS = "default"
CONFIGMAP = "propagation"
MOUNT = "/etc/propagation"
PROTOCOL = "v5.channel.k8s.io"
STDIN, STDOUT, STDERR, ERROR = 0, 1, 2, 3
MARK = b"@@end@@"
REPLY_TIMEOUT = 30.0


def pod_manifest(index: int, node: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"reader-{index}", "namespace": NS, "labels": {"app": "reader"}},
            "spec": {"nodeName": node, "terminationGracePeriodSeconds": 1,
                     "volumes": [{"name": "cfg", "configMap": {"name": CONFIGMAP}}],
                     "containers": [{"name": "app", "image": "busybox:1.36",
                                     "volumeMounts": [{"name": "cfg", "mountPath": MOUNT}]}]}}


def create_pods(cluster: Cluster, count: int, nodes: int) -> None:
    http_json(f"{cluster.url}/api/v1/namespaces/{NS}/configmaps", "POST",
              {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIGMAP}, "data": {"value": "v1"}})
    for i in range(count):
        http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods", "POST", pod_manifest(i, f"node-{i % nodes + 1}"))
    log(f"{count} pods created")


def wait_running(cluster: Cluster, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    running = 0
    while time.monotonic() < deadline:
        pods = http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?labelSelector=app%3Dreader")["items"]
        running = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")
        if running >= count:
            log(f"{running} pods running")
            return
        time.sleep(0.5)
    raise RuntimeError(f"only {running} of {count} pods ran within {timeout:.0f} s")


class Reader(threading.Thread):
    """One pod's shell: reads the file once (must be v1), then, after the change, until it is new."""

    def __init__(self, cluster: Cluster, index: int, shared: dict, ready: threading.Barrier, poll: float):
        super().__init__(daemon=True)
        self.url = (f"ws://{cluster.host}:{cluster.port}/api/v1/namespaces/{NS}/pods/reader-{index}/exec"
                    "?command=sh&stdin=1&stdout=1&stderr=1")
        self.token = token_for(cluster.url)
        self.index, self.shared, self.ready, self.poll = index, shared, ready, poll
        self.latency: float | None = None
        self.rounds: list[float] = []
        self.error = ""

    def read(self, ws: websocket.WebSocket) -> str:
        ws.send_binary(bytes((STDIN,)) + f"cat {MOUNT}/value; echo {MARK.decode()}\n".encode())
        # a file being replaced may say "No such file" on stderr: not yet, so stdout only
        out = exec_read_until(ws, b"", MARK, (STDOUT,))
        return out.split(MARK, 1)[0].decode(errors="replace").strip()

    def run(self) -> None:
        headers = ["User-Agent: bench-configmap-propagation"]
        if self.token:
            headers.append(f"Authorization: Bearer {self.token}")
        try:
            ws = websocket.create_connection(self.url, subprotocols=[PROTOCOL], timeout=REPLY_TIMEOUT,
                                             header=headers, suppress_origin=True)
        except Exception as exc:
            self.error = f"connect: {exc}"
            self.ready.abort()
            return
        try:
            first = self.read(ws)
            if first != "v1":
                raise ValueError(f"read {first!r} before the change, expected 'v1'")
            self.ready.wait()
            self._until_new(ws)
        except threading.BrokenBarrierError:
            self.error = self.error or "another shell failed before the change"
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            try:
                ws.send_binary(bytes((STDIN,)) + b"exit\n")
            except Exception:
                pass
            ws.close()

    def _until_new(self, ws: websocket.WebSocket) -> None:
        self.shared["changed"].wait()
        started, wanted, until = self.shared["t0"], self.shared["value"], self.shared["until"]
        while time.perf_counter() < until:
            began = time.perf_counter()
            value = self.read(ws)
            self.rounds.append(time.perf_counter() - began)
            if value == wanted:
                self.latency = time.perf_counter() - started
                return
            time.sleep(max(0.0, self.poll - (time.perf_counter() - began)))
        self.error = "the new value never came"


def measure(cluster: Cluster, count: int, poll: float, timeout: float) -> dict:
    shared: dict = {"changed": threading.Event()}
    ready = threading.Barrier(count + 1)
    readers = [Reader(cluster, i, shared, ready, poll) for i in range(count)]
    for reader in readers:
        reader.start()
    path = f"{cluster.url}/api/v1/namespaces/{NS}/configmaps/{quote(CONFIGMAP)}"
    try:
        ready.wait(timeout=timeout)
    except threading.BrokenBarrierError:
        for reader in readers:
            reader.join(5)
        errors = [f"reader-{r.index}: {r.error}" for r in readers if r.error]
        for error in errors[:5]:
            log(error)
        return {"updated": 0, "errors": len(errors) or count, "p50_s": None, "p99_s": None, "max_s": None}
    log(f"{count} shells read v1; changing the ConfigMap")
    configmap = http_json(path)
    shared["value"] = configmap["data"]["value"] = f"v2-{secrets.token_hex(4)}"
    meter = CpuMeter(cluster.pid, cluster.spoke_pids()).start()
    shared["t0"] = time.perf_counter()
    shared["until"] = shared["t0"] + timeout
    http_json(path, "PUT", configmap)
    shared["changed"].set()
    for reader in readers:
        reader.join(timeout + 30)
    cpu = meter.stop()
    latencies = sorted(r.latency for r in readers if r.latency is not None)
    rounds = sorted(t for r in readers for t in r.rounds)
    errors = [f"reader-{r.index}: {r.error}" for r in readers if r.error]
    for error in errors[:5]:
        log(error)
    return {"updated": len(latencies), "errors": len(errors),
            "p50_s": round(percentile(latencies, 50), 3) if latencies else None,
            "p99_s": round(percentile(latencies, 99), 3) if latencies else None,
            "max_s": round(latencies[-1], 3) if latencies else None,
            "read_round_p50_s": round(percentile(rounds, 50), 3) if rounds else None, **cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=5)
    parser.add_argument("--sync-period", type=float, default=2.0, help="the kubelets' KK_SYNC_PERIOD (s)")
    parser.add_argument("--poll", type=float, default=0.1, help="seconds between two reads of one pod's file")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    target = args.sync_period + 1.0
    env = {"KK_SYNC_PERIOD": str(args.sync_period), "KK_LOG_MAX_ENTRIES": "1000000"}
    with Cluster(nodes=args.nodes, env=env, keep=args.keep) as cluster:
        cluster.wait_nodes_ready(args.nodes, timeout=180)
        create_pods(cluster, args.pods, args.nodes)
        wait_running(cluster, args.pods, timeout=max(120.0, args.pods * 0.5))
        figures = measure(cluster, args.pods, args.poll, args.timeout)
    figures = {"bench": "configmap_propagation", "pods": args.pods, "nodes": args.nodes,
               "sync_period_s": args.sync_period, "target_s": target, **figures}
    figures["within_target"] = bool(figures["updated"] == args.pods and figures["max_s"] is not None
                                    and figures["max_s"] <= target)
    emit(figures)


if __name__ == "__main__":
    main()
