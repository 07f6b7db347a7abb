"""The inputs a program names: each FILE operand read from the container's files, `-` its stdin.

Guarantees: `each_input` yields the operands' bytes in their order; an operand that cannot be
read yields None after the program's own message (`complain(name, error)`) went to stderr, so a
program goes on with the others and reports its failure in its status, as busybox's do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from control.userland.files import FsError
from control.userland.streams import Streams

if TYPE_CHECKING:
    from control.userland.shell import Shell


def each_input(shell: Shell, names: list[str], io: Streams,
               complain: Callable[[str, FsError], str]) -> Iterator[bytes | None]:
    for name in names:
        if name == "-":
            yield io.stdin
            continue
        try:
            data = shell.fs.read(shell.fs.resolve(shell.cwd, name))
        except FsError as exc:
            io.err(complain(name, exc).encode())
            yield None
            continue
        yield data
