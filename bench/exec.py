"""Exec over WebSocket: the round trip of one `echo hi` and 50 shells typing at once.

    .venv/bin/python bench/exec.py [--round-trips 300] [--shells 50] [--interval 0.1] [--duration 30]

Processes: the hub (its own temp data dir), one kubelet (`runcomponent kubelet --node node-1`) and
this process, the client. A busybox pod `box` is placed on node-1 (spec.nodeName, so no scheduler).

1. Round trip: `--round-trips` times, one after the other, a WebSocket exec exactly as a client
   speaks it (`GET .../pods/box/exec?command=echo&command=hi&stdout=1&stderr=1`, subprotocol
   v5.channel.k8s.io, websocket-client as the official Python client uses it): from opening the
   connection to reading `hi\\n` on stdout and the Success Status on the error channel. Targets:
   p50 <= 20 ms, p99 <= 50 ms.
2. Shells: `--shells` exec sessions of `sh` with stdin open at once (one thread each), each typing
   `echo <shell>-<n>` every `--interval` seconds for `--duration` seconds and waiting for that line
   back. An error is a connection that fails or closes early, a line that never comes back (5 s),
   or a wrong line. Reports commands answered, errors and the per-command latency.

Prints one JSON line on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Cluster, CpuMeter, Hub, emit, exec_read_until, http_json, log, percentile, token_for  # noqa: E402

import websocket  # noqa: E402  (websocket-client, a test dependency)

NODE = "node-1"
PROTOCOL = "v5.channel.k8s.io"
STDIN, STDOUT, STDERR, ERROR = 0, 1, 2, 3
REPLY_TIMEOUT = 5.0


class ExecCluster(Cluster):
    """The hub and one kubelet: exec needs nothing else."""

    def _start(self) -> "ExecCluster":
        Hub._start(self)
        self.start_spoke("kubelet", node=NODE)
        return self


def place_pod(cluster: Cluster) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
           "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "busybox:1.36"}]}}
    http_json(f"{cluster.url}/api/v1/namespaces/default/pods", "POST", pod)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = http_json(f"{cluster.url}/api/v1/namespaces/default/pods/box").get("status") or {}
        if any((s.get("state") or {}).get("running") for s in status.get("containerStatuses") or []):
            return
        time.sleep(0.2)
    raise RuntimeError("pod box never ran")


def exec_url(cluster: Cluster, query: str) -> str:
    return f"ws://{cluster.host}:{cluster.port}/api/v1/namespaces/default/pods/box/exec?{query}"


def headers(url: str) -> list[str]:
    """The handshake's headers: the hub authenticates an exec like any request (the admin's token)."""
    token = token_for(url)
    return ["User-Agent: bench-exec", *([f"Authorization: Bearer {token}"] if token else [])]


def one_round_trip(url: str) -> float:
    started = time.perf_counter()
    ws = websocket.create_connection(url, subprotocols=[PROTOCOL], timeout=10,
                                     header=headers(url), suppress_origin=True)
    try:
        out, status = b"", None
        while status is None:
            message = ws.recv()
            if isinstance(message, str):
                message = message.encode()
            if not message:
                continue
            if message[0] == STDOUT:
                out += message[1:]
            elif message[0] == ERROR:
                status = json.loads(message[1:])
    finally:
        ws.close()
    elapsed = time.perf_counter() - started
    if out != b"hi\n" or status.get("status") != "Success":
        raise RuntimeError(f"unexpected answer: {out!r} {status!r}")
    return elapsed


def round_trips(cluster: Cluster, count: int) -> dict:
    url = exec_url(cluster, "command=echo&command=hi&stdout=1&stderr=1")
    for _ in range(10):  # warm-up: connections, imports, the kubelet's first container files
        one_round_trip(url)
    times = sorted(one_round_trip(url) for _ in range(count))
    return {"round_trips": count, "p50_ms": round(1000 * percentile(times, 50), 2),
            "p90_ms": round(1000 * percentile(times, 90), 2), "p99_ms": round(1000 * percentile(times, 99), 2),
            "max_ms": round(1000 * times[-1], 2)}


class Typist(threading.Thread):
    """One shell: a command every interval, each answer awaited."""

    def __init__(self, url: str, index: int, interval: float, window: dict, start_gate: threading.Barrier):
        super().__init__(daemon=True)
        self.url, self.index, self.interval, self.window, self.gate = url, index, interval, window, start_gate
        self.latencies: list[float] = []
        self.errors: list[str] = []

    def run(self) -> None:
        try:
            ws = websocket.create_connection(self.url, subprotocols=[PROTOCOL], timeout=REPLY_TIMEOUT,
                                             header=headers(self.url), suppress_origin=True)
        except Exception as exc:  # counted, not raised: the figure is how many fail
            self.errors.append(f"connect: {exc}")
            self.gate.abort()
            return
        try:
            self.gate.wait()
            self._type(ws)
        except Exception as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            try:
                ws.send_binary(bytes((STDIN,)) + b"exit\n")
            except Exception:
                pass
            ws.close()

    def _type(self, ws: websocket.WebSocket) -> None:
        n, next_at, pending = 0, time.monotonic(), b""
        while next_at < self.window["until"]:
            time.sleep(max(0.0, next_at - time.monotonic()))
            expected = f"{self.index}-{n}\n".encode()
            sent = time.perf_counter()
            ws.send_binary(bytes((STDIN,)) + b"echo " + expected)
            pending = exec_read_until(ws, pending, expected, (STDOUT, STDERR))
            if pending != expected:
                self.errors.append(f"wrong output: {pending!r}, expected {expected!r}")
            pending = b""
            self.latencies.append(time.perf_counter() - sent)
            n += 1
            next_at += self.interval


def shells(cluster: Cluster, count: int, interval: float, duration: float) -> dict:
    url = exec_url(cluster, "command=sh&stdin=1&stdout=1&stderr=1")
    window: dict = {}
    # every shell is connected before the typing starts; the window is `duration` from then
    gate = threading.Barrier(count, action=lambda: window.update(started=time.monotonic(),
                                                                  until=time.monotonic() + duration))
    typists = [Typist(url, i, interval, window, gate) for i in range(count)]
    for typist in typists:
        typist.start()
    for typist in typists:
        typist.join(duration + 60)
    latencies = sorted(t for typist in typists for t in typist.latencies)
    errors = [e for typist in typists for e in typist.errors]
    for error in errors[:5]:
        log("shell error:", error)
    window_s = round(time.monotonic() - window["started"], 1) if "started" in window else 0.0
    return {"shells": count, "interval_s": interval, "window_s": window_s,
            "commands": len(latencies), "errors": len(errors),
            "command_p50_ms": round(1000 * percentile(latencies, 50), 2) if latencies else None,
            "command_p99_ms": round(1000 * percentile(latencies, 99), 2) if latencies else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--round-trips", type=int, default=300)
    parser.add_argument("--shells", type=int, default=50)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--duration", type=float, default=30.0)
    args = parser.parse_args()
    cluster = ExecCluster(nodes=1)
    cluster.start()
    try:
        place_pod(cluster)
        log("pod box running; round trips")
        meter = CpuMeter(cluster.pid, cluster.spoke_pids()).start()
        figures = {"bench": "exec", **round_trips(cluster, args.round_trips)}
        log(f"round trips: p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms; {args.shells} shells")
        figures.update(shells(cluster, args.shells, args.interval, args.duration))
        figures.update(meter.stop())
        figures["targets_met"] = bool(figures["p50_ms"] <= 20 and figures["p99_ms"] <= 50 and figures["errors"] == 0)
    finally:
        cluster.stop()
    emit(figures)


if __name__ == "__main__":
    main()
