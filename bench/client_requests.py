"""What the spokes' client costs per request: sequential and concurrent GETs through HubClient.

    .venv/bin/python bench/client_requests.py [--url http://127.0.0.1:8000] [--requests 2000] [--clients 8]

Without --url it starts its own hub (migrate + runhub, temp data dir). It creates one pod, then
GETs it `--requests` times from one client, then `--requests` in all from `--clients` clients
(each its own HubClient, all in this one process), after a warm-up. It reports requests per
second and this process's CPU per request (the client's own cost: h11 framing, the pool, JSON),
and the hub's CPU when it started the hub. Prints one JSON line on stdout; progress on stderr.
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
from common import Hub, emit, log, proc_cpu_seconds, token_for  # noqa: E402

from control import errors  # noqa: E402
from control.client.http import HubClient  # noqa: E402
from control.client.resources import PODS  # noqa: E402

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bench-get"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


async def timed(url: str, clients: int, requests: int, hub_pid: int | None) -> dict[str, Any]:
    made = [HubClient(url, agent=f"kk-bench-client/{i}", token=token_for(url)) for i in range(clients)]
    try:
        for client in made:  # warm-up: connections open, code paths hot
            for _ in range(20):
                await client.get(PODS, "bench-get", "default")

        async def loop(client: HubClient, count: int) -> None:
            for _ in range(count):
                await client.get(PODS, "bench-get", "default")

        wall, cpu = time.perf_counter(), time.process_time()
        hub_cpu = proc_cpu_seconds(hub_pid) if hub_pid else 0.0
        await asyncio.gather(*(loop(c, requests // clients) for c in made))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        done = requests // clients * clients
        figures = {"requests": done, "per_s": round(done / wall), "client_cpu_us_per_request": round(cpu / done * 1e6, 1)}
        if hub_pid:
            figures["hub_cpu_us_per_request"] = round((proc_cpu_seconds(hub_pid) - hub_cpu) / done * 1e6, 1)
        return figures
    finally:
        for client in made:
            await client.close()


async def run(url: str, requests: int, clients: int, hub_pid: int | None) -> dict[str, Any]:
    setup = HubClient(url, agent="kk-bench-client/setup", token=token_for(url))
    try:
        try:
            await setup.create(PODS, POD, "default")
        except errors.AlreadyExists:
            log("the pod is there from an earlier run")
    finally:
        await setup.close()
    return {"sequential": await timed(url, 1, requests, hub_pid),
            f"concurrent_{clients}": await timed(url, clients, requests, hub_pid)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")
    figures: dict[str, Any] = {"bench": "client_requests", "settings": vars(args)}
    if args.url:
        figures.update(asyncio.run(run(args.url, args.requests, args.clients, None)))
    else:
        with Hub() as hub:
            figures.update(asyncio.run(run(hub.url, args.requests, args.clients, hub.pid)))
    emit(figures)


if __name__ == "__main__":
    main()
