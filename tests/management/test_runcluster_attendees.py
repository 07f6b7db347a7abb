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
    assert first.startswith("  dashboard: http://127.0.0.1:8000/?code=") and "kubectl" in kubectl
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
