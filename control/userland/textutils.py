"""The text filters courses pipe into (`env | grep KUBE`, `cat log | tail -n 2`, `ls | wc -l`):
`grep`, `head`, `tail` and `wc`, reading their FILE operands or, without one, their stdin (the
previous command of a pipeline, or exec's stdin).

Guarantees (busybox's output and exit codes for what is simulated):
- `grep [-i] [-v] [-c] [-n] [-q] [-E] [-F] {PATTERN | -e PATTERN...} [FILE...]`: a PATTERN is a
  basic regular expression (extended with -E; a plain string with -F, or when it is no valid
  expression), a line matching any -e PATTERN is selected, case-insensitively with -i; reading a
  pipe without -c/-q it prints each selected line as it comes (`grep_stream`); -v selects the lines that do
  not match, -c prints their count, -n numbers them, -q prints nothing; with several files each
  line (or count) is prefixed `FILE:`. Exit 0 when a line was selected, 1 when none, 2 on a
  missing file (`grep: FILE: No such file or directory`) or a missing pattern / unknown option.
- `head`/`tail [-n N | -N] [FILE]`: the first/last N lines (10 by default); a bad N is busybox's
  `invalid number` (exit 1).
- `wc [-l] [-w] [-c] [FILE]`: lines, words, bytes (all three without an option), the file's name
  after them when one is named.
A line is text up to `\\n`; a last line without one counts as a line for grep/head/tail (as they
print it), not for `wc -l` (which counts newlines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from control.userland.files import FsError
from control.userland.inputs import each_input, option_value
from control.userland.sed import basic_to_python
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell


FOLLOW_SECONDS = 1.0  # how often `tail -f` looks at its file again


def _lines(data: bytes) -> list[bytes]:
    """The lines of `data`, each with its newline (a last line without one stays without)."""
    return data.splitlines(keepends=True)


def _read(shell: Shell, name: str) -> bytes:
    return shell.fs.read(shell.fs.resolve(shell.cwd, name))


def _terminated(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\n"


@dataclass
class GrepOptions:
    flags: set[str]
    patterns: list[str]
    files: list[str]

    def matcher(self) -> Callable[[str], bool]:
        """Whether a line is selected: a pattern (a basic regular expression; extended with -E, a
        plain string with -F or when it is no valid expression) found in it (-v: none found)."""
        fold = re.I if "i" in self.flags else 0
        compiled = []
        for pattern in self.patterns:
            try:
                compiled.append(None if "F" in self.flags else re.compile(basic_to_python(pattern, "E" in self.flags), fold))
            except re.error:
                compiled.append(None)
        wanted = [p.lower() if fold else p for p in self.patterns]

        def found(text: str) -> bool:
            hit = any(c.search(text) if c is not None else w in (text.lower() if fold else text)
                      for c, w in zip(compiled, wanted))
            return hit != ("v" in self.flags)
        return found


def grep_options(args: list[str], io: Streams) -> GrepOptions | int:
    """grep's options, or its exit status (2) after busybox's message."""
    flags: set[str] = set()
    pattern: str | None = None
    patterns: list[str] = []  # -e PATTERN, as often as given: a line matching any is selected
    files: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            files += rest
            break
        if arg == "-e" and rest:
            patterns.append(rest.pop(0))
        elif arg.startswith("-") and len(arg) > 1 and pattern is None and not files:
            unknown = set(arg[1:]) - set("ivcnqFEs")
            if unknown:
                io.err(f"grep: invalid option -- '{sorted(unknown)[0]}'\n".encode())
                return 2
            flags |= set(arg[1:])
        elif pattern is None and not patterns:
            pattern = arg
        else:
            files.append(arg)
    if pattern is not None:
        patterns.append(pattern)
    if not patterns:
        io.err(b"BusyBox v1.36.1 multi-call binary.\n\nUsage: grep [-HhnlLoqvsrRiwFE] [-m N] [-A|B|C N] "
               b"{ PATTERN | -e PATTERN... | -f FILE... } [FILE]...\n")
        return 2
    return GrepOptions(flags, patterns, files)


async def grep(shell: Shell, args: list[str], io: Streams) -> int:
    options = grep_options(args, io)
    if isinstance(options, int):
        return options
    flags, files, found = options.flags, options.files, options.matcher()
    selected, failed = False, False
    sources = [(name, None) for name in files] or [("(standard input)", io.stdin)]
    for name, data in sources:
        if data is None:
            try:
                data = _read(shell, name)
            except FsError:
                if "s" not in flags:
                    io.err(f"grep: {name}: No such file or directory\n".encode())
                failed = True
                continue
        prefix = f"{name}:".encode() if len(sources) > 1 else b""
        count = 0
        for number, line in enumerate(_lines(data), 1):
            if not found(line.decode(errors="replace").rstrip("\n")):
                continue
            count += 1
            if not flags & {"c", "q"}:
                io.out(prefix + (f"{number}:".encode() if "n" in flags else b"") + _terminated(line))
        if "c" in flags and "q" not in flags:
            io.out(prefix + f"{count}\n".encode())
        selected = selected or count > 0
    if selected and "q" in flags:
        return 0
    return 2 if failed else (0 if selected else 1)


class _GrepStream:
    """grep reading a pipe line by line: each selected line goes out as soon as it came in."""

    def __init__(self, options: GrepOptions, io: Streams):
        self.options, self.io, self.found = options, io, options.matcher()
        self.number = self.selected = 0

    def feed(self, line: bytes) -> None:
        self.number += 1
        if self.found(line.decode(errors="replace").rstrip("\n")):
            self.selected += 1
            self.io.out((f"{self.number}:".encode() if "n" in self.options.flags else b"") + _terminated(line))

    def finish(self) -> int:
        return 0 if self.selected else 1


def grep_stream(shell: Shell, args: list[str], io: Streams) -> "_GrepStream | int | None":
    """grep as a streaming filter of its stdin (None: it counts or has files, so it runs whole)."""
    options = grep_options(args, io)
    if isinstance(options, int):
        return options
    if options.files or options.flags & {"c", "q"}:
        return None
    return _GrepStream(options, io)


def _count(program_name: str, args: list[str], io: Streams) -> tuple[int, list[str]] | None:
    """(N, operands) of head/tail's `-n N`, `-nN` or `-N`; None (after busybox's message) when bad."""
    count, operands, rest = "10", [], list(args)
    while rest:
        arg = rest.pop(0)
        if (value := option_value("-n", arg, rest)) is not None:
            count = value
        elif arg.startswith("-") and arg[1:].isdigit():
            count = arg[1:]
        elif arg == "-f" and program_name == "tail":
            operands.append(arg)  # follow: `_ends` takes it out
        elif arg.startswith("-") and len(arg) > 1:
            io.err(f"{program_name}: invalid option -- '{arg[1]}'\n".encode())
            return None
        else:
            operands.append(arg)
    if not count.isdigit():
        io.err(f"{program_name}: invalid number '{count}'\n".encode())
        return None
    return int(count), operands


async def _ends(shell: Shell, name: str, args: list[str], io: Streams, first: bool) -> int:
    parsed = _count(name, args, io)
    if parsed is None:
        return 1
    count, operands = parsed
    follow = "-f" in operands
    operands = [o for o in operands if o != "-f"]
    data = next(each_input(shell, operands[:1] or ["-"], io, lambda file, exc: f"{name}: can't open '{file}': {exc}\n"))
    if data is None:
        return 1
    lines = _lines(data)
    chosen = lines[:count] if first else (lines[-count:] if count else [])
    io.out(b"".join(chosen))
    if follow and operands:
        await _follow(shell, operands[0], len(data), io)
    return 0


async def _follow(shell: Shell, name: str, seen: int, io: Streams) -> None:
    """`tail -f`: what is appended to the file, each second on the shell's clock, until interrupted
    (a file cut shorter is followed from its new end, as busybox says `file truncated`)."""
    while True:
        await shell.clock.sleep(FOLLOW_SECONDS)
        try:
            data = _read(shell, name)
        except FsError:
            continue
        if len(data) < seen:
            io.err(f"tail: {name}: file truncated\n".encode())
            seen = 0
        if len(data) > seen:
            io.out(data[seen:])
            seen = len(data)


async def head(shell: Shell, args: list[str], io: Streams) -> int:
    return await _ends(shell, "head", args, io, first=True)


async def tail(shell: Shell, args: list[str], io: Streams) -> int:
    return await _ends(shell, "tail", args, io, first=False)


async def wc(shell: Shell, args: list[str], io: Streams) -> int:
    flags = {c for a in args if a.startswith("-") and len(a) > 1 for c in a[1:]}
    operands = [a for a in args if not (a.startswith("-") and len(a) > 1)]
    if flags - set("lwc"):
        io.err(f"wc: invalid option -- '{sorted(flags - set('lwc'))[0]}'\n".encode())
        return 1
    data = next(each_input(shell, operands[:1] or ["-"], io, lambda file, exc: f"wc: {file}: {exc}\n"))
    if data is None:
        return 1
    shown = [n for flag, n in (("l", data.count(b"\n")), ("w", len(data.split())), ("c", len(data)))
             if not flags or flag in flags]
    numbers = " ".join(f"{n:9d}" for n in shown) if len(shown) > 1 else str(shown[0])
    io.out((numbers + (f" {operands[0]}" if operands else "") + "\n").encode())
    return 0


# Without a FILE operand they read stdin to its end (`kubectl exec -i POD -- grep x < file`).
STDIN_READERS = {"grep": lambda args: len([a for a in args if not a.startswith("-")]) < 2,
                      "head": lambda args: not [a for a in args if not a.startswith("-") and not a.isdigit()],
                      "tail": lambda args: not [a for a in args if not a.startswith("-") and not a.isdigit()],
                      "wc": lambda args: not [a for a in args if not a.startswith("-")]}
