"""The small part of kubectl's JSONPath that CRD printer columns and scale paths use.

Guarantees: `find(obj, path)` never raises on any object or path; it returns the matches in order
(an empty list for a bad path or a missing field). Supported steps: `.field`, `['field']`, `[n]`,
`[*]`, `..` is not, and the filter `[?(@.a.b=="x")]` / `!=` (string, number or boolean literal).
`set_value` writes a plain dotted path (`.spec.replicas`), creating objects on the way.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FILTER = re.compile(r"^\?\(@((?:\.[A-Za-z0-9_\-]+)+)\s*(==|!=)\s*(.+)\)$")


def _steps(path: str) -> list[str] | None:
    """`.a.b[0][?(@.x=="y")]` → ["a", "b", "[0]", "[?(@.x==\"y\")]"]; None when malformed."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ".":
            j = i + 1
            while j < len(text) and text[j] not in ".[":
                j += 1
            if j == i + 1:
                return None
            out.append(text[i + 1:j])
            i = j
        elif ch == "[":
            depth, j = 0, i
            while j < len(text):
                if text[j] == "[":
                    depth += 1
                elif text[j] == "]":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= len(text):
                return None
            out.append(text[i:j + 1])
            i = j + 1
        elif ch == "$" and i == 0:
            i += 1
        else:
            return None
    return out


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _step(values: list[Any], step: str) -> list[Any]:
    out: list[Any] = []
    if not step.startswith("["):
        return [v[step] for v in values if isinstance(v, dict) and step in v]
    inner = step[1:-1].strip()
    if inner == "*":
        for v in values:
            out.extend(v.values() if isinstance(v, dict) else v if isinstance(v, list) else [])
        return out
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return [v[inner[1:-1]] for v in values if isinstance(v, dict) and inner[1:-1] in v]
    if re.fullmatch(r"-?\d+", inner):
        index = int(inner)
        for v in values:
            if isinstance(v, list) and -len(v) <= index < len(v):
                out.append(v[index])
        return out
    match = _FILTER.match(inner)
    if match:
        keys, op, wanted = match.group(1).split(".")[1:], match.group(2), _literal(match.group(3))
        for v in values:
            for item in v if isinstance(v, list) else []:
                found = find(item, "." + ".".join(keys))
                hit = bool(found) and found[0] == wanted
                if (op == "==" and hit) or (op == "!=" and found and not hit):
                    out.append(item)
    return out


def find(obj: Any, path: str) -> list[Any]:
    """Every value `path` selects in `obj`, in order."""
    steps = _steps(path) if isinstance(path, str) else None
    if not steps:
        return []
    values = [obj]
    for step in steps:
        values = _step(values, step)
        if not values:
            return []
    return values


def first(obj: Any, path: str) -> Any:
    found = find(obj, path)
    return found[0] if found else None


def valid(path: str) -> bool:
    return bool(isinstance(path, str) and _steps(path))


def plain_fields(path: str) -> list[str] | None:
    """The field names of a plain dotted path, or None when it has brackets or is malformed."""
    steps = _steps(path) if isinstance(path, str) else None
    if not steps or any(s.startswith("[") for s in steps):
        return None
    return steps


def set_value(obj: dict, path: str, value: Any) -> None:
    fields = plain_fields(path)
    if not fields:
        raise ValueError(f"not a plain path: {path}")
    target = obj
    for name in fields[:-1]:
        if not isinstance(target.get(name), dict):
            target[name] = {}
        target = target[name]
    target[fields[-1]] = value
