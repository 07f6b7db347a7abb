"""Watch fan-out: 100 watchers on one namespace's configmaps while a writer creates/patches at 500/s.

    .venv/bin/python bench/watch_fanout.py [--watchers 100] [--rate 500] [--duration 10]

Three processes: the hub (its own, temp data dir); this process, which is the writer (asyncio,
--writer-connections keep-alive connections, an open-loop schedule: op i is due at t0 + i/rate,
sent late if the server is behind, never skipped); and one watcher process (asyncio, all
watchers on one loop, `GET .../configmaps?watch=1&resourceVersion=<rv>`, chunked NDJSON parsed
by hand, each line's resourceVersion found with a regex, not a JSON parse, so the side is cheap).

Readiness: after the watchers have sent their requests, the writer creates one sentinel object;
the load starts once every watcher has received its event (so every stream is live).

Latency "from commit": the hub writes each change's log entry with `created_at = time.time()`
inside the write's transaction, just before COMMIT (control/store.py, _append_log / Change). The
bench reads those timestamps from the hub's own database after the run (same host clock) and
reports arrival - created_at; this is the closest available point to the commit (it exceeds the
true commit-to-arrival time by the commit itself, a WAL fsync of ~0.2-0.5 ms here). For comparison
it also reports arrival - (time the writer got its 2xx), which understates (the event may beat
the response) and arrival - (time the writer sent the request), which overstates.

Correctness per watcher: every expected resourceVersion received exactly once, nothing else,
strictly increasing. Prints one JSON line on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import marshal
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Connection, CpuMeter, Hub, emit, http_json, latency_summary, log, percentile  # noqa: E402

from control import config  # noqa: E402

RV_RE = re.compile(rb'"resourceVersion":"(\d+)"')


# =============================================================================================
# watcher process
# =============================================================================================

class Watcher:
    def __init__(self, index: int):
        self.index = index
        self.rvs = array("q")
        self.times = array("d")
        self.other: list[str] = []  # ERROR / BOOKMARK / unparsable lines
        self.status = 0
        self.closed = False
        self.error = ""
        self.chunks = 0  # HTTP chunks received: events per chunk shows how much the server coalesces

    @property
    def last(self) -> int:
        return self.rvs[-1] if self.rvs else 0


async def watch_one(w: Watcher, host: str, port: int, path: str, connected: asyncio.Event,
                    counter: list[int], n: int) -> None:
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: kk-bench-watch/{w.index}\r\n"
                      f"Authorization: Bearer {config.given('KK_BENCH_TOKEN')}\r\n"
                      f"Accept: application/json\r\n\r\n").encode())
        await writer.drain()
        counter[0] += 1
        if counter[0] == n:
            connected.set()
        head = await reader.readuntil(b"\r\n\r\n")
        w.status = int(head.split(b" ", 2)[1])
        chunked = b"chunked" in head.lower()
        if w.status != 200:
            w.error = head.decode("latin-1")[:200]
        raw = bytearray()      # undecoded transport bytes
        lines = bytearray()    # decoded payload not yet ending in a newline
        need = -1              # -1: expecting a chunk-size line; else bytes of chunk data (+CRLF) still due
        rvs_append, times_append = w.rvs.append, w.times.append
        while True:
            data = await reader.read(262144)
            now = time.time()
            if not data:
                w.closed = True
                return
            if chunked:
                raw += data
                while True:
                    if need < 0:
                        i = raw.find(b"\r\n")
                        if i < 0:
                            break
                        need = int(bytes(raw[:i]).split(b";", 1)[0], 16)
                        del raw[:i + 2]
                        w.chunks += 1
                        if need == 0:
                            w.closed = True
                            return
                    if len(raw) < need + 2:
                        break
                    lines += raw[:need]
                    del raw[:need + 2]
                    need = -1
            else:
                lines += data
            end = lines.rfind(b"\n")
            if end < 0:
                continue
            complete = bytes(lines[:end])
            del lines[:end + 1]
            for line in complete.split(b"\n"):
                if line.startswith(b'{"type":"ADDED"') or line.startswith(b'{"type":"MODIFIED"') \
                        or line.startswith(b'{"type":"DELETED"'):
                    m = RV_RE.search(line)
                    if m:
                        rvs_append(int(m.group(1)))
                        times_append(now)
                        continue
                w.other.append(line[:300].decode("utf-8", "replace"))
    except Exception as exc:  # noqa: BLE001
        w.error = repr(exc)
    finally:
        try:
            writer.close()
        except Exception:  # noqa: BLE001
            pass


async def watchers_main(args) -> None:
    path = f"/api/v1/namespaces/{args.namespace}/configmaps?watch=1&resourceVersion={args.rv}"
    watchers = [Watcher(i) for i in range(args.n)]
    connected = asyncio.Event()
    counter = [0]
    tasks = [asyncio.create_task(watch_one(w, args.host, args.port, path, connected, counter, args.n))
             for w in watchers]
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)

    def say(msg: str) -> None:
        sys.stdout.write(msg + "\n")
        sys.stdout.flush()

    await asyncio.wait_for(connected.wait(), 30)
    say("CONNECTED")
    # READY once every watcher has received the sentinel (or is dead)
    sentinel = int((await stdin.readline()).split()[1])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(w.last < sentinel and not w.closed and not w.error for w in watchers):
        await asyncio.sleep(0.01)
    cpu0 = time.process_time()
    wall0 = time.monotonic()
    say("READY")
    # STOP <max_rv>: wait until every watcher has it, or the grace deadline passes
    final = int((await stdin.readline()).split()[1])
    deadline = time.monotonic() + args.grace
    while time.monotonic() < deadline and any(w.last < final and not w.closed and not w.error for w in watchers):
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)  # anything arriving late (duplicates) still gets counted
    cpu = time.process_time() - cpu0
    wall = time.monotonic() - wall0
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    result = {"cpu_s": cpu, "wall_s": wall,
              "watchers": [{"rvs": w.rvs.tobytes(), "times": w.times.tobytes(), "other": w.other[:20],
                            "n_other": len(w.other), "chunks": w.chunks, "status": w.status, "closed": w.closed, "error": w.error}
                           for w in watchers]}
    with open(args.out, "wb") as f:
        marshal.dump(result, f)
    say("DONE")


# =============================================================================================
# writer (this process)
# =============================================================================================

def cm_body(name: str, seq: int) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": "fanout"}},
                       "data": {"seq": str(seq), "payload": "x" * 64}}, separators=(",", ":")).encode()


async def writer_run(hub: Hub, ns: str, rate: float, duration: float, connections: int,
                     update_fraction: float, watchers_pid: int) -> dict:
    total = int(rate * duration)
    conns = [await Connection(hub.host, hub.port, user_agent="kk-bench-writer/1.0").open() for _ in range(connections)]
    records: list[tuple[int, float, float, str]] = []  # (rv, sent, acked, kind)
    failures: list[str] = []
    latencies: list[float] = []
    next_op = 0
    lateness: list[float] = []
    t0 = time.monotonic() + 0.05
    stop_at = t0 + duration  # a writer that falls behind stops on time, with fewer ops
    base = f"/api/v1/namespaces/{ns}/configmaps"

    async def worker(w: int, conn: Connection) -> None:
        nonlocal next_op
        mine: list[str] = []
        k = 0
        while True:
            i = next_op
            if i >= total or time.monotonic() >= stop_at:
                return
            next_op += 1
            due = t0 + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                lateness.append(-delay)
            # a deterministic mix: op i is a patch with probability ~update_fraction
            is_update = mine and ((i * 2654435761) % 1000) / 1000 < update_fraction
            if is_update:
                name = mine[k % len(mine)]
                k += 1
                method, path, body, ctype = ("PATCH", f"{base}/{name}",
                                             json.dumps({"data": {"seq": str(i)}}).encode(), "application/merge-patch+json")
            else:
                name = f"cm-{w}-{len(mine)}"
                method, path, body, ctype = "POST", base, cm_body(name, i), "application/json"
            sent = time.time()
            p0 = time.perf_counter()
            status, data = await conn.request(method, path, body, ctype)
            acked = time.time()
            latencies.append(time.perf_counter() - p0)
            if status not in (200, 201):
                failures.append(f"{method} {status} {data[:200]!r}")
                continue
            if method == "POST":
                mine.append(name)
            m = RV_RE.search(data)
            records.append((int(m.group(1)), sent, acked, "update" if is_update else "create"))

    meter = CpuMeter(hub.pid, {"watchers": watchers_pid}).start()
    await asyncio.gather(*(worker(i, c) for i, c in enumerate(conns)))
    elapsed = time.monotonic() - t0
    cpu = meter.stop()
    for c in conns:
        c.close()
    lateness.sort()
    return {"records": records, "failures": failures, "latencies": latencies, "elapsed": elapsed, "cpu": cpu,
            "late_ops": len(lateness), "late_p50_ms": round(percentile(lateness, 50) * 1000, 1) if lateness else 0.0,
            "late_max_ms": round(lateness[-1] * 1000, 1) if lateness else 0.0}


def read_commit_times(db_path: Path, after: int) -> dict[int, float]:
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        table = next(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE '%logentry'"))
        return dict(con.execute(f"SELECT revision, created_at FROM {table} WHERE revision > ?", (after,)))
    finally:
        con.close()


def analyse(result: dict, expected: dict[int, tuple[float, float]], commit: dict[int, float],
            sentinel: int) -> dict:
    """Per-watcher correctness and the latency distributions."""
    expected_set = set(expected)
    from_commit: list[float] = []
    from_ack: list[float] = []
    from_send: list[float] = []
    last_arrival: dict[int, float] = {}
    per = []
    totals = {"lost": 0, "duplicated": 0, "out_of_order": 0, "unexpected": 0}
    for w in result["watchers"]:
        rvs = array("q")
        rvs.frombytes(w["rvs"])
        times = array("d")
        times.frombytes(w["times"])
        seen = set(rvs)
        lost = len(expected_set - seen)
        dup = len(rvs) - len(seen)
        ooo = sum(1 for a, b in zip(rvs, rvs[1:]) if b <= a)
        unexpected = len(seen - expected_set)
        totals["lost"] += lost
        totals["duplicated"] += dup
        totals["out_of_order"] += ooo
        totals["unexpected"] += unexpected
        per.append({"received": len(rvs), "lost": lost, "dup": dup, "ooo": ooo, "unexpected": unexpected,
                    "status": w["status"], "error": w["error"], "n_other": w["n_other"], "other": w["other"][:3]})
        for rv, t in zip(rvs, times):
            if rv == sentinel or rv not in expected:
                continue
            sent, acked = expected[rv]
            if rv in commit:
                from_commit.append(t - commit[rv])
            from_ack.append(t - acked)
            from_send.append(t - sent)
            if t > last_arrival.get(rv, 0):
                last_arrival[rv] = t
    fanout_done = [t - commit[rv] for rv, t in last_arrival.items() if rv in commit]
    received = [p["received"] for p in per]
    out = {
        "events_expected_per_watcher": len(expected_set),
        "events_received_per_watcher_min": min(received) if received else 0,
        "events_received_per_watcher_max": max(received) if received else 0,
        "events_received_total": sum(received),
        **{f"{k}_total": v for k, v in totals.items()},
        "watchers_bad": sum(1 for p in per if p["lost"] or p["dup"] or p["ooo"] or p["unexpected"] or p["error"]),
        "watchers_not_200": sum(1 for p in per if p["status"] != 200),
        "non_event_lines": sum(p["n_other"] for p in per),
        "events_per_http_chunk": round(sum(received) / max(1, sum(w["chunks"] for w in result["watchers"])), 2),
        "latency_from_commit": latency_summary(from_commit),
        "latency_from_writer_2xx": latency_summary(from_ack),
        "latency_from_writer_send": latency_summary(from_send),
        "fanout_complete_from_commit": latency_summary(fanout_done),
    }
    bad = [dict(p, watcher=i) for i, p in enumerate(per) if p["lost"] or p["dup"] or p["ooo"] or p["unexpected"] or p["error"]]
    if bad:
        out["first_bad_watchers"] = bad[:3]
    return out


def orchestrate(args) -> None:
    figures: dict = {"bench": "watch_fanout", "cpus": os.cpu_count(), "watchers": args.watchers,
                     "target_rate_per_s": args.rate, "loadavg_at_start": os.getloadavg()[0], "duration_s": args.duration,
                     "writer_connections": args.writer_connections, "update_fraction": args.update_fraction,
                     "latency_reference": "hub log entry created_at (time.time() in the write transaction, just before COMMIT)"}
    hub = Hub(keep=args.keep).start()
    watch_proc = None
    out_file = Path(tempfile.mkdtemp(prefix="kk-bench-watch-")) / "watchers.marshal"
    try:
        ns = "fanout"
        http_json(f"{hub.url}/api/v1/namespaces", "POST", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        start_rv = int(http_json(f"{hub.url}/api/v1/namespaces/{ns}/configmaps")["metadata"]["resourceVersion"])
        watch_proc = subprocess.Popen(
            [sys.executable, __file__, "--role", "watchers", "--host", hub.host, "--port", str(hub.port),
             "--namespace", ns, "--rv", str(start_rv), "--n", str(args.watchers), "--out", str(out_file),
             "--grace", str(args.grace)],
            # the hub's admin token in the environment, not on the command line (ps shows that)
            env={**os.environ, "KK_BENCH_TOKEN": hub.token},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

        def expect(word: str) -> None:
            line = watch_proc.stdout.readline().strip()
            if line != word:
                raise RuntimeError(f"watcher process said {line!r}, expected {word}")

        expect("CONNECTED")
        sentinel_obj = http_json(f"{hub.url}/api/v1/namespaces/{ns}/configmaps", "POST",
                                 {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sentinel"}, "data": {}})
        sentinel_rv = int(sentinel_obj["metadata"]["resourceVersion"])
        watch_proc.stdin.write(f"SENTINEL {sentinel_rv}\n")
        watch_proc.stdin.flush()
        expect("READY")
        log(f"{args.watchers} watchers live (sentinel rv {sentinel_rv}); writing {args.rate}/s for {args.duration}s ...")
        w = asyncio.run(writer_run(hub, ns, args.rate, args.duration, args.writer_connections, args.update_fraction,
                                   watch_proc.pid))
        records = w["records"]
        final_rv = max(r[0] for r in records) if records else sentinel_rv
        watch_proc.stdin.write(f"STOP {final_rv}\n")
        watch_proc.stdin.flush()
        expect("DONE")
        watch_proc.wait(timeout=30)
        commit = read_commit_times(hub.db_path, start_rv)
    finally:
        if watch_proc and watch_proc.poll() is None:
            watch_proc.kill()
        hub.stop()
    with open(out_file, "rb") as f:
        result = marshal.load(f)
    out_file.unlink()
    out_file.parent.rmdir()

    ops = len(records)
    creates = sum(1 for r in records if r[3] == "create")
    figures["writer"] = {
        "ops_ok": ops, "creates": creates, "updates": ops - creates, "failures": len(w["failures"]),
        "first_failures": w["failures"][:3], "seconds": round(w["elapsed"], 3),
        "achieved_rate_per_s": round(ops / w["elapsed"], 1) if w["elapsed"] else 0.0,
        "late_ops": w["late_ops"], "late_p50_ms": w["late_p50_ms"], "late_max_ms": w["late_max_ms"],
        **latency_summary(w["latencies"], "latency_"),
    }
    server_cpu = w["cpu"].get("server_cpu_s", 0.0)
    figures["server_cpu_us_per_write"] = round(1e6 * server_cpu / ops, 1) if ops else None
    figures["server_cpu_us_per_event_delivered"] = round(1e6 * server_cpu / (ops * args.watchers), 2) if ops else None
    figures["cpu_during_writes_pct_of_one_core"] = {
        "server": w["cpu"]["server_cpu_pct"], "writer": w["cpu"]["client_cpu_pct"],
        "watchers": w["cpu"].get("watchers_cpu_pct"), "other_processes": w["cpu"]["other_processes_cpu_pct"]}
    figures["watcher_process"] = {"cpu_s": round(result["cpu_s"], 3), "wall_s": round(result["wall_s"], 3),
                                  "cpu_pct": round(100 * result["cpu_s"] / result["wall_s"], 1) if result["wall_s"] else 0.0}
    expected = {r[0]: (r[1], r[2]) for r in records}
    expected[sentinel_rv] = (0.0, 0.0)
    missing_commit = sum(1 for rv in expected if rv not in commit)
    figures["commit_times_missing"] = missing_commit
    figures.update(analyse(result, expected, commit, sentinel_rv))
    p99 = figures["latency_from_commit"].get("p99_ms", float("inf"))
    figures["target"] = {"p99_ms": 50, "rate_per_s": args.rate}
    figures["target_met"] = (p99 <= 50 and figures["lost_total"] == 0 and figures["duplicated_total"] == 0
                             and figures["out_of_order_total"] == 0 and figures["unexpected_total"] == 0
                             and figures["writer"]["achieved_rate_per_s"] >= 0.98 * args.rate)
    log(f"writer {figures['writer']['achieved_rate_per_s']}/s; latency from commit {figures['latency_from_commit']}; "
        f"lost {figures['lost_total']} dup {figures['duplicated_total']} ooo {figures['out_of_order_total']}; "
        f"CPU % of a core {figures['cpu_during_writes_pct_of_one_core']}")
    emit(figures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--rate", type=float, default=500.0, help="writer ops/s (default 500)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of writing (default 10)")
    parser.add_argument("--writer-connections", type=int, default=8)
    parser.add_argument("--update-fraction", type=float, default=0.5,
                        help="share of ops that merge-patch an existing configmap instead of creating one")
    parser.add_argument("--grace", type=float, default=20.0, help="seconds the watchers may lag behind at the end")
    parser.add_argument("--keep", action="store_true")
    # internal: the watcher process
    parser.add_argument("--role", default="main", choices=["main", "watchers"])
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--namespace")
    parser.add_argument("--rv", type=int)
    parser.add_argument("--n", type=int)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.role == "watchers":
        asyncio.run(watchers_main(args))
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
