"""The plumbing every program shares: its `Streams` (stdout and stderr sinks, stdin bytes) and the
two ways a shell line ends early (`ShellExit`, `ShellSyntaxError`).

Guarantees: a sink takes bytes as they are produced (nothing is buffered here); `stdin` is what the
program may read (empty when nothing is piped in). Nothing here does I/O of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

Sink = Callable[[bytes], None]


@dataclass
class Streams:
    out: Sink
    err: Sink
    stdin: bytes = b""


class ShellExit(Exception):
    """`exit N`: the shell ends with this code."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class ShellSyntaxError(Exception):
    pass
