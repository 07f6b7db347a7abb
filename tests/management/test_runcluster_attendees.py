"""runcluster's workshop options are read before anything starts: a count or a file of names, and a
bad name or a missing file stops the command with its reason (the provisioning itself is
`tests/test_workshop.py`; the whole start by hand, see the README)."""

from __future__ import annotations

import pytest
from django.core.management.base import CommandError

from control.management.commands.runcluster import Command


def test_a_count_or_a_file_names_the_attendees(tmp_path):
    assert Command.attendee_names(0, "") == []
    assert Command.attendee_names(2, "") == ["attendee-1", "attendee-2"]
    names = tmp_path / "names.txt"
    names.write_text("alice\nbob\n")
    assert Command.attendee_names(0, str(names)) == ["alice", "bob"]


def test_a_bad_name_or_a_missing_file_stops_the_command(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("Alice Smith\n")
    with pytest.raises(CommandError, match="Alice Smith"):
        Command.attendee_names(0, str(names))
    with pytest.raises(CommandError, match="No such file"):
        Command.attendee_names(0, str(tmp_path / "missing.txt"))


def test_the_one_address_to_open_logs_the_instructor_in_once(tmp_path, settings):
    from control import roster
    from control.management.commands.runcluster import start_lines

    settings.KK_AUTHENTICATION = "on"
    first, kubectl = start_lines("http://127.0.0.1:8000", tmp_path, {})
    assert first.startswith("  dashboard: http://127.0.0.1:8000/?code=")
    assert kubectl.startswith(f"  kubectl:   kubectl --kubeconfig {tmp_path / 'admin.kubeconfig'} get pods")
    code = first.split("?code=")[1].split()[0]
    assert roster.peek(tmp_path, code).use == roster.ONCE  # a fresh one-time code, the admin's
    assert not any("instructor:" in line for line in start_lines("http://127.0.0.1:8000", tmp_path, {}))
    settings.KK_AUTHENTICATION = "off"
    assert start_lines("http://127.0.0.1:8000", tmp_path, {})[0] == "  dashboard: http://127.0.0.1:8000/"


def test_the_join_line_says_where_attendees_reach_the_hub(tmp_path, settings, monkeypatch):
    from control.serving import hosts
    from control.management.commands.runcluster import start_lines

    settings.KK_AUTHENTICATION = "off"
    codes = {"alice": "ABCDEF"}
    loopback = start_lines("http://127.0.0.1:8000", tmp_path, codes)[-1]
    assert "attendees cannot reach it" in loopback and "--addr 0.0.0.0:8000" in loopback
    monkeypatch.setattr(hosts, "machine_names", lambda: ["kitchen-laptop", "192.168.1.20"])
    dashboard, _, join = start_lines("http://0.0.0.0:8000", tmp_path, codes)
    assert dashboard == "  dashboard: http://127.0.0.1:8000/"
    assert join.startswith("  join:      http://192.168.1.20:8000/join/  (1 attendees")


def test_the_kubectl_line_names_a_file_the_admin_alone_reads(tmp_path, settings):
    """Not `<(manage.py kubeconfig)`: kubectl 1.32 reads its kubeconfig twice, and a pipe is empty the
    second time (kubectl then asks localhost:8080)."""
    import yaml

    from control.auth import serving
    from control.auth.tokenfile import admin_token
    from control.management.commands.runcluster import start_lines

    settings.KK_AUTHENTICATION = "on"
    serving.advertise(tmp_path, "http://127.0.0.1:8000", "https://127.0.0.1:8001")
    target = tmp_path / "admin.kubeconfig"
    target.write_text("stale")
    target.chmod(0o644)  # an older, looser one is replaced and made owner-only
    start_lines("http://127.0.0.1:8000", tmp_path, {})
    assert target.stat().st_mode & 0o777 == 0o600
    document = yaml.safe_load(target.read_text())
    cluster = document["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:8001" and cluster["certificate-authority-data"]
    assert document["users"][0]["user"]["token"] == admin_token(tmp_path)
