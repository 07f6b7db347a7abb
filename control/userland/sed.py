"""busybox's `sed`, the basics scripts use: `sed [-n] [-E|-r] [-i] [-e SCRIPT]... [SCRIPT] [FILE...]`.

Guarantees: a script is commands separated by `;` or newlines, each `[ADDRESS[,ADDRESS]][!]COMMAND`
with an address a line number, `$` (the last line) or `/REGEX/`; the commands are
`s/REGEX/REPLACEMENT/[g][p][i][N]` (any delimiter; `&` and `\\1`..`\\9` in the replacement), `p`,
`d`, `q`, `=` and `y/SOURCE/TARGET/`. REGEX is a basic regular expression (`\\(`, `\\)`, `\\{`,
`\\}`, `\\+`, `\\?`, `\\|` special) or, with `-E`/`-r`, an extended one. `-n` prints only what `p`
asks; `-i` edits the FILEs in place. A script it cannot read is `sed: unknown command: 'X'` or
`sed: unmatched '/'` (exit 1); a missing FILE is `sed: can't open 'FILE': No such file or
directory` (exit 2), the others are still edited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from control.userland.files import FsError
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell


class SedError(Exception):
    pass


@dataclass
class Command:
    start: object = None  # int | "$" | re.Pattern | None
    end: object = None
    negate: bool = False
    name: str = "p"
    pattern: re.Pattern | None = None
    replacement: str = ""
    every: bool = False
    nth: int = 1
    also_print: bool = False
    source: str = ""
    target: str = ""


def basic_to_python(regex: str, extended: bool) -> str:
    """A POSIX regular expression as Python's `re` reads it."""
    if extended:
        return regex
    out, i = [], 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\" and i + 1 < len(regex):
            nxt = regex[i + 1]
            out.append(nxt if nxt in "(){}+?|" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + ch if ch in "(){}+?|" else ch)
        i += 1
    return "".join(out)


def _delimited(script: str, i: int, delimiter: str) -> tuple[str, int]:
    """The text up to the next unescaped `delimiter` from `script[i]`, and the index after it."""
    out = []
    while i < len(script):
        ch = script[i]
        if ch == "\\" and i + 1 < len(script):
            out.append(script[i + 1] if script[i + 1] == delimiter else script[i:i + 2])
            i += 2
            continue
        if ch == delimiter:
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise SedError(f"unmatched '{delimiter}'")


def _address(script: str, i: int, extended: bool) -> tuple[object, int]:
    if i < len(script) and script[i].isdigit():
        match = re.match(r"\d+", script[i:])
        return int(match.group(0)), i + len(match.group(0))  # type: ignore[union-attr]
    if i < len(script) and script[i] == "$":
        return "$", i + 1
    if i < len(script) and script[i] == "/":
        text, i = _delimited(script, i + 1, "/")
        return re.compile(basic_to_python(text, extended)), i
    return None, i


def parse(script: str, extended: bool) -> list[Command]:
    commands, i = [], 0
    while i < len(script):
        while i < len(script) and script[i] in " \t\n;":
            i += 1
        if i >= len(script):
            break
        command = Command()
        command.start, i = _address(script, i, extended)
        if command.start is not None and i < len(script) and script[i] == ",":
            command.end, i = _address(script, i + 1, extended)
        if i < len(script) and script[i] == "!":
            command.negate, i = True, i + 1
        if i >= len(script):
            raise SedError("missing command")
        command.name = script[i]
        i += 1
        if command.name in "sy":
            delimiter = script[i] if i < len(script) else ""
            first, i = _delimited(script, i + 1, delimiter)
            second, i = _delimited(script, i, delimiter)
            if command.name == "y":
                command.source, command.target = first, second
            else:
                flags = re.match(r"[gpiI0-9]*", script[i:]).group(0)  # type: ignore[union-attr]
                i += len(flags)
                command.pattern = re.compile(basic_to_python(first, extended), re.I if set(flags) & {"i", "I"} else 0)
                command.replacement = re.sub(r"\\(\d)", r"\\g<\1>", second.replace("\\&", "\0")).replace("&", r"\g<0>") \
                    .replace("\0", "&")
                command.every, command.also_print = "g" in flags, "p" in flags
                digits = "".join(ch for ch in flags if ch.isdigit())
                command.nth = int(digits) if digits else 1
        elif command.name not in "pdq=":
            raise SedError(f"unknown command: '{command.name}'")
        commands.append(command)
    return commands


def _matches(address: object, number: int, last: bool, line: str) -> bool:
    if isinstance(address, int):
        return number == address
    if address == "$":
        return last
    return bool(address.search(line)) if isinstance(address, re.Pattern) else False


def edit(commands: list[Command], text: str, quiet: bool) -> tuple[str, bool]:
    """The edited text (and whether `q` stopped it)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[str] = []
    active: dict[int, bool] = {}
    for number, line in enumerate(lines, 1):
        last = number == len(lines)
        deleted = stop = False
        for index, command in enumerate(commands):
            if command.start is None:
                selected = True
            elif command.end is None:
                selected = _matches(command.start, number, last, line)
            elif active.get(index):
                selected = True
                if _matches(command.end, number, last, line) or (isinstance(command.end, int) and number >= command.end):
                    active[index] = False
            else:
                selected = _matches(command.start, number, last, line)
                active[index] = selected and not (isinstance(command.end, int) and number >= command.end)
            if selected == command.negate:
                continue
            if command.name == "p":
                out.append(line)
            elif command.name == "d":
                deleted = True
                break
            elif command.name == "=":
                out.append(str(number))
            elif command.name == "q":
                stop = True
                break
            elif command.name == "y":
                line = line.translate({ord(a): b for a, b in zip(command.source, command.target)})
            elif command.pattern is not None:
                line, changed = _substitute(command, line)
                if changed and command.also_print:
                    out.append(line)
        if not deleted and not quiet:
            out.append(line)
        if stop:
            return "".join(x + "\n" for x in out), True
    return "".join(x + "\n" for x in out), False


def _substitute(command: Command, line: str) -> tuple[str, bool]:
    assert command.pattern is not None
    seen, changed = 0, False

    def one(match: re.Match) -> str:
        nonlocal seen, changed
        seen += 1
        if seen == command.nth or (command.every and seen >= command.nth):
            changed = True
            return match.expand(command.replacement)
        return match.group(0)

    return command.pattern.sub(one, line), changed


async def sed(shell: Shell, args: list[str], io: Streams) -> int:
    scripts, operands, quiet, extended, in_place = [], [], False, False, False
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "-e" and rest:
            scripts.append(rest.pop(0))
        elif arg in ("-n", "--quiet", "--silent"):
            quiet = True
        elif arg in ("-E", "-r"):
            extended = True
        elif arg == "-i":
            in_place = True
        elif arg.startswith("-") and len(arg) > 1:
            io.err(f"sed: invalid option -- '{arg[1]}'\n".encode())
            return 1
        else:
            operands.append(arg)
    if not scripts:
        if not operands:
            io.err(b"Usage: sed [-i[SFX]] [-nrE] [-f FILE]... [-e CMD]... [FILE]...\n")
            return 1
        scripts.append(operands.pop(0))
    try:
        commands = parse("\n".join(scripts), extended)
    except (SedError, re.error) as exc:
        io.err(f"sed: {exc}\n".encode())
        return 1
    if not operands:
        io.out(edit(commands, io.stdin.decode(errors="surrogateescape"), quiet)[0].encode(errors="surrogateescape"))
        return 0
    status = 0
    for name in operands:
        path = shell.fs.resolve(shell.cwd, name)
        try:
            text = shell.fs.read(path).decode(errors="surrogateescape")
        except FsError as exc:
            io.err(f"sed: can't open '{name}': {exc}\n".encode())
            status = 2
            continue
        edited, stopped = edit(commands, text, quiet)
        if in_place:
            shell.fs.write(path, edited.encode(errors="surrogateescape"))
        else:
            io.out(edited.encode(errors="surrogateescape"))
        if stopped:
            break
    return status


def reads_stdin(args: list[str]) -> bool:
    """sed reads stdin when no FILE follows its script."""
    operands, scripts, rest = [], 0, list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "-e" and rest:
            scripts += 1
            rest.pop(0)
        elif not (arg.startswith("-") and len(arg) > 1):
            operands.append(arg)
    return len(operands) <= (0 if scripts else 1)
