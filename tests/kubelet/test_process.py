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


# --- a main command on the network (the kubelet's NetworkHandle, faked) ------------------------

import asyncio  # noqa: E402
from collections import deque  # noqa: E402

from control.clock import FakeClock, settle  # noqa: E402
from control.kubelet.network import response  # noqa: E402
from control.kubelet.process import MIN_CALL_SECONDS, names_network  # noqa: E402

ANSWERED = {"seq": 0, "code": 200, "endpoint": "10.244.1.7:80", "pod": "web-1", "podNamespace": "default",
            "podNode": "n2", "service": "default/web"}
DROPPED = {"seq": 0, "code": 0, "error": "connection timed out (dropped by NetworkPolicy)",
           "dropped": {"direction": "Egress", "policies": ["default/deny"]}}


class FakeNet:
    """A NetworkHandle's two calls, counted; `line` is what kube-proxy answers now."""

    def __init__(self, line=None):
        self.line, self.sent, self.resolved = line or ANSWERED, [], []

    async def resolve(self, name):
        self.resolved.append(name)
        return {"name": name, "type": "A", "records": ["10.96.3.4"]} if name == "web" else None

    async def send(self, target, port):
        self.sent.append((target, port))
        await asyncio.sleep(0)  # a real round trip hands the loop back
        return self.line

    def answer(self, line, path, now):
        return response(line, path, now)


def test_network_tools_are_named_in_commands():
    assert names_network(["sh", "-c", "while true; do wget -qO- --timeout=2 http://kitchen; sleep 5; done"])
    assert names_network(["nslookup", "kubernetes.default"]) and names_network(["/usr/bin/curl", "x"])
    assert not names_network(["sh", "-c", "echo wgetting; sleep 5; cat /etc/digest.conf"])


def test_a_wget_loop_logs_the_answer_and_times_out_when_dropped_paced_by_its_own_sleeps():
    async def scenario():
        clock, net = FakeClock(), FakeNet()
        process = MainProcess(Filesystem(), ["sh", "-c", "while true; do wget -qO- -T 2 http://web; sleep 5; done"],
                              {}, "box", clock.now(), network=net, host=clock)
        process.advance(clock.now())  # the kubelet starts it: the first call is made at once
        await settle()
        assert net.sent == [("web", None)] and process.output.lines == deque()
        await clock.advance(MIN_CALL_SECONDS)  # the answer is printed once the call's time is over
        assert '"pod":"web-1"' in process.output.lines[-1][1]
        await clock.advance(4.9)  # the sleep is due 5 s after the answer: no second call before that
        assert len(net.sent) == 1
        await clock.advance(0.2)
        assert len(net.sent) == 2
        net.line = DROPPED
        await clock.advance(5.2)  # the third call is dropped: it hangs for wget's -T 2
        assert len(net.sent) == 3 and process.output.lines[-1][1] != "wget: download timed out"
        await clock.advance(2.0)
        assert process.output.lines[-1][1] == "wget: download timed out"
        await clock.advance(60.0)  # paced by `sleep 5` plus the 2 s timeout: 60 s are 8 or 9 calls, no more
        assert 11 <= len(net.sent) <= 12
        process.stop()
        await clock.advance(60.0)
        assert len(net.sent) <= 12 and clock.pending() <= 2

    asyncio.run(scenario())


def test_a_loop_that_never_sleeps_makes_at_most_one_call_per_min_call_seconds():
    async def scenario():
        clock, net = FakeClock(), FakeNet()
        process = MainProcess(Filesystem(), ["sh", "-c", "while true; do wget -qO- web; done"],
                              {}, "box", clock.now(), network=net, host=clock)
        process.advance(clock.now())
        await settle()
        await clock.advance(10.0)
        assert len(net.sent) <= 10.0 / MIN_CALL_SECONDS + 1
        process.stop()

    asyncio.run(scenario())


def test_a_command_without_the_network_makes_no_call_and_sets_no_timer():
    async def scenario():
        clock, net = FakeClock(), FakeNet()
        process = MainProcess(Filesystem(), ["sh", "-c", "while true; do date; sleep 1; done"], {}, "box",
                              clock.now(), network=net, host=clock)
        process.advance(clock.now() + 10)
        await settle()
        assert clock.pending() == 0 and net.sent == [] and net.resolved == [] and process.calls == 0
        assert len(process.output.lines) == 11

    asyncio.run(scenario())


def test_a_call_met_replaying_the_past_is_made_once_in_the_present():
    """A command that hid its network use (not live from its start) first replayed at a log
    request: the replay waits at its first call and goes on from the present, never a burst."""
    async def scenario():
        clock, net = FakeClock(), FakeNet()
        argv = ["sh", "-c", "tool=nslook; sleep 10; while true; do ${tool}up web; sleep 5; done"]
        process = MainProcess(Filesystem(), argv, {}, "box", clock.now(), network=net, host=clock)
        assert not process.driver.live
        await clock.advance(600.0)
        process.advance(clock.now())
        await settle()
        assert net.resolved == ["web"] and process.driver.live
        await clock.advance(11.0)
        assert net.resolved == ["web", "web", "web"]
        process.quiet()  # the run ended: no more timers
        await clock.advance(60.0)
        assert len(net.resolved) <= 4

    asyncio.run(scenario())


def test_without_an_event_loop_a_call_is_answered_as_no_network():
    process = MainProcess(Filesystem(), ["sh", "-c", "wget -qO- -T 1 web; echo $?"], {}, "box", 0.0,
                          network=FakeNet(), host=FakeClock())
    process.advance(5.0)
    assert [line for _, line in process.output.lines][-1] == "1"
