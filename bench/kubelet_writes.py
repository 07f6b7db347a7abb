"""What a kubelet's writes cost the hub, per write: pod status updates and event creates.

    .venv/bin/python bench/kubelet_writes.py [--writes 600] [--clients 4]

Starts its own hub (migrate + runhub, temp data dir), creates `--clients` pods shaped as a
Deployment's (labels, owner, two containers with resources, probes, a projected token volume), then
has each client, on its own keep-alive connection, write its pod's status `--writes / --clients`
times as the kubelet does (PUT .../pods/NAME/status with the whole pod it last got back, the
status flipping between not ready and ready with fresh timestamps), then create as many events as
the kubelet reports them (POST .../events, a Pulled/Started-like event). The two rounds are timed
apart: the hub process's CPU (user + system) per write, and the writes' latency. The hub's CPU
per write is the figure to compare (a busy machine stretches latencies, not CPU seconds); to
measure an older checkout, copy this file into its bench/ and run it there.

Prints one JSON line on stdout: per round {writes, hub_cpu_ms_per_write, p50_ms, p99_ms}; progress
on stderr. The hub is stopped on every exit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Hub, emit, latency_summary, log, proc_cpu_seconds, stop_on_sigterm, token_for  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")

from control.client.http import HubClient  # noqa: E402
from control.client.resources import EVENTS, PODS  # noqa: E402

NAMESPACE = "default"


def pod(name: str) -> dict[str, Any]:
    container = {"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 3600"],
                 "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}},
                 "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 5},
                 "ports": [{"containerPort": 8080, "name": "http"}]}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "web", "pod-template-hash": "5d4f8c7b9"},
                         "annotations": {"kubekitchen.dev/bench": "kubelet-writes"}},
            "spec": {"containers": [container, {**container, "name": "sidecar", "ports": []}],
                     "nodeName": "node-1", "restartPolicy": "Always", "terminationGracePeriodSeconds": 30}}


def status(ready: bool, at: str) -> dict[str, Any]:
    flag = "True" if ready else "False"
    conditions = [{"type": kind, "status": "True" if kind in ("PodScheduled", "Initialized") else flag,
                   "lastProbeTime": None, "lastTransitionTime": at} for kind in ("PodScheduled", "Initialized",
                                                                                 "ContainersReady", "Ready")]
    containers = [{"name": name, "ready": ready, "restartCount": 0, "image": "busybox:1.36",
                   "imageID": "docker.io/library/busybox@sha256:0", "containerID": f"kitchen://{name}",
                   "started": True, "state": {"running": {"startedAt": at}}} for name in ("app", "sidecar")]
    return {"phase": "Running", "conditions": conditions, "hostIP": "10.0.0.1", "podIP": "10.244.1.7",
            "podIPs": [{"ip": "10.244.1.7"}], "startTime": at, "qosClass": "Burstable",
            "containerStatuses": containers}


def event(pod_name: str, i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{pod_name}.{i:08x}"},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "namespace": NAMESPACE,
                               "fieldPath": "spec.containers{app}"},
            "reason": "Started", "message": "Started container app", "type": "Normal",
            "source": {"component": "kubelet", "host": "node-1"}, "reportingComponent": "kubelet",
            "reportingInstance": "node-1", "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": "2026-01-01T00:00:00Z", "count": 1}


async def round_of(clients: list[HubClient], hub_pid: int, per_client: int, write) -> dict[str, Any]:
    latencies: list[float] = []

    async def loop(index: int, client: HubClient) -> None:
        for i in range(per_client):
            started = time.perf_counter()
            await write(index, client, i)
            latencies.append(time.perf_counter() - started)

    cpu = proc_cpu_seconds(hub_pid)
    await asyncio.gather(*(loop(i, c) for i, c in enumerate(clients)))
    used = proc_cpu_seconds(hub_pid) - cpu
    done = per_client * len(clients)
    return {"writes": done, "hub_cpu_ms_per_write": round(used / done * 1000, 3), **latency_summary(latencies)}


async def run(url: str, hub_pid: int, writes: int, count: int) -> dict[str, Any]:
    clients = [HubClient(url, agent=f"kubelet/node-{i}", token=token_for(url)) for i in range(count)]
    try:
        names = [f"web-5d4f8c7b9-{i:05d}" for i in range(count)]
        current = {name: await clients[0].create(PODS, pod(name), NAMESPACE) for name in names}
        per_client = max(1, writes // count)

        async def status_write(index: int, client: HubClient, i: int) -> None:
            name = names[index]
            at = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
            body = {**current[name], "status": status(i % 2 == 1, at)}
            current[name] = await client.replace_status(PODS, body)

        async def event_write(index: int, client: HubClient, i: int) -> None:
            await client.create(EVENTS, event(names[index], i), NAMESPACE)

        for index, client in enumerate(clients):  # warm-up: connections open, code paths hot
            for i in range(10):
                await status_write(index, client, i)
                await event_write(index, client, 10_000 + i)
        log(f"{count} clients, {per_client} writes each: pod status, then events")
        return {"pod_status": await round_of(clients, hub_pid, per_client, status_write),
                "event_create": await round_of(clients, hub_pid, per_client, event_write)}
    finally:
        for client in clients:
            await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=600)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    stop_on_sigterm()
    figures: dict[str, Any] = {"bench": "kubelet_writes", "settings": vars(args)}
    with Hub() as hub:
        figures.update(asyncio.run(run(hub.url, hub.pid, args.writes, args.clients)))
    emit(figures)


if __name__ == "__main__":
    main()
