"""Shell commands on virtual time: a main command replayed into its files, a one-off command with
a timeout, a busy loop stopped, a replay that only moves forward."""

from __future__ import annotations

from control.kubelet.filesystem import Filesystem
from control.kubelet.process import MainProcess, TimedOut, run_once


def test_the_main_command_is_replayed_into_the_files_on_virtual_time():
    fs = Filesystem()
    process = MainProcess(fs, ["/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy"], {}, "h", 100.0)
    process.advance(100.0)
    assert fs.exists("/tmp/healthy")
    process.advance(129.0)
    assert fs.exists("/tmp/healthy")
    process.advance(130.0)
    assert not fs.exists("/tmp/healthy")
    failed = run_once(fs, ["cat", "/tmp/healthy"], {}, "h", 131.0, 1)
    assert failed.exit_code == 1 and failed.output == "cat: can't open '/tmp/healthy': No such file or directory\n"


def test_a_probe_command_sleeping_past_its_timeout_fails():
    try:
        run_once(Filesystem(), ["sh", "-c", "sleep 3"], {}, "h", 0.0, 1)
    except TimedOut as exc:
        assert str(exc) == 'command "sh -c sleep 3" timed out'
    else:
        raise AssertionError("no timeout")
    assert run_once(Filesystem(), ["sh", "-c", "sleep 0.5; exit 0"], {}, "h", 0.0, 1).exit_code == 0


def test_a_busy_loop_is_stopped_and_a_replay_never_goes_back():
    fs = Filesystem()
    process = MainProcess(fs, ["sh", "-c", "date > /tmp/when; sleep 5; date >> /tmp/when"], {}, "h", 0.0)
    process.advance(10.0)
    assert fs.read("/tmp/when") == b"Thu Jan  1 00:00:00 UTC 1970\nThu Jan  1 00:00:05 UTC 1970\n"
    process.advance(3.0)  # an earlier moment changes nothing
    assert fs.read("/tmp/when").count(b"\n") == 2
    endless = MainProcess(fs, ["sh", "-c", "; ".join(["true"] * 20_000) + "; touch /tmp/never"], {}, "h", 0.0)
    endless.advance(1.0)
    assert endless.driver.stopped and not fs.exists("/tmp/never")


def test_without_a_command_nothing_is_replayed_and_exec_is_not_through_a_shell():
    fs = Filesystem()
    MainProcess(fs, [], {}, "h", 0.0).advance(100.0)
    assert not fs.exists("/tmp/x")
    outcome = run_once(fs, ["echo", "$HOME"], {}, "h", 0.0, 1)  # exec words are not expanded
    assert outcome.exit_code == 0 and outcome.output == "$HOME\n"
    assert run_once(fs, ["sh", "-c", "echo $GREETING"], {"GREETING": "hi"}, "h", 0.0, 1).output == "hi\n"


def test_kill_1_in_the_main_command_ends_the_replay_there():
    fs = Filesystem()
    process = MainProcess(fs, ["sh", "-c", "touch /tmp/a; sleep 5; kill 1; touch /tmp/b"], {}, "h", 100.0)
    process.advance(104.0)
    assert fs.exists("/tmp/a") and process.driver.exit_code is None
    process.advance(200.0)
    assert process.driver.exit_code == 143 and not fs.exists("/tmp/b"), "PID 1 is gone: nothing after the kill"
    stressed = MainProcess(fs, ["sh", "-c", "stress --vm-bytes 10M --timeout 2; touch /tmp/c"], {}, "h", 100.0)
    stressed.advance(110.0)
    assert fs.exists("/tmp/c"), "stress in the main command still runs its course"
    outside = run_once(fs, ["kill", "1"], {}, "h", 120.0, 1)
    assert outside.exit_code == 1 and "can't kill pid 1" in outside.output, "a one-off shell without exec's handle"
