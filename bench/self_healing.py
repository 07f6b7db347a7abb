"""Self-healing latency: kill a Running pod of a Deployment, time until its replacement is Running.

    .venv/bin/python bench/self_healing.py [--nodes 3] [--replicas 5] [--kills 60] [--gap 0.2]
                                           [--start-delay 0] [--timeout 30]

Starts its own cluster (bench/common.py Cluster: hub + controller-manager + scheduler + one
kubelet per node, each `manage.py runcomponent ...`, on a free loopback port and a temp data dir)
with KK_PACE=workshop, KK_START_DELAY=--start-delay (the kubelet's simulated ContainerCreating
time; 0 = the container starts on the kubelet's first look), KK_TERMINATION_SECONDS left at its
default (1 s: a deleted pod's containers take that long to stop; it does not gate the replacement).
Version-log compaction is pushed out (KK_LOG_MAX_ENTRIES/AGE) so every write can be counted.

One long-lived watch on the Deployment's pods (labelSelector) is opened before anything is
created; its events are parsed as they arrive and time-stamped on arrival (perf_counter, the same
clock as the kills). Then a Deployment of --replicas is created and awaited, and --kills times:
a random Running+Ready, not-terminating pod is deleted (DELETE with the body kubectl sends:
DeleteOptions with propagationPolicy Background and no gracePeriodSeconds, so the pod's own 30 s
applies: graceful), and the latency is DELETE sent -> the first pod that was not there before is
seen Running with Ready=True. Split: DELETE -> replacement ADDED; ADDED -> spec.nodeName seen
(scheduled); scheduled -> Running+Ready. The next kill comes --gap s after the replacement runs
(the killed pod may still be terminating then, as in real life).

Prints ONE JSON line (figures) on stdout; progress on stderr. Also reports the CPU of every
process during the kills and the hub's version-log entries per kill, by resource/type/actor.
--env KEY=VALUE (repeatable) passes extra environment to the hub and the spokes; --keep keeps the
temp dir; --quiet-wait S waits up to S s for the machine to be quiet before starting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
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
APP = "heal"
DELETE_BODY = json.dumps({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}).encode()


def deployment(replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": APP, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": APP}},
                     "template": {"metadata": {"labels": {"app": APP}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}


def running_ready(pod: dict) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


class PodTimes:
    __slots__ = ("name", "added", "scheduled", "running", "deleting", "gone")

    def __init__(self, name: str):
        self.name = name
        self.added = self.scheduled = self.running = self.deleting = self.gone = None


class Tracker:
    """Everything the watch has told us, by uid, with arrival times."""

    def __init__(self):
        self.pods: dict[str, PodTimes] = {}
        self.objects: dict[str, dict] = {}  # uid -> latest object (not yet gone)
        self.changed = asyncio.Event()
        self.events = 0
        self.other: list[str] = []
        self.last_rv = ""

    def apply(self, line: bytes, now: float) -> None:
        event = json.loads(line)
        self.events += 1
        kind, obj = event.get("type"), event.get("object") or {}
        meta = obj.get("metadata") or {}
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            if kind != "BOOKMARK" and len(self.other) < 5:
                self.other.append(line[:300].decode(errors="replace"))
            return
        self.last_rv = meta.get("resourceVersion") or self.last_rv
        uid = meta.get("uid", "")
        times = self.pods.get(uid)
        if times is None:
            times = self.pods[uid] = PodTimes(meta.get("name", ""))
            times.added = now
        if times.scheduled is None and (obj.get("spec") or {}).get("nodeName"):
            times.scheduled = now
        if times.running is None and running_ready(obj):
            times.running = now
        if times.deleting is None and meta.get("deletionTimestamp"):
            times.deleting = now
        if kind == "DELETED":
            times.gone = now
            self.objects.pop(uid, None)
        else:
            self.objects[uid] = obj
        self.changed.set()

    def healthy(self) -> list[dict]:
        return [o for o in self.objects.values()
                if running_ready(o) and not (o.get("metadata") or {}).get("deletionTimestamp")]

    async def wait(self, predicate, timeout: float):
        deadline = time.perf_counter() + timeout
        while True:
            found = predicate()
            if found:
                return found
            left = deadline - time.perf_counter()
            if left <= 0:
                return None
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass


async def watch_loop(cluster: Cluster, tracker: Tracker, rv: str, opened: asyncio.Event) -> None:
    await follow_pods(cluster, tracker, rv, opened, namespace=NS, app=APP, user_agent="kk-bench-heal-watch/1.0")


async def run(cluster: Cluster, args) -> dict[str, Any]:
    rng = random.Random(args.seed)
    tracker = Tracker()
    rv = http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?limit=1")["metadata"]["resourceVersion"]
    opened = asyncio.Event()
    watcher = asyncio.create_task(watch_loop(cluster, tracker, rv, opened))
    await asyncio.wait_for(opened.wait(), 10)
    conn = await Connection(cluster.host, cluster.port, user_agent="kk-bench-heal/1.0").open()
    out: dict[str, Any] = {}
    try:
        t0 = time.perf_counter()
        status, body = await conn.request("POST", f"/apis/apps/v1/namespaces/{NS}/deployments",
                                          json.dumps(deployment(args.replicas)).encode())
        if status != 201:
            raise RuntimeError(f"creating the Deployment answered {status}: {body[:300]!r}")
        ok = await tracker.wait(lambda: len(tracker.healthy()) >= args.replicas, 60)
        if not ok:
            raise RuntimeError(f"only {len(tracker.healthy())} of {args.replicas} pods Running after 60 s")
        out["initial_rollout_s"] = round(time.perf_counter() - t0, 3)
        log(f"{args.replicas} pods Running+Ready in {out['initial_rollout_s']} s; killing {args.kills} times")
        await asyncio.sleep(0.5)  # let the rollout's status writes settle
        first_rev = int(http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?limit=1")["metadata"]["resourceVersion"])

        sampler = CpuSampler({"hub": cluster.pid, **cluster.spoke_pids()})
        cpu0 = sampler.mark()
        total, to_added, to_sched, to_run, delete_rtt, gone = [], [], [], [], [], []
        killed_uids: list[str] = []
        failures: list[str] = []
        for i in range(args.kills):
            healthy = await tracker.wait(lambda: len(tracker.healthy()) >= args.replicas and tracker.healthy(), 30)
            if not healthy:
                failures.append(f"kill {i}: only {len(tracker.healthy())} healthy pods before the kill")
                break
            victim = rng.choice(healthy)
            vmeta = victim["metadata"]
            known = set(tracker.pods)
            sent = time.perf_counter()
            status, body = await conn.request("DELETE", f"/api/v1/namespaces/{NS}/pods/{vmeta['name']}", DELETE_BODY)
            delete_rtt.append(time.perf_counter() - sent)
            if status not in (200, 202):
                failures.append(f"kill {i}: DELETE answered {status}: {body[:200]!r}")
                continue
            killed_uids.append(vmeta["uid"])

            def replacement():
                for uid, times in tracker.pods.items():
                    if uid not in known and times.running is not None:
                        return times
                return None

            times = await tracker.wait(replacement, args.timeout)
            if times is None:
                new = [t for u, t in tracker.pods.items() if u not in known]
                failures.append(f"kill {i}: no replacement Running within {args.timeout} s "
                                f"(new pods: {[(t.name, t.added is not None, t.scheduled is not None) for t in new]})")
                continue
            total.append(times.running - sent)
            to_added.append(times.added - sent)
            if times.scheduled is not None:
                to_sched.append(times.scheduled - times.added)
                to_run.append(times.running - times.scheduled)
            if (i + 1) % 10 == 0:
                log(f"  {i + 1} kills, last {1000 * total[-1]:.1f} ms")
            await asyncio.sleep(args.gap)
        cpu = group_cpu(sampler.since(cpu0))
        # the killed pods should all be gone within the termination time + a margin
        await tracker.wait(lambda: all(tracker.pods[u].gone is not None for u in killed_uids), 10)
        for uid in killed_uids:
            t = tracker.pods[uid]
            if t.gone is not None and t.deleting is not None:
                gone.append(t.gone - t.deleting)
        last_rev = int(tracker.last_rv or 0)
        last_rev = max(last_rev, int(http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?limit=1")["metadata"]["resourceVersion"]))
        kills = len(total)
        out.update({
            "kills": kills,
            **latency_summary(total, "heal_"),
            **latency_summary(to_added, "delete_to_added_"),
            **latency_summary(to_sched, "added_to_scheduled_"),
            **latency_summary(to_run, "scheduled_to_running_"),
            **latency_summary(delete_rtt, "delete_request_"),
            **latency_summary(gone, "killed_pod_deleting_to_gone_"),
            "watch_events": tracker.events,
            "cpu_during_kills": cpu,
            "hub_writes_per_kill": writes_summary(log_entry_counts(cluster.db_path, first_rev, last_rev), kills),
            "hub_memory_kb": memory_kb(cluster.pid),
        })
        if failures:
            out["failures"] = failures[:10]
            out["failure_count"] = len(failures)
        if tracker.other:
            out["other_watch_lines"] = tracker.other
        return out
    finally:
        conn.close()
        watcher.cancel()
        try:
            await watcher
        except (asyncio.CancelledError, Exception):
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--replicas", type=int, default=5)
    parser.add_argument("--kills", type=int, default=60)
    parser.add_argument("--gap", type=float, default=0.2, help="seconds between a replacement Running and the next kill")
    parser.add_argument("--start-delay", default="0", help="KK_START_DELAY for the kubelets (seconds or LOW-HIGH)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds to wait for one replacement")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temp data dir (DB and spoke logs)")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="extra environment for the hub and every spoke (repeatable), e.g. KK_SCHEDULER_WORKERS=32")
    parser.add_argument("--verbose", action="store_true", help="spokes log at INFO into <data dir>/*.log (with --keep)")
    parser.add_argument("--quiet-wait", type=float, default=120,
                        help="wait up to this many s for the machine to be quiet (<40%% of a core) before starting")
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.env)
    env = {"KK_START_DELAY": args.start_delay, "KK_LOG_MAX_ENTRIES": "100000000", "KK_LOG_MAX_AGE": "100000000", **extra}
    settings = {"KK_PACE": "workshop", "KK_START_DELAY": args.start_delay, "KK_TERMINATION_SECONDS": "1 (default)",
                "nodes": args.nodes, "replicas": args.replicas, "gap_s": args.gap,
                "delete": "DELETE pods/NAME, body DeleteOptions{propagationPolicy: Background}, default grace (30 s)", **extra}
    cluster = Cluster(nodes=args.nodes, env=env, keep=args.keep, verbose=args.verbose)
    run_cluster_bench("self_healing", settings, cluster, quiet_wait=args.quiet_wait, nodes=args.nodes,
                      body=lambda running: run(running, args))


if __name__ == "__main__":
    main()
