"""busybox's `sort`, `uniq` and `tr`, on a FILE or stdin.

Guarantees:
- `sort [-r] [-n] [-u] [-f] [-t SEP] [-k N[,M]] [FILE...]`: lines in byte order (`-n` by their
  leading number, non-numbers as 0; `-f` ignoring case; `-k N` by the Nth field, fields split on
  SEP or on runs of blanks), reversed with `-r`, repeated keys once with `-u`; stable.
- `uniq [-c] [-d] [-u] [-i]`: adjacent repeated lines once (`-c` prefixes the count, as busybox's
  `%7d `; `-d` only repeated, `-u` only unique ones).
- `tr [-d] [-s] SET1 [SET2]`: characters of SET1 replaced by SET2's at the same place (SET2's last
  character repeated), `-d` deletes them, `-s` squeezes repeats; ranges `a-z`, escapes `\\n \\t`
  and the classes `[:upper:] [:lower:] [:digit:] [:space:] [:alpha:] [:alnum:]`.
A missing FILE is `PROGRAM: can't open 'FILE': No such file or directory` (exit 1 / 2 for sort).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from control.userland.inputs import each_input
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

NUMBER = re.compile(rb"^\s*(-?\d+(?:\.\d*)?)")
CLASSES = {"[:upper:]": "A-Z", "[:lower:]": "a-z", "[:digit:]": "0-9", "[:space:]": " \t\n\r\v\f",
           "[:alpha:]": "a-zA-Z", "[:alnum:]": "a-zA-Z0-9"}


def _options(args: list[str], with_value: str) -> tuple[set[str], dict[str, str], list[str]]:
    flags: set[str] = set()
    values: dict[str, str] = {}
    operands: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg.startswith("-") and len(arg) > 1 and not operands:
            letters = arg[1:]
            for index, letter in enumerate(letters):
                if letter in with_value:
                    values[letter] = letters[index + 1:] or (rest.pop(0) if rest else "")
                    break
                flags.add(letter)
        else:
            operands.append(arg)
    return flags, values, operands


def _input(shell: Shell, name: str, operands: list[str], io: Streams) -> bytes | None:
    inputs = list(each_input(shell, operands or ["-"], io, lambda operand, exc: f"{name}: can't open '{operand}': {exc}\n"))
    return None if None in inputs else b"".join(data for data in inputs if data is not None)


def _field(line: bytes, spec: str, separator: str | None) -> bytes:
    start, _, end = spec.partition(",")
    first = int(start.split(".")[0] or 1) - 1
    last = int(end.split(".")[0]) if end else None
    fields = line.split(separator.encode()) if separator else line.split()
    joiner = separator.encode() if separator else b" "
    return joiner.join(fields[first:last])


async def sort(shell: Shell, args: list[str], io: Streams) -> int:
    flags, values, operands = _options(args, "tk")
    unknown = flags - set("rnufbs")
    if unknown:
        io.err(f"sort: invalid option -- '{sorted(unknown)[0]}'\n".encode())
        return 2
    data = _input(shell, "sort", operands, io)
    if data is None:
        return 2
    lines = data.splitlines()

    def key(line: bytes):  # noqa: ANN202 - bytes or (number, bytes)
        part = _field(line, values["k"], values.get("t")) if "k" in values else line
        part = part.lower() if "f" in flags else part
        if "n" in flags:
            match = NUMBER.match(part)
            return float(match.group(1)) if match else 0.0
        return part

    ordered = sorted(lines, key=key, reverse="r" in flags)
    if "u" in flags:
        seen, unique = set(), []
        for line in ordered:
            if key(line) not in seen:
                seen.add(key(line))
                unique.append(line)
        ordered = unique
    io.out(b"".join(line + b"\n" for line in ordered))
    return 0


async def uniq(shell: Shell, args: list[str], io: Streams) -> int:
    flags, _, operands = _options(args, "")
    data = _input(shell, "uniq", operands[:1], io)
    if data is None:
        return 1
    groups: list[tuple[bytes, int]] = []
    for line in data.splitlines():
        same = groups and (groups[-1][0].lower() == line.lower() if "i" in flags else groups[-1][0] == line)
        if same:
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append((line, 1))
    kept = [(line, n) for line, n in groups if not ("d" in flags and n < 2) and not ("u" in flags and n > 1)]
    io.out(b"".join((b"%7d " % n if "c" in flags else b"") + line + b"\n" for line, n in kept))
    return 0


def _set(text: str) -> str:
    for name, chars in CLASSES.items():
        text = text.replace(name, chars)
    text = text.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
    out, i = [], 0
    while i < len(text):
        if i + 2 < len(text) and text[i + 1] == "-":
            out.extend(chr(c) for c in range(ord(text[i]), ord(text[i + 2]) + 1))
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


async def tr(shell: Shell, args: list[str], io: Streams) -> int:
    flags, _, operands = _options(args, "")
    wanted = 1 if "d" in flags or ("s" in flags and len(operands) == 1) else 2
    if len(operands) < wanted:
        io.err(b"tr: missing operand\n" if not operands else
               f"tr: missing operand after '{operands[-1]}'\n".encode())
        return 1
    text = io.stdin.decode(errors="surrogateescape")
    source = _set(operands[0])
    if "d" in flags:
        text = "".join(ch for ch in text if ch not in source)
        squeeze = _set(operands[1]) if len(operands) > 1 else ""
    else:
        target = _set(operands[1]) if len(operands) > 1 else ""
        if target:
            table = {ord(ch): target[min(index, len(target) - 1)] for index, ch in enumerate(source)}
            text = text.translate(table)
        squeeze = target or source
    if "s" in flags and squeeze:
        text = re.sub("([" + re.escape(squeeze) + "])\\1+", r"\1", text)
    io.out(text.encode(errors="surrogateescape"))
    return 0


def reads_stdin(args: list[str]) -> bool:
    """sort and uniq read stdin without a FILE operand (tr always does)."""
    return not _options(args, "tk")[2]
