"""One pod as the kubelet runs it: its containers, its IP, and the pure step from now to next.

Guarantees: `step_pod(pod, record, now, ...)` is pure: it advances every container to `now`
(see `containers`; `holds` puts containers that cannot start yet on hold, or lets them go),
and says when to look again (`wake`). Once the pod carries a deletionTimestamp nothing starts
again; its running containers are told to stop (a `stopping` happening: Killing, preStop) and
run on until they end by themselves or have taken min(deletionGracePeriodSeconds,
termination_seconds) to handle SIGTERM (then `stopped`, exit 0); the final delete is due
(`delete_due`) once none runs. Init containers run first, one at a time
(`initcontainers`); app containers are created once they have all completed. `pod_phase` derives
the phase from the containers alone: Failed when an init container failed for good, Pending while
one is still being created (or initializing), Succeeded/Failed when all have ended for good (all
exit 0 -> Succeeded), Running otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from control.kubelet.behaviour import Script, script_for
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import (Container, Happening, advance, gate, is_ready, new_container, next_wake,
                                       stop)
from control.kubelet.initcontainers import init_failed, init_specs, sidecars, step_init
from control.kubelet.probestate import ProbeState, probe_ready

Obj = dict[str, Any]


@dataclass(frozen=True)
class PodRecord:
    key: str  # "namespace/name"
    uid: str
    started_at: float  # status.startTime: when this kubelet took the pod on
    host_ip: str
    pod_ip: str  # reserved at admission, published once the sandbox is up
    containers: tuple[Container, ...]
    stopping_since: float | None = None
    init_containers: tuple[Container, ...] = ()  # run in order before `containers` (`initcontainers`)
    probes: tuple[ProbeState, ...] = ()  # the prober's results, by container and probe (`probes`)

    def container(self, name: str) -> Container | None:
        return next((c for c in self.containers + self.init_containers if c.name == name), None)

    @property
    def sandbox_ready(self) -> bool:
        return any(c.last_run is not None for c in self.containers + self.init_containers)


@dataclass(frozen=True)
class PodStep:
    record: PodRecord
    happenings: tuple[Happening, ...]
    wake: float | None  # when to look again; None: nothing will change by itself
    delete_due: bool


def restart_policy(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("restartPolicy") or "Always"


def scripts_of(pod: Obj) -> dict[str, Script]:
    spec = pod.get("spec") or {}
    return {c.get("name", ""): script_for(pod, c) for c in (spec.get("initContainers") or []) +
            (spec.get("containers") or []) if isinstance(c, dict)}


def new_record(pod: Obj, now: float, *, host_ip: str, pod_ip: str, default_start_delay: float) -> PodRecord:
    meta = pod.get("metadata") or {}
    scripts = scripts_of(pod)

    def made(specs: list[Obj]) -> tuple[Container, ...]:
        out = []
        for spec in specs:
            script = scripts.get(spec.get("name", ""), Script())
            delay = default_start_delay if script.start_delay is None else script.start_delay
            out.append(new_container(spec.get("name", ""), spec.get("image", ""), meta.get("uid", ""), now, delay))
        return tuple(out)

    return PodRecord(key=f"{meta.get('namespace')}/{meta.get('name')}", uid=meta.get("uid", ""), started_at=now,
                     host_ip=host_ip, pod_ip=pod_ip, containers=made((pod.get("spec") or {}).get("containers") or []),
                     init_containers=made(init_specs(pod)))


def stop_seconds(pod: Obj, termination_seconds: float) -> float:
    grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds") or 0
    return max(0.0, min(float(grace), termination_seconds))


def step_pod(pod: Obj, record: PodRecord, now: float, *, backoff: BackoffPolicy,
             termination_seconds: float, holds: dict[str, tuple[str, str]] | None = None) -> PodStep:
    scripts = scripts_of(pod)
    if record.stopping_since is not None or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return _step_stopping(pod, record, now, scripts, backoff, termination_seconds)
    policy = restart_policy(pod)
    init = step_init(record.init_containers, scripts, policy, now, backoff=backoff, started_at=record.started_at,
                     sidecar_names=sidecars(pod), holds=holds)
    containers, happenings = [], list(init.happenings)
    for container in record.containers:
        if init.initialized_at is None:  # app containers wait for the init containers
            containers.append(container)
            continue
        if container.last_run is None and container.state == "creating" and container.created_at < init.initialized_at:
            container = replace(container, created_at=init.initialized_at)
        script = scripts.get(container.name, Script())
        if holds is not None:
            container = gate(container, holds.get(container.name), now)
        container, happened = advance(container, script, policy, now, backoff)
        happenings += happened
        containers.append(container)
    inits = init.containers
    record = replace(record, containers=tuple(containers), init_containers=inits)
    running = [c for c in inits if c.name in init.active]
    running += containers if init.initialized_at is not None else []
    wakes = [w for c in running if (w := next_wake(c, scripts.get(c.name, Script()), now)) is not None]
    return PodStep(record, tuple(happenings), min(wakes) if wakes else None, delete_due=False)


def _step_stopping(pod: Obj, record: PodRecord, now: float, scripts: dict[str, Script], backoff: BackoffPolicy,
                   termination_seconds: float) -> PodStep:
    """A pod being deleted, as the kubelet kills it: from the first look at its deletionTimestamp,
    nothing starts or restarts; each running container is told to stop (Killing, its preStop hook)
    and goes on running (exec, logs) until its process has handled SIGTERM, `stop_seconds` later,
    or ends before by itself; once none runs, the final delete is due."""
    first = record.stopping_since is None
    since = now if first else record.stopping_since
    assert since is not None
    stop_at = since + stop_seconds(pod, termination_seconds)
    happenings: list[Happening] = []

    def stopping(container: Container) -> Container:
        if container.state == "running":  # its own end may come first (not restarted any more)
            container, happened = advance(container, scripts.get(container.name, Script()), "Never",
                                          min(now, stop_at), backoff)
            happenings.extend(happened)
        if container.state != "running" or container.current is None:
            return stop(container, now)[0]  # it never starts again
        if first:
            happenings.append(Happening("stopping", container.name, since, run=container.current.number))
        if now >= stop_at:
            container, happened = stop(container, stop_at)
            happenings.extend(happened)
        return container

    containers = tuple(stopping(c) for c in record.containers)
    inits = tuple(stopping(c) for c in record.init_containers)
    record = replace(record, containers=containers, init_containers=inits, stopping_since=since)
    left = [c for c in containers + inits if c.state == "running"]
    if not left:
        return PodStep(record, tuple(happenings), now, delete_due=True)
    exits = [w for c in left if (w := next_wake(c, scripts.get(c.name, Script()), now)) is not None]
    return PodStep(record, tuple(happenings), min([stop_at, *exits]), delete_due=False)


def pod_phase(record: PodRecord, sidecar_names: set[str] | None = None) -> str:
    if init_failed(record.init_containers, sidecar_names or set()):
        return "Failed"  # an init container failed under restartPolicy Never
    states = [c.state for c in record.containers]
    if any(s == "creating" for s in states) or not states:
        return "Pending"
    if all(s in ("terminated", "stopped") for s in states):
        runs = [c.last_run for c in record.containers]
        if any(run is None for run in runs):
            return "Pending" if all(run is None for run in runs) else "Failed"
        return "Succeeded" if all(run.exit_code == 0 for run in runs if run) else "Failed"
    return "Running"


def readiness(pod: Obj, record: PodRecord, now: float) -> dict[str, bool]:
    """Each app container's readiness: its script's, and its probes' when it has any (`probes`)."""
    scripts = scripts_of(pod)
    specs = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)}
    return {c.name: is_ready(c, scripts.get(c.name, Script()), now) and probe_ready(specs.get(c.name) or {}, c,
                                                                                     record.probes)
            for c in record.containers}
