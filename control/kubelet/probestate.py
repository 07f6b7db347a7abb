"""The prober's bookkeeping, pure (upstream pkg/kubelet/prober/worker.go): when each probe of each
running container is due, and what its results amount to.

Guarantees:
- A probe of a run is first due `initialDelaySeconds` after the run started, then every
  `periodSeconds`; a new run starts with fresh results (readiness: not ready; startup: not
  started; liveness: healthy).
- `record_result` is the worker's threshold rule: the effective result changes only after
  `failureThreshold` failures or `successThreshold` successes in a row; a failed liveness or
  startup probe stops probing that run (it is killed), as does a succeeded startup probe.
- While a startup probe has not succeeded, liveness and readiness are not run (they keep their
  schedule) and the container is neither started nor ready.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from control.kubelet.containers import Container, Run

Obj = dict[str, Any]
KINDS = ("startup", "liveness", "readiness")  # probed in this order at one moment
FIELDS = {"startup": "startupProbe", "liveness": "livenessProbe", "readiness": "readinessProbe"}


def _number(probe: Obj, key: str, default: int, low: int) -> int:
    value = probe.get(key)
    return max(low, value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


@dataclass(frozen=True)
class Settings:
    initial_delay: int = 0
    period: int = 10
    timeout: int = 1
    success_threshold: int = 1
    failure_threshold: int = 3

    @classmethod
    def of(cls, probe: Obj) -> "Settings":
        delay = probe.get("initialDelaySeconds")
        return cls(initial_delay=delay if isinstance(delay, int) and delay > 0 else 0,
                   period=_number(probe, "periodSeconds", 10, 1), timeout=_number(probe, "timeoutSeconds", 1, 1),
                   success_threshold=_number(probe, "successThreshold", 1, 1),
                   failure_threshold=_number(probe, "failureThreshold", 3, 1))


@dataclass(frozen=True)
class ProbeState:
    container: str
    kind: str  # startup | liveness | readiness
    run: int  # the run number these results belong to
    next_at: float
    last: str = ""  # the last probe's outcome: success | failure
    streak: int = 0  # how many times in a row it came out so
    result: str = ""  # the effective result: "" (none yet) | success | failure
    done: bool = False  # no more probing of this run


def probe_of(spec: Obj, kind: str) -> Obj | None:
    probe = spec.get(FIELDS[kind])
    return probe if isinstance(probe, dict) and probe else None


def fresh(container: str, kind: str, run: Run, settings: Settings) -> ProbeState:
    return ProbeState(container, kind, run.number, run.started_at + settings.initial_delay)


def state_of(states: tuple[ProbeState, ...], container: str, kind: str, run: int) -> ProbeState | None:
    return next((s for s in states if s.container == container and s.kind == kind and s.run == run), None)


def current_state(states: tuple[ProbeState, ...], spec: Obj, c: Container, kind: str) -> ProbeState | None:
    """The results of a probe for the container's running run (fresh if none yet); None without probe."""
    probe, run = probe_of(spec, kind), c.current
    if probe is None or run is None or not run.running:
        return None
    return state_of(states, c.name, kind, run.number) or fresh(c.name, kind, run, Settings.of(probe))


def has_started(spec: Obj, c: Container, states: tuple[ProbeState, ...]) -> bool:
    """containerStatus.started: running, and its startup probe (if any) has succeeded."""
    if c.current is None or not c.current.running:
        return False
    startup = current_state(states, spec, c, "startup")
    return startup is None or startup.result == "success"


def probe_ready(spec: Obj, c: Container, states: tuple[ProbeState, ...]) -> bool:
    """What the probes say of readiness (True for a container without readiness or startup probe)."""
    if not has_started(spec, c, states):
        return False
    readiness = current_state(states, spec, c, "readiness")
    return readiness is None or readiness.result == "success"


def record_result(state: ProbeState, ok: bool, settings: Settings, at: float) -> ProbeState:
    outcome = "success" if ok else "failure"
    streak = state.streak + 1 if state.last == outcome else 1
    threshold = settings.success_threshold if ok else settings.failure_threshold
    result = outcome if streak >= threshold else state.result
    done = (state.kind != "readiness" and result == "failure") or (state.kind == "startup" and result == "success")
    return replace(state, next_at=at + settings.period, last=outcome, streak=streak, result=result, done=done)


def next_due(specs: dict[str, Obj], containers: tuple[Container, ...], states: tuple[ProbeState, ...]) -> float | None:
    """The earliest moment a probe of a running container is due."""
    moments = []
    for c in containers:
        for kind in KINDS:
            state = current_state(states, specs.get(c.name) or {}, c, kind)
            if state is not None and not state.done:
                moments.append(state.next_at)
    return min(moments) if moments else None


def put(states: tuple[ProbeState, ...], state: ProbeState, live_runs: dict[str, int]) -> tuple[ProbeState, ...]:
    """`states` with `state` in its place, keeping only results of the containers' current runs."""
    kept = [s for s in states if live_runs.get(s.container) == s.run
            and not (s.container == state.container and s.kind == state.kind)]
    return tuple(kept + [state])
