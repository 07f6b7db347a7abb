"""What `stress` processes run by exec hold in a container, the OOM killer that enforces the
memory limit against it (see `resources` for the model), and the signals exec'd `kill 1` sends to
the container's main process.

Guarantees: `Loads` keeps the held use per container run ID (a restart starts from nothing) and
pokes the pod's worker (`poke("namespace/name")`) whenever it changes; `enforce(pod, step, ...)`
OOM-kills (exit 137, reason OOMKilled, restarted as the restartPolicy says) every running container
whose use is now over its `limits.memory`, and forgets that run's load; a run that was signalled
(`signal`) ends with the signal's exit code (128 + N; reason Error) and restarts as the
restartPolicy says. Both are level-triggered: enforcing again at the same moment changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from control.kubelet.behaviour import Script
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import Container, kill, next_wake
from control.kubelet.podstate import PodStep
from control.kubelet.resources import OOM_EXIT_CODE, over_limit
from control.userland.stress import Stress

Obj = dict[str, Any]


@dataclass
class Load:
    memory: float = 0.0
    cpu: float = 0.0


@dataclass
class Loads:
    """What exec'd stress processes hold, by container run ID (several may run at once)."""

    by_run: dict[str, dict[int, Stress]] = field(default_factory=dict)
    signalled: dict[str, int] = field(default_factory=dict)  # run ID -> the exit code its main process ends with
    poke: Callable[[str], None] = lambda key: None  # wakes the pod's worker ("namespace/name")
    _next: int = 0

    def hold(self, run_id: str, key: str, stress: Stress) -> int:
        self._next += 1
        self.by_run.setdefault(run_id, {})[self._next] = stress
        self.poke(key)
        return self._next

    def release(self, run_id: str, key: str, token: int) -> None:
        held = self.by_run.get(run_id, {})
        if held.pop(token, None) is not None:
            if not held:
                self.by_run.pop(run_id, None)
            self.poke(key)

    def of(self, run_id: str) -> Load:
        held = self.by_run.get(run_id, {}).values()
        return Load(memory=sum(s.memory for s in held), cpu=sum(s.cpu for s in held))

    def with_loads(self, scripts: dict[str, Script], containers: tuple[Container, ...]) -> dict[str, Script]:
        """Scripts as they are now: each running container's exec'd stress added to its use."""
        out = dict(scripts)
        for c in containers:
            if c.current is not None and c.current.running and c.name in out:
                load = self.of(c.current.container_id)
                if load.memory or load.cpu:
                    out[c.name] = replace(out[c.name], memory=out[c.name].memory + load.memory,
                                          cpu=out[c.name].cpu + load.cpu)
        return out

    def signal(self, run_id: str, key: str, exit_code: int) -> None:
        """The run's main process got a fatal signal: the pod's worker ends the run (first one wins)."""
        self.signalled.setdefault(run_id, exit_code)
        self.poke(key)

    def forget(self, run_ids: set[str]) -> None:
        for run_id in run_ids:
            self.by_run.pop(run_id, None)
            self.signalled.pop(run_id, None)


def enforce(pod: Obj, step: PodStep, loads: Loads, scripts: dict[str, Script], now: float, policy: str,
            backoff: BackoffPolicy) -> PodStep:
    """OOM-kill every running container whose exec'd stress took it over its memory limit; end
    every running container whose main process was signalled."""
    containers, happenings, changed = [], list(step.happenings), False
    for c in step.record.containers:
        script = scripts.get(c.name)
        held = loads.of(c.current.container_id).memory if c.current is not None else 0.0
        signalled = loads.signalled.get(c.current.container_id) if c.current is not None else None
        if script is not None and c.state == "running" and held > 0 and over_limit(script, held):
            loads.forget({c.current.container_id})
            c, happened = kill(c, now, policy, backoff, OOM_EXIT_CODE, oom=True)
            happenings += happened
            changed = True
        elif c.state == "running" and signalled is not None:
            loads.forget({c.current.container_id})
            c, happened = kill(c, now, policy, backoff, signalled)
            happenings += happened
            changed = True
        containers.append(c)
    if not changed:
        return step
    record = replace(step.record, containers=tuple(containers))
    wakes = [w for c in containers if (w := next_wake(c, scripts[c.name], now) if c.name in scripts else None)]
    if step.wake is not None:
        wakes.append(step.wake)
    return replace(step, record=record, happenings=tuple(happenings), wake=min(wakes) if wakes else None)


@dataclass
class StressHandle:
    """What a `stress` run by exec in one container run reaches: its load and its limit."""

    loads: Loads
    run_id: str
    key: str  # "namespace/name" of the pod
    script: Script

    def hold(self, stress: Stress) -> int:
        return self.loads.hold(self.run_id, self.key, stress)

    def release(self, token: int) -> None:
        self.loads.release(self.run_id, self.key, token)

    def over_limit(self) -> bool:
        return over_limit(self.script, self.loads.of(self.run_id).memory)

    def signal_main(self, exit_code: int) -> None:
        """`kill 1`: the container's main process ends with `exit_code`."""
        self.loads.signal(self.run_id, self.key, exit_code)
