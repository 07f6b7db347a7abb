"""Pod creates per second over HTTP against etcd's writes on the same machine, and against the
raw store write rate.

    .venv/bin/python bench/create_throughput.py [--duration 6] [--rounds 3] [--clients 1,8] [--no-etcd]

Starts its own hub (migrate + runhub, temp data dir, SQLite WAL, synchronous=FULL: every commit
fsynced) and its own etcd (Debian's /usr/bin/etcd on loopback, free ports, temp data dir, fsync
of its WAL on every commit as by default), then runs --rounds alternating rounds, so the
machine's noise falls on both: per client count, the hub (POST a pod to
/api/v1/namespaces/default/pods), then etcd (its gRPC gateway's POST /v3/kv/put of
/registry/pods/default/<name>, base64, the value as big as the pod the hub stores), each for
--duration seconds. One client drives both: every client an asyncio task on its own keep-alive
connection, all in this process (a lean HTTP/1.1 client; the figures say what it costs). Then it
checks that the pods listed and etcd's keys are exactly what was acknowledged, and, with both
stopped, times control.storage.store.object_create called directly on a fresh temp database.

Prints one JSON line on stdout (rates per round, medians, `ratio_hub_over_etcd` at the largest
client count, `ratio_http<N>_over_store`); progress on stderr. etcd and the hub are stopped on
every exit (end, exception, Ctrl-C, SIGTERM); nothing is left behind.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import copy
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    ROOT, Connection, CpuMeter, Hub, emit, free_port, http_json, latency_summary, log, stop_process,
)

ETCD = "/usr/bin/etcd"

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


class Target:
    """What a client sends to one server: the path, the body for a name, the success code, and
    the name a success acknowledges."""

    def __init__(self, name: str, host: str, port: int, pid: int, path: str, ok: int,
                 body: Callable[[str], bytes], acked: Callable[[bytes, str], str]):
        self.name, self.host, self.port, self.pid, self.path, self.ok = name, host, port, pid, path, ok
        self.body, self.acked = body, acked


def hub_target(hub: Hub, generate_name: bool) -> Target:
    fixed = pod_body(None) if generate_name else None

    def acked(data: bytes, name: str) -> str:
        match = NAME_RE.search(data)
        return match.group(1).decode() if match else "?"

    return Target("hub", hub.host, hub.port, hub.pid, POD_PATH, 201,
                  lambda name: fixed if fixed is not None else pod_body(name), acked)


ETCD_PREFIX = "/registry/pods/default/"


def etcd_target(etcd: "Etcd", stored_pod: bytes) -> Target:
    """PUT the pod as the hub stores it, under the key kube-apiserver would use: the same bytes
    per write as the hub's row, so both servers move and fsync as much."""
    name_at = stored_pod.index(b'"name":"') + len(b'"name":"')
    head, tail = stored_pod[:name_at], stored_pod[stored_pod.index(b'"', name_at):]

    def body(name: str) -> bytes:
        key = base64.b64encode(f"{ETCD_PREFIX}{name}".encode()).decode()
        value = base64.b64encode(head + name.encode() + tail).decode()
        return f'{{"key":"{key}","value":"{value}"}}'.encode()

    return Target("etcd", etcd.host, etcd.port, etcd.pid, "/v3/kv/put", 200, body, lambda data, name: name)


async def run_phase(target: Target, phase: Phase, clients: int, *, duration: float | None, count: int | None,
                    prefix: str) -> dict:
    """`clients` concurrent keep-alive connections, each sending its next write when the last is answered."""
    connections = [await Connection(target.host, target.port, user_agent="kk-bench-create/1.0").open()
                   for _ in range(clients)]
    issued = 0
    stop_at = 0.0

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
            name = f"{prefix}-c{i}-{seq}"
            body = target.body(name)
            seq += 1
            t0 = time.perf_counter()
            try:
                status, data = await conn.request("POST", target.path, body)
            except Exception as exc:  # a broken connection: count it, reopen, go on
                phase.errors.append(repr(exc))
                phase.codes[-1] = phase.codes.get(-1, 0) + 1
                conn.close()
                await conn.open()
                continue
            phase.latencies.append(time.perf_counter() - t0)
            phase.codes[status] = phase.codes.get(status, 0) + 1
            if status == target.ok:
                phase.created.append(target.acked(data, name))
                phase.last_body = data
            elif len(phase.errors) < 5:
                phase.errors.append(f"{status}: {data[:300]!r}")

    meter = CpuMeter(target.pid).start()
    started = time.monotonic()
    stop_at = started + (duration or 0)
    await asyncio.gather(*(client(i, c) for i, c in enumerate(connections)))
    elapsed = time.monotonic() - started
    cpu = meter.stop()
    for conn in connections:
        conn.close()
    ok = phase.codes.get(target.ok, 0)
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


class Etcd:
    """Debian's etcd on loopback: free client and peer ports, a temp data dir, removed on stop."""

    def __init__(self, keep: bool = False):
        self.dir = Path(tempfile.mkdtemp(prefix="kk-bench-etcd-"))
        self.host, self.port, self.peer_port = "127.0.0.1", free_port(), free_port()
        self.url = f"http://{self.host}:{self.port}"
        self.process: subprocess.Popen | None = None
        self.keep = keep

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> "Etcd":
        try:
            return self._start()
        except BaseException:
            self.stop()  # never leave a half-started etcd behind
            raise

    def _start(self) -> "Etcd":
        if not os.access(ETCD, os.X_OK):
            raise SystemExit(f"{ETCD} is missing: apt-get install etcd-server (make bench does), or --no-etcd")
        peer = f"http://{self.host}:{self.peer_port}"
        args = [ETCD, "--name", "bench", "--data-dir", str(self.dir / "data"),
                "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", f"bench={peer}", "--initial-cluster-state", "new"]
        self.process = subprocess.Popen(args, cwd=self.dir, stdout=(self.dir / "etcd.log").open("wb"),
                                        stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited: {(self.dir / 'etcd.log').read_text()[-2000:]}")
            try:
                if http_json(f"{self.url}/health", timeout=1).get("health") == "true":
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("etcd did not come up")
        log(f"etcd pid {self.process.pid} on {self.url}, data {self.dir}")
        return self

    def count(self, prefix: str) -> int:
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        answer = http_json(f"{self.url}/v3/kv/range", "POST", {
            "key": base64.b64encode(prefix.encode()).decode(), "range_end": base64.b64encode(end.encode()).decode(),
            "count_only": True})
        return int(answer.get("count") or 0)

    def stop(self) -> None:
        stop_process(self.process)
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


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


def summarize(rounds: list[dict]) -> dict:
    """Rates of each round, their median, and the latencies and CPU of all rounds together."""
    rates = [r["creates_per_s"] for r in rounds]
    out = {"rounds_creates_per_s": rates, "creates_per_s": round(statistics.median(rates), 1),
           "created": sum(r["created"] for r in rounds), "codes": {}}
    for r in rounds:
        for code, n in r["codes"].items():
            out["codes"][code] = out["codes"].get(code, 0) + n
    for key in ("latency_p50_ms", "latency_p99_ms", "server_cpu_pct", "client_cpu_pct", "server_cpu_us_per_req",
                "client_cpu_us_per_req", "other_processes_cpu_pct"):
        values = [r[key] for r in rounds if key in r]
        if values:
            out[key] = round(statistics.median(values), 1)
    errors = [e for r in rounds for e in r.get("first_errors", [])]
    if errors:
        out["first_errors"] = errors[:5]
    return out


async def measure(args, hub: Hub, etcd: Etcd | None) -> tuple[dict, list[str], int, dict | None]:
    """Warm-up, then `--rounds` rounds: per client count the hub, then etcd."""
    created: list[str] = []
    warm = Phase("warmup")
    await run_phase(hub_target(hub, args.generate_name), warm, 2, duration=max(args.warmup, 0.3), count=None,
                    prefix="warm")
    created += warm.created
    log(f"warmup: {len(warm.created)} pods")
    if not warm.last_body:
        raise SystemExit(f"the hub created no pod in the warm-up: {warm.errors[:3]}")
    targets = [hub_target(hub, args.generate_name)]
    if etcd is not None:
        targets.append(etcd_target(etcd, warm.last_body))
        await run_phase(targets[1], Phase("etcd warmup"), 2, duration=max(args.warmup, 0.3), count=None,
                        prefix="warm")
    runs: dict[str, list[dict]] = {}
    etcd_acked = 0
    template_body = warm.last_body
    for number in range(args.rounds):
        for clients in args.clients:
            for target in targets:
                phase = Phase(f"{target.name}_{clients}")
                res = await run_phase(target, phase, clients, duration=None if args.count else args.duration,
                                      count=args.count, prefix=f"r{number}-p{clients}")
                runs.setdefault(f"{target.name}_{clients}_clients", []).append(res)
                if target.name == "hub":
                    created += phase.created
                    template_body = phase.last_body or template_body
                else:
                    etcd_acked += len(phase.created)
                log(f"round {number + 1}, {target.name}, {clients} client(s): {res['creates_per_s']}/s, "
                    f"p50 {res.get('latency_p50_ms')} ms, p99 {res.get('latency_p99_ms')} ms, codes {res['codes']}, "
                    f"client CPU {res['client_cpu_pct']}%, server CPU {res['server_cpu_pct']}%, "
                    f"other processes {res['other_processes_cpu_pct']}%")
    results = {key: summarize(value) for key, value in runs.items()}
    return results, created, etcd_acked, json.loads(template_body)


def stop_on_sigterm(*_: object) -> None:
    raise KeyboardInterrupt  # unwinds through the finally blocks that stop etcd and the hub


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="1,8", help="comma-separated client counts (default 1,8)")
    parser.add_argument("--duration", type=float, default=6.0, help="seconds per target, client count and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating hub/etcd rounds (default 3)")
    parser.add_argument("--count", type=int, default=None, help="fixed number of writes per phase instead")
    parser.add_argument("--warmup", type=float, default=1.5, help="seconds of unmeasured writes first")
    parser.add_argument("--store-count", type=int, default=4000, help="direct store creates (default 4000; 0: none)")
    parser.add_argument("--no-etcd", action="store_true", help="the hub alone, no etcd comparison")
    parser.add_argument("--generate-name", action="store_true",
                        help="send the identical body with metadata.generateName each time (a name clash is a 409)")
    parser.add_argument("--keep", action="store_true", help="keep the hub's and etcd's data dirs")
    args = parser.parse_args()
    args.clients = [int(c) for c in args.clients.split(",") if c]
    signal.signal(signal.SIGTERM, stop_on_sigterm)

    figures: dict = {"bench": "create_throughput", "cpus": os.cpu_count(),
                     "python": sys.version.split()[0], "rounds": args.rounds, "seconds_per_phase": args.duration,
                     "loadavg_at_start": os.getloadavg()[0], "naming": "generateName" if args.generate_name else "unique"}
    hub = etcd = None
    try:
        hub = Hub(keep=args.keep).start()
        if not args.no_etcd:
            etcd = Etcd(keep=args.keep).start()
            figures["etcd_version"] = http_json(f"{etcd.url}/version").get("etcdserver")
        results, created, etcd_acked, template = asyncio.run(measure(args, hub, etcd))
        figures.update(results)
        log("verifying: listing pods ...")
        figures["verify"] = verify(hub, created)
        if etcd is not None:
            keys = etcd.count(ETCD_PREFIX + "r")  # the measured rounds' keys ("r<round>-..."), not the warm-up's
            figures["verify"]["etcd_acked"], figures["verify"]["etcd_keys"] = etcd_acked, keys
            figures["verify"]["ok"] = figures["verify"]["ok"] and keys == etcd_acked
        log(f"verify: {figures['verify']}")
    finally:
        if etcd is not None:
            etcd.stop()
        if hub is not None:
            hub.stop()
    top = max(args.clients)
    hub_top = figures[f"hub_{top}_clients"]["creates_per_s"]
    if etcd is not None:
        etcd_top = figures[f"etcd_{top}_clients"]["creates_per_s"]
        figures["ratio_hub_over_etcd"] = round(hub_top / etcd_top, 3)
        figures["ratio_hub_over_etcd_per_round"] = [
            round(h / e, 3) for h, e in zip(figures[f"hub_{top}_clients"]["rounds_creates_per_s"],
                                            figures[f"etcd_{top}_clients"]["rounds_creates_per_s"]) if e]
        log(f"{top} clients: hub {hub_top}/s, etcd {etcd_top}/s, ratio {figures['ratio_hub_over_etcd']}")
    if args.store_count > 0 and template is not None:
        template["metadata"].pop("resourceVersion", None)
        log(f"store: {args.store_count} direct object_create calls ...")
        figures["store"] = store_rate(template, args.store_count)
        log(f"store: {figures['store']['creates_per_s']} creates/s")
        figures[f"ratio_http{top}_over_store"] = round(hub_top / figures["store"]["creates_per_s"], 3)
    figures["target_ratio_hub_over_etcd"] = 1.0
    figures["target_met"] = figures.get("ratio_hub_over_etcd", 0) >= 1.0 and figures["verify"]["ok"]
    emit(figures)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        log("interrupted: etcd and the hub are stopped")
        raise SystemExit(130) from None
