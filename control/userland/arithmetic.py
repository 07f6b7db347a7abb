"""Shell arithmetic, `$((EXPRESSION))`, as POSIX sh (and busybox ash) evaluates it: signed 64-bit
integers, C's operators and precedence.

Guarantees: `evaluate(text, variables)` returns the value as sh prints it; a name reads its
variable (unset or empty is 0, a value that is no number is an error); `=`, `+=`, `-=`, `*=`, `/=`,
`%=` and `++`/`--` assign into `variables` as sh does. Operators: `( )`, unary `+ - ! ~`, `**`,
`* / %`, `+ -`, `<< >>`, `< <= > >=`, `== !=`, `&`, `^`, `|`, `&&`, `||` and `?:`; numbers are
decimal, `0x` hex or leading-0 octal. A malformed expression raises `ArithmeticFault` with ash's
wording (`arithmetic syntax error`, `divide by zero`), never another exception.
"""

from __future__ import annotations

import re

TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_][A-Za-z0-9_]*|\*\*|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||"
                   r"\+\+|--|[-+*/%&^|]=|[-+*/%<>&^|!~()?:=])")
BINARY = {  # operator -> precedence (higher binds tighter); `**` is right-associative
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
    "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10, "**": 11,
}
ASSIGN = ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=")
LIMIT = 1 << 63


class ArithmeticFault(Exception):
    pass


def _wrap(value: int) -> int:
    """Two's complement 64-bit, as ash's arith_t."""
    return (value + LIMIT) % (2 * LIMIT) - LIMIT


def _tokens(text: str) -> list[str]:
    out, i, text = [], 0, text.strip()
    while i < len(text):
        match = TOKEN.match(text, i)
        if not match:
            raise ArithmeticFault("arithmetic syntax error")
        out.append(match.group(1))
        i = match.end()
        while i < len(text) and text[i].isspace():
            i += 1
    return out


def _number(text: str) -> int | None:
    try:
        if text[:2].lower() == "0x":
            return int(text, 16)
        if len(text) > 1 and text.startswith("0"):
            return int(text, 8)
        return int(text)
    except ValueError:
        return None


class _Parser:
    def __init__(self, tokens: list[str], variables: dict[str, str]):
        self.tokens, self.variables, self.pos = tokens, variables, 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise ArithmeticFault("arithmetic syntax error")
        self.pos += 1
        return token

    def read(self, name: str) -> int:
        raw = self.variables.get(name, "").strip()
        if not raw:
            return 0
        value = _number(raw.lstrip("-+"))
        if value is None:
            raise ArithmeticFault("arithmetic syntax error")
        return -value if raw.startswith("-") else value

    def assign(self, name: str, value: int) -> int:
        self.variables[name] = str(_wrap(value))
        return _wrap(value)

    def expression(self) -> int:
        token = self.peek()
        if token is not None and token[0].isalpha() or token == "_":
            following = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
            if following in ASSIGN:
                self.pos += 2
                value = self.expression()
                if following != "=":
                    value = self.apply(following[:-1], self.read(token), value)
                return self.assign(token, value)
        return self.conditional()

    def conditional(self) -> int:
        condition = self.binary(1)
        if self.peek() != "?":
            return condition
        self.take()
        yes = self.expression()
        if self.take() != ":":
            raise ArithmeticFault("arithmetic syntax error")
        no = self.expression()
        return yes if condition else no

    def binary(self, floor: int) -> int:
        left = self.unary()
        while (op := self.peek()) in BINARY and BINARY[op] >= floor:
            self.take()
            right = self.binary(BINARY[op] + (0 if op == "**" else 1))
            left = self.apply(op, left, right)
        return left

    @staticmethod
    def apply(op: str, left: int, right: int) -> int:
        if op in ("/", "%") and right == 0:
            raise ArithmeticFault("divide by zero")
        if op == "**" and right < 0:
            raise ArithmeticFault("exponent less than 0")
        quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1) if op in ("/", "%") else 0
        results = {
            "||": lambda: int(bool(left) or bool(right)), "&&": lambda: int(bool(left) and bool(right)),
            "|": lambda: left | right, "^": lambda: left ^ right, "&": lambda: left & right,
            "==": lambda: int(left == right), "!=": lambda: int(left != right), "<": lambda: int(left < right),
            "<=": lambda: int(left <= right), ">": lambda: int(left > right), ">=": lambda: int(left >= right),
            "<<": lambda: left << (right & 63), ">>": lambda: left >> (right & 63), "+": lambda: left + right,
            "-": lambda: left - right, "*": lambda: left * right, "/": lambda: quotient,
            "%": lambda: left - quotient * right, "**": lambda: left ** right,
        }
        return _wrap(results[op]())

    def unary(self) -> int:
        token = self.take()
        if token in ("+", "-", "!", "~"):
            value = self.unary()
            return {"+": value, "-": _wrap(-value), "!": int(not value), "~": ~value}[token]
        if token in ("++", "--"):
            name = self.take()
            if not (name[0].isalpha() or name[0] == "_"):
                raise ArithmeticFault("arithmetic syntax error")
            return self.assign(name, self.read(name) + (1 if token == "++" else -1))
        if token == "(":
            value = self.expression()
            if self.take() != ")":
                raise ArithmeticFault("arithmetic syntax error")
            return value
        if token[0].isdigit():
            value = _number(token)
            if value is None:
                raise ArithmeticFault("arithmetic syntax error")
            return _wrap(value)
        if token[0].isalpha() or token[0] == "_":
            if self.peek() in ("++", "--"):
                old = self.read(token)
                self.assign(token, old + (1 if self.take() == "++" else -1))
                return old
            return self.read(token)
        raise ArithmeticFault("arithmetic syntax error")


def evaluate(text: str, variables: dict[str, str]) -> int:
    """The value of `text` (an empty expression is 0), assigning into `variables`."""
    tokens = _tokens(text)
    if not tokens:
        return 0
    parser = _Parser(tokens, variables)
    value = parser.expression()
    if parser.peek() is not None:
        raise ArithmeticFault("arithmetic syntax error")
    return value


def closing(line: str, i: int) -> int:
    """The index of the second `)` of the `))` closing the `$((` at `line[i]`; -1 when there is none
    (then `$((` is a command substitution of a subshell, which this shell reads as `$(`)."""
    depth, j = 0, i + 3
    while j < len(line):
        if line[j] == "(":
            depth += 1
        elif line[j] == ")":
            if depth == 0:
                return j + 1 if line.startswith("))", j) else -1
            depth -= 1
        j += 1
    return -1
