"""Reads of committed data (the change feed's reads of the log) on a thread and connection of their
own with PostgreSQL, so they never queue behind the hub's writes; with SQLite on the database thread.

Run on PostgreSQL by `make test-postgres`."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.db import connection

from control.storage import db, store

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reader():
    yield
    db.close_reader()  # its connection would keep PostgreSQL's test database from being dropped


def read_where() -> tuple[str, int]:
    return threading.current_thread().name, store.current_revision()


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the reader thread serves PostgreSQL only")
def test_on_postgres_a_read_never_goes_through_the_writers_queue(reader, monkeypatch):
    async def queued(*_: object) -> None:
        raise AssertionError("a read of committed data waited in the writer's queue")

    monkeypatch.setattr(db, "run_db", queued)
    name, revision = asyncio.run(db.run_read(read_where))
    assert name.startswith("kk-db-read") and revision >= 0
    db.close_reader()
    assert asyncio.run(db.run_read(read_where))[0].startswith("kk-db-read")  # started again when needed


@pytest.mark.skipif("connection.vendor == 'postgresql'", reason="with PostgreSQL reads have a thread of their own")
def test_on_sqlite_a_read_runs_on_the_database_thread_in_order():
    assert asyncio.run(db.run_read(read_where))[0] == "kk-db"
