"""The simulated `stress` program (stress 1.0.4's options; vish/stress's `-cpus`): it makes the
container it runs in use memory and CPU, as lessons on limits use it.

Guarantees: `stress --vm N --vm-bytes SIZE` / `--cpu N` adds its use to the container's (through
the shell's `resources` handle, set by exec) for `--timeout N` seconds on the shell's clock, or
until interrupted (Ctrl-C); its use is released when it ends. A use that takes the container over
its memory limit is not released: the OOM killer takes the container (the exec ends with 137, the
container is OOMKilled). Without options it prints stress's usage and exits 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

FOREVER = 10.0**9
_STRESS_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([bkmgBKMG]?)$")
USAGE = ("`stress' imposes certain types of compute stress on your system\n\n"
         "Usage: stress [OPTION [ARG]] ...\n"
         " -t, --timeout N    timeout after N seconds\n"
         " -c, --cpu N        spawn N workers spinning on sqrt()\n"
         " -m, --vm N         spawn N workers spinning on malloc()/free()\n"
         "     --vm-bytes B   malloc B bytes per vm worker (default is 256MB)\n")



def stress_size(text: str) -> float | None:
    """A stress size (`250M`, `1g`, `4096`) in bytes; None when unreadable."""
    match = _SIZE.match(text.strip())
    return float(match.group(1)) * _STRESS_UNITS[match.group(2).lower()] if match else None


@dataclass(frozen=True)
class Stress:
    memory: float = 0.0  # bytes
    cpu: float = 0.0  # millicores
    timeout: float | None = None  # seconds (`-t N` / `--timeout N`)


def parse_stress(args: list[str]) -> Stress:
    """stress's (and vish/stress's) options: --vm N, --vm-bytes SIZE, --cpu N / -c N / -cpus N, -t N."""
    options: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name.startswith("-") and not eq and i + 1 < len(args) and not args[i + 1].startswith("-"):
            value, i = args[i + 1], i + 1
        options[name.lstrip("-")] = value
        i += 1
    workers = options.get("vm") or options.get("m")
    size = options.get("vm-bytes")
    memory = 0.0
    if workers is not None or size is not None:
        count = int(workers) if (workers or "").isdigit() else 1
        memory = count * ((stress_size(size) or 0.0) if size else 256.0 * 2**20)
    cpus = options.get("cpu") or options.get("c") or options.get("cpus")
    try:
        cpu = float(cpus) * 1000 if cpus else 0.0
    except ValueError:
        cpu = 0.0
    timeout = options.get("timeout") or options.get("t")
    try:
        seconds = float(timeout.rstrip("s")) if timeout else None
    except ValueError:
        seconds = None
    return Stress(memory=max(0.0, memory), cpu=max(0.0, cpu), timeout=seconds)

async def stress(shell: Shell, args: list[str], io: Streams) -> int:
    wanted = parse_stress(args)
    if not wanted.memory and not wanted.cpu:
        io.err(USAGE.encode())
        return 1
    pid = 7
    workers = int(wanted.memory > 0)
    io.out(f"stress: info: [{pid}] dispatching hogs: {int(wanted.cpu // 1000)} cpu, 0 io, {workers} vm, 0 hdd\n"
           .encode())
    handle = shell.resources  # set by exec for a real container run
    token = handle.hold(wanted) if handle is not None else None
    if handle is not None and handle.over_limit():
        io.err(f"stress: FAIL: [{pid}] (415) <-- worker {pid + 1} got signal 9\n".encode())
        return 137  # the OOM killer takes the whole container; its load stays until then
    try:
        await shell.clock.sleep(wanted.timeout if wanted.timeout is not None else FOREVER)
    finally:
        if handle is not None and token is not None:
            handle.release(token)
    io.out(f"stress: info: [{pid}] successful run completed in {int(wanted.timeout or 0)}s\n".encode())
    return 0
