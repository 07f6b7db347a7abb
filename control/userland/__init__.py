"""The userland of a simulated container: a POSIX-ish shell (`sh`, `bash`, `ash`) and the busybox
applets lessons and kubernetes.io's examples call, run against an injected filesystem, environment,
clock and network. It knows nothing of the kubelet or the hub (an import contract says so).

The interface is one coroutine, `run(argv, streams, fs, env, clock) -> exit code`: argv is run as
exec runs it (not re-parsed: `["sh", "-c", TEXT]` runs TEXT, `["printenv", "HOSTNAME"]` runs
printenv), its output goes to `streams` as it is produced, `sleep` waits on `clock` (so tests run on
a fake clock), `exit N` ends it with N. The programs are in one explicit table (`table.PROGRAMS`);
what a container may reach beyond its files comes in through `network` (`network.Network`) and
`container` (the handle `kill 1` and `stress` act on).
"""

from __future__ import annotations

from typing import Any

from control.clock import Clock
from control.userland.files import Files, FsError
from control.userland.shell import SHELLS, Shell
from control.userland.streams import ShellExit, ShellSyntaxError, Streams
from control.userland.table import PROGRAMS, STDIN_READERS

__all__ = ["Files", "FsError", "PROGRAMS", "SHELLS", "STDIN_READERS", "Shell", "ShellExit", "ShellSyntaxError",
           "Streams", "run"]


async def run(argv: list[str], streams: Streams, fs: Files, env: dict[str, str], clock: Clock, *,
              hostname: str = "localhost", network: Any = None, container: Any = None) -> int:
    """Run one command (argv, as exec gives it) to its end; its exit code."""
    shell = Shell(fs, clock=clock, hostname=hostname, env=env)
    shell.network, shell.resources = network, container
    return await shell.run_argv(list(argv), streams)
