"""NetworkPolicy decisions: what one connection costs kube-proxy to decide with 1,000 pods and 100
policies in the cluster (target p99 <= 1 ms).

    .venv/bin/python bench/netpol.py [--pods 1000] [--policies 100] [--namespaces 10] [--decisions 20000]

Builds, in this process, what kube-proxy holds (`control.proxy.policy.PolicyView`: the policies
indexed by namespace, the pods by IP, the namespaces' labels) from generated objects: --pods pods
spread over --namespaces namespaces (labels app, tier, a named container port), --policies
policies spread over the same namespaces (a default deny in each; the others allow from pod
selectors, namespace selectors, both, ipBlocks with except, numbered, named and ranged ports,
some egress). Then decides --decisions connections between random pods (the same path /send
and /decide take: both ends looked up by IP, then the engine), timing each one.

Prints ONE JSON line: decide_p50_us, decide_p99_us, decide_max_us, allowed share, and the time to
build the view (policies compiled once).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import emit, log, percentile  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--policies", type=int, default=100)
    parser.add_argument("--namespaces", type=int, default=10)
    parser.add_argument("--decisions", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
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
    emit({"bench": "netpol", "pods": len(pods), "policies": len(view.index), "namespaces": args.namespaces,
          "decisions": len(cases), "decide_p50_us": round(percentile(took, 50) * 1e6, 1),
          "decide_p99_us": round(percentile(took, 99) * 1e6, 1), "decide_max_us": round(took[-1] * 1e6, 1),
          "allowed_share": round(allowed / len(cases), 3), "build_ms": round(built * 1000, 1)})


if __name__ == "__main__":
    main()
