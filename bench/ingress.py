"""Requests through an Ingress from the host: the front door's latency as a user's curl sees it.

    .venv/bin/python bench/ingress.py [--requests 1000] [--replicas 3] [--nodes 2]

Starts its own cluster (bench/common.py Cluster: hub + controller-manager + scheduler + one
kubelet per node, plus the ingress controller, `runcomponent ingress-controller`, on free ports
KK_INGRESS_HTTP_PORT/KK_INGRESS_HTTPS_PORT) at the workshop pace, with a Deployment of
--replicas http-echo pods behind Service soup and an Ingress routing menu.example/soup to it. Once
the Ingress has its address (status.loadBalancer, written by the controller) and every pod is a
ready endpoint, it sends --requests GETs of http://<address>/soup with `Host: menu.example`, one at
a time, first over one keep-alive connection, then each on a fresh connection (as `curl` does),
and checks that every answer is 200 and names a soup pod (the JSON line), round robin over all.

A kube-proxy runs on every node (unless --no-kube-proxies), so each request also pays the front
door's question to node-1's network agent (`/decide`, NetworkPolicies) as in a whole cluster.

Target: p99 <= 20 ms (fresh connections). Prints ONE JSON line: per mode n/min/p50/p90/p99/max
in ms, the pods that answered, the ingress controller's CPU seconds over the run; progress on
stderr.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Cluster, emit, free_port, http_json, latency_summary, log, proc_cpu_seconds  # noqa: E402

NS = "default"


def manifests(replicas: int) -> list[tuple[str, dict]]:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "soup"},
                  "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "soup"}},
                           "template": {"metadata": {"labels": {"app": "soup"}},
                                        "spec": {"containers": [{"name": "soup", "image": "hashicorp/http-echo:1.0",
                                                                 "ports": [{"containerPort": 5678}]}]}}}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "soup"},
               "spec": {"selector": {"app": "soup"}, "ports": [{"name": "http", "port": 80, "targetPort": 5678}]}}
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "menu"},
               "spec": {"rules": [{"host": "menu.example", "http": {"paths": [
                   {"path": "/soup", "pathType": "Prefix",
                    "backend": {"service": {"name": "soup", "port": {"number": 80}}}}]}}]}}
    return [(f"/apis/apps/v1/namespaces/{NS}/deployments", deployment), (f"/api/v1/namespaces/{NS}/services", service),
            (f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses", ingress)]


def ready_endpoints(url: str) -> int:
    slices = http_json(f"{url}/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices"
                       "?labelSelector=kubernetes.io/service-name%3Dsoup")["items"]
    return sum(1 for s in slices for e in s.get("endpoints") or [] if (e.get("conditions") or {}).get("ready"))


def address(url: str) -> tuple[str, int] | None:
    ing = http_json(f"{url}/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses/menu")
    entries = ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if not entries:
        return None
    ports = entries[0].get("ports") or []
    return entries[0]["ip"], (ports[0]["port"] if ports else 80)


def measure(ip: str, port: int, count: int, *, fresh: bool) -> tuple[list[float], Counter]:
    seconds: list[float] = []
    pods: Counter = Counter()
    connection = http.client.HTTPConnection(ip, port, timeout=10)
    for _ in range(count):
        if fresh:
            connection = http.client.HTTPConnection(ip, port, timeout=10)
        began = time.perf_counter()
        connection.request("GET", "/soup", headers={"Host": "menu.example"})
        answer = connection.getresponse()
        body = answer.read()
        seconds.append(time.perf_counter() - began)
        if fresh:
            connection.close()
        if answer.status != 200:
            raise RuntimeError(f"answered {answer.status}: {body[:200]!r}")
        pods[json.loads(body)["pod"]] += 1
    connection.close()
    return seconds, pods


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--no-kube-proxies", action="store_true",
                        help="no kube-proxy per node: the front door then cannot ask node-1's network agent")
    args = parser.parse_args()
    env = {"KK_INGRESS_HTTP_PORT": str(free_port()), "KK_INGRESS_HTTPS_PORT": str(free_port())}
    cluster = Cluster(nodes=args.nodes, env=env, keep=args.keep, kube_proxies=not args.no_kube_proxies).start()
    try:
        cluster.start_spoke("ingress-controller")
        cluster.wait_nodes_ready(args.nodes)
        for path, obj in manifests(args.replicas):
            http_json(f"{cluster.url}{path}", "POST", obj)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (address(cluster.url) and ready_endpoints(cluster.url) == args.replicas):
            time.sleep(0.2)
        where = address(cluster.url)
        if where is None:
            raise RuntimeError("the Ingress got no address")
        ip, port = where
        log(f"front door at {ip}:{port}, {ready_endpoints(cluster.url)} ready endpoints")
        measure(ip, port, 50, fresh=False)  # warm-up: the controller's kubelet connections
        controller = cluster.spokes["ingress-controller"].pid
        cpu_before = proc_cpu_seconds(controller)
        kept, kept_pods = measure(ip, port, args.requests, fresh=False)
        fresh, fresh_pods = measure(ip, port, args.requests, fresh=True)
        figures = {"bench": "ingress", "requests": args.requests, "replicas": args.replicas, "nodes": args.nodes,
                   **latency_summary(kept, "keepalive_"), **latency_summary(fresh, "fresh_"),
                   "pods_answered": len(kept_pods | fresh_pods),
                   "spread_fresh": dict(sorted(fresh_pods.items())),
                   "controller_cpu_s": round(proc_cpu_seconds(controller) - cpu_before, 3),
                   "target_p99_ms": 20}
        figures["ok"] = figures["fresh_p99_ms"] <= 20 and figures["keepalive_p99_ms"] <= 20
        emit(figures)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
