"""Field ownership of ordinary writes ("Update") in `metadata.managedFields`, with the field sets
of `control.api.apply`.

Guarantees:
- `record_update` returns a new object (its metadata copied, the rest shared with `new`) and never
  mutates its inputs.
- What a write changed or added is owned by the writer's Update entry (same manager and
  apiVersion), whose time becomes the write's, and by nobody else; fields that no longer exist
  are owned by no one; a manager left owning nothing is dropped.
- A write that changes nothing keeps every entry, times included. A client that sends other
  managedFields than the stored ones rewrites them (`[{}]` resets them). A write that changes no
  tracked field (a pod's status) keeps the stored list itself when rendering it again would give
  it back (decided once per distinct field set, `_renders_as_itself`).
- The cost follows what changed, not the object's size: old and new are compared map field by
  map field, and only the fields that differ are walked. When the writer already owns all it
  changed and nothing was removed (a Lease renewal, a node status heartbeat), the stored entries
  are kept with only the writer's time renewed, no field set decoded and encoded again.
"""

from __future__ import annotations

from typing import Any

from control import jsontext
from control.api.apply import (
    _MISSING, Path, _compact, _copy_with_metadata, _differs, _entries, _entry, _ignored, _lookup, _render,
    _walk_field, _with_managed, decode_fields, encode_fields, field_set,
)
from control.api.smp import PatchMeta


def _same(a: Any, b: Any) -> bool:
    """Whether two values are equal as JSON (`==` alone takes 1 for True and 1.0 for 1)."""
    return a is b or (a == b and (type(a) is str or _compact(a) == _compact(b)))


def _changes(old: dict, new: dict, meta: PatchMeta) -> tuple[set[Path], set[Path]]:
    """(changed, gone) of an update: the tracked paths of `new` whose value differs from `old`'s
    (or that are new), and those of `old` that `new` no longer has.

    Only where the two differ is looked at: a map field equal on both sides holds no changed and
    no gone path, so a Lease renewal compares a handful of fields and walks one (renewTime)
    instead of looking up every tracked path of both objects (as structured-merge-diff's Compare
    walks two typed values together rather than comparing two field sets)."""
    changed: set[Path] = set()
    gone: set[Path] = set()
    _visit(old, new, old, new, meta, (), changed, gone)
    return changed, gone


def _visit(old: dict, new: dict, o: dict, n: dict, meta: PatchMeta, prefix: Path,
           changed: set[Path], gone: set[Path]) -> None:
    """`_changes` below `prefix` (`o` and `n` are `old`'s and `new`'s maps there). A module-level
    function, not a closure that calls itself: such a closure is a reference cycle, which kept both
    objects and every path set alive until the cycle collector found them (a third of the hub's
    collected garbage while it brought 1,000 pods up)."""
    for field in n.keys() | o.keys():
        a, b = o.get(field), n.get(field)
        path = prefix + (f"f:{field}",)
        if a is b or _ignored(path):
            continue
        if isinstance(a, dict) and isinstance(b, dict) and a and b:
            # Field by field rather than as one JSON text: metadata's managedFields is
            # skipped (never tracked) instead of being encoded twice.
            _visit(old, new, a, b, meta.child(field), path, changed, gone)
            continue
        if _same(a, b):
            continue
        before: set[Path] = set()
        after: set[Path] = set()
        _walk_field(field, a, meta, prefix, before)
        _walk_field(field, b, meta, prefix, after)
        changed.update(p for p in after if _differs(old, new, p))
        gone.update(p for p in before - after if _lookup(new, p) is _MISSING)


def record_update(old: dict, new: dict, *, manager: str, now: str, api_version: str,
                  meta: PatchMeta | None = None) -> dict:
    """`new` with managedFields updated for a non-apply write by `manager` (operation "Update").

    Pass the kind's `meta` so list items are owned by merge key, as applies own them; without it
    every list is owned atomically. `old` may be {} for a create.

    As upstream's managedFieldsUpdater: what the write changed moves to the writer's entry (whose
    time becomes `now`) and leaves everyone else's; a write that changed nothing leaves every
    entry, time included, as it was. When the writer already owns every field it changed and
    nothing was removed (a Lease renewal, a status heartbeat), the stored entries are kept as
    they are but for that entry's time: no field set is decoded or encoded again.
    """
    meta = meta or PatchMeta.empty()
    if not old and not (new.get("metadata") or {}).get("managedFields"):
        # A create: the writer owns everything it sent; nothing to compare, nobody to take from.
        owned = field_set(new, meta)
        return _with_managed(_copy_with_metadata(new), _render([(_entry(manager, "Update", api_version, now), owned)]))
    result = _copy_with_metadata(new)  # only metadata.managedFields is written
    old = old or {}
    sent = (new.get("metadata") or {}).get("managedFields")
    old_managed = (old.get("metadata") or {}).get("managedFields")
    # The client rewrote managedFields on purpose; `[{}]` is Kubernetes' way to reset them.
    rewritten = isinstance(sent, list) and bool(sent) and sent != old_managed
    changed, gone = _changes(old, new, meta)
    if not rewritten and not gone and changed:
        # The entries as the client sent them when it sent them (equal to the stored ones here):
        # the result then shares only `new`'s parts, as it does everywhere else.
        kept = _retimed(sent or old_managed, changed, new, meta, manager=manager, api_version=api_version, now=now)
        if kept is not None:
            return _with_managed(result, kept)
    if not rewritten and not changed and not gone and _renders_as_itself(old_managed):
        # Nothing tracked changed (a status write, as ownership is tracked): the stored entries
        # are what rendering them again would give, so they are kept as they are.
        return _with_managed(result, list(old_managed))
    old_entries = _entries(old)
    entries = old_entries
    if rewritten:
        entries = _entries(new) if any(e for e in sent) else []
    if not changed and not gone and entries == old_entries:
        return _with_managed(result, _render(entries))
    present = field_set(new, meta)
    updated: list[tuple[dict, set[Path]]] = []
    mine = None
    for head, paths in entries:
        alive = {p for p in paths if p in present or (p not in gone and _lookup(new, p) is not _MISSING)}
        if head["manager"] == manager and head.get("operation") == "Update" \
                and head.get("apiVersion") == api_version and mine is None:
            mine = len(updated)
            updated.append((_entry(manager, "Update", api_version, now), alive | changed))
        else:
            updated.append((head, alive - changed))
    if mine is None and changed:
        updated.append((_entry(manager, "Update", api_version, now), changed))
    return _with_managed(result, _render(updated))


def _renders_as_itself(managed: Any) -> bool:
    """Whether `_render(_entries(...))` of these stored entries gives them back unchanged (same
    entries, keys and order): true of every list this module or apply wrote. Entry by entry: the
    rendering copies an entry's other keys as they are and appends `fieldsType` (when missing) and
    `fieldsV1`, so an entry comes back itself when it has a manager, its `fieldsType` is
    "FieldsV1", `fieldsV1` is its last key and that field set comes back itself (not empty). The
    last is decided once per distinct field set (its compact JSON is the key), not per write: the
    writes of one pod, or of the pods of one template, share their field sets while the entries'
    times differ."""
    if not isinstance(managed, list) or not managed:
        return False
    for entry in managed:
        if not isinstance(entry, dict) or not isinstance(entry.get("manager"), str) \
                or entry.get("fieldsType") != "FieldsV1" or next(reversed(entry)) != "fieldsV1" \
                or not _fields_render_as_themselves(entry["fieldsV1"]):
            return False
    return True


def _fields_render_as_themselves(fields: Any) -> bool:
    try:
        text = jsontext.dumps(fields)
    except (TypeError, ValueError):
        return False
    known = _RENDERS_AS_ITSELF.get(text)
    if known is None:
        paths = decode_fields(fields)
        known = bool(paths) and jsontext.dumps(encode_fields(paths)) == text
        if len(_RENDERS_AS_ITSELF) >= _RENDERS_AS_ITSELF_MAX:
            del _RENDERS_AS_ITSELF[next(iter(_RENDERS_AS_ITSELF))]
        _RENDERS_AS_ITSELF[text] = known
    return known


# a field set's text -> whether it renders as itself; a few hundred (a pod's are a few KiB), the
# oldest forgotten first
_RENDERS_AS_ITSELF: dict[str, bool] = {}
_RENDERS_AS_ITSELF_MAX = 512


def _retimed(managed: Any, changed: set[Path], new: dict, meta: PatchMeta, *, manager: str, api_version: str,
             now: str) -> list[dict] | None:
    """The stored entries with only the writer's time set to `now`, when that is all the write
    changes in them: the writer's Update entry already owns every changed path, no other entry
    owns one, and every owned path is still there. None when the full recount is needed."""
    if not isinstance(managed, list):
        return None
    entries = _entries({"metadata": {"managedFields": managed}})
    if len(entries) != len(managed) or not all(paths for _, paths in entries) \
            or not all(e.get("fieldsType") == "FieldsV1" for e in managed):
        return None  # entries the full recount would drop or rewrite
    mine = next((i for i, (h, _) in enumerate(entries) if h["manager"] == manager
                 and h.get("operation") == "Update" and h.get("apiVersion") == api_version), None)
    if mine is None or not changed <= entries[mine][1]:
        return None
    present = field_set(new, meta)
    for i, (_, paths) in enumerate(entries):
        if i != mine and paths & changed:
            return None
        if any(p not in present and _lookup(new, p) is _MISSING for p in paths):
            return None
    out = list(managed)
    out[mine] = {**_entry(manager, "Update", api_version, now), "fieldsType": "FieldsV1",
                 "fieldsV1": managed[mine]["fieldsV1"]}
    return out
