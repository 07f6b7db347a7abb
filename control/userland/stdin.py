"""Which commands read their stdin: exec hands a command the client's stdin (up to its CLOSE) only
when it reads it, and runs any other at once (`ls` under `kubectl exec -it POD -- ls`).

Guarantees: `reads_stdin(argv)` is a pure function of the command's words: a program of
`table.STDIN_READERS` given no file (`cat`, `tar x -f -`, `grep x`), a shell that reads its
commands from stdin (`sh`), or `sh -c TEXT` whose TEXT starts a pipeline with one of those
(`sh -c cat`, `sh -c 'wc -l | tr -d " "'`, in a loop or a branch too). TEXT that sh cannot read
reads nothing.
"""

from __future__ import annotations

import posixpath
from typing import Any

from control.userland import compound, table
from control.userland.parsing import parse
from control.userland.shell import ASSIGNMENT, SHELLS
from control.userland.streams import ShellSyntaxError


def reads_stdin(argv: list[str]) -> bool:
    """Whether a command reads its stdin to the end before it can finish: a program of
    `table.STDIN_READERS` given no file (`cat`, `tar x -f -`, `grep x`), or `sh -c TEXT` whose
    TEXT starts a pipeline with one (`sh -c cat`, `sh -c 'wc -l | tr'`) or runs a shell reading
    its commands from stdin. Any other command runs at once (exec then gives it no stdin)."""
    if not argv:
        return False
    name = posixpath.basename(argv[0])
    if name in SHELLS:
        if len(argv) >= 3 and argv[1] == "-c":
            return _script_reads_stdin(argv[2])
        return len(argv) == 1 or argv[1:] == ["-i"]
    wants = table.STDIN_READERS.get(name)
    return wants is not None and wants(argv[1:])


def _script_reads_stdin(text: str) -> bool:
    try:
        nodes = compound.structure(parse(text))
    except (ShellSyntaxError, compound.Incomplete):
        return False
    return any(_node_reads_stdin(node) for _, node in nodes)


def _node_reads_stdin(node: Any) -> bool:
    """Whether a parsed command (or a loop or if holding commands) reads its standard input."""
    if isinstance(node, compound.Loop):
        return any(_node_reads_stdin(n) for _, n in node.condition + node.body)
    if isinstance(node, compound.ForLoop):
        return any(_node_reads_stdin(n) for _, n in node.body)
    if isinstance(node, compound.If):
        lists = [part for branch in node.branches for part in branch] + [node.otherwise or []]
        return any(_node_reads_stdin(n) for nodes in lists for _, n in nodes)
    words = ["".join(text for text, _ in word) for word in node.words]
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    return reads_stdin(words)  # the head of its pipeline: the rest read what it writes
