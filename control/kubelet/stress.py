"""The simulated `stress` program (stress 1.0.4's options; vish/stress's `-cpus`): it makes the
container it runs in use memory and CPU, as lessons on limits use it.

Guarantees: `stress --vm N --vm-bytes SIZE` / `--cpu N` adds its use to the container's (through
the shell's `resources` handle, set by exec) for `--timeout N` seconds on the shell's clock, or
until interrupted (Ctrl-C); its use is released when it ends. A use that takes the container over
its memory limit is not released: the OOM killer takes the container (the exec ends with 137, the
container is OOMKilled). Without options it prints stress's usage and exits 1.
"""

from __future__ import annotations

from control.kubelet.programs import program
from control.kubelet.resources import parse_stress
from control.kubelet.shell import Shell, Streams

FOREVER = 10.0**9
USAGE = ("`stress' imposes certain types of compute stress on your system\n\n"
         "Usage: stress [OPTION [ARG]] ...\n"
         " -t, --timeout N    timeout after N seconds\n"
         " -c, --cpu N        spawn N workers spinning on sqrt()\n"
         " -m, --vm N         spawn N workers spinning on malloc()/free()\n"
         "     --vm-bytes B   malloc B bytes per vm worker (default is 256MB)\n")


@program("stress")
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
