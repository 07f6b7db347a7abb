"""Pod creates per second over HTTP (1 and 8 keep-alive clients) against the raw store write rate.

    .venv/bin/python bench/create_throughput.py [--duration 12] [--clients 1,8] [--store-count 4000]

Starts its own hub (migrate + runhub, temp data dir, SQLite WAL, synchronous=FULL), then for each
client count POSTs pods to /api/v1/namespaces/default/pods for a fixed duration (or --count),
with every client an asyncio task on its own keep-alive connection, all in this one process (a
hand-written HTTP/1.1 client, so the client side costs little CPU; the figures say how much).
Afterwards it lists the pods and checks that the list holds exactly the pods that got a 201.

Then, with the hub stopped, it sets Django up in this process against a separate temp SQLite
database with the same settings (KK_DATA_DIR set before django.setup(), then migrate) and calls
control.storage.store.object_create directly, to get the store's own write rate; it reports the ratio
HTTP(max clients)/store. Prints one JSON line on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, Connection, CpuMeter, Hub, emit, http_json, latency_summary, log  # noqa: E402

NAME_RE = re.compile(rb'"name":"([^"]+)"')
POD_PATH = "/api/v1/namespaces/default/pods"


def pod_body(name: str | None) -> bytes:
    meta = {"name": name} if name else {"generateName": "bench-"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {**meta, "labels": {"app": "bench"}},
           "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}
    return json.dumps(pod, separators=(",", ":")).encode()


class Phase:
    def __init__(self, label: str):
        self.label = label
        self.latencies: list[float] = []
        self.codes: dict[int, int] = {}
        self.created: list[str] = []
        self.last_body: bytes = b""
        self.errors: list[str] = []


async def run_phase(hub: Hub, phase: Phase, clients: int, *, duration: float | None, count: int | None,
                    generate_name: bool, prefix: str) -> dict:
    """`clients` concurrent keep-alive connections, each sending its next POST when the last is answered."""
    connections = [await Connection(hub.host, hub.port, user_agent="kk-bench-create/1.0").open()
                   for _ in range(clients)]
    fixed = pod_body(None) if generate_name else None
    issued = 0
    stop_at = None

    async def client(i: int, conn: Connection) -> None:
        nonlocal issued
        seq = 0
        while True:
            if count is not None:
                if issued >= count:
                    return
                issued += 1
            elif time.monotonic() >= stop_at:
                return
            body = fixed if fixed is not None else pod_body(f"{prefix}-c{i}-{seq}")
            seq += 1
            t0 = time.perf_counter()
            try:
                status, data = await conn.request("POST", POD_PATH, body)
            except Exception as exc:  # a broken connection: count it, reopen, go on
                phase.errors.append(repr(exc))
                phase.codes[-1] = phase.codes.get(-1, 0) + 1
                conn.close()
                await conn.open()
                continue
            phase.latencies.append(time.perf_counter() - t0)
            phase.codes[status] = phase.codes.get(status, 0) + 1
            if status == 201:
                match = NAME_RE.search(data)
                phase.created.append(match.group(1).decode() if match else "?")
                phase.last_body = data
            elif len(phase.errors) < 5:
                phase.errors.append(f"{status}: {data[:300]!r}")

    meter = CpuMeter(hub.pid).start()
    started = time.monotonic()
    stop_at = started + (duration or 0)
    await asyncio.gather(*(client(i, c) for i, c in enumerate(connections)))
    elapsed = time.monotonic() - started
    cpu = meter.stop()
    for conn in connections:
        conn.close()
    ok = phase.codes.get(201, 0)
    out = {"clients": clients, "requests": sum(phase.codes.values()), "created": ok,
           "codes": {str(k): v for k, v in sorted(phase.codes.items())},
           "seconds": round(elapsed, 3), "creates_per_s": round(ok / elapsed, 1) if elapsed else 0.0,
           **latency_summary(phase.latencies, "latency_"), **cpu}
    # client CPU per request, so it can be compared with the server's
    if phase.latencies:
        out["client_cpu_us_per_req"] = round(1e6 * cpu["client_cpu_s"] / len(phase.latencies), 1)
        out["server_cpu_us_per_req"] = round(1e6 * cpu["server_cpu_s"] / len(phase.latencies), 1)
    if phase.errors:
        out["first_errors"] = phase.errors[:5]
    return out


def verify(hub: Hub, created: list[str]) -> dict:
    listed = http_json(f"{hub.url}{POD_PATH}", timeout=120)
    names = [item["metadata"]["name"] for item in listed["items"]]
    listed_set, created_set = set(names), set(created)
    return {"answers_201": len(created), "pods_listed": len(names),
            "distinct_201_names": len(created_set),
            "missing_from_list": len(created_set - listed_set),
            "unexpected_in_list": len(listed_set - created_set),
            "ok": len(names) == len(created) and listed_set == created_set}


def store_rate(template: dict, count: int, synchronous: str | None = None) -> dict:
    """control.storage.store.object_create called directly, in this process, on a fresh temp database."""
    data_dir = tempfile.mkdtemp(prefix="kk-bench-store-")
    os.environ["KK_DATA_DIR"] = data_dir
    os.environ.pop("KK_SQLITE_PATH", None)
    os.environ.pop("DATABASE_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "control.settings"
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    from django.db import connection

    from control.storage import store

    with connection.cursor() as cursor:
        cursor.execute("PRAGMA synchronous")
        sync_mode = cursor.fetchone()[0]
        cursor.execute("PRAGMA journal_mode")
        journal = cursor.fetchone()[0]
    # Build the objects first: the loop below times the store call alone.
    objects = []
    for i in range(count):
        obj = copy.deepcopy(template)
        obj["metadata"]["name"] = f"store-{i}"
        obj["metadata"]["uid"] = str(uuid.uuid4())
        objects.append(obj)
    latencies = []
    meter = CpuMeter().start()
    started = time.perf_counter()
    for obj in objects:
        t0 = time.perf_counter()
        store.object_create(resource="/pods", obj=obj, actor="bench")
        latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - started
    cpu = meter.stop()
    n_rows = store.object_list(resource="/pods", namespace="default")[0]
    connection.close()
    shutil.rmtree(data_dir, ignore_errors=True)
    return {"creates": count, "seconds": round(elapsed, 3), "creates_per_s": round(count / elapsed, 1),
            "sqlite_journal_mode": journal, "sqlite_synchronous": {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(sync_mode, sync_mode),
            "rows_after": len(n_rows), **latency_summary(latencies, "latency_"),
            "cpu_s": cpu["client_cpu_s"], "cpu_pct": cpu["client_cpu_pct"],
            "other_processes_cpu_pct": cpu["other_processes_cpu_pct"]}


async def http_phases(args, hub: Hub) -> tuple[dict, list[str], dict]:
    results = {}
    created: list[str] = []
    if args.warmup > 0:
        warm = Phase("warmup")
        await run_phase(hub, warm, 2, duration=args.warmup, count=None, generate_name=args.generate_name,
                        prefix="warm")
        created += warm.created
        log(f"warmup: {len(warm.created)} pods")
    template_body = b""
    for clients in args.clients:
        phase = Phase(f"http_{clients}")
        res = await run_phase(hub, phase, clients, duration=None if args.count else args.duration,
                              count=args.count, generate_name=args.generate_name, prefix=f"p{clients}")
        created += phase.created
        template_body = phase.last_body or template_body
        results[f"http_{clients}_clients"] = res
        log(f"{clients} client(s): {res['creates_per_s']} creates/s, p50 {res.get('latency_p50_ms')} ms, "
            f"p99 {res.get('latency_p99_ms')} ms, codes {res['codes']}, client CPU {res['client_cpu_pct']}%, "
            f"server CPU {res['server_cpu_pct']}%, other processes {res['other_processes_cpu_pct']}%")
    template = json.loads(template_body) if template_body else None
    return results, created, template


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="1,8", help="comma-separated client counts (default 1,8)")
    parser.add_argument("--duration", type=float, default=12.0, help="seconds per client count (default 12)")
    parser.add_argument("--count", type=int, default=None, help="fixed number of creates per client count instead")
    parser.add_argument("--warmup", type=float, default=1.5, help="seconds of unmeasured creates first")
    parser.add_argument("--store-count", type=int, default=4000, help="direct store creates (default 4000)")
    parser.add_argument("--generate-name", action="store_true",
                        help="send the identical body with metadata.generateName each time (a name clash is a 409)")
    parser.add_argument("--keep", action="store_true", help="keep the hub's data dir")
    args = parser.parse_args()
    args.clients = [int(c) for c in args.clients.split(",") if c]

    figures: dict = {"bench": "create_throughput", "cpus": os.cpu_count(),
                     "python": sys.version.split()[0],
                     "loadavg_at_start": os.getloadavg()[0], "naming": "generateName" if args.generate_name else "unique"}
    hub = Hub(keep=args.keep).start()
    try:
        results, created, template = asyncio.run(http_phases(args, hub))
        figures.update(results)
        log("verifying: listing pods ...")
        figures["verify"] = verify(hub, created)
        log(f"verify: {figures['verify']}")
    finally:
        hub.stop()
    if template is None:
        raise SystemExit("no pod was created over HTTP; nothing to compare with")
    for key in ("resourceVersion",):
        template["metadata"].pop(key, None)
    log(f"store: {args.store_count} direct object_create calls ...")
    figures["store"] = store_rate(template, args.store_count)
    log(f"store: {figures['store']['creates_per_s']} creates/s")
    top = max(args.clients)
    http_top = figures[f"http_{top}_clients"]["creates_per_s"]
    figures[f"ratio_http{top}_over_store"] = round(http_top / figures["store"]["creates_per_s"], 3)
    figures["target_creates_per_s"] = 1000
    figures["target_met"] = http_top >= 1000 and figures["verify"]["ok"]
    emit(figures)


if __name__ == "__main__":
    main()
