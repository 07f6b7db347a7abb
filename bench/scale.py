"""Scale: how fast a whole cluster brings many pods to Running, and takes them away again.

    .venv/bin/python bench/scale.py [--pods 1000] [--nodes 10] [--timeout 180] [--no-down] [--kube-proxies]
    .venv/bin/python bench/scale.py --kwok [--pods 10000] [--clients 8] [--via post|deployment]

Both start their own cluster (bench/common.py Cluster: hub + controller-manager + scheduler + one
kubelet per node, each `manage.py runcomponent ...` in its own process, free loopback port, temp
data dir) with KK_PACE=workshop, KK_START_DELAY=0 (--start-delay) and the default
KK_TERMINATION_SECONDS (1 s: a deleted pod's containers take min(grace, 1 s) to stop before the
kubelet's final delete). Version-log compaction is pushed out (KK_LOG_MAX_ENTRIES/AGE) so every
write of the run can be counted afterwards from the hub's SQLite log.

Default mode: --nodes 10 (110 pods each), a Deployment of 0 replicas, then `kubectl scale`'s
request (merge PATCH of deployments/NAME/scale to --pods) and the time until every pod is
Running with Ready=True; then (unless --no-down) scale to 0 and the time until every pod is gone.

--kwok: one node with KK_NODE_PODS=pods+1000 (cpu 1000, memory 4Ti; the kubelet sizes its pod
range to that), --pods (10,000) created
directly by POST /api/v1/namespaces/default/pods from --clients concurrent keep-alive connections
(no nodeName: the scheduler still binds each one), or with --via deployment by scaling a
Deployment; then every pod is deleted by DELETE (DeleteOptions{propagationPolicy: Background},
default grace, as `kubectl delete` sends it) from the same clients (or by scaling to 0), and the
time until all are gone.

All progress is seen through ONE watch on the pods (labelSelector), parsed as events arrive. For
each phase: seconds until all created (ADDED) / scheduled (spec.nodeName) / Running+Ready, or
until all DELETED, the rate, per-pod latencies (ADDED -> Running), the CPU of every process
(hub, controller-manager, scheduler, kubelets summed, this bench, and everything else on the
machine), the hub's RSS (sampled, and VmHWM = its peak), and the hub's version-log entries per
pod by resource/type/actor. A phase that does not finish within --timeout reports how far it got.
Prints ONE JSON line on stdout; progress on stderr.

--kube-proxies runs one kube-proxy per node (as a real cluster does) instead of one on node-1.

Other options: --env KEY=VALUE (repeatable) passes extra environment to the hub and every spoke
(e.g. KK_SCHEDULER_WORKERS=32); --keep keeps the temp dir (SQLite DB, spoke logs), --verbose makes
the spokes log at INFO there; --quiet-wait S waits up to S s for the machine to be quiet first
(other jobs on a 2-core machine skew everything: see other_processes_cpu_pct in each phase).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    follow_pods,
    run_cluster_bench,
    Cluster, Connection, CpuSampler, group_cpu, http_json, latency_summary, log, log_entry_counts, memory_kb,
    writes_summary,
)

NS = "default"
APP = "scale"
DELETE_BODY = json.dumps({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}).encode()
CONTAINERS = [{"name": "app", "image": "nginx:1.27"}]


def deployment(replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": APP, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": APP}},
                     "template": {"metadata": {"labels": {"app": APP}}, "spec": {"containers": CONTAINERS}}}}


def pod_body(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": APP}},
                       "spec": {"containers": CONTAINERS}}, separators=(",", ":")).encode()


def running_ready(obj: dict) -> bool:
    status = obj.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


class Tracker:
    """Per-pod arrival times (perf_counter) of what the watch shows; counts of each milestone."""

    def __init__(self):
        self.added: dict[str, float] = {}
        self.scheduled: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self.gone: dict[str, float] = {}
        self.deleting: dict[str, float] = {}
        self.events = 0
        self.other: list[str] = []
        self.last_rv = "0"
        self.changed = asyncio.Event()

    def apply(self, line: bytes, now: float) -> None:
        event = json.loads(line)
        self.events += 1
        kind, obj = event.get("type"), event.get("object") or {}
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            if kind != "BOOKMARK" and len(self.other) < 5:
                self.other.append(line[:300].decode(errors="replace"))
            return
        meta = obj.get("metadata") or {}
        self.last_rv = meta.get("resourceVersion") or self.last_rv
        uid = meta.get("uid", "")
        if uid not in self.added:
            self.added[uid] = now
        if uid not in self.scheduled and (obj.get("spec") or {}).get("nodeName"):
            self.scheduled[uid] = now
        if uid not in self.running and running_ready(obj):
            self.running[uid] = now
        if uid not in self.deleting and meta.get("deletionTimestamp"):
            self.deleting[uid] = now
        if kind == "DELETED":
            self.gone[uid] = now
        self.changed.set()

    def counts(self) -> dict[str, int]:
        return {"added": len(self.added), "scheduled": len(self.scheduled), "running": len(self.running),
                "deleting": len(self.deleting), "gone": len(self.gone)}

    async def wait(self, predicate, timeout: float) -> bool:
        deadline = time.perf_counter() + timeout
        while not predicate():
            left = deadline - time.perf_counter()
            if left <= 0:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), min(left, 1.0))
            except asyncio.TimeoutError:
                pass
        return True


async def watch_loop(cluster: Cluster, tracker: Tracker, rv: str, opened: asyncio.Event) -> None:
    await follow_pods(cluster, tracker, rv, opened, namespace=NS, app=APP, user_agent="kk-bench-scale-watch/1.0")


class MemorySampler:
    def __init__(self, pid: int):
        self.pid = pid
        self.max_rss_kb = 0

    def sample(self) -> int:
        rss = memory_kb(self.pid).get("VmRSS", 0)
        self.max_rss_kb = max(self.max_rss_kb, rss)
        return rss

    async def run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(0.25)


def current_rev(cluster: Cluster) -> int:
    return int(http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?limit=1")["metadata"]["resourceVersion"])


async def progress(tracker: Tracker, memory: MemorySampler, t0: float, label: str) -> None:
    while True:
        await asyncio.sleep(2)
        log(f"  {label} {time.perf_counter() - t0:6.1f}s {tracker.counts()} hub RSS {memory.sample() // 1024} MB")


async def post_all(cluster: Cluster, method: str, names: list[str], clients: int) -> dict[str, Any]:
    """Send one request per name from `clients` keep-alive connections; codes and latencies."""
    codes: dict[int, int] = {}
    latencies: list[float] = []
    errors: list[str] = []
    todo = iter(names)

    async def client(i: int) -> None:
        conn = await Connection(cluster.host, cluster.port, user_agent=f"kk-bench-scale/{i}").open()
        try:
            for name in todo:
                if method == "POST":
                    args = ("POST", f"/api/v1/namespaces/{NS}/pods", pod_body(name))
                else:
                    args = ("DELETE", f"/api/v1/namespaces/{NS}/pods/{name}", DELETE_BODY)
                t = time.perf_counter()
                try:
                    status, data = await conn.request(*args)
                except Exception as exc:  # broken connection: count, reopen, go on
                    codes[-1] = codes.get(-1, 0) + 1
                    if len(errors) < 5:
                        errors.append(repr(exc))
                    conn.close()
                    await conn.open()
                    continue
                latencies.append(time.perf_counter() - t)
                codes[status] = codes.get(status, 0) + 1
                if status >= 300 and len(errors) < 5:
                    errors.append(f"{status}: {data[:200]!r}")
        finally:
            conn.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    out = {"requests_s": round(time.perf_counter() - t0, 3), "codes": {str(k): v for k, v in sorted(codes.items())},
           **latency_summary(latencies, "request_")}
    if errors:
        out["first_errors"] = errors
    return out


async def scale_to(cluster: Cluster, replicas: int) -> None:
    conn = await Connection(cluster.host, cluster.port, user_agent="kk-bench-scale/1.0").open()
    try:
        status, body = await conn.request("PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/{APP}/scale",
                                          json.dumps({"spec": {"replicas": replicas}}).encode(),
                                          content_type="application/merge-patch+json")
        if status != 200:
            raise RuntimeError(f"scaling answered {status}: {body[:300]!r}")
    finally:
        conn.close()


def milestone(times: dict[str, float], want: int, t0: float) -> float | None:
    """Seconds from t0 until the want-th pod reached it (None if fewer did)."""
    if len(times) < want:
        return None
    return round(sorted(times.values())[want - 1] - t0, 3)


async def drive(cluster: Cluster, tracker: Tracker, args, out: dict[str, Any], *, method: str, replicas: int,
                t0: float, reached) -> tuple[bool, float]:
    """Ask for the change (each pod POSTed or DELETEd by `args.clients` clients, or the Deployment
    scaled to `replicas`), then wait until `reached()`: (done, seconds since t0). What the clients
    sent goes in `out` ("posts" or "deletes")."""
    sender = None
    if args.via == "post":
        sender = asyncio.create_task(post_all(cluster, method, [f"{APP}-{i:05d}" for i in range(args.pods)],
                                              args.clients))
    else:
        await scale_to(cluster, replicas)
    done = await tracker.wait(reached, args.timeout)
    wall = time.perf_counter() - t0
    if sender is not None:
        if not sender.done():
            sender.cancel()
        key = "posts" if method == "POST" else "deletes"
        try:
            out[key] = await sender
        except asyncio.CancelledError:
            out[key] = "cancelled at the timeout"
    return done, wall


async def phase_up(cluster: Cluster, tracker: Tracker, memory: MemorySampler, args, sampler: CpuSampler) -> dict:
    n = args.pods
    rev0 = current_rev(cluster)
    cpu0 = sampler.mark()
    t0 = time.perf_counter()
    reporter = asyncio.create_task(progress(tracker, memory, t0, "up"))
    out: dict[str, Any] = {}
    try:
        done, wall = await drive(cluster, tracker, args, out, method="POST", replicas=n, t0=t0,
                                 reached=lambda: len(tracker.running) >= n)
    finally:
        reporter.cancel()
    cpu = group_cpu(sampler.since(cpu0))
    memory.sample()
    out.update({"done": done, "seconds": round(wall, 3) if done else None, "reached": tracker.counts(),
                "pods_per_s": round(len(tracker.running) / wall, 1) if wall else 0.0,
                "all_created_s": milestone(tracker.added, n, t0), "all_scheduled_s": milestone(tracker.scheduled, n, t0),
                "all_running_s": milestone(tracker.running, n, t0),
                "half_running_s": milestone(tracker.running, max(1, n // 2), t0)})
    if not done:
        out["timed_out_after_s"] = args.timeout
    per_pod = [tracker.running[u] - tracker.added[u] for u in tracker.running if u in tracker.added]
    sched = [tracker.scheduled[u] - tracker.added[u] for u in tracker.scheduled if u in tracker.added]
    run = [tracker.running[u] - tracker.scheduled[u] for u in tracker.running if u in tracker.scheduled]
    out.update(latency_summary(per_pod, "pod_added_to_running_"))
    out.update(latency_summary(sched, "pod_added_to_scheduled_"))
    out.update(latency_summary(run, "pod_scheduled_to_running_"))
    out["hub_rss_mb_at_end"] = round(memory_kb(cluster.pid).get("VmRSS", 0) / 1024, 1)
    out["cpu"] = cpu
    await asyncio.sleep(1.0)  # let trailing status/event writes land before counting
    out["hub_writes_per_pod"] = writes_summary(log_entry_counts(cluster.db_path, rev0, current_rev(cluster)),
                                               len(tracker.added))
    return out


async def phase_down(cluster: Cluster, tracker: Tracker, memory: MemorySampler, args, sampler: CpuSampler) -> dict:
    n = len(tracker.added)
    rev0 = current_rev(cluster)
    cpu0 = sampler.mark()
    t0 = time.perf_counter()
    reporter = asyncio.create_task(progress(tracker, memory, t0, "down"))
    out: dict[str, Any] = {}
    try:
        done, wall = await drive(cluster, tracker, args, out, method="DELETE", replicas=0, t0=t0,
                                 reached=lambda: len(tracker.gone) >= n)
    finally:
        reporter.cancel()
    cpu = group_cpu(sampler.since(cpu0))
    out.update({"done": done, "seconds": round(wall, 3) if done else None, "pods": n, "reached": tracker.counts(),
                "pods_per_s": round(len(tracker.gone) / wall, 1) if wall else 0.0,
                "all_deleting_s": milestone(tracker.deleting, n, t0), "all_gone_s": milestone(tracker.gone, n, t0)})
    if not done:
        out["timed_out_after_s"] = args.timeout
    per_pod = [tracker.gone[u] - tracker.deleting[u] for u in tracker.gone if u in tracker.deleting]
    out.update(latency_summary(per_pod, "pod_deleting_to_gone_"))
    out["cpu"] = cpu
    await asyncio.sleep(1.0)
    out["hub_writes_per_pod"] = writes_summary(log_entry_counts(cluster.db_path, rev0, current_rev(cluster)), n)
    return out


async def run(cluster: Cluster, args) -> dict[str, Any]:
    tracker = Tracker()
    memory = MemorySampler(cluster.pid)
    sampler_task = asyncio.create_task(memory.run())
    opened = asyncio.Event()
    watcher = asyncio.create_task(watch_loop(cluster, tracker, str(current_rev(cluster)), opened))
    await asyncio.wait_for(opened.wait(), 10)
    out: dict[str, Any] = {"hub_rss_mb_before": round(memory.sample() / 1024, 1)}
    try:
        if args.via == "deployment":
            http_json(f"{cluster.url}/apis/apps/v1/namespaces/{NS}/deployments", "POST", deployment(0))
            await asyncio.sleep(1.0)  # the Deployment's (empty) ReplicaSet exists before the clock starts
        sampler = CpuSampler({"hub": cluster.pid, **cluster.spoke_pids()})
        log(f"up: {args.pods} pods ({args.via})")
        out["up"] = await phase_up(cluster, tracker, memory, args, sampler)
        log(f"up: {json.dumps({k: v for k, v in out['up'].items() if k.endswith('_s') or k == 'done'})}")
        out["hub_rss_mb_with_all_pods"] = out["up"]["hub_rss_mb_at_end"]
        if not args.no_down:
            await asyncio.sleep(1.0)
            log("down: deleting every pod")
            out["down"] = await phase_down(cluster, tracker, memory, args, sampler)
            log(f"down: {json.dumps({k: v for k, v in out['down'].items() if k.endswith('_s') or k == 'done'})}")
        mem = memory_kb(cluster.pid)
        out["hub_peak_rss_mb"] = round(mem.get("VmHWM", 0) / 1024, 1)
        out["hub_max_sampled_rss_mb"] = round(memory.max_rss_kb / 1024, 1)
        out["hub_rss_mb_at_end"] = round(mem.get("VmRSS", 0) / 1024, 1)
        out["spokes_rss_mb"] = {name: round(memory_kb(pid).get("VmRSS", 0) / 1024, 1)
                                for name, pid in cluster.spoke_pids().items() if not name.startswith("kubelet/")}
        kubelets = [memory_kb(pid).get("VmRSS", 0) for name, pid in cluster.spoke_pids().items()
                    if name.startswith("kubelet/")]
        out["spokes_rss_mb"]["kubelets_max"] = round(max(kubelets, default=0) / 1024, 1)
        out["watch_events"] = tracker.events
        if tracker.other:
            out["other_watch_lines"] = tracker.other
        return out
    finally:
        for task in (watcher, sampler_task):
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kwok", action="store_true", help="one big node, 10,000 pods by POST")
    parser.add_argument("--pods", type=int, help="default 1000, or 10000 with --kwok")
    parser.add_argument("--nodes", type=int, help="default 10, or 1 with --kwok")
    parser.add_argument("--via", choices=("post", "deployment"), help="default deployment, or post with --kwok")
    parser.add_argument("--clients", type=int, default=8, help="concurrent connections for POST/DELETE")
    parser.add_argument("--timeout", type=float, default=180, help="seconds per phase before reporting how far it got")
    parser.add_argument("--start-delay", default="0", help="KK_START_DELAY for the kubelets")
    parser.add_argument("--no-down", action="store_true", help="skip the delete phase")
    parser.add_argument("--kube-proxies", action="store_true", help="one kube-proxy per node (default: one, on node-1)")
    parser.add_argument("--keep", action="store_true", help="keep the temp data dir (DB and spoke logs)")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="extra environment for the hub and every spoke (repeatable), e.g. KK_SCHEDULER_WORKERS=32")
    parser.add_argument("--verbose", action="store_true", help="spokes log at INFO into <data dir>/*.log (with --keep)")
    parser.add_argument("--quiet-wait", type=float, default=120,
                        help="wait up to this many s for the machine to be quiet (<40%% of a core) before starting")
    args = parser.parse_args()
    args.pods = args.pods or (10000 if args.kwok else 1000)
    args.nodes = args.nodes or (1 if args.kwok else 10)
    args.via = args.via or ("post" if args.kwok else "deployment")
    env = {"KK_START_DELAY": args.start_delay, "KK_LOG_MAX_ENTRIES": "100000000", "KK_LOG_MAX_AGE": "100000000"}
    extra = dict(item.split("=", 1) for item in args.env)
    if args.kwok:
        env.update({"KK_NODE_PODS": str(args.pods + 1000), "KK_NODE_CPU": "1000", "KK_NODE_MEMORY": "4Ti"})
    settings = {"mode": "kwok" if args.kwok else "default", "pods": args.pods, "nodes": args.nodes, "via": args.via,
                "clients": args.clients if args.via == "post" else None, "KK_PACE": "workshop",
                "KK_START_DELAY": args.start_delay, "KK_TERMINATION_SECONDS": "1 (default)",
                "kube_proxies": args.nodes if args.kube_proxies else 1,
                **{k: v for k, v in env.items() if k.startswith("KK_NODE")}, **extra}
    env.update(extra)
    cluster = Cluster(nodes=args.nodes, env=env, keep=args.keep, verbose=args.verbose, kube_proxies=args.kube_proxies)
    run_cluster_bench("scale", settings, cluster, quiet_wait=args.quiet_wait, nodes=args.nodes,
                      body=lambda running: run(running, args))


if __name__ == "__main__":
    main()
