"""The simulated container runtime's state machine: pure functions of (container, script, now).

A container is ContainerCreating until its start delay has passed, then Running. A run that ends
(its script says when) is restarted or not as the pod's restartPolicy says (Always: always;
OnFailure: on a non-zero exit; Never: never). Every restart waits out a back-off first
(CrashLoopBackOff): base, doubling up to the cap, back to base after a run that lasted
`reset_after` (10 min). A stop (the pod is being deleted) ends a run with exit code 0 (Completed)
and prevents any further start. A container on `hold` (its volumes are not set up, or its config
cannot be made: CreateContainerConfigError) does not start until the hold is lifted (`gate`); it
then starts at that moment, not at the moment it was first due.

Guarantees: `advance` is deterministic and idempotent: it applies every transition due at `now`
(time stamps are the moments things were due, not the moment we looked), so calling it twice,
or late, gives the same result; `next_wake` is the earliest moment anything will change, or None.
Records are frozen: every step returns a new one. Container IDs derive from the pod's uid, the
container's name and the run number, so they are stable across retries.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from control.kubelet.behaviour import Script
from control.kubelet.config import BackoffPolicy

MAX_STEPS = 10_000


@dataclass(frozen=True)
class Run:
    """One run of a container (Kubernetes creates a new container for each restart)."""

    number: int  # 0 for the first run; equals the restartCount it ran under
    container_id: str
    started_at: float
    finished_at: float | None = None
    exit_code: int | None = None
    stopped: bool = False  # ended by the kubelet (pod deletion) rather than on its own
    message: str = ""  # the termination message (terminationMessagePath), read when it ended
    oom_killed: bool = False  # ended by the OOM killer (over its memory limit: `resources`)

    @property
    def running(self) -> bool:
        return self.finished_at is None

    @property
    def reason(self) -> str:
        if self.oom_killed:
            return "OOMKilled"
        return "Completed" if self.exit_code == 0 else "Error"


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    seed: str  # "<pod uid>/<container name>": container IDs derive from it
    created_at: float
    start_delay: float
    current: Run | None = None
    previous: Run | None = None
    restart_count: int = 0
    backoff: float = 0.0  # the last back-off delay, 0 before the first
    restart_at: float | None = None  # set while waiting out a back-off
    finished: bool = False  # no run will start again
    hold: tuple[str, str] | None = None  # (waiting reason, message) that keeps it from starting

    @property
    def state(self) -> str:
        """creating | backoff | running | terminated | stopped (stopped before it ever ran again)."""
        if self.restart_at is not None:
            return "backoff"
        if self.current is not None:
            return "running" if self.current.running else "terminated"
        return "stopped" if self.finished else "creating"

    @property
    def last_run(self) -> Run | None:
        return self.current or self.previous


@dataclass(frozen=True)
class Happening:
    """Something the kubelet tells the world about (an Event): started, exited, backoff,
    unready, stopping (the pod's deletion asks the run to stop), stopped (it has)."""

    kind: str
    container: str
    at: float
    run: int = 0
    detail: float = 0.0  # exit code (exited) or delay in seconds (backoff)
    message: str = ""  # the Event's words, for happenings that carry them (probes, hooks)


def container_id(seed: str, number: int) -> str:
    return hashlib.sha256(f"{seed}#{number}".encode()).hexdigest()


def new_container(name: str, image: str, pod_uid: str, created_at: float, start_delay: float) -> Container:
    return Container(name=name, image=image, seed=f"{pod_uid}/{name}", created_at=created_at,
                     start_delay=max(0.0, start_delay))


def restarts(policy: str, exit_code: int) -> bool:
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def _start(c: Container, number: int, at: float, script: Script) -> tuple[Container, list[Happening]]:
    run = Run(number=number, container_id=container_id(c.seed, number), started_at=at)
    started = replace(c, current=run, restart_count=number, restart_at=None, hold=None)
    happenings = [Happening("started", c.name, at, run=number)]
    if script.never_ready:
        happenings.append(Happening("unready", c.name, at, run=number))
    return started, happenings


def _exit(c: Container, run: Run, script: Script, policy: str,
          backoff: BackoffPolicy) -> tuple[Container, list[Happening]]:
    assert script.exit_after is not None
    return _end(c, run, run.started_at + script.exit_after, script.exit_code, policy, backoff,
                oom=script.oom)


def _end(c: Container, run: Run, end: float, code: int, policy: str,
         backoff: BackoffPolicy, oom: bool = False) -> tuple[Container, list[Happening]]:
    ended = replace(run, finished_at=end, exit_code=code, oom_killed=oom)
    happenings = [Happening("exited", c.name, end, run=run.number, detail=code)]
    if not restarts(policy, code):
        return replace(c, current=ended, finished=True), happenings
    delay = backoff.next_delay(c.backoff, ran_for=end - run.started_at)
    happenings.append(Happening("backoff", c.name, end, run=run.number, detail=delay))
    return replace(c, current=None, previous=ended, backoff=delay, restart_at=end + delay), happenings


def kill(c: Container, at: float, policy: str, backoff: BackoffPolicy,
         exit_code: int = 137, oom: bool = False) -> tuple[Container, list[Happening]]:
    """The kubelet kills the running run at `at` (a failed liveness or startup probe, a failed
    postStart hook, the OOM killer: `oom`): it ends with `exit_code` (137: SIGKILL) and restarts
    as the policy says."""
    if c.current is None or not c.current.running or at < c.current.started_at:
        return c, []
    return _end(c, c.current, at, exit_code, policy, backoff, oom=oom)


def gate(c: Container, hold: tuple[str, str] | None, now: float) -> Container:
    """Put a container that has not started (or restarted) yet on hold, or lift its hold: a lifted
    hold lets it start now if its start was already due."""
    if hold == c.hold or c.state not in ("creating", "backoff"):
        return c
    if hold is not None:
        return replace(c, hold=hold)
    if c.state == "creating" and c.created_at + c.start_delay < now:
        return replace(c, hold=None, created_at=now, start_delay=0.0)
    if c.state == "backoff" and c.restart_at is not None and c.restart_at < now:
        return replace(c, hold=None, restart_at=now)
    return replace(c, hold=None)


def start_due(c: Container, now: float) -> bool:
    """Whether the container's next run is due to start at `now` (held or not)."""
    if c.state == "creating":
        return now >= c.created_at + c.start_delay
    return c.state == "backoff" and c.restart_at is not None and now >= c.restart_at


def next_run_id(c: Container) -> str:
    """The ID the container's next run will have (its config is made for that run)."""
    return container_id(c.seed, 0 if c.last_run is None else c.restart_count + 1)


def _transition(c: Container, script: Script, policy: str, now: float,
                backoff: BackoffPolicy) -> tuple[Container, list[Happening]] | None:
    state = c.state
    if c.hold is not None and state in ("creating", "backoff"):
        return None
    if state == "creating" and now >= c.created_at + c.start_delay:
        return _start(c, 0, c.created_at + c.start_delay, script)
    if state == "backoff" and c.restart_at is not None and now >= c.restart_at:
        return _start(c, c.restart_count + 1, c.restart_at, script)
    if state == "running" and c.current is not None and script.exit_after is not None \
            and now >= c.current.started_at + script.exit_after:
        return _exit(c, c.current, script, policy, backoff)
    return None


def advance(c: Container, script: Script, policy: str, now: float,
            backoff: BackoffPolicy) -> tuple[Container, list[Happening]]:
    """Apply every transition due at `now`; return the new container and what happened."""
    happenings: list[Happening] = []
    for _ in range(MAX_STEPS):
        step = _transition(c, script, policy, now, backoff)
        if step is None:
            break
        c, happened = step
        happenings += happened
    return c, happenings


def stop(c: Container, now: float) -> tuple[Container, list[Happening]]:
    """The pod is going away: end the running run (exit 0) and never start again."""
    if c.finished:
        return c, []
    if c.current is not None and c.current.running:
        ended = replace(c.current, finished_at=now, exit_code=0, stopped=True)
        return replace(c, current=ended, finished=True), [Happening("stopped", c.name, now, run=ended.number)]
    return replace(c, restart_at=None, finished=True), []


def is_ready(c: Container, script: Script, now: float) -> bool:
    run = c.current
    if run is None or not run.running or script.never_ready or script.unready:
        return False
    return now >= run.started_at + script.ready_after


def next_wake(c: Container, script: Script, now: float) -> float | None:
    """The earliest moment after `now` at which this container's state or readiness changes."""
    state = c.state
    if c.hold is not None and state in ("creating", "backoff"):
        return None  # the kubelet retries at its next sync
    if state == "creating":
        return c.created_at + c.start_delay
    if state == "backoff":
        return c.restart_at
    if state != "running" or c.current is None:
        return None
    moments = []
    if script.exit_after is not None:
        moments.append(c.current.started_at + script.exit_after)
    ready_at = c.current.started_at + script.ready_after
    if not script.never_ready and not script.unready and ready_at > now:
        moments.append(ready_at)
    return min(moments) if moments else None


def go_duration(seconds: float) -> str:
    """Seconds as Go prints a time.Duration, as in kubelet messages: 10s, 1m20s, 5m0s."""
    whole = int(round(seconds))
    if whole < 60:
        return f"{seconds:g}s" if seconds != whole else f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes}m{secs}s"
