"""`runhub` starts the hub's storage machinery (the lifespan Daphne does not send) before it serves,
and stops on SIGTERM. A real process: the one test that shows no request is needed to start it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from control.keys import SIGNING_KEY
from control.management.commands.runhub import DEFAULT_BACKLOG, MAX_BACKLOG, listen_backlog, split_addr
from tests.conftest import ROOT, free_server_port


def test_split_addr_refuses_what_is_not_host_and_port():
    assert split_addr("[::1]:8080") == ("::1", 8080)
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        split_addr("8080")


def test_the_listen_backlog_is_the_systems_somaxconn_as_go_asks_for_it(tmp_path):
    somaxconn = tmp_path / "somaxconn"
    somaxconn.write_text("4096\n")
    assert listen_backlog(somaxconn) == 4096
    somaxconn.write_text("1000000\n")
    assert listen_backlog(somaxconn) == MAX_BACKLOG
    assert listen_backlog(tmp_path / "absent") == DEFAULT_BACKLOG  # macOS: no /proc
    somaxconn.write_text("")
    assert listen_backlog(somaxconn) == DEFAULT_BACKLOG


def _listen_queue(port: int) -> int | None:
    """The accept queue of the socket listening on `port` (ss's Send-Q), None without ss."""
    import shutil

    if shutil.which("ss") is None:
        return None
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout.split()
    return int(out[2]) if len(out) > 2 else None


def _compacted(database: Path) -> int:
    with sqlite3.connect(database) as db:
        row = db.execute("SELECT compacted FROM control_revision WHERE id = 1").fetchone()
    return int(row[0]) if row else 0


def test_log_compaction_and_the_signing_key_come_before_any_request_and_sigterm_stops_the_hub():
    data = Path(tempfile.mkdtemp(prefix="kk-runhub-"))
    env = {**os.environ, "KK_DATA_DIR": str(data), "KK_LOG_MAX_ENTRIES": "1", "KK_COMPACT_INTERVAL": "0.1"}
    env.pop("KK_SQLITE_PATH", None)
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--no-input", "-v", "0"], env=env, cwd=ROOT, check=True)
    database = data / "cluster.sqlite3"
    assert _compacted(database) == 0  # the migration wrote the system namespaces, nothing compacted them
    hub = subprocess.Popen([*manage, "runhub", "--addr", f"127.0.0.1:{free_server_port()}"], env=env, cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while _compacted(database) == 0 and time.monotonic() < deadline and hub.poll() is None:
            time.sleep(0.1)
        assert _compacted(database) > 0, "the hub compacted nothing without a request: its feed did not start"
        # made before serving (as kube-apiserver reads its key at start), not on the first TokenRequest
        assert (data / "keys" / SIGNING_KEY).exists()
    finally:
        hub.send_signal(signal.SIGTERM)
        try:
            code = hub.wait(timeout=15)
        except subprocess.TimeoutExpired:
            hub.kill()
            raise
    assert code == 0, hub.stderr.read().decode()[-2000:]


def test_a_port_it_cannot_listen_on_ends_the_hub_with_an_error():
    """Daphne stops the reactor on a listen failure as on a clean stop; the hub must not exit 0."""
    import socket

    data = Path(tempfile.mkdtemp(prefix="kk-runhub-"))
    env = {**os.environ, "KK_DATA_DIR": str(data)}
    env.pop("KK_SQLITE_PATH", None)
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--no-input", "-v", "0"], env=env, cwd=ROOT, check=True)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        hub = subprocess.run([*manage, "runhub", "--addr", f"127.0.0.1:{port}"], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    said = hub.stdout + hub.stderr
    assert hub.returncode != 0, said[-2000:]
    assert "the hub could not listen" in said and "Address already in use" in said


def test_a_429_and_a_422_carry_their_names_on_the_status_line():
    """Twisted knows neither code's name; kubectl and browsers show the status line's words."""
    import httpx

    from tests.conftest import Hub

    hub = Hub().start()
    try:
        backlog = _listen_queue(hub.port), _listen_queue(hub.secure_port)
        with httpx.Client(timeout=10) as client:
            answers = [client.get(f"{hub.url}/join/WRONG{i}/kubeconfig") for i in range(12)]
            invalid = client.post(f"{hub.url}/api/v1/namespaces/default/configmaps",
                                  json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_Valid"}},
                                  headers=hub.auth)
    finally:
        hub.stop()
    assert answers[-1].status_code == 429 and answers[-1].reason_phrase == "Too Many Requests"
    # both ports queue as many connections as the system allows, not Twisted's 50 (where ss can say)
    assert backlog in ((listen_backlog(),) * 2, (None, None))
    assert invalid.status_code == 422 and invalid.reason_phrase == "Unprocessable Entity"


def test_the_hub_follows_the_runcluster_that_started_it(monkeypatch):
    """KK_PARENT_PID set: a watch on the parent that SIGTERMs the hub (Twisted's orderly stop); a
    parent already gone: SIGTERM at once; none set (a hub started by hand): no watch."""
    import os as runhub_os
    import signal

    from control import parentwatch
    from control.management.commands import runhub

    watched, killed = [], []
    monkeypatch.setattr(parentwatch, "watch_parent_in_thread", lambda parent, on_gone: watched.append((parent, on_gone)))
    monkeypatch.setattr(runhub_os, "kill", lambda pid, sig: killed.append((pid, sig)))
    monkeypatch.setattr(runhub_os, "getppid", lambda: 4242)
    monkeypatch.delenv("KK_PARENT_PID", raising=False)
    runhub._follow_parent()
    assert watched == [] and killed == []
    monkeypatch.setenv("KK_PARENT_PID", "4242")
    runhub._follow_parent()
    assert [parent for parent, _ in watched] == [4242] and killed == []
    watched[0][1]()
    assert killed == [(runhub_os.getpid(), signal.SIGTERM)]
    monkeypatch.setenv("KK_PARENT_PID", "777")  # re-parented before we looked
    runhub._follow_parent()
    assert killed[-1] == (runhub_os.getpid(), signal.SIGTERM) and len(watched) == 1
