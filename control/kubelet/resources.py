"""A container's resources as the kubelet enforces them on the simulated runtime: memory above the
limit is OOMKilled (exit 137), CPU above the limit is throttled, and `stress` (in the command, or
run by exec) sets what a container uses.

The model (documented for the workshop):
- A container's memory use is the usage model's working set (16Mi + traffic) plus its `stress`
  (`--vm N --vm-bytes SIZE`: N x SIZE, SIZE in stress's b/k/m/g, 1024-based; 256M by default)
  plus the `kubekitchen.dev/memory` annotation ("200Mi"), plus what a `stress` run by exec holds.
- Its CPU is the usage model's plus `stress --cpu N` (or vish/stress's `-cpus N`): N cores; the
  total is throttled at `limits.cpu` (what `kubectl top` and the HPA see).

Guarantees:
- `limit_script(script, pod, container)` is pure: a container whose command's memory use is above
  its `limits.memory` exits `OOM_SECONDS` after each start with 137, reason OOMKilled, and is
  restarted as the pod's restartPolicy says (CrashLoopBackOff).
- What a `stress` run by exec holds is kept and enforced by `loads`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from control.kinds.quantity import parse_quantity
from control.userland.stress import Stress, parse_stress

if TYPE_CHECKING:  # behaviour imports this module: only the type, not the module, here
    from control.kubelet.behaviour import Script

Obj = dict[str, Any]
OOM_SECONDS = 1.0  # how long a container whose command is over its limit lives
OOM_EXIT_CODE = 137  # 128 + SIGKILL
BASE_MEMORY = 16 * 2**20  # the usage model's idle working set (see `usage`)
_SEPARATORS = {";", "&&", "||", "|", "&"}


def command_stress(container: Obj) -> Stress:
    """What the `stress` in a container's command (and args) uses."""
    words = [str(w) for w in (container.get("command") or []) + (container.get("args") or [])]
    image = str(container.get("image") or "").split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    expanded: list[str] = []
    for word in words:
        try:
            spaced = re.sub(r"(;|&&|\|\|)", r" \1 ", word)  # `stress ...; sleep 1`: the `;` is not its option
            expanded += shlex.split(spaced) if " " in spaced else [word]
        except ValueError:
            expanded.append(word)
    starts = [i for i, w in enumerate(expanded) if w.rsplit("/", 1)[-1] == "stress"]
    if not starts and image == "stress" and expanded:  # the image's entrypoint is stress: args are its options
        starts = [-1]
    if not starts:
        return Stress()
    rest = expanded[starts[0] + 1:]
    end = next((i for i, w in enumerate(rest) if w in _SEPARATORS), len(rest))
    return parse_stress(rest[:end])


def _amount(value: Any) -> float | None:
    try:
        return parse_quantity(value) if value is not None else None
    except ValueError:
        return None


def limits_of(container: Obj) -> tuple[float | None, float | None]:
    """(cpu limit in millicores, memory limit in bytes) of a container; None when unlimited."""
    limits = ((container.get("resources") or {}).get("limits") or {}) if isinstance(container, dict) else {}
    cpu, memory = _amount(limits.get("cpu")), _amount(limits.get("memory"))
    return (cpu * 1000 if cpu else None), (memory if memory else None)


def limit_script(script: "Script", memory_knob: float, container: Obj, oom: bool = True) -> "Script":
    """The script with the container's resources: stress use, limits, and (unless a knob already
    decides how it exits: `oom` False) OOMKilled when its use is over its memory limit."""
    stress = command_stress(container)
    cpu_limit, memory_limit = limits_of(container)
    memory = stress.memory + memory_knob
    limited = replace(script, memory=memory, cpu=script.cpu + stress.cpu, cpu_limit=cpu_limit,
                      memory_limit=memory_limit)
    if oom and memory_limit is not None and BASE_MEMORY + memory > memory_limit:
        return replace(limited, exit_after=OOM_SECONDS, exit_code=OOM_EXIT_CODE, oom=True)
    return limited


def over_limit(script: "Script", extra_memory: float) -> bool:
    """Whether a container with this script and `extra_memory` more in use is over its limit."""
    return script.memory_limit is not None and BASE_MEMORY + script.memory + extra_memory > script.memory_limit
