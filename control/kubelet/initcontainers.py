"""Init containers, as the kubelet runs them (kuberuntime_container.go, computeInitContainerActions):
one at a time, in order, each to successful completion, before any app container is created.

Guarantees (all pure):
- `step_init` advances the init containers to `now`: the first runs from the pod's start; each
  next one is created the moment the one before it completed (exit 0); a failed one restarts as
  the pod's restartPolicy says, read as upstream does (Always and OnFailure: restart on failure,
  with the crash-loop back-off; Never: the pod fails and nothing more starts).
- A sidecar (an init container with `restartPolicy: Always`) counts as done once it has started,
  and then keeps running (restarted whenever it ends), beside the app containers.
- `initialized_at` is the moment the last init container completed (or the pod's start when it
  has none); None while initialization is still under way or has failed for good.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from control.kubelet.behaviour import Script
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import Container, Happening, advance, gate

Obj = dict[str, Any]


def init_specs(pod: Obj) -> list[Obj]:
    return [c for c in (pod.get("spec") or {}).get("initContainers") or [] if isinstance(c, dict)]


def sidecars(pod: Obj) -> set[str]:
    """Names of the restartable init containers (the sidecars)."""
    return {c.get("name", "") for c in init_specs(pod) if c.get("restartPolicy") == "Always"}


def init_policy(pod_policy: str, sidecar: bool) -> str:
    """An init container restarts on failure unless the pod's policy is Never; a sidecar always."""
    if sidecar:
        return "Always"
    return "Never" if pod_policy == "Never" else "OnFailure"


def completed(c: Container) -> bool:
    run = c.last_run
    return c.finished and run is not None and not run.running and run.exit_code == 0 and not run.stopped


def failed(c: Container) -> bool:
    """Ended for good with an error (restartPolicy Never): the pod fails."""
    run = c.last_run
    return c.finished and run is not None and not run.running and run.exit_code != 0 and not run.stopped


@dataclass(frozen=True)
class InitStep:
    containers: tuple[Container, ...]
    happenings: tuple[Happening, ...]
    active: tuple[str, ...]  # the init containers whose turn has come (their wakes count)
    initialized_at: float | None


def step_init(inits: tuple[Container, ...], scripts: dict[str, Script], policy: str, now: float, *,
              backoff: BackoffPolicy, started_at: float, sidecar_names: set[str],
              holds: dict[str, tuple[str, str]] | None = None) -> InitStep:
    out: list[Container] = []
    happenings: list[Happening] = []
    active: list[str] = []
    ready_at: float | None = started_at  # when the one before finished (None: not yet)
    for c in inits:
        if ready_at is None:  # not its turn yet
            out.append(c)
            continue
        if c.last_run is None and c.state == "creating" and c.created_at < ready_at:
            c = replace(c, created_at=ready_at)  # created the moment the one before completed
        if holds is not None:
            c = gate(c, holds.get(c.name), now)
        sidecar = c.name in sidecar_names
        c, happened = advance(c, scripts.get(c.name, Script()), init_policy(policy, sidecar), now, backoff)
        happenings += happened
        active.append(c.name)
        out.append(c)
        if sidecar and c.last_run is not None:
            ready_at = max(ready_at, c.last_run.started_at)
        elif completed(c) and c.last_run is not None:
            ready_at = max(ready_at, c.last_run.finished_at or ready_at)
        else:
            ready_at = None
    return InitStep(tuple(out), tuple(happenings), tuple(active), ready_at)


def init_failed(inits: tuple[Container, ...], sidecar_names: set[str]) -> bool:
    return any(failed(c) for c in inits if c.name not in sidecar_names)
