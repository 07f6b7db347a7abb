"""`kube-kitchen`: each subcommand is its management command with the same options, and the data
folder is named before Django reads its settings."""

from __future__ import annotations

import pytest

from control import cli, config


def test_data_is_taken_out_in_both_spellings():
    assert cli.take_data(["--addr", "0.0.0.0:8000", "--data", "/tmp/x", "--nodes", "2"]) == \
        ("/tmp/x", ["--addr", "0.0.0.0:8000", "--nodes", "2"])
    assert cli.take_data(["--data=/tmp/y"]) == ("/tmp/y", [])
    assert cli.take_data(["--", "--data", "kept"]) == (None, ["--", "--data", "kept"])
    with pytest.raises(SystemExit):
        cli.take_data(["--data"])


@pytest.fixture
def ran(monkeypatch):
    calls: list[list[str]] = []
    import django.core.management

    monkeypatch.setattr(django.core.management, "execute_from_command_line", calls.append)
    monkeypatch.delenv("KK_DATA_DIR", raising=False)
    return calls


def test_run_is_runcluster_with_its_options_and_the_data_folder_set_first(ran, tmp_path, monkeypatch):
    cli.main(["run", "--data", str(tmp_path / "d"), "--addr", "0.0.0.0:8000", "--pace", "workshop"])
    assert ran == [["kube-kitchen", "runcluster", "--addr", "0.0.0.0:8000", "--pace", "workshop"]]
    
    assert config.given("KK_DATA_DIR") == str(tmp_path / "d")


def test_the_other_subcommands(ran, monkeypatch, tmp_path):
    monkeypatch.setenv("KK_DATA_DIR", str(tmp_path))
    cli.main(["kubeconfig", "--server", "http://127.0.0.1:8000"])
    cli.main(["component", "scheduler", "--server", "http://h:1"])
    cli.main(["manage", "migrate", "--no-input"])
    assert ran == [["kube-kitchen", "kubeconfig", "--server", "http://127.0.0.1:8000"],
                   ["kube-kitchen", "runcomponent", "scheduler", "--server", "http://h:1"],
                   ["kube-kitchen", "migrate", "--no-input"]]


def test_help_and_unknown_commands(ran, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0 and "kube-kitchen COMMAND" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        cli.main(["serve"])
    assert "unknown command 'serve'" in str(done.value.code)
    with pytest.raises(SystemExit) as done:
        cli.main([])
    assert done.value.code == 2
    assert ran == []
