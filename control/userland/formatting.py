"""Applets that make text from numbers and formats: `printf`, `seq` and `date +FORMAT`, as busybox
prints them.

Guarantees:
- `printf FORMAT [ARG...]`: `%s %b %c %d %i %u %o %x %X %e %f %g %%` with flags, width and
  precision, and the escapes `\\n \\t \\\\ \\" \\r \\a \\b \\f \\v \\0NNN`; the format is reused while
  arguments remain, a missing argument is empty (or 0); a number that is not one prints
  `printf: invalid number 'X'` and the status is 1 (what was printed stays).
- `seq [-w] [-s SEP] [FIRST [INCREMENT]] LAST`: integers (or decimals, printed with the operands'
  most decimals); `-w` pads with zeros to equal width; a bad number is `seq: invalid number 'X'`
  (exit 1), no operand prints the usage (exit 1).
- `date [-u] [+FORMAT]`: the shell clock's moment in UTC (containers have no zone data), in
  busybox's default form or strftime's FORMAT (with `%s` seconds since the epoch and `%N`
  nanoseconds); a FORMAT without `+` is refused as busybox does (`date: invalid date 'X'`).
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING

from control.userland.inputs import option_value
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

CONVERSION = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?([sbcdiouxXeEfgG%])")
ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
           "'": "'"}
SEQ_USAGE = "Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n"


def unescape(text: str) -> tuple[str, bool]:
    """`text` with printf's backslash escapes replaced; and whether `\\c` asked to stop there."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "c":
            return "".join(out), True
        if nxt in ESCAPES:
            out.append(ESCAPES[nxt])
            i += 2
        elif nxt in "01234567":
            digits = re.match(r"0?[0-7]{1,3}", text[i + 1:i + 5]).group(0)  # type: ignore[union-attr]
            out.append(chr(int(digits, 8) & 0xFF))
            i += 1 + len(digits)
        else:
            out.append(ch)
            i += 1
    return "".join(out), False


def _integer(text: str) -> int | None:
    text = text.strip()
    if len(text) >= 2 and text[0] in "'\"":
        return ord(text[1])  # printf %d "'A" is the character's code
    try:
        return int(text, 0) if text.lower().startswith(("0x", "-0x")) else int(text or "0")
    except ValueError:
        return None


def _real(text: str) -> float | None:
    try:
        return float(text.strip() or "0")
    except ValueError:
        return None


def printf_text(fmt: str, args: list[str]) -> tuple[str, list[str]]:
    """What `printf FMT ARGS` prints, and the arguments it could not read as numbers."""
    out, bad, pending = [], [], list(args)
    while True:
        consumed = False
        pos = 0
        for match in CONVERSION.finditer(fmt):
            literal, stop = unescape(fmt[pos:match.start()])
            out.append(literal)
            if stop:
                return "".join(out), bad
            pos = match.end()
            flags, width, precision, kind = match.groups()
            if kind == "%":
                out.append("%")
                continue
            if width == "*":
                width, consumed = str(_integer(pending.pop(0)) or 0) if pending else "0", True
            if precision == "*":
                precision, consumed = str(_integer(pending.pop(0)) or 0) if pending else "0", True
            arg = pending.pop(0) if pending else None
            consumed = consumed or arg is not None
            spec = "%" + flags + (width or "") + (f".{precision}" if precision is not None else "")
            if kind in "sb":
                value = unescape(arg or "")[0] if kind == "b" else (arg or "")
                out.append((spec + "s") % value)
            elif kind == "c":
                out.append((spec + "s") % (arg or "")[:1])
            elif kind in "diouxX":
                number = _integer(arg or "0")
                if number is None:
                    bad.append(arg or "")
                    number = 0
                out.append((spec + ("d" if kind in "iu" else kind)) % number)
            else:
                real = _real(arg or "0")
                if real is None:
                    bad.append(arg or "")
                    real = 0.0
                out.append((spec + kind) % real)
        literal, stop = unescape(fmt[pos:])
        out.append(literal)
        if stop or not pending or not consumed:
            return "".join(out), bad


async def printf(shell: Shell, args: list[str], io: Streams) -> int:
    if not args:
        io.err(b"Usage: printf FORMAT [ARG]...\n")
        return 1
    text, bad = printf_text(args[0], args[1:])
    io.out(text.encode())
    for arg in bad:
        io.err(f"printf: invalid number '{arg}'\n".encode())
    return 1 if bad else 0


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


async def seq(shell: Shell, args: list[str], io: Streams) -> int:
    separator, pad, operands = "\n", False, []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if (value := option_value("-s", arg, rest)) is not None:
            separator = value
        elif arg == "-w":
            pad = True
        else:
            operands.append(arg)
    if not 1 <= len(operands) <= 3:
        io.err(SEQ_USAGE.encode())
        return 1
    values = []
    for operand in operands:
        value = _real(operand) if operand.strip() else None
        if value is None:
            io.err(f"seq: invalid number '{operand}'\n".encode())
            return 1
        values.append(value)
    first, step, last = (values[0], values[1], values[2]) if len(values) == 3 else \
        ((values[0], 1.0, values[1]) if len(values) == 2 else (1.0, 1.0, values[0]))
    places = max(_decimals(o) for o in operands)
    if step == 0:
        return 0
    numbers = []
    count = 0
    while (step > 0 and first + count * step <= last + 1e-9) or (step < 0 and first + count * step >= last - 1e-9):
        numbers.append(f"{first + count * step:.{places}f}")
        count += 1
    if pad and numbers:
        width = max(len(n) for n in numbers)
        numbers = [("-" + n[1:].zfill(width - 1)) if n.startswith("-") else n.zfill(width) for n in numbers]
    io.out((separator.join(numbers) + ("\n" if numbers else "")).encode())
    return 0


def today(moment: float) -> str:
    """`date`'s default format (UTC, as containers have no zone data)."""
    return _utc(moment).strftime("%a %b %e %H:%M:%S UTC %Y")


def _utc(moment: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(moment, datetime.timezone.utc)


async def date(shell: Shell, args: list[str], io: Streams) -> int:
    operands = [a for a in args if a not in ("-u", "--utc", "-R")]
    moment = shell.clock.now()
    if "-R" in args:
        io.out((_utc(moment).strftime("%a, %d %b %Y %H:%M:%S +0000") + "\n").encode())
        return 0
    if not operands:
        io.out((today(moment) + "\n").encode())
        return 0
    if not operands[0].startswith("+") or len(operands) > 1:
        io.err(f"date: invalid date '{operands[-1]}'\n".encode())
        return 1
    fmt = operands[0][1:]
    fmt = fmt.replace("%%", "\0").replace("%s", str(int(moment))).replace("%N", f"{int(moment % 1 * 1e9):09d}")
    io.out((_utc(moment).strftime(fmt).replace("\0", "%") + "\n").encode())
    return 0
