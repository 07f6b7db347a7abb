"""Shared helpers for the benchmarks: a hub of our own, an HTTP/1.1 client, CPU and percentiles.

The client side is the spokes' own lean client (`control.client.lean`, h11 framing), so a
benchmark measures the path the spokes take and the project has one HTTP/1.1 client, not two.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks run as `python bench/x.py`
    sys.path.insert(0, str(ROOT))

from control import config  # noqa: E402
from control.auth.tokenfile import admin_token  # noqa: E402
from control.client.lean import ConnectionPool  # noqa: E402

# "host:port" of each hub this process started -> its admin token: every helper below talks to a
# hub as its cluster admin (the hub authenticates every request).
_TOKENS: dict[str, str] = {}


def token_for(url_or_address: str) -> str:
    """The admin token of the hub this process started at that URL or host:port ("" if none)."""
    address = url_or_address.split("://", 1)[-1].split("/", 1)[0]
    return _TOKENS.get(address, "")


def log(*args: Any) -> None:
    """Progress goes to stderr; stdout carries only the one JSON line."""
    print(*args, file=sys.stderr, flush=True)


def emit(figures: dict[str, Any]) -> None:
    print(json.dumps(figures, separators=(",", ":")), flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- the hub --------------------------------------------------------------------------------------

class Hub:
    """`manage.py migrate` + `manage.py runhub` on a free loopback port and a temp data dir."""

    def __init__(self, env: dict[str, str] | None = None, keep: bool = False):
        self.dir = Path(tempfile.mkdtemp(prefix="kk-bench-hub-"))
        self.port = free_port()
        self.host = "127.0.0.1"
        self.url = f"http://{self.host}:{self.port}"
        self.env = {**os.environ, "KK_DATA_DIR": str(self.dir), **(env or {})}
        self.env.pop("KK_SQLITE_PATH", None)
        self.env.pop("DATABASE_URL", None)
        self.process: subprocess.Popen | None = None
        self.log_path = self.dir / "hub.log"
        self.keep = keep

    @property
    def db_path(self) -> Path:
        return self.dir / "cluster.sqlite3"

    def start(self) -> "Hub":
        try:
            return self._start()
        except BaseException:
            self.stop()  # never leave a half-started hub behind
            raise

    def _start(self) -> "Hub":
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "--no-input", "-v", "0"], env=self.env, check=True, cwd=ROOT)
        # KK_BENCH_RUNHUB=/path/to/script.py serves instead of `manage.py runhub` (it gets --addr too):
        # for trying a server variant out of tree without touching the project.
        alt = config.given("KK_BENCH_RUNHUB")
        serve = [sys.executable, alt] if alt else [*manage, "runhub"]
        # HTTPS too (kubectl sends its token only over HTTPS; `manage.py kubeconfig` points it there)
        secure = [] if alt else ["--secure-addr", f"{self.host}:{free_port()}"]
        self.process = subprocess.Popen([*serve, "--addr", f"{self.host}:{self.port}", *secure], env=self.env,
                                        cwd=ROOT, stdout=self.log_path.open("wb"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"hub exited: {self.log_path.read_text()[-2000:]}")
            try:  # /version, not /healthz: any answer at all means the server is up
                with urllib.request.urlopen(f"{self.url}/version", timeout=1):
                    break
            except urllib.error.HTTPError:
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("hub did not come up")
        self.token = _TOKENS[f"{self.host}:{self.port}"] = admin_token(self.dir)
        log(f"hub pid {self.process.pid} on {self.url}, data {self.dir}")
        return self

    def login_url(self, next_path: str = "/") -> str:
        """A link that logs a browser into this hub's dashboard as the cluster admin, once (a
        one-time code, as `runcluster` prints: the dashboard and its /ws/live/ need a session)."""
        from control import roster

        return f"{self.url}{next_path}{'&' if '?' in next_path else '?'}code={roster.instructor_code(self.dir)}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.pid)

    def stop(self) -> None:
        stop_process(self.process)
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            log(f"kept hub data in {self.dir}")

    def __enter__(self) -> "Hub":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# --- CPU accounting -------------------------------------------------------------------------------

def stop_process(process: subprocess.Popen | None, grace: float = 10) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds: a process this benchmark started is gone."""
    if process and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def proc_cpu_seconds(pid: int) -> float:
    """user+system CPU seconds of a process (all its threads), from psutil (any system); a process
    that is gone raises ProcessLookupError."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.NoSuchProcess as exc:
        raise ProcessLookupError(pid) from exc
    return times.user + times.system


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent not idle (neither idle nor iowait), from psutil."""
    times = psutil.cpu_times()
    fields = ("user", "nice", "system", "irq", "softirq", "steal")  # Linux's guest time is in user already
    return sum(getattr(times, name, 0.0) for name in fields)


def self_cpu_seconds() -> float:
    return time.process_time()


class CpuMeter:
    """CPU used by this process and by the hub between start() and stop(), as % of one core."""

    def __init__(self, hub_pid: int | None = None, extra_pids: dict[str, int] | None = None):
        self.hub_pid = hub_pid
        self.extra = extra_pids or {}

    def start(self) -> "CpuMeter":
        self.t0 = time.monotonic()
        self.c0 = self_cpu_seconds()
        self.m0 = machine_busy_seconds()
        self.h0 = proc_cpu_seconds(self.hub_pid) if self.hub_pid else 0.0
        self.e0 = {k: proc_cpu_seconds(p) for k, p in self.extra.items()}
        return self

    def stop(self) -> dict[str, float]:
        wall = time.monotonic() - self.t0
        out = {"wall_s": round(wall, 3),
               "client_cpu_s": round(self_cpu_seconds() - self.c0, 3)}
        out["client_cpu_pct"] = round(100 * out["client_cpu_s"] / wall, 1) if wall else 0.0
        if self.hub_pid:
            out["server_cpu_s"] = round(proc_cpu_seconds(self.hub_pid) - self.h0, 3)
            out["server_cpu_pct"] = round(100 * out["server_cpu_s"] / wall, 1) if wall else 0.0
        ours = out["client_cpu_s"] + out.get("server_cpu_s", 0.0)
        for key, pid in self.extra.items():
            try:
                used = proc_cpu_seconds(pid) - self.e0[key]
            except FileNotFoundError:
                continue
            ours += used
            out[f"{key}_cpu_s"] = round(used, 3)
            out[f"{key}_cpu_pct"] = round(100 * used / wall, 1) if wall else 0.0
        # CPU the rest of the machine used meanwhile (other jobs skew the figures when this is high)
        other = machine_busy_seconds() - self.m0 - ours
        out["other_processes_cpu_pct"] = round(max(0.0, 100 * other / wall), 1) if wall else 0.0
        return out


# --- statistics -----------------------------------------------------------------------------------

def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted list (p in 0..100)."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, int(round(p / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def latency_summary(seconds: list[float], prefix: str = "") -> dict[str, float]:
    """p50/p90/p99/max (and min) in milliseconds."""
    values = sorted(seconds)
    if not values:
        return {f"{prefix}n": 0}
    ms = lambda v: round(v * 1000, 3)  # noqa: E731
    return {f"{prefix}n": len(values), f"{prefix}min_ms": ms(values[0]),
            f"{prefix}p50_ms": ms(percentile(values, 50)), f"{prefix}p90_ms": ms(percentile(values, 90)),
            f"{prefix}p99_ms": ms(percentile(values, 99)), f"{prefix}max_ms": ms(values[-1])}


# --- one HTTP/1.1 connection, for the measured paths ---------------------------------------------

REQUEST_TIMEOUT = 300.0  # a benchmark waits out a slow answer; the figures show it


class Connection:
    """One keep-alive HTTP/1.1 connection (the spokes' pool, of one); requests one at a time. A
    broken one raises `ServerUnreachable` and is reopened by the next request."""

    def __init__(self, host: str, port: int, user_agent: str = "kk-bench/1.0"):
        self.host, self.port = host, port
        self.pool = ConnectionPool(f"http://{host}:{port}", user_agent, size=1, token=token_for(f"{host}:{port}"))

    async def open(self) -> "Connection":
        return self  # connected by the first request

    def close(self) -> None:
        self.pool.drop_idle()

    async def request(self, method: str, path: str, body: bytes = b"",
                      content_type: str = "application/json") -> tuple[int, bytes]:
        return await self.pool.request(method, path, body or None, content_type, REQUEST_TIMEOUT)


def http_json(url: str, method: str = "GET", body: Any = None, timeout: float = 60) -> Any:
    """Blocking one-off JSON request (setup/verification only, not on a measured path)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", "Accept": "application/json",
                                          **({"Authorization": f"Bearer {token_for(url)}"} if token_for(url) else {})})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


# --- a whole cluster: the hub plus its spokes (added for self_healing.py and scale.py) -------------

SPOKE_ENV = {"KK_PACE": "workshop", "KK_START_DELAY": "0", "KK_CRASH_BACKOFF": "1:4"}


class Cluster(Hub):
    """A Hub plus controller-manager, scheduler and one kubelet per node, each
    `manage.py runcomponent ...` in its own process (as tests/conftest.py's Cluster), all sharing
    the hub's environment. Spokes are stopped before the hub; their output goes to <dir>/<name>.log."""

    def __init__(self, nodes: int = 3, env: dict[str, str] | None = None, keep: bool = False,
                 verbose: bool = False, prepare: Any = None, kube_proxies: bool = False):
        super().__init__({**SPOKE_ENV, **(env or {})}, keep=keep)
        self.kube_proxies = kube_proxies  # also one kube-proxy per node (`kube-proxy/node-N`)
        self.prepare = prepare  # called with the cluster once the hub is up, before any spoke starts
        self.nodes = nodes
        self.verbose = verbose  # spokes log at INFO (runcomponent -v 2) into their .log files
        self.spokes: dict[str, subprocess.Popen] = {}

    def _start(self) -> "Cluster":
        super()._start()
        if self.prepare is not None:
            self.prepare(self)
        self.start_spoke("controller-manager")
        self.start_spoke("scheduler")
        for i in range(1, self.nodes + 1):
            self.start_spoke("kubelet", node=f"node-{i}")
        for i in range(1, self.nodes + 1 if self.kube_proxies else 1):
            self.start_spoke("kube-proxy", node=f"node-{i}")
        return self

    def start_spoke(self, component: str, node: str | None = None) -> None:
        name = f"{component}/{node}" if node else component
        args = [sys.executable, str(ROOT / "manage.py"), "runcomponent", component, "--server", self.url]
        if node:
            args += ["--node", node]
        if self.verbose:
            args += ["-v", "2"]
        out = (self.dir / f"{name.replace('/', '-')}.log").open("ab")
        self.spokes[name] = subprocess.Popen(args, env=self.env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)

    def spoke_pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.spokes.items()}

    def dead_spokes(self) -> list[str]:
        return [name for name, p in self.spokes.items() if p.poll() is not None]

    def stop_spokes(self) -> None:
        for process in self.spokes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.spokes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop(self) -> None:
        try:
            self.stop_spokes()
        finally:
            super().stop()

    def wait_nodes_ready(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        ready = 0
        while time.monotonic() < deadline:
            dead = self.dead_spokes()
            if dead:
                raise RuntimeError(f"spokes exited: {dead}")
            try:
                nodes = http_json(f"{self.url}/api/v1/nodes", timeout=10)["items"]
            except OSError:
                nodes = []
            ready = sum(1 for n in nodes if any(c.get("type") == "Ready" and c.get("status") == "True"
                                                for c in (n.get("status") or {}).get("conditions") or []))
            if ready >= count:
                return
            time.sleep(0.2)
        raise RuntimeError(f"only {ready} of {count} nodes Ready after {timeout:.0f} s")


class CpuSampler:
    """CPU seconds of named processes (and the machine) between mark() calls: mark(label) stores the
    usage since the previous mark under that label."""

    def __init__(self, pids: dict[str, int]):
        self.pids = dict(pids)
        self.c0 = self._read()

    def _read(self) -> dict[str, float]:
        out = {"_wall": time.monotonic(), "_machine": machine_busy_seconds(), "bench": self_cpu_seconds()}
        for key, pid in self.pids.items():
            try:
                out[key] = proc_cpu_seconds(pid)
            except (FileNotFoundError, ProcessLookupError):
                out[key] = float("nan")
        return out

    def since(self, start: dict[str, float]) -> dict[str, Any]:
        now = self._read()
        wall = now["_wall"] - start["_wall"]
        out: dict[str, Any] = {"wall_s": round(wall, 3)}
        ours = 0.0
        for key in now:
            if key.startswith("_"):
                continue
            used = now[key] - start.get(key, now[key])
            if used == used:  # not NaN
                ours += used
            out[f"{key}_cpu_s"] = round(used, 3)
            out[f"{key}_cpu_pct"] = round(100 * used / wall, 1) if wall else 0.0
        other = now["_machine"] - start["_machine"] - ours
        out["other_processes_cpu_pct"] = round(max(0.0, 100 * other / wall), 1) if wall else 0.0
        return out

    def mark(self) -> dict[str, float]:
        return self._read()


def group_cpu(figures: dict[str, Any]) -> dict[str, Any]:
    """Sum the per-kubelet (and per-kube-proxy) CPU of a CpuSampler result into kubelets_cpu_s/_pct
    and kube_proxies_cpu_s/_pct (keeps the rest)."""
    out = {k: v for k, v in figures.items() if not k.startswith(("kubelet/", "kube-proxy/"))}
    wall = figures.get("wall_s") or 0
    for prefix, label in (("kubelet/", "kubelets"), ("kube-proxy/", "kube_proxies")):
        ks = [v for k, v in figures.items() if k.startswith(prefix) and k.endswith("_cpu_s")]
        if ks:
            out[f"{label}_cpu_s"] = round(sum(ks), 3)
            out[f"{label}_cpu_pct"] = round(100 * sum(ks) / wall, 1) if wall else 0.0
    return out


def descendants(pid: int) -> set[int]:
    """Every living process below `pid` (children, grandchildren, ...), from psutil."""
    try:
        return {child.pid for child in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def command_line(pid: int) -> list[str]:
    """The process's arguments ([] when it is gone or not ours to read)."""
    try:
        return psutil.Process(pid).cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS (psutil, any system) and VmHWM (peak RSS, where Linux's /proc/<pid>/status has it) of a
    process in kB; {} when it is gone."""
    try:
        out = {"VmRSS": psutil.Process(pid).memory_info().rss // 1024}
    except psutil.NoSuchProcess:
        return {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    out["VmHWM"] = int(line.split(":", 1)[1].split()[0])
    except OSError:
        pass
    return out


def log_entry_counts(db_path: Path, after: int = 0, through: int | None = None) -> list[tuple[str, str, str, int]]:
    """(resource, event_type, actor, count) of the hub's version log entries with
    after < revision <= through, most frequent first (read-only, WAL-safe). Entries the hub
    compacted away are not counted: run with a large KK_LOG_MAX_ENTRIES/KK_LOG_MAX_AGE."""
    import sqlite3

    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT resource, event_type, actor, COUNT(*) FROM control_logentry "
                           "WHERE revision > ? AND revision <= ? "
                           "GROUP BY resource, event_type, actor ORDER BY COUNT(*) DESC",
                           (after, through if through is not None else 1 << 62)).fetchall()
    finally:
        con.close()


def writes_summary(rows: list[tuple[str, str, str, int]], per: int) -> dict[str, Any]:
    """Log entries grouped as "resource EVENT by actor" -> count, plus the total and the total per
    `per` (e.g. per pod or per kill)."""
    total = sum(r[3] for r in rows)
    detail: dict[str, int] = {}
    for res, typ, actor, n in rows:
        who = (actor or "?").split(" (")[0]
        who = "kubelet/*" if who.startswith("kubelet/") else who
        key = f"{res or '?'} {typ} by {who}"
        detail[key] = detail.get(key, 0) + n
    by_resource: dict[str, int] = {}
    for res, _, _, n in rows:
        by_resource[res] = by_resource.get(res, 0) + n
    return {"total": total, "per_unit": round(total / per, 2) if per else None,
            "by_resource_per_unit": {k: round(v / per, 2) for k, v in by_resource.items()} if per else {},
            "detail": detail}


async def open_watch(host: str, port: int, path: str, user_agent: str = "kk-bench-watch/1.0"):
    """Start a watch (GET path with watch=1 in it) and return (status, lines): an async iterator of
    the raw NDJSON lines (bytes, without newline) as they arrive, however chunks cut them."""
    stream = ConnectionPool(f"http://{host}:{port}", user_agent, size=1,
                            token=token_for(f"{host}:{port}")).stream("GET", path)
    answer = await stream.__aenter__()

    async def lines():
        try:
            async for line in answer.lines():
                yield line
        finally:
            await stream.__aexit__(None, None, None)

    return answer.status, lines()


def wait_for_quiet(max_wait: float = 120.0, busy_pct: float = 40.0, window: float = 2.0) -> float:
    """Wait (up to max_wait s) until the whole machine was busy less than busy_pct % of one core
    over `window` s, so a run does not start on top of someone else's burst; return the last
    busy % seen (reported as machine_busy_pct_before)."""
    deadline = time.monotonic() + max_wait
    while True:
        m0 = machine_busy_seconds()
        time.sleep(window)
        busy = 100 * (machine_busy_seconds() - m0) / window
        if busy < busy_pct or time.monotonic() >= deadline:
            return round(busy, 1)
        log(f"machine busy {busy:.0f}% of a core; waiting for a quieter moment")


def stop_on_sigterm() -> None:
    """Turn SIGTERM (e.g. from `timeout`) into KeyboardInterrupt, so `finally:` blocks still stop
    the hub and the spokes instead of leaving them running."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def run_cluster_bench(name: str, settings: dict[str, Any], cluster: Any, *, quiet_wait: float, nodes: int,
                      body: Any) -> None:
    """The frame every cluster benchmark shares: wait for a quiet machine, start the cluster, run
    `body(cluster)` (a coroutine function returning figures), stop everything, print one JSON line."""
    stop_on_sigterm()
    figures: dict[str, Any] = {"bench": name, "settings": settings}
    try:
        figures["machine_busy_pct_before"] = wait_for_quiet(quiet_wait)
        cluster.start()
        cluster.wait_nodes_ready(nodes, timeout=180)  # a busy 2-core machine starts 12 processes slowly
        figures.update(asyncio.run(body(cluster)))
        dead = cluster.dead_spokes()
        if dead:
            figures["dead_spokes"] = dead
    except (Exception, KeyboardInterrupt) as exc:
        figures["error"] = f"{type(exc).__name__}: {exc}"
        log(f"error: {figures['error']}")
    finally:
        cluster.stop()
    emit(figures)


async def follow_pods(cluster: Any, tracker: Any, rv: str, opened: asyncio.Event, *, namespace: str, app: str,
                      user_agent: str) -> None:
    """Watch the pods labelled app=`app` from `rv`, feeding each line to `tracker.apply`; when the hub
    ends the stream, resume from the last resourceVersion the tracker saw."""
    resume, streams = rv, 0
    while True:
        path = (f"/api/v1/namespaces/{namespace}/pods?watch=1&labelSelector=app%3D{app}"
                f"&resourceVersion={resume}&timeoutSeconds=3600")
        status, lines = await open_watch(cluster.host, cluster.port, path, user_agent=user_agent)
        streams += 1
        if status != 200:
            raise RuntimeError(f"watch answered {status}")
        opened.set()
        async for line in lines:
            tracker.apply(line, time.perf_counter())
        resume = tracker.last_rv or resume
        log(f"watch stream {streams} ended; resuming from {resume}")


# --- exec streams (v5.channel.k8s.io / v4): one byte of channel, then the data -------------------
EXEC_STDIN, EXEC_STDOUT, EXEC_STDERR, EXEC_ERROR = 0, 1, 2, 3


def exec_read_until(ws: Any, buffer: bytes, marker: bytes, channels: tuple[int, ...]) -> bytes:
    """`buffer` plus the exec session's frames on `channels`, read until it holds `marker`.
    Raises ConnectionError when the stream closes or the session ends (the error channel)."""
    while marker not in buffer:
        message = ws.recv()
        if isinstance(message, str):
            message = message.encode()
        if not message:
            raise ConnectionError("the stream closed")
        if message[0] == EXEC_ERROR:
            raise ConnectionError(f"the session ended: {message[1:]!r}")
        if message[0] in channels:
            buffer += message[1:]
    return buffer
