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

from control.userland.files import FsError
from control.userland.formatting import printf_text
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

TOKEN = re.compile(r'\s*(?:(\d+(?:\.\d*)?)|("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_]*)|(/(?:[^/\\\n]|\\.)*/)|'
                   r'(\+\+|--|\+=|-=|\*=|/=|==|!=|<=|>=|&&|\|\||!~|[-+*/%<>=!~$(){};,\n?:]))')
FUNCTIONS = ("length", "substr", "index", "toupper", "tolower")


class AwkSyntax(Exception):
    pass


class _Next(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        if text[i] in " \t":
            i += 1
            continue
        match = TOKEN.match(text, i)
        if not match or match.end() == i:
            raise AwkSyntax(text[i])
        number, string, name, regex, op = match.groups()
        operand_before = out and (out[-1][0] in ("num", "str", "name", "re") or out[-1][1] in (")", "$"))
        if regex is not None and operand_before:  # `a / b / c`: division, not a regex
            match = re.compile(r"\s*(/=?)").match(text, i)
            op, regex = match.group(1), None  # type: ignore[union-attr]
        if number is not None:
            out.append(("num", number))
        elif string is not None:
            out.append(("str", string[1:-1].encode().decode("unicode_escape")))
        elif name is not None:
            out.append(("name", name))
        elif regex is not None:
            out.append(("re", regex[1:-1]))
        else:
            out.append(("op", op))
        i = match.end()  # type: ignore[union-attr]
    return out


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


class Program:
    """A parsed program: its items as (kind, pattern, action) with kind BEGIN, END or MAIN."""

    def __init__(self, source: str):
        self.tokens = _tokens(source)
        self.pos = 0
        self.items: list[tuple[str, Any, Any]] = []
        while self._skip_separators():
            if self._at("name", "BEGIN") or self._at("name", "END"):
                kind = self._take()[1]
                self.items.append((kind, None, self._block()))
                continue
            pattern = None if self._at("op", "{") else self._expression()
            action = self._block() if self._at("op", "{") else None
            self.items.append(("MAIN", pattern, action))

    # --- parsing -------------------------------------------------------------------------------

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _at(self, kind: str, value: str | None = None) -> bool:
        token = self._peek()
        return token is not None and token[0] == kind and (value is None or token[1] == value)

    def _take(self) -> tuple[str, str]:
        token = self._peek()
        if token is None:
            raise AwkSyntax("end")
        self.pos += 1
        return token

    def _expect(self, value: str) -> None:
        if self._take() != ("op", value):
            raise AwkSyntax(value)

    def _skip_separators(self) -> bool:
        while self._at("op", "\n") or self._at("op", ";"):
            self.pos += 1
        return self._peek() is not None

    def _block(self) -> list:
        self._expect("{")
        statements = []
        while True:
            while self._at("op", "\n") or self._at("op", ";"):
                self.pos += 1
            if self._at("op", "}"):
                self.pos += 1
                return statements
            statements.append(self._statement())

    def _statement(self) -> Any:
        if self._at("op", "{"):
            return ("block", self._block())
        if self._at("name", "print") or self._at("name", "printf"):
            name = self._take()[1]
            args = []
            if not (self._at("op", ";") or self._at("op", "\n") or self._at("op", "}") or self._peek() is None):
                args.append(self._expression(no_gt=True))
                while self._at("op", ","):
                    self.pos += 1
                    args.append(self._expression(no_gt=True))
            return (name, args)
        if self._at("name", "if"):
            self.pos += 1
            self._expect("(")
            condition = self._expression()
            self._expect(")")
            while self._at("op", "\n"):
                self.pos += 1
            then = self._statement()
            while self._at("op", ";") or self._at("op", "\n"):
                if self.pos + 1 < len(self.tokens) and self.tokens[self.pos + 1] == ("name", "else"):
                    self.pos += 1
                else:
                    break
            otherwise = None
            if self._at("name", "else"):
                self.pos += 1
                otherwise = self._statement()
            return ("if", condition, then, otherwise)
        if self._at("name", "next"):
            self.pos += 1
            return ("next",)
        return ("expr", self._expression())

    def _expression(self, no_gt: bool = False) -> Any:
        return self._ternary(no_gt)

    def _ternary(self, no_gt: bool) -> Any:
        condition = self._binary(0, no_gt)
        if self._at("op", "?"):
            self.pos += 1
            yes = self._ternary(no_gt)
            self._expect(":")
            return ("?", condition, yes, self._ternary(no_gt))
        if condition[0] in ("var", "field") and self._peek() in [("op", o) for o in ("=", "+=", "-=", "*=", "/=")]:
            op = self._take()[1]
            return ("assign", op, condition, self._ternary(no_gt))
        return condition

    LEVELS = [("||",), ("&&",), ("~", "!~"), ("<", "<=", ">", ">=", "==", "!="), ("concat",), ("+", "-"),
              ("*", "/", "%")]

    def _binary(self, level: int, no_gt: bool) -> Any:
        if level == len(self.LEVELS):
            return self._unary(no_gt)
        left = self._binary(level + 1, no_gt)
        ops = self.LEVELS[level]
        while True:
            if ops == ("concat",):
                if self._starts_operand():
                    left = ("concat", left, self._binary(level + 1, no_gt))
                    continue
                return left
            token = self._peek()
            if token is None or token[0] != "op" or token[1] not in ops or (no_gt and token[1] == ">"):
                return left
            self.pos += 1
            left = (token[1], left, self._binary(level + 1, no_gt))

    def _starts_operand(self) -> bool:
        token = self._peek()
        if token is None:
            return False
        if token[0] in ("num", "str", "re"):
            return True
        if token[0] == "name":
            return token[1] not in ("print", "printf", "if", "else", "next", "BEGIN", "END")
        return token[1] in ("$", "(", "!", "-") and token[1] not in ("-",)

    def _unary(self, no_gt: bool) -> Any:
        if self._at("op", "!"):
            self.pos += 1
            return ("not", self._unary(no_gt))
        if self._at("op", "-"):
            self.pos += 1
            return ("neg", self._unary(no_gt))
        if self._at("op", "++") or self._at("op", "--"):
            op = self._take()[1]
            return ("pre", op, self._unary(no_gt))
        value = self._primary(no_gt)
        if self._at("op", "++") or self._at("op", "--"):
            return ("post", self._take()[1], value)
        return value

    def _primary(self, no_gt: bool) -> Any:
        kind, value = self._take()
        if kind == "num":
            return ("num", float(value))
        if kind == "str":
            return ("str", value)
        if kind == "re":
            return ("~", ("field", ("num", 0.0)), ("re", value))
        if kind == "name" and value in FUNCTIONS:
            args = []
            if self._at("op", "("):
                self.pos += 1
                while not self._at("op", ")"):
                    args.append(self._expression())
                    if self._at("op", ","):
                        self.pos += 1
                self._expect(")")
            return ("call", value, args)
        if kind == "name":
            return ("var", value)
        if (kind, value) == ("op", "$"):
            return ("field", self._primary(no_gt))
        if (kind, value) == ("op", "("):
            inner = self._expression()
            self._expect(")")
            return inner
        raise AwkSyntax(value)


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
            inputs = []
            for name in files or ["-"]:
                if name == "-":
                    inputs.append(io.stdin)
                    continue
                try:
                    inputs.append(shell.fs.read(shell.fs.resolve(shell.cwd, name)))
                except FsError as exc:
                    io.err(f'awk: cannot open "{name}" ({exc})\n'.encode())
                    status = 2
            for data in inputs:
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
