"""Server-side apply (application/apply-patch+yaml) and field ownership in `metadata.managedFields`.

Guarantees:
- `server_side_apply` returns a new object and never mutates its inputs.
- Ownership is kept in Kubernetes' FieldsV1 encoding: `f:<field>` for map fields, `k:{"<key>":v}` for
  list items matched by their merge key, `v:<json>` for members of primitive sets, and `.` for
  "this item/map itself" where it also has owned children. Lists of maps with a merge key (from
  `PatchMeta`) are owned item by item, primitive `merge` lists value by value, any other list as a
  whole (atomic).
- Applying sets every field present in the applied configuration (explicit nulls count as absent)
  and removes the fields this manager applied last time, omits now, and no other manager owns.
- A change to a field owned by another manager raises `ApplyConflict` (409, reason Conflict, one
  `FieldManagerConflict` cause per field) unless `force`, in which case ownership moves over.
  The manager "kubectl" takes over, without a conflict, what the last-applied annotation shows it
  applied client-side, and keeps that annotation in step (`control.api.lastapplied`).
  Setting a field to the value it already has is not a conflict: ownership becomes shared.
- Ordinary writes ("Update") are recorded by `control.api.updates.record_update` with the field
  sets defined here.
- Never tracked (Kubernetes' strip set plus status): apiVersion, kind, status, and metadata's
  name, namespace, uid, resourceVersion, generation, creationTimestamp, selfLink, managedFields.

Not supported: multi-key list maps (`x-kubernetes-list-map-keys`), `subresource` ownership,
per-version field-set conversion, and type errors in the applied object (an ill-keyed list simply
becomes atomic).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from control.api import lastapplied
from control.api.smp import PatchMeta
from control.errors import BadRequest, Conflict

Path = tuple[str, ...]
_MISSING = object()
_PRESENT = object()
_IGNORED: tuple[Path, ...] = (
    ("f:apiVersion",), ("f:kind",), ("f:status",),
    *(("f:metadata", f"f:{name}",) for name in (
        "name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
        "selfLink", "managedFields")),
)


class ApplyConflict(Conflict):
    """An apply would change fields that another manager owns; `details.causes` lists them."""


# --- field sets ------------------------------------------------------------------------------

_encode_string = json.encoder.encode_basestring_ascii  # what json.dumps uses for a str (ensure_ascii)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)  # YAML dates


def _key_text(key: str, value: Any) -> str:
    """`_compact({key: value})`, without the encoder for the usual string or integer key value."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return "{" + _encode_string(key) + ":" + (_encode_string(value) if isinstance(value, str) else str(value)) + "}"
    return _compact({key: value})


def _list_mode(items: list, meta: PatchMeta, field: str) -> tuple[str, str | None]:
    """("keyed", key), ("set", None) or ("atomic", None) for the list at `field`."""
    strategy, key = meta.list_strategy(field)
    if strategy == "merge" and key and all(isinstance(e, dict) and key in e for e in items):
        return ("keyed", key)
    if strategy == "merge" and not key and all(not isinstance(e, (dict, list)) for e in items):
        return ("set", None)
    return ("atomic", None)


def _walk(obj: dict, meta: PatchMeta, prefix: Path, out: set[Path]) -> None:
    for field, value in obj.items():
        _walk_field(field, value, meta, prefix, out)


def _walk_field(field: str, value: Any, meta: PatchMeta, prefix: Path, out: set[Path]) -> None:
    """The tracked paths of one field of the map at `prefix` (`meta`: that map's)."""
    if value is None:
        return
    path = prefix + (f"f:{field}",)
    if isinstance(value, dict) and value:
        _walk(value, meta.child(field), path, out)
    elif isinstance(value, list) and value:
        mode, key = _list_mode(value, meta, field)
        if mode == "keyed":
            for item in value:
                item_path = path + ("k:" + _key_text(key, item[key]),)
                out.add(item_path)
                _walk(item, meta.child(field), item_path, out)
        elif mode == "set":
            out.update(path + ("v:" + _compact(v),) for v in value)
        else:
            out.add(path)
    else:
        out.add(path)


_IGNORED_ROOTS = frozenset(skip[0] for skip in _IGNORED if len(skip) == 1)
_IGNORED_METADATA = frozenset(skip[1] for skip in _IGNORED if len(skip) == 2)


def _ignored(path: Path) -> bool:
    """Whether `path` lies under one of `_IGNORED` (set look-ups: this runs for every tracked field)."""
    if not path:
        return False
    return path[0] in _IGNORED_ROOTS or (path[0] == "f:metadata" and len(path) > 1 and path[1] in _IGNORED_METADATA)


def field_set(obj: dict, meta: PatchMeta) -> set[Path]:
    """Every tracked leaf, list item and set member of `obj`."""
    out: set[Path] = set()
    _walk(obj, meta, (), out)
    return {p for p in out if not _ignored(p)}


def encode_fields(paths: set[Path]) -> dict:
    """A set of paths as a FieldsV1 trie: members with children carry `.`; leaves are `{}`.

    Built in sorted path order, so every node's keys arrive sorted ("." before "f:"/"k:"/"v:",
    which matches the order Kubernetes prints) and a member is met before its children."""
    root: dict = {}
    for path in sorted(paths):
        node = root
        for depth, element in enumerate(path):
            child = node.get(element)
            if child is None:
                if not node and depth and path[:depth] in paths:
                    node["."] = {}  # a member that also has children
                child = node[element] = {}
            node = child
    return root


def decode_fields(trie: Any) -> set[Path]:
    out: set[Path] = set()
    if isinstance(trie, dict):
        _decode_into(trie, (), out)
    return out


def _decode_into(node: dict, prefix: Path, out: set[Path]) -> None:
    # Not a closure that calls itself: that is a reference cycle, left to the cycle collector.
    for element, child in node.items():
        if element == ".":
            if prefix:
                out.add(prefix)
        elif isinstance(child, dict):
            if child:
                _decode_into(child, prefix + (element,), out)
            else:
                out.add(prefix + (element,))


def _lookup(obj: Any, path: Path) -> Any:
    """The value at `path`; for a list item path only whether it exists (`_PRESENT`)."""
    current = obj
    for element in path:
        kind, _, raw = element.partition(":")
        if kind == "f":
            if not isinstance(current, dict) or raw not in current or current[raw] is None:
                return _MISSING
            current = current[raw]
            continue
        if not isinstance(current, list):
            return _MISSING
        try:
            wanted = json.loads(raw)
        except ValueError:
            return _MISSING
        if kind == "k" and isinstance(wanted, dict):
            match = next((e for e in current if isinstance(e, dict)
                          and all(_compact(e.get(k)) == _compact(v) for k, v in wanted.items())), _MISSING)
        elif kind == "v":
            match = next((_PRESENT for e in current if _compact(e) == _compact(wanted)), _MISSING)
        else:
            return _MISSING
        if match is _MISSING:
            return _MISSING
        current = match
    return _PRESENT if path and path[-1][:2] in ("k:", "v:") else current


def _differs(old: Any, new: Any, path: Path) -> bool:
    a, b = _lookup(old, path), _lookup(new, path)
    if a is _MISSING or b is _MISSING or a is _PRESENT or b is _PRESENT:
        return a is not b
    return _compact(a) != _compact(b)


def path_string(path: Path) -> str:
    """Kubernetes' field path text: `.spec.containers[name="a"].image`, `.metadata.finalizers[="x"]`."""
    out = []
    for element in path:
        kind, _, raw = element.partition(":")
        if kind == "f":
            out.append(f".{raw}")
        elif kind == "k":
            keys = json.loads(raw)
            out.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]")
        else:
            out.append(f"[={raw}]")
    return "".join(out)


# --- managedFields entries -------------------------------------------------------------------

def _entries(obj: dict | None) -> list[tuple[dict, set[Path]]]:
    managed = ((obj or {}).get("metadata") or {}).get("managedFields")
    out = []
    for entry in managed if isinstance(managed, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("manager"), str):
            head = {k: v for k, v in entry.items() if k != "fieldsV1"}
            out.append((head, decode_fields(entry.get("fieldsV1"))))
    return out


def _render(entries: list[tuple[dict, set[Path]]]) -> list[dict]:
    rendered = []
    for head, paths in entries:
        if paths:  # Kubernetes drops managers that own nothing
            rendered.append({**head, "fieldsType": "FieldsV1", "fieldsV1": encode_fields(paths)})
    return rendered


def _entry(manager: str, operation: str, api_version: str, now: str) -> dict:
    return {"manager": manager, "operation": operation, "apiVersion": api_version, "time": now}


def _with_managed(obj: dict, managed: list[dict]) -> dict:
    metadata = obj.setdefault("metadata", {})
    if managed:
        metadata["managedFields"] = managed
    else:
        metadata.pop("managedFields", None)
    return obj


def _copy_with_metadata(obj: dict) -> dict:
    """A copy that may get new metadata keys without touching `obj` (only metadata is written)."""
    return {**obj, "metadata": dict(obj.get("metadata") or {})}


def _describe(head: dict) -> str:
    if head.get("operation") == "Update":
        return f'"{head["manager"]}" using {head.get("apiVersion", "")}'
    return f'"{head["manager"]}"'


def _conflict(conflicts: list[tuple[dict, Path]]) -> ApplyConflict:
    conflicts = sorted(conflicts, key=lambda c: (_describe(c[0]), path_string(c[1])))
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {_describe(h)}",
               "field": path_string(p)} for h, p in conflicts]
    if len(conflicts) == 1:
        head, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {_describe(head)}: {path_string(path)}"
    else:
        lines: list[str] = []
        for who in dict.fromkeys(_describe(h) for h, _ in conflicts):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {path_string(p)}" for h, p in conflicts if _describe(h) == who)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApplyConflict(message, details={"causes": causes})


# --- apply -----------------------------------------------------------------------------------

def _clean(value: Any) -> Any:
    """A deep copy with null map values dropped (in an apply, null means "not specified")."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _merge_applied(live: dict, applied: dict, meta: PatchMeta) -> None:
    """Write the applied fields into `live` (our own copy), merging lists item by item."""
    for field, value in applied.items():
        if value is None:
            continue
        current = live.get(field)
        if isinstance(value, dict) and isinstance(current, dict):
            _merge_applied(current, value, meta.child(field))
        elif isinstance(value, list) and isinstance(current, list):
            mode, key = _list_mode(current + value, meta, field)
            if mode == "keyed":
                for item in value:
                    match = next((e for e in current if _compact(e[key]) == _compact(item[key])), None)
                    if match is None:
                        current.append(_clean(item))
                    else:
                        _merge_applied(match, item, meta.child(field))
            elif mode == "set":
                have = {_compact(e) for e in current}
                for v in value:
                    if _compact(v) not in have:
                        have.add(_compact(v))
                        current.append(v)
            else:
                live[field] = _clean(value)
        else:
            live[field] = _clean(value)


def _remove(obj: dict, path: Path) -> None:
    parent = _lookup(obj, path[:-1]) if len(path) > 1 else obj
    kind, _, raw = path[-1].partition(":")
    if kind == "f" and isinstance(parent, dict):
        parent.pop(raw, None)
    elif kind in ("k", "v") and isinstance(parent, list):
        parent[:] = [e for e in parent if _lookup([e], (path[-1],)) is _MISSING]


def server_side_apply(live: dict | None, applied: dict, *, manager: str, force: bool, meta: PatchMeta,
                      now: str, api_version: str) -> dict:
    """The object after `manager` applies `applied` to `live` (None: create). Raises ApplyConflict."""
    if not isinstance(applied, dict):
        raise BadRequest("the apply configuration must be an object")
    entries = _entries(live)
    mine = next((i for i, (h, _) in enumerate(entries)
                 if h["manager"] == manager and h.get("operation") == "Apply"), None)
    previous = entries[mine][1] if mine is not None else set()
    applied_set = field_set(applied, meta)
    others = [(h, s) for i, (h, s) in enumerate(entries) if i != mine]

    result = copy.deepcopy(live) if live else {}
    _merge_applied(result, applied, meta)
    # What stays owned after this apply: everybody else's fields and the applier's new set.
    # structured-merge-diff's prune adds back every item still owned by any manager, the applying
    # one included, so `data: {}` then `data: {key1: v}` keeps data (key1 below it is owned now).
    held = applied_set.union(*(s for _, s in others))
    for path in sorted(previous - applied_set, key=len):
        # Keep what anybody still owns, at this path or below it.
        if not any(p[:len(path)] == path for p in held):
            _remove(result, path)

    conflicts = [(h, p) for h, s in others if h["manager"] != manager
                 for p in sorted(s & applied_set) if _differs(live or {}, result, p)]
    if conflicts and not force:
        # kubectl's first server-side apply over a client-side one takes what it applied before.
        allowed = lastapplied.takeover_allowed(live, manager, meta, api_version)
        refused = [(h, p) for h, p in conflicts if p not in allowed]
        if refused:
            raise _conflict(refused)
    lost = {id(h): {p for c, p in conflicts if c is h} for h, _ in others}
    updated = [(h, s - lost[id(h)]) for h, s in others]
    own = (_entry(manager, "Apply", api_version, now), applied_set)
    if mine is None:
        updated.append(own)
    else:
        updated.insert(mine, own)
    rendered = _render(updated)
    before = ((live or {}).get("metadata") or {}).get("managedFields")
    if live is not None and _without_times(rendered) == _without_times(before):
        rendered = before  # an apply that changes nothing, ownership included, is not a write
    return _with_managed(lastapplied.sync_annotation(result, live, applied, manager), rendered)


def _without_times(managed: Any) -> Any:
    if not isinstance(managed, list):
        return managed
    return [{k: v for k, v in entry.items() if k != "time"} if isinstance(entry, dict) else entry for entry in managed]
