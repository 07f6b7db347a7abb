"""The inputs a program names: each FILE operand read from the container's files, `-` its stdin.

Guarantees: `option_value` reads an option's value given apart or attached; `each_input` yields the operands' bytes in their order; an operand that cannot be
read yields None after the program's own message (`complain(name, error)`) went to stderr, so a
program goes on with the others and reports its failure in its status, as busybox's do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from control.userland.files import FsError
from control.userland.streams import Streams

if TYPE_CHECKING:
    from control.userland.shell import Shell


def option_value(option: str, arg: str, rest: list[str]) -> str | None:
    """The value of a one-letter option given as `-n 5` (taken from `rest`) or `-n5`; None when
    `arg` is not that option."""
    if arg == option and rest:
        return rest.pop(0)
    if arg.startswith(option) and len(arg) > len(option):
        return arg[len(option):]
    return None


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
