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

It follows the ConfigMap through the one reflector (`control.client.reflector`): list, then watch
from the LIST's resourceVersion with bookmarks (so its version keeps up with an idle hub and never
falls out of the log's window); on a 410 it forgets that version and relists once; every failure
(410, a broken or instantly empty stream, an unreachable hub) is followed by the reflector's
jittered exponential back-off (0.8 s doubling to 30 s), which starts over after a watch that
delivered an event. The supervisor lives in threads (runcluster's main thread publishes and
ticks, `watch_forever` follows the hub in its own): each of those runs its async work on its own
event loop with an httpx client of the hub, on the injected `control.clock.Clock`, and
`begin_stop` cancels that work at once (a back-off or a quiet watch does not delay a stop). One
round of the reflector (`run_once`) is what tests drive, with a fake clock and httpx transport.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Sequence, TypeVar

import httpx

from control import config, errors
from control.clock import REAL, Clock
from control.client.http import HubUnreachable
from control.client.reflector import Backoff, Listing, Reflector
from control.kinds.spokes import NAME, NAMESPACE, spoke_key

log = logging.getLogger(__name__)

PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
WATCH_SECONDS = 300
STOP_GRACE = 3.0  # seconds the stopping processes get together before SIGKILL

T = TypeVar("T")
_HTTP: contextvars.ContextVar[httpx.AsyncClient] = contextvars.ContextVar("supervisor_http")


class _SpokesConfigMap:
    """The reflector's ListerWatcher: the one ConfigMap, by a field selector on its name."""

    def __init__(self, supervisor: Supervisor):
        self.supervisor = supervisor

    async def list(self) -> Listing:
        try:
            answer = await self.supervisor.http.get(PATH, params={"fieldSelector": f"metadata.name={NAME}"})
        except httpx.HTTPError as exc:
            raise HubUnreachable(f"the list failed ({exc!r})") from None
        if answer.status_code >= 300:
            raise errors.from_status(answer.content, answer.status_code)
        listing = answer.json()
        return Listing(listing.get("items") or [], listing["metadata"]["resourceVersion"])

    async def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        supervisor = self.supervisor
        params = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                  "fieldSelector": f"metadata.name={NAME}", "timeoutSeconds": str(supervisor.watch_seconds)}
        try:
            async with supervisor.http.stream("GET", PATH, params=params,
                                              timeout=httpx.Timeout(10, read=supervisor.watch_seconds + 30)) as stream:
                if stream.status_code >= 300:
                    raise errors.from_status(await stream.aread(), stream.status_code)
                async for line in stream.aiter_lines():
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        raise errors.from_status(status, int(status.get("code") or 500))
                    yield event
        except httpx.HTTPError as exc:
            raise HubUnreachable(f"the watch broke ({exc!r})") from None


class Supervisor:
    def __init__(self, url: str, command: list[str], env: dict[str, str], spokes: dict[str, list[str]],
                 *, restart_after: float = 5.0, clock: Clock | None = None,
                 transport: httpx.AsyncBaseTransport | None = None,
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
        self.clock: Clock = clock or REAL
        self.popen = popen
        self.backoff = backoff or Backoff()
        self.watch_seconds = watch_seconds
        self.reflector = Reflector(_SpokesConfigMap(self), self, name="supervisor", clock=self.clock,
                                   backoff=self.backoff)
        self._sessions: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Task]] = {}
        from django.conf import settings

        from control.auth.tokenfile import bearer, spoke_token

        token = spoke_token(Path(config.given("KK_DATA_DIR", env) or settings.DATA_DIR), "supervisor")
        self._headers = {"User-Agent": "supervisor (kube-kitchen)", **bearer(token)}
        self._transport = transport
        # The static pods' part (`control.staticpods.runner`): flags from a spoke's manifest (None
        # holds it: its manifest cannot start), the file its output goes to, and each spoke's runs.
        self.static_flags: dict[str, tuple[str, ...] | None] = {}
        self.log_files: dict[str, Path] = {}
        self.runs: dict[str, SpokeRuns] = {}

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def http(self) -> httpx.AsyncClient:
        """The running session's client of the hub."""
        return _HTTP.get()

    @property
    def resource_version(self) -> str:
        return self.reflector.resource_version

    @resource_version.setter
    def resource_version(self, value: str) -> None:
        self.reflector.resource_version = value

    def _session(self, work: Callable[[], Awaitable[T]]) -> T | None:
        """Run `work` to its end on a new event loop in this thread, with an httpx client of the hub;
        None when `begin_stop` cancelled it."""
        async def main() -> T:
            task = asyncio.current_task()
            assert task is not None
            self._sessions[id(task)] = (asyncio.get_running_loop(), task)
            try:
                if self._stop.is_set():
                    raise asyncio.CancelledError
                async with httpx.AsyncClient(base_url=self.url, headers=self._headers, timeout=10,
                                             transport=self._transport) as http:
                    _HTTP.set(http)  # this session's (this task's context's) client
                    return await work()
            finally:
                self._sessions.pop(id(task), None)

        try:
            return asyncio.run(main())
        except asyncio.CancelledError:
            if self._stop.is_set():
                return None
            raise

    # --- desired state ---------------------------------------------------------------------

    def publish_desired(self, *, within: float = 60.0) -> None:
        """Every spoke starts as running: write that into the hub (create or replace).

        A hub that has only just come up may still be busy (429), briefly failing (5xx) or not
        accepting connections yet: those are retried with the back-off for `within` seconds; a
        refusal (any other 4xx) is final. Returns quietly once `stop` has begun."""
        self._session(lambda: self._publish(within))

    async def _publish(self, within: float) -> None:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NAME, "namespace": NAMESPACE},
                "data": {spoke_key(name): state for name, state in self.desired.items()}}
        deadline = self.clock.monotonic() + within
        while not self._stop.is_set():
            try:
                answer = await self.http.put(f"{PATH}/{NAME}", json=body)
                if answer.status_code == 404:
                    answer = await self.http.post(PATH, json=body)
                why = f"{answer.status_code}: {answer.text[:300]}"
                if answer.status_code < 300:
                    self.backoff.reset()
                    return
                if answer.status_code != 429 and answer.status_code < 500:
                    raise RuntimeError(f"cannot publish the spokes' desired states: {why}")
            except httpx.HTTPError as exc:
                why = repr(exc)
            if self.clock.monotonic() >= deadline:
                raise RuntimeError(f"cannot publish the spokes' desired states within {within:.0f} s: {why}")
            await self._back_off(f"publishing the desired states failed ({why})")

    def watch_forever(self) -> None:
        """Follow the ConfigMap until `stop`; reconcile on every change."""
        self._session(self._follow)

    async def _follow(self) -> None:
        while not self._stop.is_set():
            try:
                await self.reflector.run_once()
            except Exception:  # noqa: BLE001 - the keeper of the spokes must not die of one bad answer
                log.exception("supervisor: unexpected failure following the hub")
                await self._back_off("an unexpected failure")

    def run_once(self) -> None:
        """One round of the reflector: list-or-resume plus one watch stream (or a back-off)."""
        self._session(self.reflector.run_once)

    async def _back_off(self, why: str) -> None:
        delay = self.backoff.next()
        log.info("supervisor: %s; again in %.1f s", why, delay)
        await self.clock.sleep(delay)

    # --- the reflector's sink ----------------------------------------------------------------

    def replace(self, listing: Listing) -> None:
        for item in listing.items:
            self.reconcile(item.get("data") or {})

    def apply(self, event: dict[str, Any]) -> None:
        if event.get("type") in ("ADDED", "MODIFIED"):
            self.reconcile((event.get("object") or {}).get("data") or {})

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
            for name in exited:
                self._ended(name, self.processes[name].returncode)
            self._converge()
        return exited

    def set_static(self, name: str, flags: tuple[str, ...] | None) -> None:
        """The manifest of spoke `name` now says: run with `flags`, or (None) nothing can start.
        A change of flags restarts the process, as the kubelet replaces a static pod whose file changed."""
        with self._lock:
            if name in self.static_flags and self.static_flags[name] == flags:
                return
            self.static_flags[name] = flags
            process = self.processes.get(name)
            if process is not None and process.poll() is None:
                _terminate(process)
                self.retired.append(self.processes.pop(name))
                self._ended(name, None)
            self.started_at.pop(name, None)  # the new manifest starts at once
            self._converge()

    def runs_of(self, name: str) -> SpokeRuns:
        """What is known of spoke `name`'s runs (a copy), its process checked first."""
        with self._lock:
            process = self.processes.get(name)
            if process is not None and process.poll() is not None:
                self._ended(name, process.returncode)
            runs = self.runs.get(name) or SpokeRuns()
            return SpokeRuns(runs.starts, runs.started_wall, runs.running, runs.exit_code, runs.finished_wall,
                             runs.previous_started_wall)

    def _ended(self, name: str, code: int | None) -> None:
        runs = self.runs.setdefault(name, SpokeRuns())
        if runs.running:
            runs.running, runs.exit_code, runs.finished_wall = False, code, self.clock.now()

    def _start(self, name: str, args: list[str]) -> subprocess.Popen:
        flags = self.static_flags.get(name) or ()
        command = [*self.command, *args, *(f"--component-flag={flag}" for flag in flags)]
        log_file = self.log_files.get(name)
        if log_file is None:
            process = self.popen(command, env=self.env)
        else:  # a static pod's output is its container log, the last run's kept as the previous one
            log_file.parent.mkdir(parents=True, exist_ok=True)
            if log_file.exists():
                log_file.replace(log_file.with_suffix(".previous"))
            with log_file.open("ab") as out:
                process = self.popen(command, env={**self.env, "KK_LOG_VERBOSE": "1"}, stdout=out,
                                     stderr=subprocess.STDOUT)
        runs = self.runs.setdefault(name, SpokeRuns())
        runs.previous_started_wall = runs.started_wall
        runs.starts, runs.started_wall, runs.running = runs.starts + 1, self.clock.now(), True
        return process

    def _converge(self) -> None:
        if self._stop.is_set():
            return  # stopping: a spoke that exits now exits for good
        now = self.clock.monotonic()
        for name, args in self.spokes.items():
            process = self.processes.get(name)
            alive = process is not None and process.poll() is None
            held = name in self.static_flags and self.static_flags[name] is None
            if self.desired[name] == "running" and not held and not alive:
                if process is not None:
                    self._ended(name, process.returncode)
                if process is None or now - self.started_at.get(name, 0) >= self.restart_after:
                    self.processes[name] = self._start(name, args)
                    self.started_at[name] = now
            elif (self.desired[name] == "stopped" or held) and alive:
                _terminate(process)
                self.retired.append(self.processes.pop(name))
                self._ended(name, None)

    def begin_stop(self) -> None:
        """From now on nothing is started, and the async work (publishing, following) is cancelled
        (safe to call from a signal handler, or from any thread: it takes no lock)."""
        self._stop.set()
        for loop, task in list(self._sessions.values()):
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # that loop has just closed: nothing left to cancel
                pass

    def stop(self, *, also: Sequence[subprocess.Popen] = (), grace: float = STOP_GRACE) -> None:
        """Stop following the hub and terminate every spoke, and the processes `also` (the hub),
        all at once; from here on nothing is started."""
        self.begin_stop()
        with self._lock:
            terminate_together([*self.processes.values(), *self.retired, *also], grace)


@dataclass
class SpokeRuns:
    """A spoke's runs: how many starts, the current (or last) one's wall-clock start, whether it
    runs, and how the last run ended (exit code None: stopped on purpose)."""

    starts: int = 0
    started_wall: float | None = None
    running: bool = False
    exit_code: int | None = None
    finished_wall: float | None = None
    previous_started_wall: float | None = None


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
