"""Go's words for a body that is not JSON, so the hub's 400s read as kube-apiserver's.

Guarantees: `syntax_error(text)` is None for valid JSON and otherwise the message Go's
`encoding/json` gives for the first error (`invalid character 'x' looking for beginning of value`,
`unexpected end of JSON input`, ...), found by a scanner with the states of Go's
`encoding/json/scanner.go`; `summary(body)` is the excerpt kube-apiserver appends
(`handlers/rest.go` summarizeData). Called only after Python's parser refused a body, so a
valid request never pays for the scan. No Python wording (`Expecting value`, `line 1 column 2`) is
ever produced here.
"""

from __future__ import annotations

from typing import Any

END = "unexpected end of JSON input"
_SPACE = " \t\r\n"
_ESCAPES = 'bfnrt\\/"'
_HEX = "0123456789abcdefABCDEF"
_GO_QUOTE = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
             "\\": "\\\\"}
# What Go names a JSON value of each Python type in "cannot unmarshal X into Go value".
_JSON_TYPE = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}
# The struct kube-apiserver decodes first to find apiVersion and kind (runtime/serializer/json/meta.go).
FIND_KIND_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'


def quote_char(char: str) -> str:
    """Go's quoteChar: the offending character in single quotes, escaped as strconv.Quote does."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    if char in _GO_QUOTE:
        return f"'{_GO_QUOTE[char]}'"
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return f"'\\x{ord(char):02x}'"
    return f"'{char}'"


class _Stop(Exception):
    """The scan found its error; the message is Go's."""


class _Scanner:
    def __init__(self, text: str):
        self.text, self.at = text, 0

    def peek(self) -> str:
        if self.at >= len(self.text):
            raise _Stop(END)
        return self.text[self.at]

    def fail(self, context: str) -> _Stop:
        return _Stop(f"invalid character {quote_char(self.text[self.at])} {context}")

    def space(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in _SPACE:
            self.at += 1

    def value(self) -> None:
        self.space()
        char = self.peek()
        if char == "{":
            self.obj()
        elif char == "[":
            self.array()
        elif char == '"':
            self.string()
        elif char == "-" or char.isdigit() and char.isascii():
            self.number()
        elif char in "tfn":
            self.literal({"t": "true", "f": "false", "n": "null"}[char])
        else:
            raise self.fail("looking for beginning of value")

    def obj(self) -> None:
        self.at += 1
        self.space()
        if self.peek() == "}":
            self.at += 1
            return
        while True:
            self.space()
            if self.peek() != '"':
                raise self.fail("looking for beginning of object key string")
            self.string()
            self.space()
            if self.peek() != ":":
                raise self.fail("after object key")
            self.at += 1
            self.value()
            self.space()
            char = self.peek()
            self.at += 1
            if char == "}":
                return
            if char != ",":
                self.at -= 1
                raise self.fail("after object key:value pair")

    def array(self) -> None:
        self.at += 1
        self.space()
        if self.peek() == "]":
            self.at += 1
            return
        while True:
            self.value()
            self.space()
            char = self.peek()
            self.at += 1
            if char == "]":
                return
            if char != ",":
                self.at -= 1
                raise self.fail("after array element")

    def string(self) -> None:
        self.at += 1
        while True:
            char = self.peek()
            if char == '"':
                self.at += 1
                return
            if char == "\\":
                self.at += 1
                escape = self.peek()
                if escape == "u":
                    for _ in range(4):
                        self.at += 1
                        if self.peek() not in _HEX:
                            raise self.fail("in \\u hexadecimal character escape")
                elif escape not in _ESCAPES:
                    raise self.fail("in string escape code")
            elif ord(char) < 0x20:
                raise self.fail("in string literal")
            self.at += 1

    def digits(self, context: str) -> None:
        if not (self.peek().isascii() and self.peek().isdigit()):
            raise self.fail(context)
        while self.at < len(self.text) and self.text[self.at].isascii() and self.text[self.at].isdigit():
            self.at += 1

    def number(self) -> None:
        if self.peek() == "-":
            self.at += 1
        if self.peek() == "0":
            self.at += 1
        else:
            self.digits("in numeric literal")
        if self.at < len(self.text) and self.text[self.at] == ".":
            self.at += 1
            self.digits("after decimal point in numeric literal")
        if self.at < len(self.text) and self.text[self.at] in "eE":
            self.at += 1
            if self.peek() in "+-":
                self.at += 1
            self.digits("in exponent of numeric literal")

    def literal(self, word: str) -> None:
        for expected in word:
            if self.peek() != expected:
                raise self.fail(f"in literal {word} (expecting {quote_char(expected)})")
            self.at += 1


def syntax_error(text: str) -> str | None:
    """Go's message for the first syntax error of `text`, or None when Go would accept it."""
    scanner = _Scanner(text)
    try:
        scanner.value()
        scanner.space()
        if scanner.at < len(text):
            raise scanner.fail("after top-level value")
    except _Stop as stop:
        return str(stop)
    except RecursionError:
        return "exceeded max depth"
    return None


def unmarshal_error(value: Any, into: str = FIND_KIND_STRUCT) -> str:
    """Go's message for a well-formed JSON value of the wrong type (an array where an object goes)."""
    return f"json: cannot unmarshal {_JSON_TYPE.get(type(value), 'object')} into Go value of type {into}"


def summary(body: bytes, limit: int = 30) -> str:
    """The excerpt kube-apiserver shows after an unrecognized body: text when it opens like an
    object, else hex."""
    if not body:
        return "<empty>"
    if body[:1] == b"{":
        text = body[:limit].decode("utf-8", errors="replace")
        return text + " ..." if len(body) > limit else text
    return body[:limit].hex() + (" ..." if len(body) > limit else "")


def parse_error(text: str) -> str:
    """Go's message for a body Python's parser refused. NaN and Infinity, which Python's parser
    reads and the hub refuses, are syntax errors to the scanner, as to Go."""
    return syntax_error(text) or "exceeded max depth"  # the one thing Python refuses and Go's scanner does not
