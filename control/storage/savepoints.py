"""A cheap atomic scope for the store's statements and the database thread's calls on SQLite.

Guarantees:
- `atomic()` behaves as Django's `transaction.atomic()` (savepoint=True) does for what runs in it:
  on success the work stays in the enclosing transaction; on an exception, or when an inner block
  without a savepoint marked the transaction for rollback, the work since the scope began is
  rolled back (a rolled-back scope's exception is re-raised, a marked one ends quietly, as
  Django's), the `transaction.on_commit` callbacks registered in it are dropped (a write that was
  undone is never published), and the enclosing transaction goes on.
- Inside an SQLite transaction it issues SAVEPOINT / RELEASE / ROLLBACK TO on the driver's own
  cursor; anywhere else (outside a transaction, on PostgreSQL) it is Django's atomic itself.
- `cursor()` is the cursor the store runs its statements on: on SQLite the driver's own (with
  Django's `%s` placeholders written as `?`), else Django's.

Why: Django's savepoint pair and its cursor wrapper cost about 50 us and 15 us a statement in
Python (3 us raw); a pod write in a group commit took two savepoints and four statements, about
a third of the store's CPU per write.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

from django.db import DEFAULT_DB_ALIAS, connections, transaction

_QMARK: dict[str, str] = {}  # statement with %s -> with ?, per statement text (a few dozen)


class _SQLiteCursor:
    """The driver's cursor taking Django's `%s` placeholders (the store's SQL has no other `%`)."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Any):
        self._raw = raw

    def execute(self, sql: str, params: Any = ()) -> "_SQLiteCursor":
        query = _QMARK.get(sql)
        if query is None:
            query = _QMARK[sql] = sql.replace("%s", "?")
        self._raw.execute(query, params)
        return self

    def fetchone(self) -> Any:
        return self._raw.fetchone()

    def fetchall(self) -> list[Any]:
        return self._raw.fetchall()


_THIS_THREAD = threading.local()


def _connection() -> Any:
    """This thread's default connection (what `django.db.connection` looks up again on every
    attribute it is asked for). Django makes a thread's connection object once, when the thread
    first asks, and keeps it for the thread's life (closing it only closes the driver's
    connection), so it is looked up once per thread: through asgiref's Local that lookup was ~2 %
    of the hub's GIL time while 1,000 pods came up, several per write. A test that hands Django
    another set of connections (`connections._connections` replaced) is looked up again."""
    held = connections._connections
    cached = getattr(_THIS_THREAD, "entry", None)
    if cached is not None and cached[0] is held:
        return cached[1]
    connection = connections[DEFAULT_DB_ALIAS]
    _THIS_THREAD.entry = (held, connection)
    return connection


def _sqlite() -> bool:
    return _connection().vendor == "sqlite"


def cursor() -> Any:
    """A cursor for plain statements with `%s` placeholders."""
    connection = _connection()
    if connection.vendor != "sqlite":
        return connection.cursor()
    connection.ensure_connection()
    connection.validate_no_broken_transaction()
    return _SQLiteCursor(connection.connection.cursor())


@contextmanager
def atomic(name: str = "kk") -> Iterator[None]:
    """Django's atomic(), with a raw savepoint when already inside an SQLite transaction."""
    connection = _connection()
    if not connection.in_atomic_block or connection.vendor != "sqlite":
        with transaction.atomic():
            yield
        return
    connection.validate_no_broken_transaction()  # as Django's savepoint() refuses a doomed transaction
    raw = connection.connection
    callbacks = len(connection.run_on_commit)
    raw.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        _roll_back(_connection(), raw, name, callbacks)
        raise
    connection = _connection()  # looked up again after the scope's work, as Django's atomic does on exit
    if connection.needs_rollback:  # an inner block without a savepoint failed: undo this scope's work
        _roll_back(connection, raw, name, callbacks)
        return
    try:
        raw.execute(f"RELEASE {name}")
    except BaseException:
        _roll_back(connection, raw, name, callbacks)
        raise


def _roll_back(connection: Any, raw: Any, name: str, callbacks: int) -> None:
    del connection.run_on_commit[callbacks:]
    connection.needs_rollback = False
    try:
        raw.execute(f"ROLLBACK TO {name}")
        raw.execute(f"RELEASE {name}")
    except Exception:  # the connection is unusable: the enclosing transaction must not commit
        connection.needs_rollback = True
