"""The store's atomic scope behaves as Django's atomic() for what runs in it, inside a transaction
(raw savepoints on SQLite) and outside one; its cursor takes Django's placeholders."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from control.storage import savepoints, store

pytestmark = pytest.mark.django_db(transaction=True)


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def names() -> list[str]:
    bodies, _ = store.object_list(resource="/pods", namespace="default")
    return [body.split('"name":"')[1].split('"')[0] for body in bodies]


@pytest.fixture
def published():
    seen: list[tuple[str, str]] = []
    unsubscribe = store.subscribe(lambda changes: seen.extend((c.type, c.name) for c in changes))
    yield seen
    unsubscribe()


def test_a_failing_scope_is_undone_and_unpublished_while_its_transaction_goes_on(published):
    with transaction.atomic():
        store.object_create(resource="/pods", obj=pod("kept"), actor="t")
        with pytest.raises(ZeroDivisionError):
            with savepoints.atomic():
                store.object_create(resource="/pods", obj=pod("undone"), actor="t")
                1 / 0
        store.object_create(resource="/pods", obj=pod("after"), actor="t")
        assert published == [], "listeners hear only after the commit"
    assert names() == ["after", "kept"]
    assert published == [("ADDED", "kept"), ("ADDED", "after")]
    # revisions have no gaps: the undone create gave its revision back
    assert [c.revision for c in store.events_since(0)][-2:] == [store.current_revision() - 1, store.current_revision()]


def test_a_refused_write_in_a_call_leaves_the_call_usable(published):
    with transaction.atomic():
        with savepoints.atomic("kk_call"):
            store.object_create(resource="/pods", obj=pod("a"), actor="t")
            with pytest.raises(Exception) as refused:
                store.object_create(resource="/pods", obj=pod("a"), actor="t")  # AlreadyExists
            assert "already exists" in str(refused.value)
            store.object_create(resource="/pods", obj=pod("b"), actor="t")
    assert names() == ["a", "b"]
    assert published == [("ADDED", "a"), ("ADDED", "b")]


def test_an_inner_block_without_savepoint_that_failed_undoes_the_scope_quietly_as_django_does(published):
    with transaction.atomic():
        with savepoints.atomic():
            store.object_create(resource="/pods", obj=pod("doomed"), actor="t")
            try:
                with transaction.atomic(savepoint=False):
                    raise ValueError("inner")
            except ValueError:
                pass
            assert connection.needs_rollback
        assert not connection.needs_rollback
        store.object_create(resource="/pods", obj=pod("fine"), actor="t")
    assert names() == ["fine"]
    assert published == [("ADDED", "fine")]


def test_nested_scopes_and_django_atomics_unwind_in_order(published):
    with transaction.atomic():
        with savepoints.atomic("outer"):
            store.object_create(resource="/pods", obj=pod("one"), actor="t")
            with pytest.raises(KeyError):
                with transaction.atomic():
                    store.object_create(resource="/pods", obj=pod("two"), actor="t")
                    raise KeyError("x")
            with savepoints.atomic("inner"):
                store.object_create(resource="/pods", obj=pod("three"), actor="t")
    assert names() == ["one", "three"]
    assert published == [("ADDED", "one"), ("ADDED", "three")]


def test_outside_a_transaction_it_is_one(published):
    with pytest.raises(RuntimeError):
        with savepoints.atomic():
            store.object_create(resource="/pods", obj=pod("gone"), actor="t")
            raise RuntimeError("no")
    with savepoints.atomic():
        store.object_create(resource="/pods", obj=pod("stays"), actor="t")
    assert names() == ["stays"]
    assert published == [("ADDED", "stays")]


def test_the_cursor_takes_django_placeholders():
    store.ensure_counter()
    cursor = savepoints.cursor()
    cursor.execute("SELECT %s + %s", [20, 22])
    assert cursor.fetchone()[0] == 42


def test_each_thread_uses_its_own_django_connection_looked_up_once(monkeypatch):
    import threading

    from django.db import DEFAULT_DB_ALIAS, connections
    from asgiref.local import Local

    mine = savepoints._connection()
    assert mine is connections[DEFAULT_DB_ALIAS] and savepoints._connection() is mine
    theirs: list = []
    worker = threading.Thread(target=lambda: theirs.append((savepoints._connection(), connections[DEFAULT_DB_ALIAS])))
    worker.start()
    worker.join()
    assert theirs[0][0] is theirs[0][1] and theirs[0][0] is not mine
    # Django handed another set of connections: looked up again
    monkeypatch.setattr(connections, "_connections", Local(connections.thread_critical))
    again = savepoints._connection()
    assert again is connections[DEFAULT_DB_ALIAS] and again is not mine
