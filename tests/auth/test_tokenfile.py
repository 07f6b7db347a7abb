"""The static token file: upstream's CSV format, made once, owner-only, identities appended."""

from __future__ import annotations

import stat

import pytest

from control.auth import tokenfile


def test_parse_reads_the_token_auth_file_format():
    entries = tokenfile.parse('t1,alice,u1,"dev,ops"\nt2,bob,u2\n\n')
    assert entries["t1"] == tokenfile.Entry("t1", "alice", "u1", ("dev", "ops"))
    assert entries["t2"] == tokenfile.Entry("t2", "bob", "u2", ())


def test_a_line_with_fewer_than_three_fields_is_an_error_naming_it():
    with pytest.raises(tokenfile.TokenFileError, match="line 2"):
        tokenfile.parse("t1,alice,u1\nt2,bob\n")


def test_the_last_duplicate_token_wins_as_upstream():
    assert tokenfile.parse("t,alice,1\nt,bob,2\n")["t"].user == "bob"


def test_format_round_trips():
    entry = tokenfile.Entry("tok", "system:node:n1", "system:node:n1", ("system:nodes", "x"))
    assert tokenfile.parse(tokenfile.format_entry(entry)) == {"tok": entry}


def test_ensure_makes_an_owner_only_file_with_the_admin_and_every_spoke(tmp_path):
    entries = tokenfile.ensure(tmp_path)
    users = {e.user: e for e in entries.values()}
    assert users[tokenfile.ADMIN].groups == ("system:masters",)
    assert set(tokenfile.IDENTITIES) <= set(users)
    assert stat.S_IMODE(tokenfile.path(tmp_path).stat().st_mode) == 0o600
    assert len({e.token for e in entries.values()}) == len(entries)  # every token its own


def test_tokens_survive_a_restart_and_new_identities_are_appended(tmp_path):
    admin = tokenfile.admin_token(tmp_path)
    kubelet = tokenfile.spoke_token(tmp_path, "kubelet", "node-7")
    assert tokenfile.admin_token(tmp_path) == admin
    entries = tokenfile.parse(tokenfile.path(tmp_path).read_text())
    assert entries[kubelet] == tokenfile.Entry(kubelet, "system:node:node-7", "system:node:node-7", ("system:nodes",))
    assert tokenfile.spoke_token(tmp_path, "kubelet", "node-7") == kubelet


def test_each_spoke_is_its_real_counterparts_identity():
    assert tokenfile.identity_for("scheduler") == ("system:kube-scheduler", ())
    assert tokenfile.identity_for("kubelet", "n2") == ("system:node:n2", ("system:nodes",))
    assert tokenfile.identity_for("line-cook")[0] == "system:serviceaccount:kube-system:line-cook"
