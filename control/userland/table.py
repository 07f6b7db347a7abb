"""The programs a simulated container has, in one explicit table: the name a command line uses ->
the coroutine `(shell, args, streams) -> exit status` that runs it.

Guarantees: a name not in `PROGRAMS` (and not a shell, which `shell` runs itself) is `not found`
(exit 127); `STDIN_READERS` says, for a program and its arguments, whether it reads its stdin to
the end before it can finish (an exec session then hands it all of stdin, up to the client's CLOSE).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from control.userland import builtins, network, signals, stress, tar, textutils

if TYPE_CHECKING:
    from control.userland.shell import Shell
    from control.userland.streams import Streams

Program = Callable[["Shell", list[str], "Streams"], Awaitable[int]]

PROGRAMS: dict[str, Program] = {
    # shell built-ins and coreutils (builtins)
    ":": builtins.true, "true": builtins.true, "false": builtins.false, "exit": builtins.exit_,
    "echo": builtins.echo, "env": builtins.env, "printenv": builtins.printenv, "export": builtins.export,
    "unset": builtins.unset, "cat": builtins.cat, "ls": builtins.ls, "touch": builtins.touch, "rm": builtins.rm,
    "mkdir": builtins.mkdir, "pwd": builtins.pwd, "cd": builtins.cd, "hostname": builtins.hostname,
    "whoami": builtins.whoami, "date": builtins.date, "uname": builtins.uname, "stty": builtins.stty,
    "sleep": builtins.sleep, "test": builtins.test, "[": builtins.bracket,
    # text filters (textutils)
    "grep": textutils.grep, "head": textutils.head, "tail": textutils.tail, "wc": textutils.wc,
    # archives, signals, load, network
    "tar": tar.tar, "kill": signals.kill, "stress": stress.stress,
    "nslookup": network.nslookup, "dig": network.dig, "wget": network.wget, "curl": network.curl,
}

STDIN_READERS: dict[str, Callable[[list[str]], bool]] = {
    "cat": lambda args: not [a for a in args if a != "-"],
    "tar": tar.reads_stdin,
    **textutils.STDIN_READERS,
}
