"""An idle cluster's cost and how fast it stops: `python bench/idle.py [--nodes 10] [--minutes 10 | --seconds 600]
[--settle 30] [--pace workshop | --paces kubernetes,workshop] [--root DIR]`.

For each pace it starts `manage.py runcluster --nodes N --pace P` (from --root, default this
checkout: point it at an older worktree to measure the previous code the same way), waits until
every node is Ready, lets the cluster settle, then reads the hub process's CPU (user + system, from
psutil) and the store's revision over a window of --seconds: the hub's % of one core and the writes
per second. Then it sends SIGINT to runcluster, as a terminal's Ctrl-C would, and times how long
until no process of the cluster (runcluster, the hub, every spoke) remains.

Prints one JSON line: per pace {hub_cpu_pct, writes_per_s, stop_s, left_after_5s}. The target
(issue 21): hub_cpu_pct <= 2 over 10 idle minutes with 10 nodes at either pace, and
left_after_5s == 0. A shorter --minutes is for trying; the 10-minute figure is the one to report.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import shutil
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, alive, command_line, descendants, emit, free_port, log, proc_cpu_seconds  # noqa: E402,F401
from control.auth.tokenfile import admin_token  # noqa: E402


def label(pid: int) -> str:
    """A process's role: runcluster, runhub, or the spoke's name (kubelet/node-3)."""
    words = command_line(pid)
    if not words:
        return str(pid)
    for role in ("runcluster", "runhub"):
        if role in words:
            return role
    if "runcomponent" in words:
        spoke = words[words.index("runcomponent") + 1]
        return f"{spoke}/{words[words.index('--node') + 1]}" if "--node" in words else spoke
    return f"{pid}:{' '.join(words[:3])}"


def get_json(url: str, token: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def revision(url: str, token: str) -> int:
    return int(get_json(f"{url}/api/v1/namespaces?limit=1", token)["metadata"]["resourceVersion"])


def ready_nodes(url: str, token: str) -> int:
    try:
        nodes = get_json(f"{url}/api/v1/nodes", token)["items"]
    except OSError:
        return 0
    return sum(1 for node in nodes for c in (node.get("status") or {}).get("conditions") or []
               if c.get("type") == "Ready" and c.get("status") == "True")


def hub_pid(runcluster: int) -> int:
    for pid in descendants(runcluster):
        if "runhub" in command_line(pid):
            return pid
    raise RuntimeError("no hub process under runcluster")


def start_cluster(root: Path, nodes: int, pace: str, prefix: str) -> tuple[subprocess.Popen, Path, str]:
    """`runcluster` of the checkout at `root` on free loopback ports, in a new data folder: the
    process, the folder and the hub's URL (also for bench/watch_memory.py)."""
    data = Path(tempfile.mkdtemp(prefix=prefix))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(root)}
    for name in ("KK_SQLITE_PATH", "DATABASE_URL", "KK_PACE", "KK_DATA_DIR"):
        env.pop(name, None)
    cluster = subprocess.Popen([sys.executable, str(root / "manage.py"), "runcluster", "--addr", f"127.0.0.1:{port}",
                                "--secure-addr", f"127.0.0.1:{free_port()}", "--nodes", str(nodes), "--data", str(data),
                                "--pace", pace], cwd=root, env=env, stdout=(data / "out.log").open("wb"),
                               stderr=subprocess.STDOUT)
    return cluster, data, f"http://127.0.0.1:{port}"


def measure(root: Path, pace: str, nodes: int, seconds: float, settle: float) -> dict[str, float]:
    cluster, data, url = start_cluster(root, nodes, pace, "kk-bench-idle-")
    try:
        deadline = time.monotonic() + 600
        token = ""
        while time.monotonic() < deadline:
            if cluster.poll() is not None:
                raise RuntimeError(f"runcluster exited: {(data / 'out.log').read_text()[-2000:]}")
            if not token and (data / "tokens.csv").exists():
                token = admin_token(data)
            if token and ready_nodes(url, token) == nodes:
                break
            time.sleep(1)
        else:
            raise RuntimeError(f"{nodes} nodes were not Ready within 600 s")
        log(f"{pace}: {nodes} nodes Ready; settling {settle:.0f} s")
        time.sleep(settle)
        hub = hub_pid(cluster.pid)
        cpu0, rev0, t0 = proc_cpu_seconds(hub), revision(url, token), time.monotonic()
        time.sleep(seconds)
        cpu1, rev1, t1 = proc_cpu_seconds(hub), revision(url, token), time.monotonic()
        figures = {"hub_cpu_pct": round(100 * (cpu1 - cpu0) / (t1 - t0), 2),
                   "writes_per_s": round((rev1 - rev0) / (t1 - t0), 2), "window_s": round(t1 - t0)}
        log(f"{pace}: {figures}; stopping with SIGINT")
        everyone = descendants(cluster.pid) | {cluster.pid}
        names = {pid: label(pid) for pid in everyone}
        gone_at: dict[str, float] = {}
        started = time.monotonic()
        cluster.send_signal(signal.SIGINT)
        left_after_5s = None
        while True:
            living = [pid for pid in everyone if alive(pid)]
            elapsed = time.monotonic() - started
            for pid in everyone - set(living):
                gone_at.setdefault(names[pid], round(elapsed, 2))
            if left_after_5s is None and elapsed >= 5:
                left_after_5s = len(living)
            if not living or elapsed > 60:
                break
            cluster.poll()  # reap runcluster itself so it does not linger as a zombie
            time.sleep(0.05)
        figures["stop_s"] = round(time.monotonic() - started, 2)
        figures["left_after_5s"] = left_after_5s or 0
        figures["processes"] = len(everyone)
        log(f"{pace}: seconds after SIGINT until each process was gone: {sorted(gone_at.items(), key=lambda x: x[1])}")
        return figures
    finally:
        if cluster.poll() is None:
            for pid in descendants(cluster.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            cluster.kill()
            cluster.wait()
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=600, help="the idle window measured (target: 10 min)")
    parser.add_argument("--minutes", type=float, help="the idle window in minutes (overrides --seconds)")
    parser.add_argument("--settle", type=float, default=30, help="seconds after every node is Ready before measuring")
    parser.add_argument("--paces", default="kubernetes,workshop")
    parser.add_argument("--pace", choices=("kubernetes", "workshop"), help="measure this pace only")
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose runcluster is measured")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    seconds = args.minutes * 60 if args.minutes is not None else args.seconds
    result: dict[str, object] = {"nodes": args.nodes, "root": str(root)}
    for pace in [args.pace] if args.pace else args.paces.split(","):
        result[pace] = measure(root, pace, args.nodes, seconds, args.settle)
    emit(result)


if __name__ == "__main__":
    main()
