"""The data folder and what is written in it are owner-only from creation (control.datafolder), also
when the process runs with a permissive umask; a looser folder found at start is tightened, with a
warning once."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from control import datafolder, keys, roster
from control.auth import tokenfile

ROOT = Path(__file__).resolve().parent.parent


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def permissive_umask():
    """umask 000: what a file is made with is then exactly the mode the code asked for."""
    before = os.umask(0)
    try:
        yield
    finally:
        os.umask(before)


def test_a_fresh_data_folder_and_its_parents_are_made_owner_only(tmp_path, permissive_umask):
    folder = datafolder.prepare(tmp_path / "deep" / "data")
    assert folder.is_dir()
    assert mode(folder) == 0o700
    assert mode(tmp_path / "deep") == 0o700


def test_the_database_and_its_wal_and_shm_files_are_made_0600(tmp_path, permissive_umask):
    database = datafolder.prepare(tmp_path / "data") / "cluster.sqlite3"
    connection = sqlite3.connect(database, factory=datafolder.PrivateSQLiteConnection)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE t (x)")
        connection.execute("INSERT INTO t VALUES (1)")
        connection.commit()
        made = {p.name: mode(p) for p in database.parent.iterdir()}
    finally:
        connection.close()
    assert made == {"cluster.sqlite3": 0o600, "cluster.sqlite3-wal": 0o600, "cluster.sqlite3-shm": 0o600}


def test_the_rollback_journal_is_made_0600_too(tmp_path, permissive_umask):
    database = tmp_path / "test.sqlite3"
    connection = sqlite3.connect(database, factory=datafolder.PrivateSQLiteConnection, isolation_level=None)
    try:
        connection.execute("CREATE TABLE t (x)")
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO t VALUES (1)")
        journal = tmp_path / "test.sqlite3-journal"
        assert journal.exists(), "SQLite keeps a rollback journal while the write transaction is open"
        assert mode(journal) == 0o600
        connection.execute("COMMIT")
    finally:
        connection.close()
    assert mode(database) == 0o600


def test_memory_databases_and_an_existing_file_are_left_alone(tmp_path, permissive_umask):
    sqlite3.connect(":memory:", factory=datafolder.PrivateSQLiteConnection).close()
    sqlite3.connect("file:kk-memory?mode=memory", uri=True, factory=datafolder.PrivateSQLiteConnection).close()
    assert list(tmp_path.iterdir()) == []
    shared = tmp_path / "shared.sqlite3"
    shared.touch(mode=0o640)
    sqlite3.connect(shared, factory=datafolder.PrivateSQLiteConnection).close()
    assert mode(shared) == 0o640, "opening never changes a file's mode; prepare() at start does"


def test_keys_tokens_and_kubeconfigs_are_made_private(tmp_path, permissive_umask):
    data = datafolder.prepare(tmp_path / "data")
    keys.signing_key(data)
    keys.ca_certificate(data)
    tokenfile.admin_token(data)
    kubeconfig = roster.write_kubeconfig(data, "ada", "https://127.0.0.1:6443", "t0ken", b"")
    assert mode(data / "keys") == 0o700
    assert mode(data / "keys" / "sa.key") == 0o600
    assert mode(data / "keys" / "ca.key") == 0o600
    assert mode(data / "keys" / "ca.crt") == 0o644, "a CA certificate is public, as upstream's ca.crt"
    assert mode(data / "tokens.csv") == 0o600
    assert mode(kubeconfig.parent) == 0o700
    assert mode(kubeconfig) == 0o600


def test_a_replaced_file_is_a_new_owner_only_file_with_nothing_left_beside_it(tmp_path, permissive_umask):
    target = tmp_path / "fresh" / "admin.kubeconfig"
    datafolder.replace_file(target, b"first")
    assert mode(target.parent) == 0o700 and mode(target) == 0o600 and target.read_bytes() == b"first"
    target.chmod(0o644)  # an older, looser one is replaced, not written into
    before = target.stat().st_ino
    datafolder.replace_file(target, b"second")
    assert mode(target) == 0o600 and target.read_bytes() == b"second" and target.stat().st_ino != before
    datafolder.replace_file(target.with_name("public.crt"), b"cert", 0o644)
    assert mode(target.with_name("public.crt")) == 0o644
    assert sorted(p.name for p in target.parent.iterdir()) == ["admin.kubeconfig", "public.crt"]


def test_a_loose_existing_folder_is_tightened_with_one_warning_each(tmp_path, caplog, permissive_umask):
    data = tmp_path / "data"
    (data / "keys").mkdir(parents=True, mode=0o755)
    data.chmod(0o755)
    (data / "cluster.sqlite3").write_bytes(b"")
    (data / "cluster.sqlite3").chmod(0o644)
    (data / "keys" / "sa.key").write_bytes(b"")
    (data / "keys" / "sa.key").chmod(0o640)
    (data / "keys" / "ca.crt").write_bytes(b"")
    (data / "keys" / "ca.crt").chmod(0o644)
    (data / "kubelet").mkdir(mode=0o755)
    (data / "kubelet" / "volume-file").write_bytes(b"")
    (data / "kubelet" / "volume-file").chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="control.datafolder"):
        datafolder.prepare(data)
    warned = sorted(r.getMessage() for r in caplog.records)
    assert len(warned) == 4, warned
    assert any(f"data folder {data} was 0o755" in w and "now 0o700" in w for w in warned)
    assert any(f"{data / 'cluster.sqlite3'} was 0o644" in w and "now 0o600" in w for w in warned)
    assert any(f"{data / 'keys' / 'sa.key'} was 0o640" in w for w in warned)
    assert mode(data) == 0o700 and mode(data / "keys") == 0o700
    assert mode(data / "cluster.sqlite3") == 0o600 and mode(data / "keys" / "sa.key") == 0o600
    assert mode(data / "keys" / "ca.crt") == 0o644
    assert mode(data / "kubelet" / "volume-file") == 0o644, "the pods' volumes keep their own modes"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="control.datafolder"):
        datafolder.prepare(data)
    assert caplog.records == [], "once tightened, nothing more to say"


def _load_settings(data: Path) -> subprocess.CompletedProcess:
    """A process that loads the settings (as every hub, spoke and manage.py command does) with
    umask 000 and `data` as its data folder."""
    env = {**os.environ, "KK_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    env.pop("KK_SQLITE_PATH", None)
    code = "import os; os.umask(0); import control.settings"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_loading_the_settings_makes_the_data_folder_0700(tmp_path):
    done = _load_settings(tmp_path / "fresh")
    assert done.returncode == 0, done.stderr
    assert mode(tmp_path / "fresh") == 0o700
    assert done.stderr == ""


def test_loading_the_settings_warns_on_stderr_about_a_loose_folder(tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    done = _load_settings(loose)
    assert done.returncode == 0, done.stderr
    assert f"the data folder {loose} was 0o777 (open to other users); it is now 0o700" in done.stderr
    assert mode(loose) == 0o700


@pytest.mark.django_db
def test_the_test_database_of_this_session_is_private():
    from django.db import connection

    connection.ensure_connection()
    database = Path(connection.settings_dict["NAME"])
    assert database.exists()
    assert mode(database) == 0o600
    assert mode(database.parent) & 0o077 == 0


def test_a_data_folder_reached_through_a_symlink_is_tightened_once(tmp_path, caplog):
    real = tmp_path / "real"
    real.mkdir(mode=0o755)
    real.chmod(0o755)
    link = tmp_path / "data"
    link.symlink_to(real)
    with caplog.at_level(logging.WARNING, logger="control.datafolder"):
        datafolder.prepare(link)
        datafolder.prepare(link)
    assert len(caplog.records) == 1 and mode(real) == 0o700


def test_connecting_again_keeps_the_locks_this_process_holds_on_the_database(tmp_path):
    """Closing any descriptor of a file drops all of a process's POSIX locks on it: a new
    connection must not open the existing file before SQLite does, or another process could take
    the database from under a reader here (and checkpoint away the WAL it reads)."""
    database = tmp_path / "locks.sqlite3"
    reader = sqlite3.connect(database, factory=datafolder.PrivateSQLiteConnection, isolation_level=None)
    try:
        reader.execute("CREATE TABLE t (x)")
        reader.execute("BEGIN")
        reader.execute("SELECT * FROM t").fetchall()  # a SHARED lock on the database file, held
        sqlite3.connect(database, factory=datafolder.PrivateSQLiteConnection).close()
        other = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None); " \
                "c.execute('BEGIN EXCLUSIVE')"
        taken = subprocess.run([sys.executable, "-c", other, str(database)], capture_output=True, text=True,
                               timeout=60)
        assert taken.returncode != 0 and "database is locked" in taken.stderr, "the reader's lock was lost"
    finally:
        reader.close()
