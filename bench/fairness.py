"""Fairness: one client floods the hub with lists, another's GETs are timed meanwhile.

    .venv/bin/python bench/fairness.py [--flooders 200] [--duration 5]

Starts its own hub (authentication on, as by default: a flow is a user, see
control/api/fairness.py) and gives two ordinary users a token each in its token file
(`bench-flooder`, `bench-measured`: global-default, one flow each) and a ClusterRole to get and
list namespaces and configmaps. Then a flooding process, as `bench-flooder`: `--flooders` loops of
a "runaway" client (User-Agent `flood/1.0`, each loop sends its next list as soon as the last is
answered, 429s included) on as many keep-alive connections; this process is the measuring client,
as `bench-measured` (`kubectl/v1.32.0`), sending GET /api/v1/namespaces sequentially. Reports the flood's answers by
status and the measuring client's p50/p99/max latency, before and during the flood (for comparison
without the limit: KK_FAIR_INFLIGHT_PER_USER=100000 in the environment). Prints one JSON
line on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Hub, emit, http_json, log  # noqa: E402

from control import config  # noqa: E402

import httpx  # noqa: E402


def percentiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"n": len(values), "p50_ms": round(values[len(values) // 2] * 1000, 1),
            "p99_ms": round(values[min(len(values) - 1, int(len(values) * 0.99))] * 1000, 1),
            "max_ms": round(values[-1] * 1000, 1)}


FLOODER, MEASURED = "bench-flooder", "bench-measured"  # two users: two flows of global-default
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def authorize(url: str) -> None:
    """As the admin: let both users get and list namespaces and configmaps (and nothing more)."""
    http_json(f"{url}{RBAC}/clusterroles", "POST", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "bench-reader"},
        "rules": [{"apiGroups": [""], "resources": ["namespaces", "configmaps"], "verbs": ["get", "list"]}]})
    http_json(f"{url}{RBAC}/clusterrolebindings", "POST", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "bench-readers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
                     for user in (FLOODER, MEASURED)]})


async def measure(url: str, seconds: float, token: str) -> dict[str, float]:
    times: list[float] = []
    headers = {"User-Agent": "kubectl/v1.32.0", "Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as client:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            started = time.perf_counter()
            answer = await client.get("/api/v1/namespaces")
            assert answer.status_code == 200, answer.status_code
            times.append(time.perf_counter() - started)
    return percentiles(times)


async def flood(url: str, loops: int, seconds: float, token: str) -> dict[int, int]:
    codes: dict[int, int] = {}
    limits = httpx.Limits(max_connections=loops, max_keepalive_connections=loops)
    headers = {"User-Agent": "flood/1.0", "Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=30) as client:
        end = time.perf_counter() + seconds

        async def loop() -> None:
            while time.perf_counter() < end:
                answer = await client.get("/api/v1/namespaces/default/configmaps")
                codes[answer.status_code] = codes.get(answer.status_code, 0) + 1

        await asyncio.gather(*(loop() for _ in range(loops)))
    return codes


def run(url: str, flooders: int, duration: float, tokens: dict[str, str]) -> dict[str, Any]:
    quiet = asyncio.run(measure(url, duration, tokens[MEASURED]))
    # the flooder's token in its environment, not on its command line (ps shows that)
    flooding = subprocess.Popen([sys.executable, __file__, "--flood", url, "--flooders", str(flooders),
                                 "--duration", str(duration + 2)], stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "KK_BENCH_TOKEN": tokens[FLOODER]})
    try:
        time.sleep(1.5)  # the flood is under way
        during = asyncio.run(measure(url, duration, tokens[MEASURED]))
        out, _ = flooding.communicate(timeout=120)
    finally:
        if flooding.poll() is None:
            flooding.kill()
            flooding.wait()
    return {"quiet": quiet, "during_flood": during, "flood_answers": json.loads(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flooders", type=int, default=200)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--flood", default="", help=argparse.SUPPRESS)  # the flooding process's role
    args = parser.parse_args()
    if args.flood:
        codes = asyncio.run(flood(args.flood, args.flooders, args.duration, config.given("KK_BENCH_TOKEN")))
        print(json.dumps({str(k): v for k, v in sorted(codes.items())}), flush=True)
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")
    from control.auth.tokenfile import token_of

    figures: dict[str, Any] = {"bench": "fairness", "settings": {"flooders": args.flooders,
                                                                 "duration": args.duration,
                                                                 "flood_user": FLOODER, "measured_user": MEASURED}}
    with Hub() as hub:
        tokens = {user: token_of(hub.dir, user) for user in (FLOODER, MEASURED)}  # the hub rereads the file
        authorize(hub.url)
        log("measuring")
        figures.update(run(hub.url, args.flooders, args.duration, tokens))
    emit(figures)


if __name__ == "__main__":
    main()
