"""Whether a CustomResourceDefinition's openAPIV3Schema is a structural schema Kubernetes accepts.

Guarantees: `structural_causes(schema, path)` never raises; it lists, as 422 causes at paths like
`spec.versions[0].schema.openAPIV3Schema.properties[spec].type`, every rule broken: `type: object`
at the root, a type on every field (unless int-or-string or preserve-unknown-fields), `items` on
arrays, no `$ref`/`definitions`/`patternProperties` and friends, valid patterns, properties and
additionalProperties not together, defaults that satisfy their own schema.
"""

from __future__ import annotations

import re
from typing import Any

from control.errors import go_value
from control.kinds.openapi_schema import TYPES, Cause, value_causes

# Python's re error texts → Go's regexp/syntax error codes, which kube-apiserver prints (the
# pattern is compiled by Go there); the first matching prefix wins.
_GO_REGEXP_ERRORS = (
    ("missing ), unterminated subpattern", "missing closing )"),
    ("unbalanced parenthesis", "unexpected )"),
    ("unterminated character set", "missing closing ]"),
    ("nothing to repeat", "missing argument to repetition operator"),
    ("multiple repeat", "invalid nested repetition operator"),
    ("bad escape (end of pattern)", "trailing backslash at end of expression"),
    ("bad escape", "invalid escape sequence"),
    ("bad character range", "invalid character class range"),
)


def go_regexp_error(exc: re.error, pattern: str) -> str:
    """How Go's regexp.Compile would word the failure: `error parsing regexp: <code>: `<expr>``."""
    code = next((go for python, go in _GO_REGEXP_ERRORS if exc.msg.startswith(python)),
                "invalid or unsupported Perl syntax")
    return f"error parsing regexp: {code}: `{pattern}`"


_FORBIDDEN = ("$ref", "definitions", "dependencies", "id", "$schema", "patternProperties", "additionalItems")


def structural_causes(schema: Any, path: str) -> list[Cause]:
    """Why `schema` (a CRD version's openAPIV3Schema at `path`) is not a structural schema."""
    if not isinstance(schema, dict):
        return [{"reason": "FieldValueRequired", "field": path, "message": "Required value: schemas are required"}]
    out: list[Cause] = []
    if schema.get("type") != "object":
        out.append({"reason": "FieldValueInvalid", "field": f"{path}.type",
                    "message": f'Invalid value: {go_value(schema.get("type", ""))}: must be object at the root'})
    _structural(schema, path, out, 0, root=True)
    return out


def _structural(schema: Any, path: str, out: list[Cause], depth: int, *, root: bool = False) -> None:
    if not isinstance(schema, dict) or depth > 64:
        if not isinstance(schema, dict):
            out.append({"reason": "FieldValueInvalid", "field": path, "message": "Invalid value: must be a schema object"})
        return
    for key in _FORBIDDEN:
        if key in schema:
            out.append({"reason": "FieldValueForbidden", "field": f"{path}.{key}", "message": "Forbidden: must not be set"})
    kind = schema.get("type")
    special = schema.get("x-kubernetes-int-or-string") is True or schema.get("x-kubernetes-preserve-unknown-fields") is True
    if kind is None and not special and not root:
        out.append({"reason": "FieldValueRequired", "field": f"{path}.type",
                    "message": "Required value: must not be empty for specified object fields"})
    elif kind is not None and kind not in TYPES:
        out.append({"reason": "FieldValueNotSupported", "field": f"{path}.type",
                    "message": f"Unsupported value: {go_value(kind)}: supported values: "
                               + ", ".join(f'"{t}"' for t in ("array", "boolean", "integer", "number", "object", "string"))})
    if kind == "array" and not isinstance(schema.get("items"), dict):
        out.append({"reason": "FieldValueRequired", "field": f"{path}.items",
                    "message": "Required value: must be specified"})
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as exc:
            out.append({"reason": "FieldValueInvalid", "field": f"{path}.pattern",
                        "message": f"Invalid value: {go_value(pattern)}: must be a valid regular expression, "
                                   f"but isn't: {go_regexp_error(exc, pattern)}"})
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if props is not None and not isinstance(props, dict):
        out.append({"reason": "FieldValueInvalid", "field": f"{path}.properties", "message": "Invalid value: must be a map"})
        props = None
    if props and extra not in (None, True) and extra is not False:
        out.append({"reason": "FieldValueForbidden", "field": f"{path}.additionalProperties",
                    "message": "Forbidden: additionalProperties and properties are mutual exclusive"})
    if extra is False and not props:
        out.append({"reason": "FieldValueForbidden", "field": f"{path}.additionalProperties",
                    "message": "Forbidden: additionalProperties cannot be set to false"})
    for name, sub in (props or {}).items():
        _structural(sub, f"{path}.properties[{name}]", out, depth + 1)
    if isinstance(extra, dict):
        _structural(extra, f"{path}.additionalProperties", out, depth + 1)
    if isinstance(schema.get("items"), dict):
        _structural(schema["items"], f"{path}.items", out, depth + 1)
    if "default" in schema and isinstance(schema.get("default"), (dict, list, str, int, float, bool)):
        for problem in value_causes(schema["default"], schema):
            out.append({"reason": "FieldValueInvalid", "field": f"{path}.default",
                        "message": f"Invalid value: {go_value(schema['default'])}: {problem['message']}"})
            break
