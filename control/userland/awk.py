"""busybox's `awk`, the basics one-liners use: `awk [-F SEP] [-v NAME=VALUE]... 'PROGRAM' [FILE...]`.

Guarantees: PROGRAM is `BEGIN {...}`, `END {...}` and `PATTERN {ACTION}` items (a missing
pattern matches every line, a missing action prints it); a pattern is an expression or `/REGEX/`
(matched against `$0`). Statements (`;` or newline separated, `{ }` blocks): `print [EXPR, ...]`
(joined by OFS, default " "), `printf FMT, EXPR...`, `if (EXPR) STATEMENT [else STATEMENT]`,
`next`, and expressions: numbers, "strings", variables, `$N` / `$NF` fields, `NR`, `NF`, `FS`,
`OFS`, assignment `= += -= *= /=`, `++`/`--`, `+ - * / %`, concatenation by juxtaposition,
comparisons `< <= > >= == !=`, `~ !~` (regex match), `&& || !`, `( )` and the functions
`length`, `substr`, `index`, `toupper`, `tolower`. Values are awk's: strings that look like
numbers compare as numbers, numbers print as integers when they are whole (else `%.6g`). Fields
split on runs of blanks (FS " ") or on FS (a single character literally, longer as a regex).
A program it cannot read is `awk: cmd. line:1: syntax error` (exit 2), an unreadable FILE
`awk: cannot open "FILE" (No such file or directory)` (exit 2).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from control.userland.awkgrammar import AwkSyntax, Program
from control.userland.inputs import each_input
from control.userland.formatting import printf_text
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

class _Next(Exception):
    pass


def number(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    match = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", str(value))
    return float(match.group(0)) if match else 0.0


def text(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.6g}"
    return str(value)


def _looks_numeric(value: Any) -> bool:
    return isinstance(value, float) or bool(re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", str(value)))


class Run:
    """One run of a program over its input: variables, the current record and its fields."""

    def __init__(self, program: Program, variables: dict[str, Any], out: list[str]):
        self.program, self.vars, self.out = program, variables, out
        self.fields: list[str] = [""]

    def set_record(self, line: str) -> None:
        separator = text(self.vars.get("FS", " "))
        if separator == " ":
            parts = line.split()
        elif len(separator) == 1:
            parts = line.split(separator) if line else []
        else:
            parts = re.split(separator, line) if line else []
        self.fields = [line, *parts]
        self.vars["NF"] = float(len(parts))

    def field(self, index: int) -> str:
        return self.fields[index] if 0 <= index < len(self.fields) else ""

    def set_field(self, index: int, value: str) -> None:
        while len(self.fields) <= index:
            self.fields.append("")
        self.fields[index] = value
        if index > 0:
            self.fields[0] = text(self.vars.get("OFS", " ")).join(self.fields[1:])
            self.vars["NF"] = float(len(self.fields) - 1)

    def execute(self, statements: list) -> None:
        for statement in statements:
            kind = statement[0]
            if kind == "block":
                self.execute(statement[1])
            elif kind == "print":
                values = [text(self.eval(arg)) for arg in statement[1]] or [self.field(0)]
                self.out.append(text(self.vars.get("OFS", " ")).join(values) + "\n")
            elif kind == "printf":
                values = [text(self.eval(arg)) for arg in statement[1]]
                if values:
                    self.out.append(printf_text(values[0], values[1:])[0])
            elif kind == "if":
                if self.truth(self.eval(statement[1])):
                    self.execute([statement[2]])
                elif statement[3] is not None:
                    self.execute([statement[3]])
            elif kind == "next":
                raise _Next()
            else:
                self.eval(statement[1])

    def truth(self, value: Any) -> bool:
        return number(value) != 0 if isinstance(value, float) or _looks_numeric(value) else value != ""

    def eval(self, node: Any) -> Any:  # noqa: C901 - one branch per operator, as awk's grammar has
        kind = node[0]
        if kind in ("num", "str"):
            return node[1]
        if kind == "re":
            return node[1]
        if kind == "var":
            return self.vars.get(node[1], "")
        if kind == "field":
            index = int(number(self.eval(node[1])))
            return self.field(index)
        if kind == "assign":
            _, op, target, value_node = node
            value = self.eval(value_node)
            if op != "=":
                value = {"+=": number(self.eval(target)) + number(value), "-=": number(self.eval(target)) - number(value),
                         "*=": number(self.eval(target)) * number(value),
                         "/=": number(self.eval(target)) / (number(value) or float("nan"))}[op]
            self.store(target, value)
            return value
        if kind in ("pre", "post"):
            old = number(self.eval(node[2]))
            new = old + (1 if node[1] == "++" else -1)
            self.store(node[2], new)
            return new if kind == "pre" else old
        if kind == "not":
            return float(not self.truth(self.eval(node[1])))
        if kind == "neg":
            return -number(self.eval(node[1]))
        if kind == "?":
            return self.eval(node[2]) if self.truth(self.eval(node[1])) else self.eval(node[3])
        if kind == "call":
            return self.call(node[1], [self.eval(arg) for arg in node[2]])
        left = self.eval(node[1])
        if kind == "&&":
            return float(self.truth(left) and self.truth(self.eval(node[2])))
        if kind == "||":
            return float(self.truth(left) or self.truth(self.eval(node[2])))
        right = self.eval(node[2])
        if kind == "concat":
            return text(left) + text(right)
        if kind in ("~", "!~"):
            found = re.search(text(right), text(left)) is not None
            return float(found == (kind == "~"))
        if kind in ("<", "<=", ">", ">=", "==", "!="):
            both = _looks_numeric(left) and _looks_numeric(right)
            a, b = (number(left), number(right)) if both else (text(left), text(right))
            return float({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[kind])
        a, b = number(left), number(right)
        if kind in ("/", "%") and b == 0:
            raise ZeroDivisionError("division by zero")
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / (b or 1), "%": a % b if b else 0.0}[kind]

    def store(self, target: Any, value: Any) -> None:
        if target[0] == "field":
            self.set_field(int(number(self.eval(target[1]))), text(value))
        else:
            self.vars[target[1]] = value

    def call(self, name: str, args: list[Any]) -> Any:
        first = text(args[0]) if args else self.field(0)
        if name == "length":
            return float(len(first))
        if name == "toupper":
            return first.upper()
        if name == "tolower":
            return first.lower()
        if name == "index":
            return float(first.find(text(args[1])) + 1) if len(args) > 1 else 0.0
        start = int(number(args[1])) if len(args) > 1 else 1
        length = int(number(args[2])) if len(args) > 2 else len(first)
        begin = max(start, 1)
        return first[begin - 1:max(begin - 1, start - 1 + length)]


async def awk(shell: Shell, args: list[str], io: Streams) -> int:
    variables: dict[str, Any] = {"FS": " ", "OFS": " ", "NR": 0.0, "NF": 0.0}
    rest, source, files = list(args), None, []
    while rest:
        arg = rest.pop(0)
        if arg.startswith("-F") and source is None:
            separator = arg[2:] or (rest.pop(0) if rest else " ")
            variables["FS"] = "\t" if separator == "\\t" else separator
        elif arg == "-v" and rest and source is None:
            name, _, value = rest.pop(0).partition("=")
            variables[name] = value
        elif source is None:
            source = arg
        else:
            files.append(arg)
    if source is None:
        io.err(b"Usage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...\n")
        return 1
    try:
        program = Program(source)
    except AwkSyntax:
        io.err(b"awk: cmd. line:1: syntax error\n")
        return 2
    out: list[str] = []
    run = Run(program, variables, out)
    status = 0
    try:
        for kind, _, action in program.items:
            if kind == "BEGIN":
                run.execute(action)
        if any(kind == "MAIN" for kind, _, _ in program.items) or any(kind == "END" for kind, _, _ in program.items):
            inputs = list(each_input(shell, files or ["-"], io, lambda name, exc: f'awk: cannot open "{name}" ({exc})\n'))
            status = 2 if None in inputs else 0
            for data in [data for data in inputs if data is not None]:
                for line in data.decode(errors="replace").splitlines():
                    variables["NR"] = number(variables["NR"]) + 1
                    run.set_record(line)
                    try:
                        for kind, pattern, action in program.items:
                            if kind == "MAIN" and (pattern is None or run.truth(run.eval(pattern))):
                                run.execute(action if action is not None else [("print", [])])
                    except _Next:
                        pass
        for kind, _, action in program.items:
            if kind == "END":
                run.execute(action)
    except ZeroDivisionError:
        io.out("".join(out).encode())
        io.err(b"awk: cmd. line:1: division by zero\n")
        return 2
    except (re.error, AwkSyntax):
        io.out("".join(out).encode())
        io.err(b"awk: cmd. line:1: syntax error\n")
        return 2
    io.out("".join(out).encode())
    return status


def reads_stdin(args: list[str]) -> bool:
    """awk reads stdin when no FILE follows its program (and the program has more than BEGIN)."""
    rest, source, files = list(args), None, []
    while rest:
        arg = rest.pop(0)
        if arg in ("-F", "-v") and source is None:
            rest = rest[1:]
        elif arg.startswith("-F") and source is None:
            continue
        elif source is None:
            source = arg
        else:
            files.append(arg)
    return source is not None and not files and not re.fullmatch(r"\s*BEGIN\s*\{.*\}\s*", source, re.S)
