"""Decoding checks of a request body against the published OpenAPI schemas: unknown fields, wrong
JSON types, and pruning of unknown fields.

Guarantees: `check`, `prune` and `message` never raise on JSON-like input (dicts, lists, strings,
numbers, booleans, None, nested arbitrarily); only an unknown definition name raises (KeyError).
Paths are written the Kubernetes way (`spec.containers[0].image`, map keys as `[key]`). `null` is
accepted anywhere, as Go's JSON decoder does. Nothing inside an object marked
`x-kubernetes-preserve-unknown-fields` (or a free-form object) is reported or pruned.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Iterator, Literal

from control.kinds.schemas import DEFINITIONS

Schema = dict[str, Any]
ProblemKind = Literal["unknown", "type"]

_REF = "#/components/schemas/"
_MAX_DEPTH = 200  # schemas are acyclic today; this only guards against a future recursive one
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_SPECIAL_GO_TYPES = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "resource.Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intstr.IntOrString",
}


@dataclass(frozen=True)
class Problem:
    """One decoding problem: `kind` is "unknown" (undeclared field) or "type" (wrong JSON type)."""

    path: str
    kind: ProblemKind
    message: str


def _resolve(schema: Any) -> tuple[Schema, str | None]:
    """Follow `allOf: [{$ref}]` and `$ref` to the schema they name; returns (schema, name). Read
    once per schema node, with the rest of its `_Shape`."""
    shape = _shape(schema)
    return shape.resolved, shape.name


def _follow(schema: Any) -> tuple[Schema, str | None]:
    name = None
    for _ in range(16):
        if not isinstance(schema, dict):
            return {}, name
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref[len(_REF):] if ref.startswith(_REF) else ref
            schema = DEFINITIONS.get(name, {})
            continue
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and all_of:
            schema = all_of[0]
            continue
        return schema, name
    return {}, name


def _short(name: str | None) -> str:
    return name.rsplit(".", 1)[-1] if name else ""


def go_type(schema: Any) -> str:
    """The Go type Kubernetes would name for a schema, e.g. "[]v1.Container" or "int32"."""
    resolved, name = _resolve(schema)
    if name:
        if name in _SPECIAL_GO_TYPES:
            return _SPECIAL_GO_TYPES[name]
        parts = name.split(".")
        return f"{parts[-2]}.{parts[-1]}" if len(parts) > 1 else name
    kind = resolved.get("type")
    if kind == "array":
        return "[]" + go_type(resolved.get("items", {}))
    if kind == "object":
        extra = resolved.get("additionalProperties")
        return "map[string]" + go_type(extra) if isinstance(extra, dict) else "map[string]interface {}"
    if kind == "integer":
        return {"int32": "int32", "int64": "int64"}.get(resolved.get("format", ""), "int")
    return {"string": "string", "boolean": "bool", "number": "float64"}.get(kind, "interface {}")


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "value"


def _is_integer(value: Any, fmt: str | None = None) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return False
        value = int(value)
    if not isinstance(value, int):
        return False
    low, high = _INT_RANGES.get(fmt or "", (None, None))
    return low is None or low <= value <= high


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and (
        not isinstance(value, float) or math.isfinite(value))


def _matches(value: Any, kind: Any, fmt: Any = None) -> bool:
    """Whether a non-null value has JSON type `kind` (an OpenAPI type name)."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return _is_integer(value, fmt if isinstance(fmt, str) else None)
    if kind == "number":
        return _is_number(value)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, (list, tuple))
    return True


def _type_ok(value: Any, schema: Schema) -> bool:
    one_of = schema.get("oneOf")
    if isinstance(one_of, list) and one_of:
        return any(isinstance(o, dict) and _matches(value, o.get("type"), o.get("format")) for o in one_of)
    return _matches(value, schema.get("type"), schema.get("format"))


def _is_free(schema: Schema) -> bool:
    """Objects whose inner fields are not declared: preserve-unknown, or neither properties nor a map."""
    if schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return True
    return "properties" not in schema and "additionalProperties" not in schema


def _go_path(path: str) -> str:
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _type_problem(value: Any, schema: Any, path: str, owner: str) -> Problem:
    expected = go_type(schema)
    shown = _json_kind(value)
    resolved, _ = _resolve(schema)
    if shown == "number" and resolved.get("type") == "integer":
        shown = f"number {value}"
    if path:
        text = f"cannot unmarshal {shown} into Go struct field {owner}.{_go_path(path)} of type {expected}"
    else:
        text = f"cannot unmarshal {shown} into Go value of type {expected}"
    return Problem(path, "type", text)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(value: Any, schema: Any, path: str, owner: str, depth: int) -> Iterator[Problem]:
    if value is None or depth > _MAX_DEPTH:
        return
    resolved, name = _resolve(schema)
    if not _type_ok(value, resolved):
        yield _type_problem(value, schema, path, owner)
        return
    if isinstance(value, dict) and resolved.get("type") == "object" and not _is_free(resolved):
        props = resolved.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = resolved.get("additionalProperties")
        here = _short(name) or owner
        for key, item in value.items():
            if isinstance(key, str) and key in props:
                yield from _walk(item, props[key], _join(path, key), here, depth + 1)
            elif isinstance(extra, dict):
                yield from _walk(item, extra, f"{path}[{key}]", owner, depth + 1)
            elif extra is True:
                continue
            else:
                field = _join(path, str(key))
                yield Problem(field, "unknown", f'unknown field "{field}"')
    elif isinstance(value, (list, tuple)) and resolved.get("type") == "array":
        items = resolved.get("items")
        for index, item in enumerate(value):
            yield from _walk(item, items, f"{path}[{index}]", owner, depth + 1)


class _Shape:
    """One schema node as the passes over a value need it, read once: what it resolves to and the
    definition it names (`resolved`, `name`); for `_clean`, the JSON type test (`cls` for an
    isinstance test, else `test`, else none), the declared fields of an object checked field by
    field (`props`, None when its fields are not checked: not an object, or free-form) and what any
    other field may be (`extra`: a schema, True, or anything else for "unknown"), and an array's
    `items` (`array` says whether its items are checked)."""

    __slots__ = ("resolved", "name", "cls", "test", "props", "extra", "array", "items")

    def __init__(self, schema: Any) -> None:
        resolved, name = _follow(schema)
        self.resolved, self.name = resolved, name
        kind = resolved.get("type")
        one_of = resolved.get("oneOf")
        plain = not (isinstance(one_of, list) and one_of)  # else `_type_ok` tries each alternative
        self.cls: type | tuple[type, ...] | None = _CLASSES.get(kind) if plain and isinstance(kind, str) else None
        self.test: Any = None if plain and kind not in ("integer", "number") else functools.partial(_type_ok, schema=resolved)
        self.props: dict[Any, Any] | None = None
        self.extra: Any = None
        if kind == "object" and not _is_free(resolved):
            props = resolved.get("properties")
            self.props = props if isinstance(props, dict) else {}
            self.extra = resolved.get("additionalProperties")
        self.array = kind == "array"
        self.items = resolved.get("items")


_CLASSES: dict[str, type | tuple[type, ...]] = {"string": str, "boolean": bool, "object": dict, "array": (list, tuple)}
# schema node id -> (the node, its shape): kept per node since every write checks its whole body and
# the schemas are the fixed built-in DEFINITIONS (the entry holds the node, so its id cannot be
# reused); they have a few thousand nodes, this is a bound all the same
_SHAPES: dict[int, tuple[Any, _Shape]] = {}
_SHAPES_MAX = 20_000
_ABSENT = object()


def _shape(schema: Any) -> _Shape:
    """The shape of a schema node, made the first time it is asked for."""
    entry = _SHAPES.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    shape = _Shape(schema)
    if isinstance(schema, dict) and len(_SHAPES) < _SHAPES_MAX:
        _SHAPES[id(schema)] = (schema, shape)
    return shape


def _clean(value: Any, schema: Any, depth: int) -> bool:
    """Whether `_walk` would find nothing: the same traversal without paths or messages, each
    node's schema read once into its `_Shape`, so the common case (a valid body) costs one pass of
    look-ups; `_walk` runs only to explain a problem."""
    if value is None or depth > _MAX_DEPTH:
        return True
    shape = _shape(schema)
    if shape.cls is not None:
        if not isinstance(value, shape.cls):
            return False
    elif shape.test is not None and not shape.test(value):
        return False
    if isinstance(value, dict):
        props = shape.props
        if props is None:
            return True
        extra = shape.extra
        for key, item in value.items():
            child = props.get(key, _ABSENT) if isinstance(key, str) else _ABSENT
            if child is not _ABSENT:
                if item is not None and not _clean(item, child, depth + 1):
                    return False
            elif isinstance(extra, dict):
                if item is not None and not _clean(item, extra, depth + 1):
                    return False
            elif extra is not True:
                return False
    elif shape.array and isinstance(value, (list, tuple)):
        items = shape.items
        for item in value:
            if item is not None and not _clean(item, items, depth + 1):
                return False
    return True


_ROOTS: dict[str, Schema] = {}


def _root(definition: str) -> Schema:
    """One long-lived reference schema per definition (so `_resolve` keeps what it finds)."""
    root = _ROOTS.get(definition)
    if root is None:
        root = _ROOTS[definition] = {"$ref": _REF + definition}
    return root


def check(obj: Any, definition: str) -> list[Problem]:
    """Unknown fields and JSON type mismatches of `obj` decoded as component `definition`."""
    DEFINITIONS[definition]  # unknown names fail loudly: that is a programming error, not input
    root = _root(definition)
    if _clean(obj, root, 0):
        return []
    return list(_walk(obj, root, "", _short(definition), 0))


def _copy_json(value: Any) -> Any:
    """A deep copy of nested dicts and lists without recursion (inputs may nest very deeply)."""
    if not isinstance(value, (dict, list, tuple)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack = [(value, root)]
    while stack:
        source, target = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            if isinstance(item, (dict, list, tuple)):
                child: Any = {} if isinstance(item, dict) else []
                stack.append((item, child))
            else:
                child = item
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    return root


def _prune(value: Any, schema: Any, depth: int) -> Any:
    resolved, _ = _resolve(schema)
    if value is None or depth > _MAX_DEPTH or not _type_ok(value, resolved):
        return _copy_json(value)
    if isinstance(value, dict) and resolved.get("type") == "object" and not _is_free(resolved):
        props = resolved.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = resolved.get("additionalProperties")
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and key in props:
                out[key] = _prune(item, props[key], depth + 1)
            elif isinstance(extra, dict):
                out[key] = _prune(item, extra, depth + 1)
            elif extra is True:
                out[key] = _copy_json(item)
        return out
    if isinstance(value, (list, tuple)) and resolved.get("type") == "array":
        return [_prune(item, resolved.get("items"), depth + 1) for item in value]
    return _copy_json(value)


def prune(obj: Any, definition: str) -> Any:
    """A copy of `obj` without the fields `definition` does not declare (everything else kept)."""
    DEFINITIONS[definition]  # unknown names fail loudly, as in check()
    return _prune(obj, _root(definition), 0)


def without_nulls(value: Any) -> Any:
    """JSON nulls dropped, as decoding into typed objects does (kubectl sends a few, e.g.
    `creationTimestamp: null` in templates, and they must not make a template look changed)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def message(problems: list[Problem], kind: str, version: str) -> str:
    """The text of the 400 BadRequest Kubernetes answers under fieldValidation=Strict.

    A type error wins (the real decoder stops at it); otherwise all unknown fields are listed in
    order. Empty when there are no problems.
    """
    for problem in problems:
        if problem.kind == "type":
            return f'{kind} in version "{version}" cannot be handled as a {kind}: json: {problem.message}'
    unknown = [p.message for p in problems if p.kind == "unknown"]
    return "strict decoding error: " + ", ".join(unknown) if unknown else ""
