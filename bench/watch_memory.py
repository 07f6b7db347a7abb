"""Does the hub's memory come back after stalled watchers and a big deletion?
`python bench/watch_memory.py [--configmaps 9000] [--bytes 960] [--watchers 10] [--nodes 3] [--root DIR]`.

Starts `manage.py runcluster` (from --root, default this checkout), opens --watchers watches of
ConfigMaps across the cluster that never read a byte (a small receive buffer, as a stuck client),
creates a namespace with --configmaps ConfigMaps (a payload of --bytes each: 960 by default, about
1 kB stored; 50000 for objects a lagging watcher is handed several of at once), deletes the namespace and
waits until the namespace controller has emptied it and it is gone, then lets the hub rest
--rest seconds. The hub's RSS (VmRSS, from psutil) is sampled throughout.

Prints one JSON line: rss_before_mib, rss_created_mib (just after the last create, the stalled
watchers not yet all dropped), rss_peak_mib, rss_after_mib, and the seconds each phase took.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, emit, log, memory_kb  # noqa: E402
from bench.idle import descendants, hub_pid, ready_nodes, start_cluster  # noqa: E402
from control.auth.tokenfile import admin_token  # noqa: E402

NAMESPACE = "bench-memory"


def rss_mib(pid: int) -> float:
    return memory_kb(pid).get("VmRSS", 0) / 1024


class RssSampler:
    """The peak of a process's RSS, sampled every `every` seconds in a thread."""

    def __init__(self, pid: int, every: float = 0.2):
        self.pid, self.every, self.peak = pid, every, rss_mib(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.peak = max(self.peak, rss_mib(self.pid))
            except OSError:
                return

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def stalled_watch(port: int, token: str) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET /api/v1/configmaps?watch=1&allowWatchBookmarks=true HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Authorization: Bearer {token}\r\n\r\n".encode())
    return sock  # ... and never read


def create_configmaps(url: str, token: str, count: int, size: int) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    local = threading.local()

    def create(i: int) -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(base_url=url, headers=headers, timeout=60)
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "labels": {"bench": "memory"}},
                "data": {"payload": (f"{i:08d}" * (size // 8 + 1))[:size]}}
        for _ in range(20):
            answer = client.post(f"/api/v1/namespaces/{NAMESPACE}/configmaps", json=body)
            if answer.status_code in (201, 409):
                return
            time.sleep(0.2)  # 429: the hub asked us to come back
        raise RuntimeError(f"creating cm-{i}: {answer.status_code} {answer.text[:200]}")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, range(count)))


def run(root: Path, configmaps: int, size: int, watchers: int, nodes: int, rest: float) -> dict[str, float]:
    cluster, data, url = start_cluster(root, nodes, "kubernetes", "kk-bench-memory-")
    sockets: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if cluster.poll() is not None:
                raise RuntimeError(f"runcluster exited: {(data / 'out.log').read_text()[-2000:]}")
            if (data / "tokens.csv").exists() and ready_nodes(url, admin_token(data)) == nodes:
                break
            time.sleep(1)
        else:
            raise RuntimeError("the cluster did not come up")
        token = admin_token(data)
        hub = hub_pid(cluster.pid)
        time.sleep(10)
        figures: dict[str, float] = {"rss_before_mib": round(rss_mib(hub), 1)}
        sampler = RssSampler(hub)
        sockets = [stalled_watch(int(url.rsplit(":", 1)[1]), token) for _ in range(watchers)]
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            client.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": NAMESPACE}}).raise_for_status()
            started = time.monotonic()
            create_configmaps(url, token, configmaps, size)
            figures["create_s"] = round(time.monotonic() - started, 1)
            figures["rss_created_mib"] = round(rss_mib(hub), 1)
            log(f"{configmaps} ConfigMaps created in {figures['create_s']} s; deleting the namespace")
            started = time.monotonic()
            client.delete(f"/api/v1/namespaces/{NAMESPACE}").raise_for_status()
            while client.get(f"/api/v1/namespaces/{NAMESPACE}").status_code != 404:
                if time.monotonic() - started > 600:
                    raise RuntimeError("the namespace was not gone within 600 s")
                time.sleep(1)
            figures["delete_s"] = round(time.monotonic() - started, 1)
        log(f"namespace gone in {figures['delete_s']} s; resting {rest:.0f} s")
        time.sleep(rest)
        figures["rss_peak_mib"] = round(sampler.stop(), 1)
        figures["rss_after_mib"] = round(rss_mib(hub), 1)
        open_watches = 0
        for sock in sockets:  # did the hub close the stalled watches (ERROR/EOF/reset) or keep them?
            sock.setblocking(False)
            try:
                while sock.recv(1 << 16):
                    pass
                closed = True
            except BlockingIOError:
                closed = False
            except OSError:
                closed = True
            open_watches += 0 if closed else 1
        figures["stalled_watches_still_open"] = open_watches
        return figures
    finally:
        for sock in sockets:
            sock.close()
        everyone = descendants(cluster.pid)
        if cluster.poll() is None:
            cluster.send_signal(signal.SIGINT)
            try:
                cluster.wait(timeout=30)
            except subprocess.TimeoutExpired:
                cluster.kill()
                cluster.wait()
        for pid in everyone:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configmaps", type=int, default=9000)
    parser.add_argument("--bytes", type=int, default=960, help="each ConfigMap's payload")
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--rest", type=float, default=30, help="seconds after the deletion before the last reading")
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose runcluster is measured")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    emit({"root": str(root), "configmaps": args.configmaps, "bytes": args.bytes, "watchers": args.watchers,
          **run(root, args.configmaps, args.bytes, args.watchers, args.nodes, args.rest)})


if __name__ == "__main__":
    main()
