"""One pod as the kubelet runs it: its containers, its IP, and the pure step from now to next.

Guarantees: `step_pod(pod, record, now, ...)` is pure: it advances every container to `now`
(see `containers`; `holds` puts containers that cannot start yet on hold, or lets them go),
stops them all once the pod carries a deletionTimestamp, and says when to look again (`wake`)
and whether the final delete is due (`delete_due`: the stop has taken
min(deletionGracePeriodSeconds, termination_seconds)). `pod_phase` derives the phase from the
containers alone: Pending while one is still being created, Succeeded/Failed when all have ended
for good (all exit 0 -> Succeeded), Running otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from control.kubelet.behaviour import Script, script_for
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import (Container, Happening, advance, gate, is_ready, new_container, next_wake,
                                       stop)

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

    def container(self, name: str) -> Container | None:
        return next((c for c in self.containers if c.name == name), None)

    @property
    def sandbox_ready(self) -> bool:
        return any(c.last_run is not None for c in self.containers)


@dataclass(frozen=True)
class PodStep:
    record: PodRecord
    happenings: tuple[Happening, ...]
    wake: float | None  # when to look again; None: nothing will change by itself
    delete_due: bool


def restart_policy(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("restartPolicy") or "Always"


def scripts_of(pod: Obj) -> dict[str, Script]:
    return {c.get("name", ""): script_for(pod, c) for c in (pod.get("spec") or {}).get("containers") or []}


def new_record(pod: Obj, now: float, *, host_ip: str, pod_ip: str, default_start_delay: float) -> PodRecord:
    meta = pod.get("metadata") or {}
    scripts = scripts_of(pod)
    containers = []
    for spec in (pod.get("spec") or {}).get("containers") or []:
        script = scripts[spec.get("name", "")]
        delay = default_start_delay if script.start_delay is None else script.start_delay
        containers.append(new_container(spec.get("name", ""), spec.get("image", ""), meta.get("uid", ""), now, delay))
    return PodRecord(key=f"{meta.get('namespace')}/{meta.get('name')}", uid=meta.get("uid", ""), started_at=now,
                     host_ip=host_ip, pod_ip=pod_ip, containers=tuple(containers))


def stop_seconds(pod: Obj, termination_seconds: float) -> float:
    grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds") or 0
    return max(0.0, min(float(grace), termination_seconds))


def step_pod(pod: Obj, record: PodRecord, now: float, *, backoff: BackoffPolicy,
             termination_seconds: float, holds: dict[str, tuple[str, str]] | None = None) -> PodStep:
    scripts = scripts_of(pod)
    policy = restart_policy(pod)
    deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    stopping_since = record.stopping_since
    if deleting and stopping_since is None:
        stopping_since = now
    containers, happenings = [], []
    for container in record.containers:
        script = scripts.get(container.name, Script())
        if holds is not None:
            container = gate(container, holds.get(container.name), now)
        container, happened = advance(container, script, policy, now, backoff)
        happenings += happened
        if deleting:
            container, happened = stop(container, now)
            happenings += happened
        containers.append(container)
    record = replace(record, containers=tuple(containers), stopping_since=stopping_since)
    if stopping_since is not None:
        delete_at = stopping_since + stop_seconds(pod, termination_seconds)
        return PodStep(record, tuple(happenings), delete_at, delete_due=now >= delete_at)
    wakes = [w for c in containers if (w := next_wake(c, scripts.get(c.name, Script()), now)) is not None]
    return PodStep(record, tuple(happenings), min(wakes) if wakes else None, delete_due=False)


def pod_phase(record: PodRecord) -> str:
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
    scripts = scripts_of(pod)
    return {c.name: is_ready(c, scripts.get(c.name, Script()), now) for c in record.containers}
