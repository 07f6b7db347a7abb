"""The supervisor: runcluster's keeper of spoke processes, itself a client of the hub.

The desired state of every spoke lives in the hub, in the ConfigMap `kube-system/kubekitchen-spokes`
(`data: {"scheduler": "running", "kubelet.node-2": "stopped", ...}`: ConfigMap keys cannot hold
a "/", so a kubelet's key is `kubelet.<node>`); the dashboard stops or starts
a spoke by changing that ConfigMap, and the supervisor — watching it like any controller — starts
or stops the process. Declarative all the way down.

Guarantees: a spoke whose desired state is "running" is started (and restarted after a crash, at
most once per `restart_after` seconds); one that is "stopped" is terminated (SIGTERM, then SIGKILL
after 10 s); the supervisor only talks to the hub over HTTP, as "supervisor".
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
from typing import Any

import httpx
from control.clock import REAL as clock

log = logging.getLogger(__name__)

NAMESPACE, NAME = "kube-system", "kubekitchen-spokes"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


class Supervisor:
    def __init__(self, url: str, command: list[str], env: dict[str, str], spokes: dict[str, list[str]],
                 *, restart_after: float = 5.0):
        self.url, self.command, self.env, self.spokes = url, command, env, spokes
        self.restart_after = restart_after
        self.processes: dict[str, subprocess.Popen] = {}
        self.started_at: dict[str, float] = {}
        self.desired: dict[str, str] = {name: "running" for name in spokes}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.http = httpx.Client(base_url=url, headers={"User-Agent": "supervisor (kube-kitchen)"}, timeout=10)

    # --- desired state ---------------------------------------------------------------------

    def publish_desired(self) -> None:
        """Every spoke starts as running: write that into the hub (create or replace)."""
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NAME, "namespace": NAMESPACE},
                "data": {config_key(name): state for name, state in self.desired.items()}}
        answer = self.http.put(f"{PATH}/{NAME}", json=body)
        if answer.status_code == 404:
            answer = self.http.post(PATH, json=body)
        if answer.status_code >= 300:
            raise RuntimeError(f"cannot publish the spokes' desired states: {answer.text}")

    def watch_forever(self) -> None:
        """Follow the ConfigMap (list, then watch from its resourceVersion); reconcile on change."""
        while not self._stop.is_set():
            try:
                current = self.http.get(f"{PATH}/{NAME}")
                if current.status_code == 200:
                    self.reconcile(current.json().get("data") or {})
                    since = current.json()["metadata"]["resourceVersion"]
                else:
                    since = self.http.get(PATH).json()["metadata"]["resourceVersion"]
                params = {"watch": "1", "resourceVersion": since, "fieldSelector": f"metadata.name={NAME}",
                          "timeoutSeconds": "300"}
                with self.http.stream("GET", PATH, params=params, timeout=httpx.Timeout(10, read=330)) as stream:
                    for line in stream.iter_lines():
                        if self._stop.is_set():
                            return
                        event = json.loads(line) if line.strip() else {}
                        if event.get("type") in ("ADDED", "MODIFIED"):
                            self.reconcile(event["object"].get("data") or {})
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                log.info("supervisor watch broke (%s); again in 1 s", exc)
                self._stop.wait(1.0)

    # --- processes ---------------------------------------------------------------------------

    def reconcile(self, data: dict[str, Any]) -> None:
        with self._lock:
            for name in self.spokes:
                want = str(data.get(config_key(name), "running")).lower()
                self.desired[name] = "stopped" if want == "stopped" else "running"
            self._converge()

    def tick(self) -> list[str]:
        """Restart crashed spokes that should run; returns the names that exited since last time."""
        with self._lock:
            exited = [name for name, p in self.processes.items() if p.poll() is not None]
            self._converge()
        return exited

    def _converge(self) -> None:
        now = clock.monotonic()
        for name, args in self.spokes.items():
            process = self.processes.get(name)
            alive = process is not None and process.poll() is None
            if self.desired[name] == "running" and not alive:
                if process is None or now - self.started_at.get(name, 0) >= self.restart_after:
                    self.processes[name] = subprocess.Popen([*self.command, *args], env=self.env)
                    self.started_at[name] = now
            elif self.desired[name] == "stopped" and alive:
                _terminate(process)
                self.processes.pop(name, None)

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            for process in self.processes.values():
                if process.poll() is None:
                    process.terminate()
            for process in self.processes.values():
                _wait(process)
        self.http.close()


def config_key(spoke: str) -> str:
    """The spoke's key in the ConfigMap: "kubelet/node-1" -> "kubelet.node-1"."""
    return spoke.replace("/", ".")


def _terminate(process: subprocess.Popen) -> None:
    process.terminate()
    threading.Thread(target=_wait, args=(process,), daemon=True).start()


def _wait(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
