"""Strategic merge patch (application/strategic-merge-patch+json), as kubectl and the Python client send it.

Guarantees:
- `strategic_merge_patch` returns a fresh object and never mutates its inputs; the result shares no
  mutable structure with them.
- Maps merge recursively and `key: null` deletes. Lists follow `PatchMeta`: merged element-wise by
  merge key, merged as sets (primitives), or replaced whole (the fallback). Untouched elements
  keep their order; new ones are appended unless `$setElementOrder/<field>` says otherwise.
- Directives: `$patch: replace|delete|merge` on maps, `{"$patch": "replace"}` and
  `{"$patch": "delete", <key>: v}` inside lists, `$deleteFromPrimitiveList/<f>`,
  `$setElementOrder/<f>` and `$retainKeys`. They never appear in the result, nor do nulls.
- A malformed patch raises `PatchError` (a ValueError) naming the path; the server answers 4xx.
- `PatchMeta.from_openapi` reads the real Kubernetes OpenAPI v3 component format
  (`$ref`, `allOf`, `items`, `additionalProperties`, `x-kubernetes-patch-strategy`,
  `x-kubernetes-patch-merge-key`); whatever it cannot find falls back to "maps merge, lists
  replace", i.e. JSON merge patch. `json_merge_patch` is plain RFC 7386 with no directives.

Not supported: Kubernetes' interleaving of reordered patch elements without `$setElementOrder`
(we keep the original order), multi-key list maps (SMP only ever has one merge key).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping

from control import errors

PATCH = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ORDER = "$setElementOrder/"
DELETE_FROM = "$deleteFromPrimitiveList/"
_SCALARS = {"string", "integer", "number", "boolean"}
_DELETED = object()  # what merging a map carrying `$patch: delete` yields: drop it from the parent


class PatchError(ValueError):
    """The patch is malformed (bad directive, wrong shape, missing merge key)."""


def _name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


class PatchMeta:
    """How to merge the fields of one position in an object, read lazily from OpenAPI schemas.

    An instance never changes (nor may the schemas it reads), so what it works out for a field is
    kept: every write walks its object through these (field tracking, merges), and the per-kind
    roots are shared (`patching.patch_meta`), so each field is resolved once per process.
    """

    __slots__ = ("_defs", "_schema", "_children", "_strategies")

    def __init__(self, definitions: Mapping[str, dict], schema: dict) -> None:
        self._defs = definitions
        self._schema = schema
        self._children: dict[str, PatchMeta] = {}
        self._strategies: dict[str, tuple[str, str | None]] = {}

    @classmethod
    def from_openapi(cls, definitions: Mapping[str, dict], root: str) -> PatchMeta:
        return cls(definitions, cls._resolve(definitions, definitions.get(root) or {}))

    @classmethod
    def empty(cls) -> PatchMeta:
        return cls({}, {})

    @staticmethod
    def _resolve(defs: Mapping[str, dict], schema: Any) -> dict:
        # Follow $ref chains and fold allOf parts together; depth-limited against self-references.
        for _ in range(32):
            if not isinstance(schema, dict):
                return {}
            if isinstance(schema.get("$ref"), str):
                schema = defs.get(_name(schema["$ref"])) or {}
                continue
            parts = schema.get("allOf")
            if isinstance(parts, list) and parts:
                # Keys written beside allOf win over those of the parts; properties are united.
                folded = {k: v for k, v in schema.items() if k != "allOf"}
                props: dict = {}
                for part in parts:
                    resolved = PatchMeta._resolve(defs, part)
                    props.update(resolved.get("properties") or {})
                    for k, v in resolved.items():
                        folded.setdefault(k, v)
                props.update(folded.get("properties") or {})
                if props:
                    folded["properties"] = props
                return folded
            return schema
        return {}

    def _declares(self, field: str) -> bool:
        props = self._schema.get("properties")
        return isinstance(props, dict) and field in props

    def _property(self, field: str) -> dict | None:
        props = self._schema.get("properties")
        if isinstance(props, dict) and isinstance(props.get(field), dict):
            return props[field]
        extra = self._schema.get("additionalProperties")
        return extra if isinstance(extra, dict) else None

    def child(self, field: str) -> PatchMeta:
        """Meta for the value of `field`; for a list field, meta for one of its elements."""
        known = self._children.get(field)
        if known is None:
            known = self._child(field)
            if self._declares(field):  # kept per declared field only: map keys (labels, data) are unbounded
                self._children[field] = known
        return known

    def _child(self, field: str) -> PatchMeta:
        prop = self._property(field)
        if prop is None:
            return _EMPTY
        schema = self._resolve(self._defs, prop)
        for _ in range(4):  # arrays of arrays are rare; step through a few levels at most
            if schema.get("type") != "array" and "items" not in schema:
                break
            schema = self._resolve(self._defs, schema.get("items"))
        return PatchMeta(self._defs, schema)

    def list_strategy(self, field: str) -> tuple[str, str | None]:
        """("merge", key) for keyed lists, ("merge", None) for primitive sets, else ("replace", None)."""
        known = self._strategies.get(field)
        if known is None:
            known = self._list_strategy(field)
            if self._declares(field):
                self._strategies[field] = known
        return known

    def _list_strategy(self, field: str) -> tuple[str, str | None]:
        prop = self._property(field)
        if prop is None:
            return ("replace", None)
        strategy = prop.get("x-kubernetes-patch-strategy")
        key = prop.get("x-kubernetes-patch-merge-key")
        if strategy is None:  # the extensions may sit on the referenced schema instead
            resolved = self._resolve(self._defs, prop)
            strategy = resolved.get("x-kubernetes-patch-strategy")
            key = resolved.get("x-kubernetes-patch-merge-key")
        if isinstance(strategy, str) and "merge" in strategy.split(","):
            return ("merge", key if isinstance(key, str) and key else None)
        return ("replace", None)

    def shape(self, field: str) -> str | None:
        """"object", "array" or "scalar" when the schema says so; None when unknown or free-form."""
        prop = self._property(field)
        if prop is None:
            return None
        schema = self._resolve(self._defs, prop)
        kind = schema.get("type")
        if kind == "array":
            return "array"
        if kind == "object" or "properties" in schema:
            return "object"
        return "scalar" if kind in _SCALARS else None


_EMPTY = PatchMeta({}, {})


def strategic_merge_patch(original: dict, patch: dict, meta: PatchMeta) -> dict:
    """Apply a strategic merge patch to `original`; raises PatchError on a malformed patch."""
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    if not isinstance(original, dict):
        raise PatchError("the object to patch must be a JSON object")
    merged = _merge_map(copy.deepcopy(original), patch, meta, "")
    return {} if merged is _DELETED else merged


def json_merge_patch(original: Any, patch: Any) -> Any:
    """RFC 7386 merge patch: objects merge, null deletes, everything else (lists too) replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = json_merge_patch(result.get(key), value)
    return result


def _at(path: str, field: str) -> str:
    return f"{path}.{field}"


def _is_directive(key: str) -> bool:
    # Only these spellings are directives: other "$" keys ("$ref" in a CRD schema) are data.
    return key in (PATCH, RETAIN_KEYS) or key.startswith((SET_ORDER, DELETE_FROM))


def _identity(value: Any) -> str:
    # Set membership by JSON text, so that 1, 1.0 and True stay distinct as they are in JSON.
    return json.dumps(value, sort_keys=True, default=str)  # default: YAML may carry dates


def _merge_map(original: dict, patch: dict, meta: PatchMeta, path: str) -> Any:
    """Merge `patch` into `original` in place (original is already our own copy)."""
    directive = patch.get(PATCH, "merge")
    if directive == "delete":
        return _DELETED
    if directive == "replace":
        original = {}
    elif directive != "merge":
        raise PatchError(f"{path or '.'}: unknown patch type {errors.go_value(directive)} in map "
                         "(expected replace, delete or merge)")
    if RETAIN_KEYS in patch:
        _retain_keys(original, patch, path)
    orders: dict[str, Any] = {}
    for key, value in patch.items():
        if key in (PATCH, RETAIN_KEYS):
            continue
        if key.startswith(SET_ORDER):
            orders[key[len(SET_ORDER):]] = value
        elif key.startswith(DELETE_FROM):
            field = key[len(DELETE_FROM):]
            if not isinstance(value, list):
                raise PatchError(f"{_at(path, key)}: must be a list")
            if isinstance(original.get(field), list):
                gone = {_identity(v) for v in value}
                original[field] = [v for v in original[field] if _identity(v) not in gone]
    for key, value in patch.items():
        if _is_directive(key):
            continue
        if value is None:
            original.pop(key, None)
            continue
        merged = _merge_value(original.get(key), value, meta, key, _at(path, key))
        if merged is _DELETED:
            original.pop(key, None)
        else:
            original[key] = merged
    for field, order in orders.items():
        _set_order(original, field, order, meta, _at(path, field))
    return original


def _retain_keys(original: dict, patch: dict, path: str) -> None:
    keep = patch[RETAIN_KEYS]
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        raise PatchError(f"{path or '.'}: $retainKeys must be a list of field names")
    for key, value in patch.items():
        if value is None or _is_directive(key):
            continue
        if key not in keep:
            raise PatchError(f"{_at(path, key)}: field is in the patch but not in $retainKeys")
    for key in [k for k in original if k not in keep]:
        del original[key]


def _merge_value(current: Any, value: Any, meta: PatchMeta, field: str, path: str) -> Any:
    shape = meta.shape(field)
    if isinstance(value, dict):
        if shape in ("array", "scalar"):
            raise PatchError(f"{path}: expected {'a list' if shape == 'array' else 'a scalar'}, got a map")
        base = current if isinstance(current, dict) else {}
        return _merge_map(base, value, meta.child(field), path)
    if isinstance(value, list):
        if shape in ("object", "scalar"):
            raise PatchError(f"{path}: expected {'a map' if shape == 'object' else 'a scalar'}, got a list")
        base = current if isinstance(current, list) else []
        strategy, key = meta.list_strategy(field)
        return _merge_list(base, value, meta.child(field), strategy, key, path)
    if shape in ("object", "array"):
        raise PatchError(f"{path}: expected {'a map' if shape == 'object' else 'a list'}, got {json.dumps(value)}")
    return value


def _fresh(value: Any, meta: PatchMeta, path: str) -> Any:
    """A patch value with nothing to merge into: rebuilt so directives and nulls vanish."""
    if isinstance(value, dict):
        return _merge_map({}, value, meta, path)
    if isinstance(value, list):
        return _fresh_list(value, meta, path)
    return value


def _fresh_list(items: list, meta: PatchMeta, path: str) -> list:
    fresh = (_fresh(x, meta, f"{path}[{i}]") for i, x in enumerate(items))
    return [v for v in fresh if v is not _DELETED]


def _merge_list(original: list, patch: list, meta: PatchMeta, strategy: str, key: str | None,
                path: str) -> list:
    items: list[Any] = []
    deletes: list[Any] = []
    replace = strategy != "merge"
    for i, element in enumerate(patch):
        directive = element.get(PATCH) if isinstance(element, dict) else None
        if directive is None or directive == "merge":
            items.append(element)
        elif directive == "replace":
            replace = True
        elif directive == "delete":
            if strategy != "merge" or key is None:
                raise PatchError(f"{path}[{i}]: $patch: delete needs a list with a merge key")
            if key not in element:
                raise PatchError(f"{path}[{i}]: map does not contain declared merge key {errors.go_value(key)}")
            deletes.append(element[key])
        else:
            raise PatchError(f"{path}[{i}]: unknown patch type {errors.go_value(directive)} in list "
                             "(expected replace, delete or merge)")
    if replace:
        return _fresh_list(items, meta, path)
    if key is None:
        for i, element in enumerate(items):
            if isinstance(element, (dict, list)):
                raise PatchError(f"{path}[{i}]: cannot merge lists without a merge key")
        merged: list[Any] = []
        seen: set[str] = set()
        for element in [*original, *items]:  # a set: first occurrence wins, original order first
            if _identity(element) not in seen:
                seen.add(_identity(element))
                merged.append(element)
        return merged
    result = [e for e in original if not (isinstance(e, dict) and key in e and e[key] in deletes)]
    for i, element in enumerate(items):
        if not isinstance(element, dict):
            raise PatchError(f"{path}[{i}]: expected a map with merge key {errors.go_value(key)}")
        if key not in element:
            raise PatchError(f"{path}[{i}]: map does not contain declared merge key {errors.go_value(key)}")
        where = f"{path}[{key}={json.dumps(element[key])}]"
        at = next((j for j, e in enumerate(result) if isinstance(e, dict) and e.get(key) == element[key]), None)
        merged_element = _merge_map(result[at] if at is not None else {}, element, meta, where)
        if at is None:
            if merged_element is not _DELETED:
                result.append(merged_element)
        elif merged_element is _DELETED:
            del result[at]
        else:
            result[at] = merged_element
    return result


def _set_order(obj: dict, field: str, order: Any, meta: PatchMeta, path: str) -> None:
    if not isinstance(order, list):
        raise PatchError(f"{path}: $setElementOrder must be a list")
    items = obj.get(field)
    if not isinstance(items, list):
        return
    _, key = meta.list_strategy(field)
    if key is not None:
        wanted = []
        for entry in order:
            if not isinstance(entry, dict) or key not in entry:
                raise PatchError(f"{path}: $setElementOrder entries must be maps with merge key {errors.go_value(key)}")
            wanted.append(entry[key])
        ident = (lambda e: e.get(key) if isinstance(e, dict) else None)
    else:
        wanted, ident = order, (lambda e: e)
    rank: dict[str, int] = {}
    for i, w in enumerate(wanted):
        rank.setdefault(_identity(w), i)
    ranks = [rank.get(_identity(ident(e))) for e in items]
    listed = sorted((i for i, r in enumerate(ranks) if r is not None), key=lambda i: ranks[i])
    unlisted = [i for i, r in enumerate(ranks) if r is None]
    # Interleave: an unlisted element stays ahead of a listed one that came after it before.
    out: list[int] = []
    while listed and unlisted:
        out.append(unlisted.pop(0) if unlisted[0] < listed[0] else listed.pop(0))
    obj[field] = [items[i] for i in out + listed + unlisted]
