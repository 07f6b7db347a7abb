"""What authentication and authorization cost the hub per request: the same attendee's requests
against a hub with them on and a hub with them off (issue 13's target: <= 10 % more CPU per request).

    .venv/bin/python bench/authorization.py [--attendees 30] [--rounds 6] [--requests 400]

Two hubs (bench/common.py Hub: `runhub` on a free loopback port, temp data dir, no spokes: only the
API is measured), each provisioned as `runcluster --attendees N` does (`control.workshop.provision`:
N namespaces, users, RoleBindings, quotas and limits, so RBAC has a room's worth of bindings to
evaluate), one with KK_AUTHENTICATION=on (the default), one with it off. One attendee, with their
own token over HTTP/1.1 keep-alive, makes the requests an attendee's kubectl makes, in turn: list
their pods, create a ConfigMap, get it, merge-patch it, list ConfigMaps by label, delete it (on the
hub with authentication off the same requests, without a token). Rounds of `--requests` alternate
between the hubs, so a machine that gets busier affects both alike.

Figures (one JSON line): per hub the hub process's CPU per request (µs; /proc utime+stime over the
round), median over the rounds and each round's; `overhead_pct` = on / off - 1 of the medians,
against `target_overhead_pct`; and the client's latency p50/p99 on each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, Hub, emit, latency_summary, log, proc_cpu_seconds, stop_on_sigterm  # noqa: E402

sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")
from control import workshop  # noqa: E402
from control.auth import tokenfile  # noqa: E402

TARGET_OVERHEAD_PCT = 10.0


def provision(hub: Hub, attendees: int) -> str:
    """The room on this hub; the first attendee's token."""
    names = workshop.attendee_names(attendees)
    workshop.provision(hub.url, hub.dir, names, admin=hub.token)
    return tokenfile.token_of(hub.dir, names[0], (workshop.ATTENDEES,)), names[0]


def one_round(client: httpx.Client, namespace: str, count: int, tag: str) -> list[float]:
    """`count` requests of the attendee's mix; their latencies."""
    latencies: list[float] = []
    base = f"/api/v1/namespaces/{namespace}"
    i = 0
    while len(latencies) < count:
        name = f"{tag}-{i}"
        i += 1
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"bench": tag}},
                "data": {"k": "v"}}
        steps = [("GET", f"{base}/pods", None, {}), ("POST", f"{base}/configmaps", body, {}),
                 ("GET", f"{base}/configmaps/{name}", None, {}),
                 ("PATCH", f"{base}/configmaps/{name}", {"data": {"k": "w"}},
                  {"Content-Type": "application/merge-patch+json"}),
                 ("GET", f"{base}/configmaps?labelSelector=bench%3D{tag}", None, {}),
                 ("DELETE", f"{base}/configmaps/{name}", None, {})]
        for method, path, payload, headers in steps:
            started = time.perf_counter()
            content = json.dumps(payload).encode() if payload is not None else None
            answer = client.request(method, path, content=content,
                                    headers={"Content-Type": "application/json", **headers} if content else headers)
            latencies.append(time.perf_counter() - started)
            if answer.status_code >= 300:
                raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attendees", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=6, help="rounds on each hub, alternating")
    parser.add_argument("--requests", type=int, default=400, help="requests per round")
    args = parser.parse_args()
    stop_on_sigterm()
    figures: dict[str, Any] = {"bench": "authorization", "attendees": args.attendees, "rounds": args.rounds,
                               "requests_per_round": args.requests, "cpus": os.cpu_count(),
                               "loadavg_at_start": os.getloadavg()[0]}
    with Hub() as on, Hub(env={"KK_AUTHENTICATION": "off"}) as off:
        token, attendee = provision(on, args.attendees)
        provision(off, args.attendees)
        log(f"{args.attendees} attendees on each hub; measuring as {attendee}")
        clients = {"on": httpx.Client(base_url=on.url, headers=tokenfile.bearer(token), timeout=30),
                   "off": httpx.Client(base_url=off.url, timeout=30)}
        hubs = {"on": on, "off": off}
        per_request: dict[str, list[float]] = {"on": [], "off": []}
        latencies: dict[str, list[float]] = {"on": [], "off": []}
        try:
            for which in ("on", "off"):  # warm both: connections, caches, first-use imports
                one_round(clients[which], attendee, 60, f"warm-{which}")
            for r in range(args.rounds):
                for which in (("on", "off") if r % 2 == 0 else ("off", "on")):
                    before = proc_cpu_seconds(hubs[which].pid)
                    took = one_round(clients[which], attendee, args.requests, f"r{r}-{which}")
                    per_request[which].append(1e6 * (proc_cpu_seconds(hubs[which].pid) - before) / len(took))
                    latencies[which] += took
                log(f"round {r + 1}: on {per_request['on'][-1]:.0f} µs, off {per_request['off'][-1]:.0f} µs per request")
        finally:
            for client in clients.values():
                client.close()
    medians = {which: statistics.median(values) for which, values in per_request.items()}
    overhead = 100 * (medians["on"] / medians["off"] - 1)
    for which in ("on", "off"):
        figures[f"auth_{which}"] = {"hub_cpu_us_per_request": round(medians[which], 1),
                                    "rounds_us": [round(v, 1) for v in per_request[which]],
                                    **latency_summary(latencies[which], "latency_")}
    figures.update(overhead_pct=round(overhead, 1), target_overhead_pct=TARGET_OVERHEAD_PCT,
                   within_target=overhead <= TARGET_OVERHEAD_PCT)
    emit(figures)


if __name__ == "__main__":
    main()
