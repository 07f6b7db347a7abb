"""Command substitution, `$(COMMAND)`, as sh does it: COMMAND runs in a subshell (a copy of the
shell's variables and directory: what it sets stays there) and the words it appears in get its
stdout with the trailing newlines removed.

Guarantees: `closing(line, i)` finds the `)` that closes the `$(` at `line[i]`, across nested
`$(...)`, parentheses and quotes, or raises ShellSyntaxError (`unterminated $(`); `substituted`
replaces every command segment of a word by its output, quoted (`single`) so nothing in it expands
again. The output is not split into fields except where the shell splits words anyway (a `for`
list); stderr goes to the caller's stderr; the substitution's status becomes `$?`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from control.userland.parsing import Word
    from control.userland.shell import Shell
    from control.userland.streams import Streams


def closing(line: str, i: int) -> int:
    """The index of the `)` closing the `$(` that starts at `line[i]`."""
    from control.userland.streams import ShellSyntaxError

    depth, j, quote = 1, i + 2, ""
    while j < len(line):
        ch = line[j]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                j += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "\\":
            j += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    raise ShellSyntaxError("syntax error: unterminated $(")


async def run(shell: "Shell", text: str, io: "Streams") -> str:
    """COMMAND's stdout, in a subshell of `shell`, without its trailing newlines."""
    from control.userland.streams import ShellExit, Streams

    child = type(shell)(shell.fs, clock=shell.clock, hostname=shell.hostname, name=shell.name)
    child.vars, child.exported, child.cwd = dict(shell.vars), set(shell.exported), shell.cwd
    child.terminal, child.resources, child.network = shell.terminal, shell.resources, shell.network
    out = bytearray()
    try:
        status = await child.run_script(text, Streams(out.extend, io.err))
    except ShellExit as done:
        status = done.code
    shell.status = status
    return out.decode(errors="replace").rstrip("\n")


async def substituted(shell: "Shell", word: "Word", io: "Streams") -> "Word":
    """`word` with each `$(...)` segment replaced by its output (literal from then on)."""
    if not any(quoting == "command" for _, quoting in word):
        return word
    return tuple([(await run(shell, text, io), "single") if quoting == "command" else (text, quoting)
                  for text, quoting in word])
