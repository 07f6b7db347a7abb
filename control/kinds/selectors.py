"""Kubernetes label and field selectors: parsing, validation and matching.

Guarantees:
- `parse_label_selector` accepts the string grammar of Kubernetes' `labels.Parse` (`a=b`, `a==b`,
  `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a`, `!a`, `a>1`, `a<1`; comma = AND; blanks ignored) and
  fails only with `SelectorError`, worded like Kubernetes (`unable to parse requirement: ...`).
- Keys and values are validated as label keys/values; `Gt`/`Lt` values must be integers.
- `!=` and `notin` also match objects that lack the key; `Gt`/`Lt` never match a missing or
  non-integer label.
- `str(selector)` is a canonical form (requirements sorted by key, values sorted) that parses back
  to an equal selector.
- `label_selector_from_object`: a `None` selector object matches NOTHING (`matches_nothing` is
  True), while `{}` (or one with empty matchLabels/matchExpressions) matches EVERYTHING — the same
  asymmetry as Kubernetes' `LabelSelectorAsSelector`.
- Field selectors support `=`, `==`, `!=`, comma = AND and the `\\,` `\\=` `\\\\` escapes; a field the
  getter cannot find reads as "" (so `spec.nodeName=` finds unscheduled pods). Which field names
  are allowed is the caller's business.
- Nothing here imports the rest of the project, so any module may use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from control.errors import go_value

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_INTEGER = re.compile(r"^[+-]?[0-9]+$")
_CHARSET = "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_NAME_HELP = f"name part must consist of {_CHARSET}"
_VALUE_HELP = f"a valid label must be an empty string or consist of {_CHARSET}"


class SelectorError(ValueError):
    """A selector that cannot be parsed or is invalid; the message is fit for a 400 Status."""


# --- label keys and values -------------------------------------------------------------------

def _key_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash and "/" in prefix:
        return ("a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an "
                "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
    if slash and not prefix:
        return "prefix part must be non-empty"
    if prefix and (len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        return ("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character")
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _NAME.match(name):
        return _NAME_HELP
    return None


def _value_problem(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 characters"
    if value and not _NAME.match(value):
        return _VALUE_HELP
    return None


# --- requirements ----------------------------------------------------------------------------

# Operator spellings are Kubernetes' `selection.Operator` values.
_SET_OPS = ("in", "notin")
_EXACT_OPS = ("=", "==", "!=")
_NUMERIC_OPS = ("gt", "lt")
_UNARY_OPS = ("exists", "!")


@dataclass(frozen=True)
class Requirement:
    """One clause: `key`, Kubernetes operator name, and the values sorted as Kubernetes sorts them."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        op, present = self.operator, self.key in labels
        if op == "exists":
            return present
        if op == "!":
            return not present
        if op in ("in", "=", "=="):
            return present and labels[self.key] in self.values
        if op in ("notin", "!="):
            return not present or labels[self.key] not in self.values
        # Gt / Lt: a label that is absent or not an integer never satisfies the comparison.
        if not present or not _INTEGER.match(labels[self.key] or ""):
            return False
        have, want = int(labels[self.key]), int(self.values[0])
        return have > want if op == "gt" else have < want

    def __str__(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "!":
            return f"!{self.key}"
        if self.operator in _SET_OPS:
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        symbol = {"gt": ">", "lt": "<"}.get(self.operator, self.operator)
        return f"{self.key}{symbol}{self.values[0]}"


def make_requirement(key: str, operator: str, values: list[str] | tuple[str, ...] = ()) -> Requirement:
    """Validate and build one requirement (Kubernetes' `NewRequirement`); raises SelectorError."""
    problem = _key_problem(key) if isinstance(key, str) else "must be a string"
    if problem:
        raise SelectorError(f'key: Invalid value: {go_value(key)}: {problem}')
    vals = list(values)
    if operator in _SET_OPS and not vals:
        raise SelectorError("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty")
    if operator in _EXACT_OPS and len(vals) != 1:
        raise SelectorError("values: Invalid value: exact-match compatibility requires one single value")
    if operator in _UNARY_OPS and vals:
        raise SelectorError("values: Invalid value: values set must be empty for exists and does not exist")
    if operator in _NUMERIC_OPS:
        if len(vals) != 1:
            raise SelectorError("values: Required value: for 'Gt', 'Lt' operators, exactly one value is required")
        if not isinstance(vals[0], str) or not _INTEGER.match(vals[0]):
            raise SelectorError(f"values[0]: Invalid value: {go_value(vals[0])}: for 'Gt', 'Lt' operators, "
                                "the value must be an integer")
    if operator not in _SET_OPS + _EXACT_OPS + _NUMERIC_OPS + _UNARY_OPS:
        raise SelectorError(f'operator: Unsupported value: {go_value(operator)}')
    for i, value in enumerate(vals):
        problem = _value_problem(value) if isinstance(value, str) else "must be a string"
        if problem:
            raise SelectorError(f'values[{i}][{key}]: Invalid value: {go_value(value)}: {problem}')
    return Requirement(key, operator, tuple(sorted(set(vals))))


@dataclass(frozen=True)
class LabelSelector:
    """An AND of requirements. `matches_nothing` marks the selector made from a nil selector object."""

    requirements: tuple[Requirement, ...] = ()
    matches_nothing: bool = False

    @classmethod
    def nothing(cls) -> LabelSelector:
        return cls((), True)

    @property
    def is_everything(self) -> bool:
        return not self.requirements and not self.matches_nothing

    def matches(self, labels: dict[str, str] | None) -> bool:
        if self.matches_nothing:
            return False
        have = labels or {}
        return all(r.matches(have) for r in self.requirements)

    def __str__(self) -> str:
        # Like Kubernetes, the nothing-selector prints as "" too: the string form cannot express it.
        return ",".join(str(r) for r in self.requirements)


def _selector(requirements: list[Requirement]) -> LabelSelector:
    # Kubernetes sorts by key (stably) so equal selectors print equally.
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


# --- label selector string parser ------------------------------------------------------------

# Token kinds are the symbol or keyword itself, or "ident" / "end".
_SYMBOLS = frozenset({"!", "!=", "(", ")", ",", "=", "==", ">", "<"})
_SPECIAL = frozenset("=!(),<>")
_BLANK = frozenset(" \t\r\n")
_BINARY_OPS = {"in": "in", "notin": "notin", "=": "=", "==": "==", "!=": "!=", ">": "gt", "<": "lt"}


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _BLANK:
            i += 1
        if i >= n:
            return tokens + [("end", "")]
        if text[i] in _SPECIAL:
            # Every single special character is a token, so the longest match is at most two.
            width = 2 if text[i:i + 2] in _SYMBOLS else 1
            tokens.append((text[i:i + width],) * 2)
            i += width
            continue
        start = i
        while i < n and text[i] not in _BLANK and text[i] not in _SPECIAL:
            i += 1
        word = text[start:i]
        tokens.append((word if word in ("in", "notin") else "ident", word))


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[str, str]:
        kind, lit = self.tokens[self.pos]
        # Where a value or key is expected, the keywords `in`/`notin` are plain identifiers.
        if values and kind in ("in", "notin"):
            kind = "ident"
        return kind, lit

    def take(self, values: bool = True) -> tuple[str, str]:
        token = self.peek(values)
        if token[0] != "end":
            self.pos += 1
        return token

    def parse(self) -> list[Requirement]:
        out: list[Requirement] = []
        while True:
            kind, lit = self.peek()
            if kind == "end":
                return out
            if kind not in ("ident", "!"):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                out.append(self.requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            kind, lit = self.take()
            if kind == "end":
                return out
            if kind != ",":
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            kind, lit = self.peek()
            if kind not in ("ident", "!"):
                raise SelectorError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        negated = False
        kind, lit = self.take()
        if kind == "!":
            negated = True
            kind, lit = self.take()
        if kind != "ident":
            raise SelectorError(f"found '{lit}', expected: identifier")
        key = lit
        # `!key` is complete by itself; whatever follows is the caller's problem, as in Kubernetes.
        if negated or self.peek()[0] in ("end", ","):
            return make_requirement(key, "!" if negated else "exists")
        kind, lit = self.take(values=False)
        if kind not in _BINARY_OPS:
            raise SelectorError(f"found '{lit}', expected: =, !=, ==, in, notin, >, <")
        op = _BINARY_OPS[kind]
        values = self.set_values() if op in _SET_OPS else self.exact_value()
        return make_requirement(key, op, values)

    def exact_value(self) -> list[str]:
        if self.peek()[0] in ("end", ","):
            return [""]
        kind, lit = self.take()
        if kind != "ident":
            raise SelectorError(f"found '{lit}', expected: identifier")
        return [lit]

    def set_values(self) -> list[str]:
        kind, lit = self.take()
        if kind != "(":
            raise SelectorError(f"found '{lit}', expected: '('")
        values: list[str] = []
        expect_value = True  # an empty slot between commas (or next to a paren) is the value ""
        while True:
            kind, lit = self.take()
            if kind == "ident" and expect_value:
                values.append(lit)
                expect_value = False
            elif kind in (",", ")"):
                if expect_value:
                    values.append("")
                if kind == ")":
                    return values
                expect_value = True
            else:
                raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a label selector string; "" (or only blanks) matches everything."""
    if not isinstance(text, str):
        raise SelectorError("label selector must be a string")
    return _selector(_Parser(text).parse())


_OBJECT_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_selector_from_object(sel: dict[str, Any] | None) -> LabelSelector:
    """`{matchLabels, matchExpressions}` to a selector. None matches nothing; {} matches everything."""
    if sel is None:
        return LabelSelector.nothing()
    if not isinstance(sel, dict):
        raise SelectorError("label selector must be an object")
    match_labels = sel.get("matchLabels") or {}
    expressions = sel.get("matchExpressions") or []
    if not isinstance(match_labels, dict) or not isinstance(expressions, list):
        raise SelectorError("matchLabels must be a map of strings and matchExpressions a list")
    out = [make_requirement(k, "=", [v]) for k, v in match_labels.items()]
    for expr in expressions:
        op = expr.get("operator") if isinstance(expr, dict) else None
        if op not in _OBJECT_OPS:
            raise SelectorError(f'"{op}" is not a valid label selector operator')
        values = expr.get("values") or []
        if not isinstance(values, list):
            raise SelectorError("matchExpressions values must be a list")
        out.append(make_requirement(expr.get("key"), _OBJECT_OPS[op], values))
    return _selector(out)


# --- field selectors -------------------------------------------------------------------------

_FIELD_OPS = ("!=", "==", "=")  # the order Kubernetes tries them at each position


@dataclass(frozen=True)
class FieldSelector:
    """An AND of (field, op, value) with op "=" (also written "==") or "!="."""

    terms: tuple[tuple[str, str, str], ...] = ()

    @property
    def requirements(self) -> list[tuple[str, str, str]]:
        return list(self.terms)

    @property
    def is_everything(self) -> bool:
        return not self.terms

    def fields(self) -> set[str]:
        return {f for f, _, _ in self.terms}

    def exact(self, field: str) -> str | None:
        """The value of the first `field=value` term, so a store can narrow its query by it."""
        for f, op, value in self.terms:
            if f == field and op == "=":
                return value
        return None

    def matches(self, getter: Callable[[str], str | None]) -> bool:
        for field, op, value in self.terms:
            have = getter(field)
            have = "" if have is None else have
            if (have == value) != (op == "="):
                return False
        return True

    def __str__(self) -> str:
        return ",".join(f"{f}{op}{escape_field_value(v)}" for f, op, v in self.terms)


def escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _scan(text: str) -> list[list[tuple[str, bool]]]:
    """Comma-separated terms as (character, was_escaped) pairs; bad escapes fail here."""
    terms: list[list[tuple[str, bool]]] = [[]]
    i = 0
    while i < len(text):
        if text[i] == "\\":
            seq = text[i:i + 2]
            if seq not in ("\\\\", "\\,", "\\="):
                raise SelectorError(f"invalid field selector: invalid escape sequence: {seq}")
            terms[-1].append((seq[1], True))
            i += 2
        elif text[i] == ",":
            terms.append([])
            i += 1
        else:
            terms[-1].append((text[i], False))
            i += 1
    return terms


def parse_field_selector(text: str) -> FieldSelector:
    """Parse `field=value,field!=value`; "" matches everything. Empty terms are skipped."""
    if not isinstance(text, str):
        raise SelectorError("field selector must be a string")
    terms = []
    for term in _scan(text):
        plain = "".join("\x00" if escaped else ch for ch, escaped in term)  # escapes never match an op
        if not plain.strip():
            continue
        # The first operator wins, trying "!=" then "==" then "=" at each position, as Kubernetes does.
        at, op = next(((i, op) for i in range(len(plain)) for op in _FIELD_OPS if plain.startswith(op, i)),
                      (None, ""))
        field = "".join(ch for ch, _ in term[:at]).strip() if at is not None else ""
        if not field:
            shown = "".join(("\\" + ch) if escaped else ch for ch, escaped in term)
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{shown}'")
        value = term[at + len(op):]
        for ch, escaped in value:
            if ch in ",=" and not escaped:
                raise SelectorError(f"invalid field selector: unescaped character in value: {ch}")
        terms.append((field, "!=" if op == "!=" else "=", "".join(ch for ch, _ in value)))
    return FieldSelector(tuple(terms))
