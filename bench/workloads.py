"""The workload controllers' speed targets (issue 12), each on its own fresh cluster.

    .venv/bin/python bench/workloads.py [--phases job,daemonset,statefulset,drain] [--timeout 120] [--scale 1]

Each phase starts a cluster (bench/common.py Cluster: hub + controller-manager + scheduler + one
kubelet per node, each its own process, free loopback port, temp data dir, KK_PACE=workshop,
KK_START_DELAY=0), waits for its nodes to be Ready, then times one thing from the moment the
object is created (or drain is started) to the moment the hub says it is done, polling the hub's
API every 50 ms (a poll costs the hub little next to the work measured; the figures are upper
bounds by at most one poll):

  job          a Job of 1,000 completions, parallelism 50, a command that exits at once, on 5
               nodes: until status.succeeded == 1000 and the Complete condition (target <= 20 s).
               "At once" is the simulation's knob `kubekitchen.dev/crash-after: "0"` (with exit code
               0): a bare `sh -c "exit 0"` runs for 1 s in the simulated kitchen, so that a room sees
               it run, and 20 rounds of 50 would take 20 s of that alone
  daemonset    a DaemonSet on 50 nodes: until 50 pods are Running and Ready (target <= 5 s)
  statefulset  a StatefulSet of 20 OrderedReady replicas with a volumeClaimTemplate, on 3 nodes:
               until readyReplicas == 20 (target <= 10 s)
  drain        `kubectl drain node-1 --ignore-daemonsets --delete-emptydir-data --force` of a node
               holding 100 pods of a Deployment (no PDB), on 2 nodes: until kubectl returns 0
               (target <= 15 s). kubectl itself paces this: client-go's client-side limiter (5
               requests/s, burst 10, as its log says: "Waited for ... due to client-side
               throttling, not priority and fairness") lets the 100 evictions out over >= 18 s,
               whatever the server. The phase also reports `after_last_eviction_s`: from kubectl's
               last eviction to its return, the part the cluster decides

--scale F multiplies every size above (completions, parallelism, nodes, replicas, pods; at least 1
each, 2 nodes for drain) for a quick smoke run; the targets are for --scale 1 only.

Prints ONE JSON line: per phase the seconds, whether it finished, the target, and the CPU seconds
of the hub and of the controller-manager during the phase. Progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, Cluster, emit, http_json, log, proc_cpu_seconds  # noqa: E402

NS = "default"
POLL = 0.05
EXIT_AT_ONCE = {"kubekitchen.dev/crash-after": "0", "kubekitchen.dev/exit-code": "0"}
SCALE = 1.0  # --scale: set once by main() before any phase runs


def n(size: int, least: int = 1) -> int:
    """`size` at the run's --scale."""
    return max(least, round(size * SCALE))


def _job() -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "many", "namespace": NS},
            "spec": {"completions": n(1000), "parallelism": n(50), "backoffLimit": 6,
                     # exits at once: a bare `exit 0` runs 1 s in the simulation, so a room can see it run
                     "template": {"metadata": {"annotations": EXIT_AT_ONCE},
                                  "spec": {"restartPolicy": "Never", "containers": [
                         {"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", "exit 0"]}]}}}}


def _daemonset() -> dict:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": NS},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


def _statefulset() -> list[tuple[str, dict]]:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": NS},
               "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 80}]}}
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": NS},
           "spec": {"replicas": n(20), "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                                          "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    return [(f"/api/v1/namespaces/{NS}/services", service), (f"/apis/apps/v1/namespaces/{NS}/statefulsets", sts)]


def _deployment(replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "load", "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "load"}},
                     "template": {"metadata": {"labels": {"app": "load"}},
                                  "spec": {"terminationGracePeriodSeconds": 1,
                                           "containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


def _ready(pod: dict) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def _wait(what: str, done: Callable[[], bool], timeout: float) -> tuple[bool, float]:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if done():
            return True, time.perf_counter() - started
        time.sleep(POLL)
    log(f"{what}: not done after {timeout:.0f} s")
    return False, time.perf_counter() - started


def _pods(cluster: Cluster, selector: str) -> list[dict]:
    return http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?labelSelector={selector}")["items"]


def _cpu(cluster: Cluster) -> dict[str, float]:
    pids = {"hub": cluster.pid, "controller-manager": cluster.spoke_pids()["controller-manager"]}
    return {name: proc_cpu_seconds(pid) for name, pid in pids.items()}


def _phase(name: str, nodes: int, target: float, run: Callable[[Cluster], tuple]) -> dict[str, Any]:
    """Times `run(cluster)` -> (done, seconds[, more figures]) on a fresh cluster of `nodes`."""
    log(f"{name}: starting a cluster of {nodes} nodes")
    with Cluster(nodes=nodes, env={"KK_LOG_MAX_ENTRIES": "1000000"}) as cluster:
        cluster.wait_nodes_ready(nodes, timeout=180)
        before = _cpu(cluster)
        done, seconds, *extra = run(cluster)
        after = _cpu(cluster)
    figures = {"done": done, "seconds": round(seconds, 2), "target_s": target, **(extra[0] if extra else {}),
               "within_target": (done and seconds <= target) if SCALE == 1 else None,
               **{f"{k}_cpu_s": round(after[k] - before[k], 2) for k in after}}
    log(f"{name}: {figures}")
    return figures


def job(timeout: float) -> dict[str, Any]:
    def run(cluster: Cluster) -> tuple[bool, float]:
        started = time.perf_counter()
        http_json(f"{cluster.url}/apis/batch/v1/namespaces/{NS}/jobs", "POST", _job())

        def complete() -> bool:
            status = http_json(f"{cluster.url}/apis/batch/v1/namespaces/{NS}/jobs/many").get("status") or {}
            return status.get("succeeded") == n(1000) and any(
                c.get("type") == "Complete" and c.get("status") == "True" for c in status.get("conditions") or [])
        done, _ = _wait("job", complete, timeout)
        return done, time.perf_counter() - started
    return _phase("job", n(5), 20.0, run)


def daemonset(timeout: float) -> dict[str, Any]:
    def run(cluster: Cluster) -> tuple[bool, float]:
        started = time.perf_counter()
        http_json(f"{cluster.url}/apis/apps/v1/namespaces/{NS}/daemonsets", "POST", _daemonset())
        done, _ = _wait("daemonset", lambda: sum(map(_ready, _pods(cluster, "app%3Dagent"))) >= n(50), timeout)
        return done, time.perf_counter() - started
    return _phase("daemonset", n(50), 5.0, run)


def statefulset(timeout: float) -> dict[str, Any]:
    def run(cluster: Cluster) -> tuple[bool, float]:
        started = time.perf_counter()
        for path, obj in _statefulset():
            http_json(f"{cluster.url}{path}", "POST", obj)

        def ready() -> bool:
            status = http_json(f"{cluster.url}/apis/apps/v1/namespaces/{NS}/statefulsets/web").get("status") or {}
            return status.get("readyReplicas") == n(20)
        done, _ = _wait("statefulset", ready, timeout)
        return done, time.perf_counter() - started
    return _phase("statefulset", n(3), 10.0, run)


def drain(timeout: float) -> dict[str, Any]:
    def run(cluster: Cluster) -> tuple[bool, float, dict[str, Any]]:
        # all 100 pods on node-1: node-2 is cordoned while they are placed, then opened for the drain
        _patch_node(cluster, "node-2", True)
        http_json(f"{cluster.url}/apis/apps/v1/namespaces/{NS}/deployments", "POST", _deployment(n(100)))
        placed, _ = _wait("drain setup", lambda: sum(map(_ready, _pods(cluster, "app%3Dload"))) >= n(100), timeout)
        if not placed:
            return False, 0.0, {}
        _patch_node(cluster, "node-2", False)
        with tempfile.NamedTemporaryFile("w", suffix=".kubeconfig", delete=False) as config:
            config.write(subprocess.run([sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--server", cluster.url],
                                        capture_output=True, text=True, check=True, cwd=ROOT, env=cluster.env).stdout)
        try:
            started = time.perf_counter()
            kubectl = subprocess.run(["kubectl", "--kubeconfig", config.name, "drain", "node-1", "--ignore-daemonsets",
                                      "--delete-emptydir-data", "--force", f"--timeout={int(timeout)}s", "-v=6"],
                                     capture_output=True, text=True, timeout=timeout + 30)
            seconds = time.perf_counter() - started
            return kubectl.returncode == 0, seconds, _kubectl_pacing(kubectl.stderr, started, seconds)
        finally:
            os.unlink(config.name)
    return _phase("drain", 2, 15.0, run)


def _kubectl_pacing(log_text: str, started: float, seconds: float) -> dict[str, Any]:
    """From kubectl's -v=6 log: its evictions, how many of its requests its own client-side limiter
    held back, and the seconds from its last eviction to its return (klog stamps are wall-clock
    times of day; `started` is mapped onto them through the log's first line)."""
    stamps = [(line, _klog_seconds(line)) for line in log_text.splitlines() if line[:1] in "IWE"]
    evictions = [t for line, t in stamps if "/eviction " in line and "round_trippers" in line and t is not None]
    throttled = sum("due to client-side throttling" in line for line, _ in stamps)
    first = next((t for _, t in stamps if t is not None), None)
    out: dict[str, Any] = {"evictions": len(evictions), "requests_held_by_kubectl": throttled}
    if evictions and first is not None:  # kubectl's first log line comes within ms of its start
        out["after_last_eviction_s"] = round(seconds - (max(evictions) - first), 2)
    return out


def _klog_seconds(line: str) -> float | None:
    """Seconds of the day of a klog line ("I1128 09:54:49.079312 ...")."""
    try:
        hours, minutes, rest = line.split()[1].split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(rest)
    except (IndexError, ValueError):
        return None


def _patch_node(cluster: Cluster, node: str, unschedulable: bool) -> None:
    body = json.dumps({"spec": {"unschedulable": True if unschedulable else None}}).encode()
    request = urllib.request.Request(f"{cluster.url}/api/v1/nodes/{node}", data=body, method="PATCH",
                                     headers={"Content-Type": "application/merge-patch+json",
                                              "Authorization": f"Bearer {cluster.token}"})
    urllib.request.urlopen(request, timeout=30).read()


PHASES = {"job": job, "daemonset": daemonset, "statefulset": statefulset, "drain": drain}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phases", default=",".join(PHASES), help="comma-separated: " + ", ".join(PHASES))
    parser.add_argument("--timeout", type=float, default=120, help="seconds per phase before giving up")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size (a quick smoke run: 0.1)")
    args = parser.parse_args()
    global SCALE
    SCALE = args.scale
    figures: dict[str, Any] = {"bench": "workloads", "scale": SCALE, "cpus": os.cpu_count(),
                               "loadavg_at_start": os.getloadavg()[0]}
    for name in args.phases.split(","):
        figures[name] = PHASES[name](args.timeout)
    emit(figures)


if __name__ == "__main__":
    main()
