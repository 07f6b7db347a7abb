"""Reads at a revision: the objects of a resource exactly as they were at revision N.

This is etcd's read at a revision, which kube-apiserver's GetList uses (etcd3/store.go) to serve
every page of a paginated list from the revision of its first page, and a list with
`resourceVersionMatch=Exact` from the revision asked for.

Guarantees:
- `list_at(..., revision=N)` returns the objects that existed at N, each with its body at N, and N:
  the same answer a list taken when the newest revision was N gave. Without a revision it is the
  newest state and its revision. Items are sorted by (namespace, name) in code-point order, the
  order continue keys compare in, on every database (no collation decides it).
- It is rebuilt from the current rows and the log, never stored twice: an object written after N
  is put back as its last log entry at or before N shows it (left out if there is none because it
  was created after N, or if that entry is its deletion).
- Any N from the compacted revision up to the newest can be rebuilt: compaction keeps every
  object's last entry at or below the compaction point (etcd's compaction keeps the newest version
  of each key too; `store.log_compact`). An older N raises Gone, a newer one Timeout ("Too large
  resource version"), as etcd does.
- Consistent under concurrent writers and compaction on PostgreSQL too: the rows and their
  revision are one statement, and the log is read up to that revision only, in one statement
  that also reads the compacted revision it checks.
"""

from __future__ import annotations

from django.db import connection

from control import errors
from control.models import LogEntry, Revision, StoredObject
from control.storage.store import ADDED, DELETED

_OBJ = StoredObject._meta.db_table
_LOG = LogEntry._meta.db_table
_REV = Revision._meta.db_table

Key = tuple[str, str]  # (namespace, name)

# etcd3's text for a list at a revision the log no longer reaches (storage/etcd3/errors.go).
TOO_OLD = "The resourceVersion for the provided list is too old."


def _scope(alias: str, resource: str, namespace: str | None, name: str | None) -> tuple[str, list[str]]:
    """SQL condition (and its parameters) selecting one resource's rows, optionally narrowed."""
    condition, params = f"{alias}.resource = %s", [resource]
    if namespace:
        condition += f" AND {alias}.namespace = %s"
        params.append(namespace)
    if name:
        condition += f" AND {alias}.name = %s"
        params.append(name)
    return condition, params


def _current(cursor, resource: str, namespace: str | None, name: str | None) -> tuple[dict[Key, str], int]:
    """The stored rows and the revision they are the state at (one statement: one snapshot)."""
    condition, params = _scope("o", resource, namespace, name)
    cursor.execute(f"SELECT r.value, o.namespace, o.name, o.body FROM {_REV} r LEFT JOIN {_OBJ} o ON {condition}"
                   " WHERE r.id = 1", params)
    rows = cursor.fetchall()
    if not rows:  # a fresh database: no counter row yet, nothing stored
        return {}, 0
    return {(ns, nm): body for _, ns, nm, body in rows if body is not None}, int(rows[0][0])


def _undo_since(cursor, revision: int, latest: int, resource: str, namespace: str | None,
                name: str | None) -> tuple[int, list[tuple[Key, str | None, str | None, str | None]]]:
    """The compacted revision and, for every object written in (revision, latest]: its key, the
    type of its first write there, and the type and body of its last log entry at or before
    `revision` (None, None when the log holds none)."""
    touched, touched_params = _scope("t", resource, namespace, name)
    before, before_params = _scope("l", resource, namespace, name)
    cursor.execute(
        f"WITH touched AS (SELECT t.namespace, t.name, MIN(t.revision) AS first_after FROM {_LOG} t"
        f"   WHERE {touched} AND t.revision > %s AND t.revision <= %s GROUP BY t.namespace, t.name),"
        f" last_before AS (SELECT l.namespace, l.name, l.event_type, l.body,"
        f"   ROW_NUMBER() OVER (PARTITION BY l.namespace, l.name ORDER BY l.revision DESC) AS newest"
        f"   FROM {_LOG} l JOIN touched k ON l.namespace = k.namespace AND l.name = k.name"
        f"   WHERE {before} AND l.revision <= %s)"
        f" SELECT r.compacted, k.namespace, k.name, f.event_type, b.event_type, b.body"
        f" FROM {_REV} r LEFT JOIN touched k ON 1 = 1 LEFT JOIN {_LOG} f ON f.revision = k.first_after"
        f" LEFT JOIN last_before b ON b.namespace = k.namespace AND b.name = k.name AND b.newest = 1"
        f" WHERE r.id = 1",
        [*touched_params, revision, latest, *before_params, revision],
    )
    rows = cursor.fetchall()
    if not rows:
        return 0, []
    return int(rows[0][0]), [((ns, nm), first, kind, body) for _, ns, nm, first, kind, body in rows if ns is not None]


def list_at(*, resource: str, namespace: str | None = None, name: str | None = None,
            revision: int | None = None) -> tuple[list[str], int]:
    """Objects of a resource (optionally one namespace, optionally one name) as JSON text, sorted
    by (namespace, name), at `revision` (None: the newest), with the revision they are the state at."""
    cursor = connection.cursor()
    state, latest = _current(cursor, resource, namespace, name)
    if revision is not None and revision > latest:
        raise errors.Timeout(f"Too large resource version: {revision}, current: {latest}",
                             details={"causes": [{"reason": "ResourceVersionTooLarge",
                                                  "message": "Too large resource version"}], "retryAfterSeconds": 1})
    if revision is not None and revision < latest:
        compacted, undo = _undo_since(cursor, revision, latest, resource, namespace, name)
        if revision < compacted:
            raise errors.expired(TOO_OLD)
        for key, first_after, last_type, last_body in undo:
            if last_type is None and first_after != ADDED:
                # Existed at `revision` but its entry from then is gone (a log compacted before
                # compaction kept such entries): this revision cannot be rebuilt.
                raise errors.expired(TOO_OLD)
            if last_type is None or last_type == DELETED:
                state.pop(key, None)
            else:
                state[key] = last_body
        latest = revision
    return [state[key] for key in sorted(state)], latest


def time_at(revision: int) -> float | None:
    """When the newest write at or before `revision` was made (None when the log holds none): the
    clock time of the state a read at that revision returns. Compaction keeps each object's last
    entry, so a revision inside the window usually still has one."""
    entry = LogEntry.objects.filter(revision__lte=revision).order_by("-revision").values_list("created_at").first()
    return float(entry[0]) if entry else None


def lists_at(resources: list[str], revision: int) -> dict[str, list[str]]:
    """Every object of several resources at `revision`, per resource sorted by (namespace, name):
    what `list_at` gives for each, read in three statements in all however many resources (the
    timeline asks for a dozen at once), so a read at any revision of a long window stays fast.
    The same errors as `list_at`: Gone before the window, Timeout after the newest revision."""
    cursor = connection.cursor()
    marks = ", ".join(["%s"] * len(resources))
    cursor.execute(f"SELECT r.value, o.resource, o.namespace, o.name, o.body FROM {_REV} r"
                   f" LEFT JOIN {_OBJ} o ON o.resource IN ({marks}) WHERE r.id = 1", list(resources))
    rows = cursor.fetchall()
    latest = int(rows[0][0]) if rows else 0
    states: dict[str, dict[Key, str]] = {resource: {} for resource in resources}
    for _, resource, namespace, name, body in rows:
        if body is not None:
            states[resource][(namespace, name)] = body
    if revision > latest:
        raise errors.Timeout(f"Too large resource version: {revision}, current: {latest}",
                             details={"causes": [{"reason": "ResourceVersionTooLarge",
                                                  "message": "Too large resource version"}], "retryAfterSeconds": 1})
    if revision < latest:
        # One pass over the log above `revision` finds what changed since; one more finds each such
        # object's last entry at or before it (a MAX per key, then its row), with the compacted
        # revision read in the same statement, as `_undo_since` does for one resource.
        cursor.execute(
            f"WITH touched AS (SELECT t.resource, t.namespace, t.name, MIN(t.revision) AS first_after FROM {_LOG} t"
            f"   WHERE t.revision > %s AND t.revision <= %s AND t.resource IN ({marks})"
            f"   GROUP BY t.resource, t.namespace, t.name),"
            f" last_before AS (SELECT l.resource, l.namespace, l.name, MAX(l.revision) AS at FROM {_LOG} l"
            f"   JOIN touched k ON l.resource = k.resource AND l.namespace = k.namespace AND l.name = k.name"
            f"   WHERE l.revision <= %s GROUP BY l.resource, l.namespace, l.name)"
            f" SELECT r.compacted, k.resource, k.namespace, k.name, f.event_type, b.event_type, b.body"
            f" FROM {_REV} r LEFT JOIN touched k ON 1 = 1 LEFT JOIN {_LOG} f ON f.revision = k.first_after"
            f" LEFT JOIN last_before lb ON lb.resource = k.resource AND lb.namespace = k.namespace AND lb.name = k.name"
            f" LEFT JOIN {_LOG} b ON b.revision = lb.at WHERE r.id = 1",
            [revision, latest, *resources, revision])
        undo = cursor.fetchall()
        compacted = int(undo[0][0]) if undo else 0
        if revision < compacted:
            raise errors.expired(TOO_OLD)
        for _, resource, namespace, name, first_after, last_type, last_body in undo:
            if resource is None:
                continue
            if last_type is None and first_after != ADDED:
                raise errors.expired(TOO_OLD)  # existed then, but its entry from then is gone
            if last_type is None or last_type == DELETED:
                states[resource].pop((namespace, name), None)
            else:
                states[resource][(namespace, name)] = last_body
    return {resource: [state[key] for key in sorted(state)] for resource, state in states.items()}
