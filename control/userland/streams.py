"""The plumbing every program shares: its `Streams` (stdout and stderr sinks, stdin bytes) and the
two ways a shell line ends early (`ShellExit`, `ShellSyntaxError`).

Guarantees: a sink takes bytes as they are produced (nothing is buffered here); `stdin` is what the
program may read (empty when nothing is piped in). Nothing here does I/O of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

Sink = Callable[[bytes], None]


@dataclass
class Streams:
    out: Sink
    err: Sink
    stdin: bytes = b""


class LineFilter(Protocol):
    """A program reading a pipe line by line (`grep x` after `tail -f`): it writes what a line
    gives as soon as the line is fed, and says its exit status when its input ends."""

    def feed(self, line: bytes) -> None: ...
    def finish(self) -> int: ...


class Lines:
    """A sink that hands a filter its input line by line (a last line without `\\n` at `close`)."""

    def __init__(self, target: LineFilter):
        self.target, self.partial = target, b""

    def write(self, data: bytes) -> None:
        *complete, self.partial = (self.partial + data).split(b"\n")
        for line in complete:
            self.target.feed(line + b"\n")

    def close(self) -> int:
        if self.partial:
            self.target.feed(self.partial)
            self.partial = b""
        return self.target.finish()


class ShellExit(Exception):
    """`exit N`: the shell ends with this code."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class ShellSyntaxError(Exception):
    pass
