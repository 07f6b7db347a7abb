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
