"""NetworkPolicy decisions: what one connection costs kube-proxy to decide with 1,000 pods and 100
policies in the cluster (target p99 <= 1 ms); with --changes, how long a policy change takes to
reach every node's kube-proxy (target <= 1 s).

    .venv/bin/python bench/netpol.py [--pods 1000] [--policies 100] [--namespaces 10] [--decisions 20000]
                                     [--changes 20 --nodes 5]

Builds, in this process, what kube-proxy holds (`control.proxy.policy.PolicyView`: the policies
indexed by namespace, the pods by IP, the namespaces' labels) from generated objects: --pods pods
spread over --namespaces namespaces (labels app, tier, a named container port), --policies
policies spread over the same namespaces (a default deny in each; the others allow from pod
selectors, namespace selectors, both, ipBlocks with except, numbered, named and ranged ports,
some egress). Then decides --decisions connections between random pods (the same path /send
and /decide take: both ends looked up by IP, then the engine), timing each one.

With --changes N it then starts its own cluster (bench/common.py Cluster: hub, controller-manager,
scheduler, a kubelet and a kube-proxy per node, each `manage.py runcomponent ...`, workshop pace)
with a Deployment of two pods, and follows every kube-proxy with one long poll each
(`GET /decide?source=<pod A>&target=<pod B>&port=80&wait=<policyVersion>`, straight to
kube-proxy, time-stamped on arrival). N times: create the NetworkPolicy `default-deny-ingress`
(or delete it, every other time) and wait until every kube-proxy's verdict on A -> B has flipped.
Reported (ms): from the write's answer (the commit) to the LAST kube-proxy's flipped verdict
(`change_to_last_proxy_`), to the first (`change_to_first_proxy_`), and from the request sent.

Prints ONE JSON line: decide_p50_us, decide_p99_us, decide_max_us, allowed share, and the time to
build the view (policies compiled once); with --changes the propagation figures too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    _TOKENS, Cluster, Connection, emit, http_json, latency_summary, log, percentile, stop_on_sigterm, wait_for_quiet,
)
from control.client import nodeaccess  # noqa: E402
from control.proxy.policy import PolicyView  # noqa: E402

APPS = ("web", "api", "db", "cache", "dns")
TIERS = ("front", "back")


def make_pods(count: int, namespaces: int) -> list[dict]:
    pods = []
    for i in range(count):
        ns = f"team-{i % namespaces}"
        pods.append({"metadata": {"name": f"pod-{i}", "namespace": ns,
                                  "labels": {"app": APPS[i % len(APPS)], "tier": TIERS[i % 2]}},
                     "spec": {"nodeName": f"node-{i % 10}",
                              "containers": [{"name": "c", "ports": [{"name": "http", "containerPort": 8080},
                                                                     {"name": "dns", "containerPort": 53,
                                                                      "protocol": "UDP"}]}]},
                     "status": {"podIP": f"10.244.{i // 250}.{i % 250 + 2}", "phase": "Running"}})
    return pods


def make_policies(count: int, namespaces: int, rng: random.Random) -> list[dict]:
    policies = []
    for i in range(count):
        ns = f"team-{i % namespaces}"
        if i < namespaces:
            spec = {"podSelector": {}, "policyTypes": ["Ingress"]}
        else:
            app = APPS[i % len(APPS)]
            peers = [
                {"podSelector": {"matchLabels": {"app": rng.choice(APPS)}}},
                {"namespaceSelector": {"matchLabels": {"team": str(rng.randrange(namespaces))}}},
                {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "In",
                                                             "values": ["1", "2", "3"]}]},
                 "podSelector": {"matchLabels": {"tier": "front"}}},
                {"ipBlock": {"cidr": "10.244.0.0/16", "except": [f"10.244.{rng.randrange(4)}.0/24"]}},
            ]
            ports = [[{"port": 8080}], [{"port": "http"}], [{"port": 8000, "endPort": 8100}],
                     [{"port": 53, "protocol": "UDP"}]][i % 4]
            spec = {"podSelector": {"matchLabels": {"app": app}},
                    "ingress": [{"from": [peers[i % len(peers)]], "ports": ports}]}
            if i % 3 == 0:
                spec["egress"] = [{"to": [peers[(i + 1) % len(peers)]]}]
                spec["policyTypes"] = ["Ingress", "Egress"]
        policies.append({"metadata": {"name": f"policy-{i}", "namespace": ns}, "spec": spec})
    return policies


def decide_figures(args: argparse.Namespace) -> dict:
    """The engine's cost, in this process, on the view kube-proxy would hold."""
    rng = random.Random(args.seed)
    pods = make_pods(args.pods, args.namespaces)
    namespaces = [{"metadata": {"name": f"team-{i}", "labels": {"team": str(i),
                                                                "kubernetes.io/metadata.name": f"team-{i}"}}}
                  for i in range(args.namespaces)]
    started = time.perf_counter()
    view = PolicyView()
    for ns in namespaces:
        view.namespace_changed(ns)
    for pod in pods:
        view.pod_changed(pod)
    for policy in make_policies(args.policies, args.namespaces, rng):
        view.policy_changed(policy)
    built = time.perf_counter() - started
    ips = [p["status"]["podIP"] for p in pods]
    cases = [(rng.choice(ips), rng.choice(ips), rng.choice((8080, 53, 80)), rng.choice(("TCP", "TCP", "UDP")))
             for _ in range(args.decisions)]
    log(f"{len(pods)} pods, {len(view.index)} policies in {args.namespaces} namespaces; "
        f"deciding {len(cases)} connections")
    took, allowed = [], 0
    clock = time.perf_counter
    for source, target, port, protocol in cases:
        t0 = clock()
        verdict = view.decide(source, target, port, protocol)
        took.append(clock() - t0)
        allowed += verdict.allowed
    took.sort()
    return {"pods": len(pods), "policies": len(view.index), "namespaces": args.namespaces,
            "decisions": len(cases), "decide_p50_us": round(percentile(took, 50) * 1e6, 1),
            "decide_p99_us": round(percentile(took, 99) * 1e6, 1), "decide_max_us": round(took[-1] * 1e6, 1),
            "allowed_share": round(allowed / len(cases), 3), "build_ms": round(built * 1000, 1)}


# --- propagation through a real cluster -------------------------------------------------------------

NS = "default"
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NS},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "web", "image": "nginx",
                                                             "ports": [{"containerPort": 80}]}]}}}}
DENY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "default-deny-ingress", "namespace": NS},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}}
POLICIES = f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies"


class VerdictWatch:
    """One kube-proxy's verdict on source -> target as its long polls bring it: (arrival, allowed)."""

    def __init__(self, node: str, host: str, port: int, query: str):
        self.node, self.host, self.port, self.query = node, host, port, query
        self.seen: list[tuple[float, bool]] = []
        self.changed = asyncio.Event()

    async def run(self) -> None:
        connection = Connection(self.host, self.port, user_agent="kk-bench-netpol/1.0")
        version = -1
        try:
            while True:
                wait = f"&wait={version}&timeoutSeconds=30" if version >= 0 else ""
                status, body = await connection.request("GET", f"/decide?{self.query}{wait}")
                arrived = time.time()
                if status != 200:
                    raise RuntimeError(f"kube-proxy {self.node} answered {status}: {body[:200]!r}")
                answer = json.loads(body)
                version = answer["policyVersion"]
                if not self.seen or self.seen[-1][1] != answer["allowed"]:
                    self.seen.append((arrived, answer["allowed"]))
                    self.changed.set()
        finally:
            connection.close()

    def first(self, since: float, allowed: bool) -> float | None:
        return next((t for t, a in self.seen if t >= since and a == allowed), None)


async def _all(watches: list[VerdictWatch], allowed: bool, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not all(w.seen and w.seen[-1][1] == allowed for w in watches):
        if time.monotonic() > deadline:
            return False
        for w in watches:
            w.changed.clear()
        waiting = [asyncio.ensure_future(w.changed.wait()) for w in watches]
        await asyncio.wait(waiting, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
        for task in waiting:
            task.cancel()
    return True


def _proxies(cluster: Cluster, nodes: int, timeout: float = 90) -> dict[str, tuple[str, int]]:
    deadline = time.monotonic() + timeout
    found: dict[str, tuple[str, int]] = {}
    while time.monotonic() < deadline:
        for node in http_json(f"{cluster.url}/api/v1/nodes")["items"]:
            port = (node["metadata"].get("annotations") or {}).get("kubekitchen.dev/kube-proxy-port")
            address = next((a["address"] for a in node["status"].get("addresses", []) if a["type"] == "InternalIP"),
                           None)
            if port and address:
                found[node["metadata"]["name"]] = (address, int(port))
                _TOKENS[f"{address}:{port}"] = nodeaccess.token(cluster.dir)  # kube-proxy asks for the node secret
        if len(found) >= nodes:
            return found
        time.sleep(0.2)
    raise RuntimeError(f"only {len(found)} of {nodes} kube-proxies listening after {timeout:.0f} s")


async def propagation(cluster: Cluster, args: argparse.Namespace) -> dict:
    hub = Connection(cluster.host, cluster.port, user_agent="kk-bench-netpol/1.0")
    status, body = await hub.request("POST", f"/apis/apps/v1/namespaces/{NS}/deployments",
                                     json.dumps(DEPLOYMENT).encode())
    if status != 201:
        raise RuntimeError(f"creating the Deployment answered {status}: {body[:300]!r}")
    ips: list[str] = []
    deadline = time.monotonic() + 90
    while len(ips) < 2 and time.monotonic() < deadline:
        items = http_json(f"{cluster.url}/api/v1/namespaces/{NS}/pods?labelSelector=app%3Dweb")["items"]
        ips = sorted(p["status"]["podIP"] for p in items if p["status"].get("podIP"))
        await asyncio.sleep(0.2)
    if len(ips) < 2:
        raise RuntimeError(f"pods never got addresses: {ips}")
    query = f"source={ips[0]}&target={ips[1]}&port=80"
    watches = [VerdictWatch(node, host, port, query) for node, (host, port) in sorted(_proxies(cluster,
                                                                                               args.nodes).items())]
    pollers = [asyncio.ensure_future(w.run()) for w in watches]
    try:
        if not await _all(watches, True, 30):
            raise RuntimeError("the kube-proxies never saw the two pods allowed")
        log(f"{len(watches)} kube-proxies follow {ips[0]} -> {ips[1]}; {args.changes} policy changes")
        to_last, to_first, from_sent, failures = [], [], [], []
        for i in range(args.changes):
            deny = i % 2 == 0
            sent = time.time()
            if deny:
                status, body = await hub.request("POST", POLICIES, json.dumps(DENY).encode())
            else:
                status, body = await hub.request("DELETE", f"{POLICIES}/{DENY['metadata']['name']}")
            committed = time.time()
            if status not in (200, 201):
                failures.append(f"change {i}: {status} {body[:200]!r}")
                break
            if not await _all(watches, not deny, 15):
                failures.append(f"change {i}: not every kube-proxy flipped within 15 s")
                break
            arrivals = [w.first(sent, not deny) for w in watches]
            to_last.append(max(arrivals) - committed)
            to_first.append(min(arrivals) - committed)
            from_sent.append(max(arrivals) - sent)
            await asyncio.sleep(args.gap)
        out = {"kube_proxies": len(watches), "changes": len(to_last),
               **latency_summary(to_last, "change_to_last_proxy_"), **latency_summary(to_first, "change_to_first_proxy_"),
               **latency_summary(from_sent, "request_sent_to_last_proxy_")}
        if failures:
            out["failures"] = failures
        return out
    finally:
        for task in pollers:
            task.cancel()
        await asyncio.gather(*pollers, return_exceptions=True)
        hub.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--policies", type=int, default=100)
    parser.add_argument("--namespaces", type=int, default=10)
    parser.add_argument("--decisions", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--changes", type=int, default=0, help="policy changes followed through a real cluster")
    parser.add_argument("--nodes", type=int, default=5, help="nodes (each a kubelet and a kube-proxy) of that cluster")
    parser.add_argument("--gap", type=float, default=0.2, help="seconds between changes")
    parser.add_argument("--quiet-wait", type=float, default=60)
    args = parser.parse_args()
    figures = {"bench": "netpol", **decide_figures(args)}
    if args.changes:
        stop_on_sigterm()
        cluster = Cluster(nodes=args.nodes, env={"KK_START_DELAY": "0"}, kube_proxies=True)
        try:
            figures["machine_busy_pct_before"] = wait_for_quiet(args.quiet_wait)
            cluster.start()
            cluster.wait_nodes_ready(args.nodes, timeout=180)
            figures.update(asyncio.run(propagation(cluster, args)))
        except (Exception, KeyboardInterrupt) as exc:
            figures["error"] = f"{type(exc).__name__}: {exc}"
            log(f"error: {figures['error']}")
        finally:
            cluster.stop()
    emit(figures)


if __name__ == "__main__":
    main()
