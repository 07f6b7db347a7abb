"""awk's grammar, the part `awk` reads: tokens and a parse tree of items, statements and
expressions (precedence from `||` down to `* / %`, concatenation by juxtaposition).

Guarantees: `Program(source)` holds `items` as (kind, pattern, action) with kind BEGIN, END or
MAIN, each action a list of statement tuples and each expression a tuple tree (`awk.Run` evaluates
them); a `/` after an operand is division, elsewhere it opens a regular expression; text it cannot
read raises `AwkSyntax`, never another exception.
"""

from __future__ import annotations

import re
from typing import Any

TOKEN = re.compile(r'\s*(?:(\d+(?:\.\d*)?)|("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_]*)|(/(?:[^/\\\n]|\\.)*/)|'
                   r'(\+\+|--|\+=|-=|\*=|/=|==|!=|<=|>=|&&|\|\||!~|[-+*/%<>=!~$(){};,\n?:]))')
FUNCTIONS = ("length", "substr", "index", "toupper", "tolower")


class AwkSyntax(Exception):
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
