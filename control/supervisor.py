"""The supervisor: runcluster's keeper of spoke processes, itself a client of the hub.

The desired state of every spoke lives in the hub, in the ConfigMap `kube-system/kubekitchen-spokes`
(`data: {"scheduler": "running", "kubelet.node-2": "stopped", ...}`: ConfigMap keys cannot hold
a "/", so a kubelet's key is `kubelet.<node>`); the dashboard stops or starts
a spoke by changing that ConfigMap, and the supervisor — watching it like any controller — starts
or stops the process. Declarative all the way down.

Guarantees: a spoke whose desired state is "running" is started (and restarted after a crash, at
most once per `restart_after` seconds); one that is "stopped" is terminated (SIGTERM, then SIGKILL
after 10 s); once `stop` has begun nothing is started again and every spoke (and the hub, when
runcluster hands it over) is sent SIGTERM at the same moment, all are waited for against one
deadline (`STOP_GRACE`, 3 s) and whoever is left then is killed: stopping a cluster takes the
slowest process's exit, not the sum of them, and never much more than the grace. The supervisor
only talks to the hub over HTTP, as "supervisor".

It follows the ConfigMap as client-go's reflector does (`reflector.go`): list, then watch from
the LIST's resourceVersion with bookmarks (so its version keeps up with an idle hub and never
falls out of the log's window); on an ERROR 410 it forgets that version and relists once; every
failure (410, a broken or instantly empty stream, an unreachable hub) is followed by a jittered
exponential back-off (0.8 s doubling to 30 s) that starts over after a watch that delivered an
event. The loop runs in a thread (`watch_forever`); one round of it (`run_once`) is what tests
drive, with an injected clock and httpx transport.
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
from typing import Any, Callable, Protocol, Sequence

import httpx

from control.clock import REAL
from control.client.informer import SHORT_WATCH, Backoff
from control.kinds.spokes import NAME, NAMESPACE, spoke_key

log = logging.getLogger(__name__)

PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
WATCH_SECONDS = 300
STOP_GRACE = 3.0  # seconds the stopping processes get together before SIGKILL


class Clock(Protocol):
    """The supervisor's time: it runs in threads, so its sleeps block (and end early on stop)."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class StoppableClock:
    """Monotonic time whose sleeps end early when the supervisor stops."""

    def __init__(self, stopped: threading.Event):
        self.stopped = stopped

    def now(self) -> float:
        return REAL.monotonic()

    def sleep(self, seconds: float) -> None:
        self.stopped.wait(seconds)


class Expired(Exception):
    """The watch's resourceVersion was compacted away (410): relist."""


class WatchFailed(Exception):
    """The hub refused the watch or sent an ERROR event other than 410."""


class Supervisor:
    def __init__(self, url: str, command: list[str], env: dict[str, str], spokes: dict[str, list[str]],
                 *, restart_after: float = 5.0, clock: Clock | None = None,
                 transport: httpx.BaseTransport | None = None,
                 popen: Callable[..., subprocess.Popen] = subprocess.Popen, backoff: Backoff | None = None,
                 watch_seconds: int = WATCH_SECONDS):
        self.url, self.command, self.env, self.spokes = url, command, env, spokes
        self.restart_after = restart_after
        self.processes: dict[str, subprocess.Popen] = {}
        self.retired: list[subprocess.Popen] = []  # spokes told to stop, perhaps not yet gone
        self.started_at: dict[str, float] = {}
        self.desired: dict[str, str] = {name: "running" for name in spokes}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.clock: Clock = clock or StoppableClock(self._stop)
        self.popen = popen
        self.backoff = backoff or Backoff()
        self.resource_version = ""
        self.watch_seconds = watch_seconds
        from django.conf import settings

        from control.auth.tokenfile import bearer, spoke_token

        from pathlib import Path

        token = spoke_token(Path(env.get("KK_DATA_DIR") or settings.DATA_DIR), "supervisor")
        self.http = httpx.Client(base_url=url, headers={"User-Agent": "supervisor (kube-kitchen)", **bearer(token)},
                                 timeout=10,
                                 transport=transport)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    # --- desired state ---------------------------------------------------------------------

    def publish_desired(self, *, within: float = 60.0) -> None:
        """Every spoke starts as running: write that into the hub (create or replace).

        A hub that has only just come up may still be busy (429), briefly failing (5xx) or not
        accepting connections yet: those are retried with the back-off for `within` seconds; a
        refusal (any other 4xx) is final. Returns quietly once `stop` has begun."""
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NAME, "namespace": NAMESPACE},
                "data": {spoke_key(name): state for name, state in self.desired.items()}}
        deadline = self.clock.now() + within
        while not self._stop.is_set():
            try:
                answer = self.http.put(f"{PATH}/{NAME}", json=body)
                if answer.status_code == 404:
                    answer = self.http.post(PATH, json=body)
                why = f"{answer.status_code}: {answer.text[:300]}"
                if answer.status_code < 300:
                    self.backoff.reset()
                    return
                if answer.status_code != 429 and answer.status_code < 500:
                    raise RuntimeError(f"cannot publish the spokes' desired states: {why}")
            except httpx.HTTPError as exc:
                why = repr(exc)
            if self.clock.now() >= deadline:
                raise RuntimeError(f"cannot publish the spokes' desired states within {within:.0f} s: {why}")
            self._back_off(f"publishing the desired states failed ({why})")

    def watch_forever(self) -> None:
        """Follow the ConfigMap until `stop`; reconcile on every change."""
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # noqa: BLE001 - the keeper of the spokes must not die of one bad answer
                if self._stop.is_set():
                    return  # `stop` closed the connection under us
                log.exception("supervisor: unexpected failure following the hub")
                self._back_off("an unexpected failure")

    def run_once(self) -> None:
        """One list-or-resume plus one watch stream; a failure ends in a back-off sleep."""
        events = 0
        try:
            if not self.resource_version:
                self._relist()
            started = self.clock.now()
            params = {"watch": "1", "resourceVersion": self.resource_version, "allowWatchBookmarks": "true",
                      "fieldSelector": f"metadata.name={NAME}", "timeoutSeconds": str(self.watch_seconds)}
            with self.http.stream("GET", PATH, params=params,
                                  timeout=httpx.Timeout(10, read=self.watch_seconds + 30)) as stream:
                if stream.status_code == 410:
                    raise Expired(stream.read().decode(errors="replace")[:200])
                if stream.status_code >= 300:
                    raise WatchFailed(f"{stream.status_code}: {stream.read().decode(errors='replace')[:200]}")
                for line in stream.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.strip():
                        self._apply(json.loads(line))
                        events += 1
                        self.backoff.reset()
            if events == 0 and self.clock.now() - started < SHORT_WATCH:
                self._back_off("the watch ended at once with no event")
        except Expired as exc:
            expired_at, self.resource_version = self.resource_version, ""
            self._back_off(f"the watch expired at {expired_at} ({exc}); relisting")
        except (httpx.HTTPError, WatchFailed, ValueError, KeyError, TypeError) as exc:
            self._back_off(f"the watch broke ({exc!r})")

    def _relist(self) -> None:
        answer = self.http.get(PATH, params={"fieldSelector": f"metadata.name={NAME}"})
        if answer.status_code >= 300:
            raise WatchFailed(f"list answered {answer.status_code}")
        listing = answer.json()
        for item in listing.get("items") or []:
            self.reconcile(item.get("data") or {})
        self.resource_version = listing["metadata"]["resourceVersion"]

    def _apply(self, event: dict[str, Any]) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Expired(obj.get("message", ""))
            raise WatchFailed(f"{obj.get('code')}: {obj.get('message')}")
        self.resource_version = (obj.get("metadata") or {}).get("resourceVersion") or self.resource_version
        if kind in ("ADDED", "MODIFIED"):
            self.reconcile(obj.get("data") or {})

    def _back_off(self, why: str) -> None:
        delay = self.backoff.next()
        log.info("supervisor: %s; again in %.1f s", why, delay)
        self.clock.sleep(delay)

    # --- processes ---------------------------------------------------------------------------

    def reconcile(self, data: dict[str, Any]) -> None:
        with self._lock:
            for name in self.spokes:
                want = str(data.get(spoke_key(name), "running")).lower()
                self.desired[name] = "stopped" if want == "stopped" else "running"
            self._converge()

    def tick(self) -> list[str]:
        """Restart crashed spokes that should run; returns the names that exited since last time."""
        with self._lock:
            exited = [name for name, p in self.processes.items() if p.poll() is not None]
            self._converge()
        return exited

    def _converge(self) -> None:
        if self._stop.is_set():
            return  # stopping: a spoke that exits now exits for good
        now = self.clock.now()
        for name, args in self.spokes.items():
            process = self.processes.get(name)
            alive = process is not None and process.poll() is None
            if self.desired[name] == "running" and not alive:
                if process is None or now - self.started_at.get(name, 0) >= self.restart_after:
                    self.processes[name] = self.popen([*self.command, *args], env=self.env)
                    self.started_at[name] = now
            elif self.desired[name] == "stopped" and alive:
                _terminate(process)
                self.retired.append(self.processes.pop(name))

    def begin_stop(self) -> None:
        """From now on nothing is started (safe to call from a signal handler)."""
        self._stop.set()

    def stop(self, *, also: Sequence[subprocess.Popen] = (), grace: float = STOP_GRACE) -> None:
        """Stop following the hub and terminate every spoke, and the processes `also` (the hub),
        all at once; from here on nothing is started."""
        self.begin_stop()
        with self._lock:
            terminate_together([*self.processes.values(), *self.retired, *also], grace)
        self.http.close()


def terminate_together(processes: Sequence[subprocess.Popen], grace: float) -> None:
    """SIGTERM to every living process at once, one shared deadline `grace` s away, then SIGKILL
    to whoever is still there (waiting in series, 10 s each, took 10-30 s for a 10-node cluster)."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = REAL.monotonic() + grace
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - REAL.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    stubborn = [process for process in processes if process.poll() is None]
    for process in stubborn:  # all killed before any is waited for: they die side by side
        process.kill()
    for process in stubborn:
        process.wait()


def _terminate(process: subprocess.Popen) -> None:
    process.terminate()
    threading.Thread(target=_wait, args=(process,), daemon=True).start()


def _wait(process: subprocess.Popen) -> None:
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
