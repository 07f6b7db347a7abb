"""The simulated `kill` (busybox ash's built-in), as lessons use it: `kubectl exec POD -- kill 1`
ends the container's main process, and the kubelet restarts the container as its restartPolicy
says (RESTARTS goes up, `lastState.terminated` shows the exit code).

Guarantees: `kill [-s SIG | -SIG | -N] PID...` with PID 1 asks the container (through the shell's
`resources` handle, set by exec) to end with 128 + the signal's number (TERM by default: 143;
KILL: 137), and returns 0. The simulation delivers the signal to PID 1 whatever its program (a real
PID 1 ignores the signals it has no handler for). Any other PID: `can't kill pid N: No such
process` (exit 1); an unknown signal or a PID that is not a number: busybox's message, exit 1;
no PID: usage, exit 1. Without a container (a shell outside exec) PID 1 is not there either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

SIGNALS = {"HUP": 1, "INT": 2, "QUIT": 3, "ABRT": 6, "KILL": 9, "USR1": 10, "USR2": 12, "PIPE": 13,
           "ALRM": 14, "TERM": 15, "STOP": 19}
USAGE = "Usage: kill [-s SIG | -SIG] PID...\n"


def parse_signal(text: str) -> int | None:
    """A signal by number or name (`9`, `KILL`, `SIGKILL`, any case); None when unknown."""
    if text.isdigit():
        number = int(text)
        return number if 0 < number < 65 else None
    name = text.upper().removeprefix("SIG")
    return SIGNALS.get(name)


async def kill(shell: Shell, args: list[str], io: Streams) -> int:
    signal, pids = SIGNALS["TERM"], list(args)
    if pids and pids[0] == "-s":
        if len(pids) < 2:
            io.err(f"{shell.name}: kill: {USAGE}".encode())
            return 1
        wanted, pids = pids[1], pids[2:]
    elif pids and pids[0].startswith("-") and pids[0] != "--":
        wanted, pids = pids[0][1:], pids[1:]
    else:
        wanted = None
    if pids and pids[0] == "--":
        pids = pids[1:]
    if wanted is not None:
        parsed = parse_signal(wanted)
        if parsed is None:
            io.err(f"{shell.name}: kill: bad signal name '{wanted}'\n".encode())
            return 1
        signal = parsed
    if not pids:
        io.err(f"{shell.name}: kill: {USAGE}".encode())
        return 1
    status = 0
    for pid in pids:
        if not pid.lstrip("-").isdigit():
            io.err(f"{shell.name}: kill: invalid number '{pid}'\n".encode())
            status = 1
        elif pid == "1" and shell.resources is not None:
            if signal != SIGNALS["STOP"]:
                shell.resources.signal_main(128 + signal)
        else:
            io.err(f"{shell.name}: can't kill pid {pid}: No such process\n".encode())
            status = 1
    return status
