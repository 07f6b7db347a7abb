"""The programs a simulated container has, in one explicit table: the name a command line uses ->
the coroutine `(shell, args, streams) -> exit status` that runs it.

Guarantees: a name not in `PROGRAMS` (and not a shell, which `shell` runs itself) is `not found`
(exit 127); `STDIN_READERS` says, for a program and its arguments, whether it reads its stdin to
the end before it can finish (an exec session then hands it all of stdin, up to the client's CLOSE).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from control.userland import awk, builtins, compression, formatting, network, ordering, sed, signals, stress, tar, textutils

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
    "whoami": builtins.whoami, "uname": builtins.uname, "stty": builtins.stty,
    "sleep": builtins.sleep, "test": builtins.test, "[": builtins.bracket,
    # numbers, formats and time (formatting)
    "printf": formatting.printf, "seq": formatting.seq, "date": formatting.date,
    # text filters (textutils, ordering, sed, awk)
    "grep": textutils.grep, "head": textutils.head, "tail": textutils.tail, "wc": textutils.wc,
    "sort": ordering.sort, "uniq": ordering.uniq, "tr": ordering.tr, "sed": sed.sed, "awk": awk.awk,
    # compression (compression)
    "gzip": compression.gzip, "gunzip": compression.gunzip, "zcat": compression.zcat,
    # archives, signals, load, network
    "tar": tar.tar, "kill": signals.kill, "stress": stress.stress,
    "nslookup": network.nslookup, "dig": network.dig, "wget": network.wget, "curl": network.curl,
    "nc": network.nc,
}

# Programs that can read a pipe line by line: `tail -f log | grep x` prints each match as it comes.
# factory(shell, args, streams) -> a LineFilter, or None (these arguments make it read its input whole)
STREAMING: dict[str, Callable[["Shell", list[str], "Streams"], Any]] = {
    "grep": textutils.grep_stream, "cat": builtins.cat_stream,
}

STDIN_READERS: dict[str, Callable[[list[str]], bool]] = {
    "cat": lambda args: not [a for a in args if a != "-"],
    "tar": tar.reads_stdin,
    "sort": ordering.reads_stdin, "uniq": ordering.reads_stdin, "tr": lambda args: True,
    "sed": sed.reads_stdin, "awk": awk.reads_stdin,
    "gzip": compression.reads_stdin, "gunzip": compression.reads_stdin, "zcat": compression.reads_stdin,
    **textutils.STDIN_READERS,
}
