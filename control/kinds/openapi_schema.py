"""Objects of custom kinds checked against a CustomResourceDefinition's OpenAPI v3 schema.

Guarantees (all pure, none raises on JSON-like input, however nested):
- `validate(obj, schema)` lists the value errors as Kubernetes' causes, in its wording
  (`spec.count: Invalid value: 0: spec.count in body should be greater than or equal to 1`,
  `spec.menu: Unsupported value: "x": supported values: "pasta", "pizza"`, `Required value`).
- `unknown_fields` lists the fields the schema does not declare, `prune` drops them (a copy);
  nothing under `x-kubernetes-preserve-unknown-fields: true` or a map's values schema is unknown.
- `apply_defaults` fills `default`s in place, as a structural schema does on create, update and read.
- `drop_nulls` removes nulls the schema does not allow (before defaulting, as Kubernetes does).
Only the root of a custom object is typed here: apiVersion, kind and metadata are checked by the hub.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any, Iterator

from control.errors import go_value

Schema = dict[str, Any]
Cause = dict[str, str]

_MAX_DEPTH = 200
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
TYPES = ("object", "array", "string", "integer", "number", "boolean")
_TOP_LEVEL = ("apiVersion", "kind", "metadata")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_matches(value: Any, wanted: str) -> bool:
    actual = _json_type(value)
    return actual == wanted or (wanted == "number" and actual == "integer")


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return {"reason": "FieldValueInvalid", "field": path,
            "message": f"Invalid value: {go_value(value)}: {detail}"}


def _size_causes(path: str, size: int, low: Any, high: Any, noun: str) -> Iterator[Cause]:
    """minItems/maxItems and minProperties/maxProperties, in Kubernetes' words (both say "items" when too many)."""
    if isinstance(low, int) and size < low:
        yield _invalid(path, size, f"{path} in body should have at least {low} {noun}")
    if isinstance(high, int) and size > high:
        yield {"reason": "FieldValueTooMany", "field": path, "message": f"Too many: {size}: must have at most {high} items"}


def _type_cause(path: str, value: Any, wanted: str) -> Cause:
    actual = _json_type(value)
    return {"reason": "FieldValueInvalid", "field": path or "<root>",
            "message": f'Invalid value: {go_value(actual)}: {path or "body"} in body must be of type {wanted}: "{actual}"'}


# --- validation ----------------------------------------------------------------------------------

def validate(obj: Any, schema: Schema) -> list[Cause]:
    """Value errors of `obj` under `schema` (the CRD version's openAPIV3Schema), root included."""
    if not isinstance(schema, dict):
        return []
    root = {k: v for k, v in schema.items() if k != "properties"}
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _TOP_LEVEL}
    root["properties"] = props
    root["required"] = [r for r in schema.get("required") or [] if r not in _TOP_LEVEL]
    return list(_validate(obj, root, "", 0))


def value_causes(value: Any, schema: Schema, path: str = "") -> list[Cause]:
    """Value errors of any value (e.g. a schema's own `default`) under a schema."""
    return list(_validate(value, schema, path, 0))


def _validate(value: Any, schema: Any, path: str, depth: int) -> Iterator[Cause]:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return
    if value is None:
        if schema.get("nullable") is not True and schema.get("type") in TYPES:
            yield _type_cause(path, value, schema["type"])
        return
    if schema.get("x-kubernetes-int-or-string") is True:
        if _json_type(value) not in ("integer", "string"):
            yield _type_cause(path, value, "integer or string")
            return
    else:
        wanted = schema.get("type")
        if wanted in TYPES and not _type_matches(value, wanted):
            yield _type_cause(path, value, wanted)
            return
    yield from _scalar_causes(value, schema, path)
    if isinstance(value, dict):
        yield from _object_causes(value, schema, path, depth)
    elif isinstance(value, list):
        yield from _array_causes(value, schema, path, depth)


def _scalar_causes(value: Any, schema: Schema, path: str) -> Iterator[Cause]:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        yield {"reason": "FieldValueNotSupported", "field": path,
               "message": f"Unsupported value: {go_value(value)}: supported values: "
                          + ", ".join(go_value(e) for e in enum)}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        fmt = schema.get("format")
        if schema.get("type") == "integer" and fmt in _INT_RANGES:
            low, high = _INT_RANGES[fmt]
            if not low <= value <= high:
                yield _invalid(path, value, f"{path} in body must be of type {fmt}: {go_value(value)}")
        yield from _bounds(value, schema, path)
    if isinstance(value, str):
        yield from _string_causes(value, schema, path)


def _bounds(value: float, schema: Schema, path: str) -> Iterator[Cause]:
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, (int, float)) and not isinstance(low, bool):
        if schema.get("exclusiveMinimum") is True and value <= low:
            yield _invalid(path, value, f"{path} in body should be greater than {go_value(low)}")
        elif value < low:
            yield _invalid(path, value, f"{path} in body should be greater than or equal to {go_value(low)}")
    if isinstance(high, (int, float)) and not isinstance(high, bool):
        if schema.get("exclusiveMaximum") is True and value >= high:
            yield _invalid(path, value, f"{path} in body should be less than {go_value(high)}")
        elif value > high:
            yield _invalid(path, value, f"{path} in body should be less than or equal to {go_value(high)}")
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        quotient = value / step
        if not math.isclose(quotient, round(quotient)):
            yield _invalid(path, value, f"{path} in body should be a multiple of {go_value(step)}")


def _string_causes(value: str, schema: Schema, path: str) -> Iterator[Cause]:
    shortest, longest = schema.get("minLength"), schema.get("maxLength")
    if isinstance(shortest, int) and len(value) < shortest:
        yield _invalid(path, value, f"{path} in body should be at least {shortest} chars long")
    if isinstance(longest, int) and len(value) > longest:
        yield {"reason": "FieldValueTooLong", "field": path,
               "message": f"Too long: may not be longer than {longest}"}
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True  # the CRD's own validation refuses bad patterns; never fail a read on one
        if not matched:
            yield _invalid(path, value, f"{path} in body should match '{pattern}'")


def _object_causes(value: dict, schema: Schema, path: str, depth: int) -> Iterator[Cause]:
    if schema.get("x-kubernetes-embedded-resource") is True:  # a whole object: it names its kind
        for name in ("apiVersion", "kind"):
            if not isinstance(value.get(name), str) or not value.get(name):
                yield {"reason": "FieldValueRequired", "field": _join(path, name),
                       "message": "Required value: must not be empty"}
    for name in schema.get("required") or []:
        if isinstance(name, str) and name not in value:
            yield {"reason": "FieldValueRequired", "field": _join(path, name), "message": "Required value"}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        if key in props:
            yield from _validate(item, props[key], _join(path, str(key)), depth + 1)
        elif isinstance(extra, dict):
            yield from _validate(item, extra, _join(path, str(key)), depth + 1)
    yield from _size_causes(path, len(value), schema.get("minProperties"), schema.get("maxProperties"), "properties")


def _array_causes(value: list, schema: Schema, path: str, depth: int) -> Iterator[Cause]:
    yield from _size_causes(path, len(value), schema.get("minItems"), schema.get("maxItems"), "items")
    if schema.get("uniqueItems") is True:
        seen: list[Any] = []
        for index, item in enumerate(value):
            if item in seen:
                yield {"reason": "FieldValueDuplicate", "field": f"{path}[{index}]",
                       "message": f"Duplicate value: {go_value(item)}"}
            else:
                seen.append(item)
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            yield from _validate(item, items, f"{path}[{index}]", depth + 1)


# --- unknown fields and pruning ------------------------------------------------------------------

def _keeps_unknown(schema: Schema) -> bool:
    if schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return True
    if schema.get("x-kubernetes-embedded-resource") is True:
        return True  # an embedded object's own fields are the embedded kind's business
    return False


def unknown_fields(obj: Any, schema: Schema) -> list[str]:
    """Paths (`spec.foo`, `spec.items[0].bar`) of fields `schema` does not declare."""
    out: list[str] = []
    _unknown(obj, _root_schema(schema), "", out, 0)
    return out


def _root_schema(schema: Schema) -> Schema:
    root = dict(schema) if isinstance(schema, dict) else {}
    props = dict(root.get("properties") or {})
    for key in _TOP_LEVEL:
        props[key] = {"x-kubernetes-preserve-unknown-fields": True}  # the hub checks these itself
    root["properties"] = props
    return root


def _unknown(value: Any, schema: Any, path: str, out: list[str], depth: int) -> None:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH or _keeps_unknown(schema):
        return
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                _unknown(item, props[key], _join(path, str(key)), out, depth + 1)
            elif isinstance(extra, dict):
                _unknown(item, extra, _join(path, str(key)), out, depth + 1)
            elif extra is not True:
                out.append(_join(path, str(key)))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _unknown(item, schema["items"], f"{path}[{index}]", out, depth + 1)


def prune(obj: Any, schema: Schema) -> Any:
    """A copy of `obj` without the fields `schema` does not declare."""
    return _prune(obj, _root_schema(schema), 0)


def _prune(value: Any, schema: Any, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH or _keeps_unknown(schema):
        return copy.deepcopy(value)
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        extra = schema.get("additionalProperties")
        out = {}
        for key, item in value.items():
            if key in props:
                out[key] = _prune(item, props[key], depth + 1)
            elif isinstance(extra, dict):
                out[key] = _prune(item, extra, depth + 1)
            elif extra is True:
                out[key] = copy.deepcopy(item)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_prune(item, schema["items"], depth + 1) for item in value]
    return copy.deepcopy(value)


def drop_nulls(obj: Any, schema: Schema) -> Any:
    """A copy without null values except where the schema says `nullable: true` (Kubernetes prunes
    other nulls before defaulting, so a `default` then applies)."""
    return _drop_nulls(obj, _root_schema(schema), 0)


def _drop_nulls(value: Any, schema: Any, depth: int) -> Any:
    schema = schema if isinstance(schema, dict) else {}
    if depth > _MAX_DEPTH:
        return copy.deepcopy(value)
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        extra = schema.get("additionalProperties")
        out = {}
        for key, item in value.items():
            sub = props.get(key) if key in props else extra if isinstance(extra, dict) else {}
            if item is None and not (isinstance(sub, dict) and sub.get("nullable") is True):
                continue
            out[key] = _drop_nulls(item, sub, depth + 1)
        return out
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [_drop_nulls(item, items, depth + 1) for item in value]
    return value


# --- defaults ------------------------------------------------------------------------------------

def apply_defaults(obj: Any, schema: Schema) -> None:
    """Set every missing property that has a `default` (in place), depth first like Kubernetes."""
    _default(obj, schema, 0)


def _default(value: Any, schema: Any, depth: int) -> None:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for key, sub in props.items():
            # apiVersion/kind/metadata are the hub's only at the root (a nested `kind`, as a Gateway
            # API parentRef's, takes its schema's default like any other field)
            if key not in value and isinstance(sub, dict) and "default" in sub and (depth or key not in _TOP_LEVEL):
                value[key] = copy.deepcopy(sub["default"])
        for key, item in value.items():
            if key in props:
                _default(item, props[key], depth + 1)
            elif isinstance(schema.get("additionalProperties"), dict):
                _default(item, schema["additionalProperties"], depth + 1)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default(item, schema["items"], depth + 1)
