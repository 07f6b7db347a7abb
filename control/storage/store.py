"""The ONE write path to the cluster's state (the etcd role).

Guarantees:
- Every write is one database transaction: check preconditions, take the next revision from the
  single global counter (holding its row until commit, so revisions follow commit order with no
  gaps even with several writer processes), write the object row, append the log entry.
- Listeners (see `subscribe`) hear about a write only after it has committed; on PostgreSQL a
  NOTIFY in the same transaction tells other processes. Both are hints: the log is the truth.
- A write that changes nothing is not written and takes no revision.
- `object_create_as_stored` / `object_update_as_stored` also give the exact JSON text stored (an
  answer need not encode the object again) and, `shared`, hand the object itself to the watchers.
- Reads of a list return the items and the revision they are consistent with, from one snapshot
  (reads at an older revision: `control.storage.snapshot`).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from django.db import connection, transaction

from control.clock import REAL as clock  # injected time: a test may replace `store.clock`
from control import errors, jsontext
from control.models import LogEntry, Revision, StoredObject
from control.storage import savepoints

log = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

_OBJ = StoredObject._meta.db_table
_LOG = LogEntry._meta.db_table
_REV = Revision._meta.db_table


class Delete:
    """Returned by an update's mutate function: the object is to be removed (e.g. last finalizer gone)."""

    def __init__(self, final: dict[str, Any]):
        self.final = final


@dataclass
class Change:
    """One committed log entry, as watchers see it."""

    revision: int
    type: str
    resource: str
    namespace: str
    name: str
    actor: str
    created_at: float
    body: str
    _obj: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    _line: bytes | None = field(default=None, repr=False, compare=False)

    def obj(self) -> dict[str, Any]:
        """The object snapshot, parsed once and shared: callers must not change it."""
        if self._obj is None:
            self._obj = jsontext.loads(self.body)
        return self._obj

    def forget_parsed(self) -> None:
        self._obj = None

    def line(self) -> bytes:
        """This change as one watch event line, encoded once and shared by every watcher."""
        if self._line is None:
            self._line = f'{{"type":"{self.type}","object":{self.body}}}\n'.encode()
        return self._line


_listeners: list[Callable[[list[Change]], None]] = []


def subscribe(listener: Callable[[list[Change]], None]) -> Callable[[], None]:
    """Call `listener(changes)` after each commit (in the writing thread); returns an unsubscribe."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener) if listener in _listeners else None


def _publish(changes: list[Change]) -> None:
    for listener in list(_listeners):
        try:
            listener(changes)
        except Exception:  # a broken listener must not break the writer
            log.exception("store listener failed")


def _dumps(obj: dict[str, Any]) -> str:
    return jsontext.dumps(obj)


# etcd's --max-request-bytes default (1.5 MiB): a larger object is refused, as etcd refuses the put
# kube-apiserver sends it; with the message etcd gives (kube-apiserver relays it), as a 413.
MAX_OBJECT_BYTES = 1536 * 1024


def _storable(obj: dict[str, Any]) -> str:
    body = _dumps(obj)
    if jsontext.size(body) > MAX_OBJECT_BYTES:
        raise errors.RequestEntityTooLarge("etcdserver: request is too large")
    return body


@functools.cache
def _is_postgres() -> bool:
    """Whether the database is PostgreSQL: fixed for the process's life (Django has one engine per
    alias from setup on), so asked once; `connection.vendor` costs ~3 us a call, several a write."""
    return connection.vendor == "postgresql"


def _next_revision(cursor) -> int:
    cursor.execute(f"UPDATE {_REV} SET value = value + 1 WHERE id = 1 RETURNING value")
    row = cursor.fetchone()
    if row is None:  # first write ever on a fresh database
        cursor.execute(f"INSERT INTO {_REV} (id, value, compacted) VALUES (1, 1, 0)")
        return 1
    return int(row[0])


def _append_log(cursor, change: Change) -> None:
    cursor.execute(
        f"INSERT INTO {_LOG} (revision, event_type, resource, namespace, name, actor, created_at, body)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        [change.revision, change.type, change.resource, change.namespace, change.name,
         change.actor, change.created_at, change.body],
    )
    if _is_postgres():
        cursor.execute("SELECT pg_notify('kk_revision', %s)", [str(change.revision)])
    transaction.on_commit(lambda: _publish([change]))


def _select_current(cursor, resource: str, namespace: str, name: str, *, for_update: bool):
    lock = " FOR UPDATE" if for_update and _is_postgres() else ""
    cursor.execute(
        f"SELECT id, body FROM {_OBJ} WHERE resource = %s AND namespace = %s AND name = %s{lock}",
        [resource, namespace, name],
    )
    return cursor.fetchone()


def _locked_row(cursor, resource: str, namespace: str, name: str) -> tuple[int, str]:
    """(row id, JSON body) of an object, locked until commit; NotFound if there is none."""
    if _is_postgres():
        # The revision row before the object's, as every write takes them: a batch (group commit)
        # holds the revision row from its first write to its commit, so another hub's batch that
        # locked an object first and then waited for the revision row made a cycle, and
        # PostgreSQL broke it with "deadlock detected" (a 500). One order, no cycle.
        cursor.execute(f"SELECT value FROM {_REV} WHERE id = 1 FOR UPDATE")
    row = _select_current(cursor, resource, namespace, name, for_update=True)
    if row is None:
        raise errors.not_found(resource, name)
    return row


def object_create(*, resource: str, obj: dict[str, Any], actor: str) -> dict[str, Any]:
    """Store a new object; its metadata must already carry name, uid and creationTimestamp."""
    return object_create_as_stored(resource=resource, obj=obj, actor=actor, shared=False)[0]


def object_create_as_stored(*, resource: str, obj: dict[str, Any], actor: str,
                            shared: bool = True) -> tuple[dict[str, Any], str]:
    """`object_create`, also giving the JSON text stored (the exact `jsontext.dumps` of the object,
    for an answer that would encode it again). `shared`: the object is handed to the watchers as the
    change's parsed snapshot (saving them a decode), so the caller must not change it afterwards."""
    meta = obj["metadata"]
    namespace, name = meta.get("namespace", ""), meta["name"]
    with savepoints.atomic("kk_write"):
        cursor = savepoints.cursor()
        # The revision row first: holding it, we see every create that committed before us.
        revision = _next_revision(cursor)
        if _select_current(cursor, resource, namespace, name, for_update=False):
            raise errors.already_exists(resource, name)
        meta["resourceVersion"] = str(revision)
        body = _storable(obj)
        cursor.execute(
            f"INSERT INTO {_OBJ} (resource, namespace, name, uid, revision, body)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            [resource, namespace, name, meta.get("uid", ""), revision, body],
        )
        _append_log(cursor, Change(revision, ADDED, resource, namespace, name, actor, clock.now(), body,
                                   _obj=obj if shared else None))
    return obj, body


def object_update(
    *,
    resource: str,
    namespace: str,
    name: str,
    mutate: Callable[[dict[str, Any]], dict[str, Any] | Delete],
    actor: str,
) -> dict[str, Any]:
    """Read-modify-write one object atomically.

    `mutate(current)` gets a private copy of the stored object and returns the new object, or a
    `Delete` to remove it; it may raise an ApiError (Conflict, Invalid, ...) to refuse. Nothing
    is written when the result equals the stored object (ignoring resourceVersion).
    """
    return object_update_as_stored(resource=resource, namespace=namespace, name=name, mutate=mutate, actor=actor,
                                   shared=False)[0]


def object_update_as_stored(
    *,
    resource: str,
    namespace: str,
    name: str,
    mutate: Callable[[dict[str, Any]], dict[str, Any] | Delete],
    actor: str,
    shared: bool = True,
) -> tuple[dict[str, Any], str | None]:
    """`object_update`, also giving the JSON text it stored for the object (None when it wrote
    none: nothing changed, or the object was removed). `shared` as in `object_create_as_stored`."""
    with savepoints.atomic("kk_write"):
        cursor = savepoints.cursor()
        row_id, body = _locked_row(cursor, resource, namespace, name)
        current = jsontext.loads(body)
        result = mutate(jsontext.loads(body))
        if isinstance(result, Delete):
            return _delete_row(cursor, row_id, resource, namespace, name, result.final, actor), None
        result["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        if result == current:
            return current, None
        revision = _next_revision(cursor)
        result["metadata"]["resourceVersion"] = str(revision)
        new_body = _storable(result)
        cursor.execute(
            f"UPDATE {_OBJ} SET revision = %s, body = %s WHERE id = %s", [revision, new_body, row_id]
        )
        _append_log(cursor, Change(revision, MODIFIED, resource, namespace, name, actor, clock.now(), new_body,
                                   _obj=result if shared else None))
    return result, new_body


def object_delete(
    *,
    resource: str,
    namespace: str,
    name: str,
    actor: str,
    precondition: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Remove an object now; `precondition(current)` may raise to refuse. Returns the final snapshot."""
    with savepoints.atomic("kk_write"):
        cursor = savepoints.cursor()
        row_id, body = _locked_row(cursor, resource, namespace, name)
        current = jsontext.loads(body)
        if precondition:
            precondition(current)
        return _delete_row(cursor, row_id, resource, namespace, name, current, actor)


def _delete_row(cursor, row_id: int, resource: str, namespace: str, name: str,
                final: dict[str, Any], actor: str) -> dict[str, Any]:
    revision = _next_revision(cursor)
    final["metadata"]["resourceVersion"] = str(revision)
    body = _dumps(final)
    cursor.execute(f"DELETE FROM {_OBJ} WHERE id = %s", [row_id])
    _append_log(cursor, Change(revision, DELETED, resource, namespace, name, actor, clock.now(), body))
    return final


def object_get(*, resource: str, namespace: str, name: str) -> dict[str, Any]:
    return jsontext.loads(object_text(resource=resource, namespace=namespace, name=name))


def object_text(*, resource: str, namespace: str, name: str) -> str:
    """An object's stored JSON text (what `object_get` decodes): an answer may send it as it is."""
    cursor = savepoints.cursor()
    row = _select_current(cursor, resource, namespace, name, for_update=False)
    if row is None:
        raise errors.not_found(resource, name)
    return row[1]


def object_list(
    *, resource: str, namespace: str | None = None, name: str | None = None
) -> tuple[list[str], int]:
    """Objects of a resource (optionally one namespace, optionally one name), sorted by namespace
    and name, as JSON text, with the revision the whole list is consistent with (one statement,
    so one snapshot)."""
    join, params = "o.resource = %s", [resource]
    if namespace:
        join += " AND o.namespace = %s"
        params.append(namespace)
    if name:
        join += " AND o.name = %s"
        params.append(name)
    cursor = savepoints.cursor()
    cursor.execute(
        f"SELECT r.value, o.body FROM {_REV} r LEFT JOIN {_OBJ} o ON {join}"
        " WHERE r.id = 1 ORDER BY o.namespace, o.name",
        params,
    )
    rows = cursor.fetchall()
    if not rows:
        return [], 0
    return [body for _, body in rows if body is not None], int(rows[0][0])


def ensure_counter() -> None:
    """Create the revision counter row on a fresh database (idempotent)."""
    Revision.objects.get_or_create(pk=1, defaults={"value": 0, "compacted": 0})


def objects_of(resources: list[str]) -> tuple[dict[str, list[str]], int]:
    """Every object of several resources and the revision they are consistent with, from one
    statement (one snapshot) — what a dashboard needs before it follows the change stream."""
    marks = ", ".join(["%s"] * len(resources))
    cursor = savepoints.cursor()
    cursor.execute(
        f"SELECT r.value, o.resource, o.body FROM {_REV} r LEFT JOIN {_OBJ} o ON o.resource IN ({marks})"
        " WHERE r.id = 1 ORDER BY o.resource, o.namespace, o.name",
        list(resources),
    )
    rows = cursor.fetchall()
    found: dict[str, list[str]] = {resource: [] for resource in resources}
    for _, resource, body in rows:
        if body is not None:
            found[resource].append(body)
    return found, int(rows[0][0]) if rows else 0


def fingerprint(resources: list[str]) -> tuple[int, int]:
    """(how many objects, their newest revision) of several resources. It is back to an earlier
    value only when the objects are back to that moment's (revisions only grow, so the newest is
    back only when every object created or changed since is gone again; a deleted older one would
    lower the count): a cache of them can tell it is current without reading them."""
    marks = ", ".join(["%s"] * len(resources))
    cursor = savepoints.cursor()
    cursor.execute(f"SELECT COUNT(*), MAX(revision) FROM {_OBJ} WHERE resource IN ({marks})", list(resources))
    count, newest = cursor.fetchone()
    return int(count or 0), int(newest or 0)


def writes_held() -> None:
    """Inside a transaction: take the revision row now, as every write does before it commits, so
    no other write commits until this transaction ends. For a write that decides from what is
    stored (a Service's free addresses). SQLite's BEGIN IMMEDIATE already serialises writers."""
    if _is_postgres():
        connection.cursor().execute(f"SELECT value FROM {_REV} WHERE id = 1 FOR UPDATE")


def current_revision() -> int:
    # Plain SQL rather than a QuerySet: every change feed asks this once a second (its poll).
    cursor = savepoints.cursor()
    cursor.execute(f"SELECT value FROM {_REV} WHERE id = 1")
    row = cursor.fetchone()
    return int(row[0] or 0) if row else 0


def compacted_revision() -> int:
    row = Revision.objects.filter(pk=1).values_list("compacted", flat=True).first()
    return int(row or 0)


def events_since(revision: int, *, limit: int = 1000) -> list[Change]:
    """Committed changes after `revision`, oldest first. Raises Gone if the log no longer reaches
    back that far (the caller's resume point was compacted away)."""
    cursor = savepoints.cursor()
    cursor.execute(
        f"SELECT r.compacted, l.revision, l.event_type, l.resource, l.namespace, l.name, l.actor,"
        f" l.created_at, l.body FROM {_REV} r LEFT JOIN {_LOG} l ON l.revision > %s"
        f" WHERE r.id = 1 ORDER BY l.revision LIMIT %s",
        [revision, limit],
    )
    rows = cursor.fetchall()
    if not rows:
        return []
    compacted = int(rows[0][0])
    if revision < compacted:
        raise errors.expired(f"too old resource version: {revision} ({compacted})")
    return [Change(int(r[1]), r[2], r[3], r[4], r[5], r[6], float(r[7]), r[8]) for r in rows if r[1] is not None]


def log_compact(*, max_entries: int, max_age: float, now: float | None = None) -> int:
    """Drop log entries outside the window (beyond the newest `max_entries`, or older than
    `max_age` seconds). Returns the new compacted revision.

    As etcd's compaction keeps the newest version of every key, each object keeps its last entry
    at or below the compacted revision (unless that is its deletion), so reads at any revision from
    the compacted one on (`control.storage.snapshot`) can put back an object written since. The
    kept entries are never served as events: watches read only above the compacted revision."""
    now = clock.now() if now is None else now
    with transaction.atomic():
        cursor = connection.cursor()
        cursor.execute(f"SELECT value, compacted FROM {_REV} WHERE id = 1")
        row = cursor.fetchone()
        if row is None:
            return 0
        latest, compacted = int(row[0]), int(row[1])
        through = max(compacted, latest - max_entries)
        cursor.execute(f"SELECT MAX(revision) FROM {_LOG} WHERE created_at < %s", [now - max_age])
        by_age = cursor.fetchone()[0]
        if by_age is not None:
            through = max(through, int(by_age))
        if through > compacted:
            cursor.execute(
                f"DELETE FROM {_LOG} WHERE revision <= %s AND revision NOT IN ("
                f" SELECT MAX(revision) FROM {_LOG} WHERE revision <= %s GROUP BY resource, namespace, name)",
                [through, through])
            # A deletion kept above says "absent then", which no entry at all says as well.
            cursor.execute(f"DELETE FROM {_LOG} WHERE revision <= %s AND event_type = %s", [through, DELETED])
            cursor.execute(f"UPDATE {_REV} SET compacted = %s WHERE id = 1", [through])
    return through
