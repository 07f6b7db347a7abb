"""Endpoint propagation: a pod turns not ready -> its IP is gone from EVERY kube-proxy's table.

    .venv/bin/python bench/endpoint_propagation.py [--nodes 10] [--replicas 3] [--flips 60] [--gap 0.1]

Starts its own cluster (bench/common.py Cluster with kube_proxies: hub + controller-manager +
scheduler + one kubelet and one kube-proxy per node, each `manage.py runcomponent ...`) at the
workshop pace, with a Deployment of --replicas pods and a ClusterIP Service in front of them.
Each kube-proxy is followed by one long poll (`GET /rules?wait=<version>&service=default/web`,
kept open on one keep-alive connection per kube-proxy), time-stamped on arrival.

Then --flips times, one pod after the other: PATCH the pod's annotation
`kubekitchen.dev/unready: "true"` (merge patch, as `kubectl annotate` sends), and wait until
every kube-proxy's table lacks the pod's IP; then remove the annotation and wait until every
table has it again (reported as ready_again_*), and wait --gap s.

Latencies (ms), per flip, to the moment the LAST kube-proxy's table no longer had the IP:
- `from_annotation_commit_`: from the commit of the annotation write (the hub's version-log
  entry time of that revision; the hub and this script share the machine's clock);
- `from_not_ready_commit_`: from the commit of the kubelet's status write that turned the pod's
  Ready condition False;
and, for the split: annotation commit -> Ready=False commit (kubelet), Ready=False commit ->
the EndpointSlice write that took the IP out of the ready endpoints (endpointslice controller),
that write -> last table
(fan-out to 10 kube-proxies), and `first_proxy_` / `spread_` (first table, last - first).
Commit times come from the hub's SQLite log after the run (read-only), so the measurement adds
no request of its own on the path. Target: from_not_ready_commit p99 <= 200 ms. Also reports the
CPU of every process over --idle s with nothing happening, then during the flips.

Prints ONE JSON line (figures) on stdout; progress on stderr. --env KEY=VALUE passes extra
environment; --keep keeps the temp dir; --quiet-wait S waits for a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    _TOKENS, run_cluster_bench,
    Cluster, Connection, CpuSampler, group_cpu, http_json, latency_summary, log, log_entry_counts, writes_summary,
)
from control.client import nodeaccess  # noqa: E402

NS, APP, CLUSTER_IP = "default", "web", "10.96.0.80"
MERGE = "application/merge-patch+json"


def manifests(replicas: int) -> list[tuple[str, dict]]:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": APP, "namespace": NS},
                  "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": APP}},
                           "template": {"metadata": {"labels": {"app": APP}},
                                        "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                                                 "ports": [{"containerPort": 8080}]}]}}}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": APP, "namespace": NS},
               "spec": {"clusterIP": CLUSTER_IP, "selector": {"app": APP},
                        "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    return [(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment), (f"/api/v1/namespaces/{NS}/services", service)]


class ProxyWatch:
    """One kube-proxy's table as seen through long polls: (arrival time, endpoint IPs) per answer."""

    def __init__(self, node: str, host: str, port: int):
        self.node, self.host, self.port = node, host, port
        self.seen: list[tuple[float, frozenset[str]]] = []
        self.changed = asyncio.Event()
        self.polls = 0

    @property
    def ips(self) -> frozenset[str]:
        return self.seen[-1][1] if self.seen else frozenset()

    async def run(self) -> None:
        connection = await Connection(self.host, self.port, user_agent="kk-bench-propagation/1.0").open()
        version = -1
        try:
            while True:
                wait = f"&wait={version}&timeoutSeconds=30" if version >= 0 else ""
                status, body = await connection.request("GET", f"/rules?service={NS}/{APP}{wait}")
                arrived = time.time()
                if status != 200:
                    raise RuntimeError(f"kube-proxy {self.node} answered {status}: {body[:200]!r}")
                rules = json.loads(body)
                self.polls += 1
                version = rules["version"]
                ips = frozenset(e["ip"] for s in rules["services"] for e in s["endpoints"])
                if not self.seen or ips != self.seen[-1][1]:
                    self.seen.append((arrived, ips))
                    self.changed.set()
        finally:
            connection.close()

    def first(self, since: float, present: bool, ip: str) -> float | None:
        return next((t for t, ips in self.seen if t >= since and (ip in ips) == present), None)


async def wait_all(watches: list[ProxyWatch], predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        for w in watches:
            w.changed.clear()  # one thread: nothing can change between this and the check below
        if all(predicate(w) for w in watches):
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        waiting = [asyncio.ensure_future(w.changed.wait()) for w in watches]
        await asyncio.wait(waiting, timeout=min(left, 0.5), return_when=asyncio.FIRST_COMPLETED)
        for task in waiting:
            task.cancel()


def proxy_addresses(cluster: Cluster, nodes: int, timeout: float = 60) -> dict[str, tuple[str, int]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = {}
        for node in http_json(f"{cluster.url}/api/v1/nodes")["items"]:
            port = (node["metadata"].get("annotations") or {}).get("kubekitchen.dev/kube-proxy-port")
            address = next((a["address"] for a in node["status"].get("addresses", []) if a["type"] == "InternalIP"), None)
            if port and address:
                found[node["metadata"]["name"]] = (address, int(port))
                # kube-proxy answers /rules only to holders of the cluster's node-access secret
                _TOKENS[f"{address}:{port}"] = nodeaccess.token(cluster.dir)
        if len(found) >= nodes:
            return found
        time.sleep(0.2)
    raise RuntimeError(f"only {len(found)} of {nodes} kube-proxies listening after {timeout:.0f} s")


def ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def commit_times(db: Path, flips: list[dict]) -> None:
    """Fill each flip's commit times from the hub's version log: the annotation write, the first
    status write with Ready False after it, the first EndpointSlice write without the IP among its
    ready endpoints after that (what kube-proxy follows)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        for flip in flips:
            row = con.execute("SELECT created_at FROM control_logentry WHERE revision = ?", (flip["rv"],)).fetchone()
            flip["annotated"] = row[0] if row else None
            for revision, created, body in con.execute(
                    "SELECT revision, created_at, body FROM control_logentry WHERE name = ? AND resource LIKE '%pods' "
                    "AND revision > ? ORDER BY revision LIMIT 20", (flip["pod"], flip["rv"])):
                if not ready(json.loads(body)):
                    flip["not_ready"], flip["not_ready_rv"] = created, revision
                    break
            for revision, created, body in con.execute(
                    "SELECT revision, created_at, body FROM control_logentry WHERE name LIKE ? "
                    "AND resource = 'discovery.k8s.io/endpointslices' AND revision > ? ORDER BY revision LIMIT 20",
                    (f"{APP}-%", flip["rv"])):
                endpoints = json.loads(body).get("endpoints") or []
                addresses = {a for e in endpoints if (e.get("conditions") or {}).get("ready") for a in e["addresses"]}
                if flip["ip"] not in addresses:
                    flip["endpoints"] = created
                    break
    finally:
        con.close()


async def run(cluster: Cluster, args) -> dict[str, Any]:
    conn = await Connection(cluster.host, cluster.port, user_agent="kk-bench-propagation/1.0").open()
    out: dict[str, Any] = {}
    addresses = proxy_addresses(cluster, args.nodes)
    watches = [ProxyWatch(node, host, port) for node, (host, port) in sorted(addresses.items())]
    pollers = [asyncio.ensure_future(w.run()) for w in watches]
    try:
        for path, body in manifests(args.replicas):
            status, answer = await conn.request("POST", path, json.dumps(body).encode())
            if status != 201:
                raise RuntimeError(f"creating {path} answered {status}: {answer[:300]!r}")
        pods: dict[str, str] = {}
        deadline = time.monotonic() + 60
        while len(pods) < args.replicas and time.monotonic() < deadline:
            items = http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?labelSelector=app%3D{APP}")["items"]
            pods = {p["metadata"]["name"]: p["status"]["podIP"] for p in items if ready(p) and p["status"].get("podIP")}
            await asyncio.sleep(0.2)
        want = frozenset(pods.values())
        if len(pods) < args.replicas or not await wait_all(watches, lambda w: w.ips == want, 30):
            raise RuntimeError(f"pods {pods} never all in every table: {[sorted(w.ips) for w in watches]}")
        log(f"{len(pods)} pods ready and in all {len(watches)} kube-proxy tables; flipping {args.flips} times")
        await asyncio.sleep(1)
        sampler = CpuSampler({"hub": cluster.pid, **cluster.spoke_pids()})
        idle0 = sampler.mark()
        await asyncio.sleep(args.idle)  # the cluster's own background (leases, node status), for comparison
        out["cpu_idle_before_flips"] = group_cpu(sampler.since(idle0))
        first_rev = int(http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?limit=1")["metadata"]["resourceVersion"])
        cpu0 = sampler.mark()
        flips, back, failures = [], [], []
        names = sorted(pods)
        for i in range(args.flips):
            name = names[i % len(names)]
            ip = pods[name]
            path = f"/api/v1/namespaces/{NS}/pods/{name}"
            sent = time.time()
            status, body = await conn.request("PATCH", path, json.dumps(
                {"metadata": {"annotations": {"kubekitchen.dev/unready": "true"}}}).encode(), MERGE)
            if status != 200:
                failures.append(f"flip {i}: PATCH answered {status}: {body[:200]!r}")
                break
            rv = int(json.loads(body)["metadata"]["resourceVersion"])
            if not await wait_all(watches, lambda w: ip not in w.ips, args.timeout):
                failures.append(f"flip {i}: {ip} still in {[w.node for w in watches if ip in w.ips]}")
                break
            gone = [w.first(sent, False, ip) for w in watches]
            flips.append({"pod": name, "ip": ip, "rv": rv, "sent": sent, "first": min(gone), "last": max(gone)})
            readied = time.time()
            status, body = await conn.request("PATCH", path, json.dumps(
                {"metadata": {"annotations": {"kubekitchen.dev/unready": None}}}).encode(), MERGE)
            if status != 200 or not await wait_all(watches, lambda w: ip in w.ips, args.timeout):
                failures.append(f"flip {i}: {ip} did not come back ({status})")
                break
            back.append(max(w.first(readied, True, ip) for w in watches) - readied)
            if (i + 1) % 10 == 0:
                log(f"  {i + 1} flips, last {1000 * (flips[-1]['last'] - sent):.1f} ms after the PATCH was sent")
            await asyncio.sleep(args.gap)
        out["cpu_during_flips"] = group_cpu(sampler.since(cpu0))
        last_rev = int(http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?limit=1")["metadata"]["resourceVersion"])
        out["hub_writes_per_flip"] = writes_summary(log_entry_counts(cluster.db_path, first_rev, last_rev), len(flips) or 1)
        commit_times(cluster.db_path, flips)
        full = [f for f in flips if f.get("annotated") and f.get("not_ready") and f.get("endpoints")]
        out.update({
            "flips": len(flips),
            **latency_summary([f["last"] - f["annotated"] for f in full], "from_annotation_commit_"),
            **latency_summary([f["last"] - f["not_ready"] for f in full], "from_not_ready_commit_"),
            **latency_summary([f["not_ready"] - f["annotated"] for f in full], "annotation_to_not_ready_commit_"),
            **latency_summary([f["endpoints"] - f["not_ready"] for f in full], "not_ready_to_endpoints_commit_"),
            **latency_summary([f["last"] - f["endpoints"] for f in full], "endpoints_commit_to_last_table_"),
            **latency_summary([f["first"] - f["endpoints"] for f in full], "endpoints_commit_to_first_table_"),
            **latency_summary([f["last"] - f["first"] for f in full], "spread_first_to_last_table_"),
            **latency_summary([f["last"] - f["sent"] for f in flips], "from_patch_sent_"),
            **latency_summary(back, "ready_again_"),
            "kube_proxies": len(watches),
            "long_poll_answers": sum(w.polls for w in watches),
        })
        if len(full) < len(flips):
            out["flips_without_commit_times"] = len(flips) - len(full)
        if failures:
            out["failures"] = failures[:10]
        return out
    finally:
        conn.close()
        for task in pollers:
            task.cancel()
        await asyncio.gather(*pollers, return_exceptions=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--flips", type=int, default=60)
    parser.add_argument("--gap", type=float, default=0.1, help="seconds between a pod back in every table and the next flip")
    parser.add_argument("--timeout", type=float, default=15, help="seconds to wait for one propagation")
    parser.add_argument("--idle", type=float, default=5, help="seconds of CPU measured with nothing happening, first")
    parser.add_argument("--keep", action="store_true", help="keep the temp data dir (DB and spoke logs)")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="extra environment for the hub and every spoke (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="spokes log at INFO into <data dir>/*.log (with --keep)")
    parser.add_argument("--quiet-wait", type=float, default=60,
                        help="wait up to this many s for the machine to be quiet (<40%% of a core) before starting")
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.env)
    env = {"KK_START_DELAY": "0", "KK_LOG_MAX_ENTRIES": "100000000", "KK_LOG_MAX_AGE": "100000000", **extra}
    settings = {"KK_PACE": "workshop", "nodes": args.nodes, "kube_proxies": args.nodes, "replicas": args.replicas,
                "gap_s": args.gap, "flip": "PATCH pod annotation kubekitchen.dev/unready=true (merge patch)", **extra}
    cluster = Cluster(nodes=args.nodes, env=env, keep=args.keep, verbose=args.verbose, kube_proxies=True)
    run_cluster_bench("endpoint_propagation", settings, cluster, quiet_wait=args.quiet_wait, nodes=args.nodes,
                      body=lambda running: run(running, args))


if __name__ == "__main__":
    main()
