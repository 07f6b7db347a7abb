"""The shell's compound commands on a FakeClock: while/until/for/if on one line and across a
script's lines, reserved words only where sh reads them, and the syntax errors sh gives."""

from __future__ import annotations

import asyncio

import pytest

from control.clock import FakeClock, settle
from control.kubelet.filesystem import Filesystem
from control.userland.shell import Shell, Streams


def new_shell(clock=None) -> Shell:
    return Shell(Filesystem.for_container(pod_name="box", namespace="default", pod_ip="10.244.0.5"),
                 clock=clock or FakeClock(), hostname="box")


def sh(text: str, shell: Shell | None = None) -> tuple[int, str, str]:
    shell = shell or new_shell()
    out, err = bytearray(), bytearray()
    code = asyncio.run(shell.run_argv(["sh", "-c", text], Streams(out.extend, err.extend)))
    return code, out.decode(), err.decode()


def test_for_loops_over_its_words():
    assert sh("for i in a b c; do echo item $i; done") == (0, "item a\nitem b\nitem c\n", "")
    assert sh("X='1 2'; for i in $X 3; do echo $i; done; echo after")[1] == "1\n2\n3\nafter\n"
    assert sh("for i in; do echo never; done; echo $?") == (0, "0\n", "")


def test_while_and_until_run_until_their_condition_says_so():
    code, out, _ = sh("touch /tmp/go; while cat /tmp/go; do echo turn; rm /tmp/go; done; echo $?")
    assert (code, out) == (0, "turn\n0\n")
    code, out, _ = sh("until cat /tmp/flag 2>/dev/null; do echo waiting; touch /tmp/flag; done")
    assert (code, out) == (0, "waiting\n")


def test_if_picks_the_first_true_branch():
    assert sh("if false; then echo a; elif true; then echo b; else echo c; fi")[1] == "b\n"
    assert sh("if false; then echo a; else echo c; fi && echo ok")[1] == "c\nok\n"
    assert sh("if false; then echo a; fi; echo $?")[1] == "0\n"
    assert sh("if [ -f /etc/hostname ]; then echo has; fi")[1] == "has\n"


def test_reserved_words_count_only_at_the_start_of_a_command():
    assert sh("echo done; echo 'while'")[1] == "done\nwhile\n"
    assert sh("'while' true")[0] == 127


def test_a_script_over_several_lines():
    script = "for i in 1 2\ndo\n  echo line $i\ndone\nif true\nthen echo yes\nfi"
    assert sh(script) == (0, "line 1\nline 2\nyes\n", "")


@pytest.mark.parametrize("text, message", [
    ("while true; do echo x", 'sh: syntax error: unexpected end of file (expecting "done")\n'),
    ("while true", 'sh: syntax error: unexpected end of file (expecting "do")\n'),
    ("if true; then echo x", 'sh: syntax error: unexpected end of file (expecting "fi")\n'),
    ("done", 'sh: syntax error: unexpected "done"\n'),
    ("echo a; fi", 'sh: syntax error: unexpected "fi"\n'),
])
def test_syntax_errors(text, message):
    assert sh(text) == (2, "", message)


def test_while_true_with_sleep_runs_on_the_clock_until_interrupted():
    clock = FakeClock()
    shell = new_shell(clock)
    out = bytearray()

    async def scenario():
        task = asyncio.ensure_future(shell.run_line("while true; do echo tick; sleep 1; done",
                                                    Streams(out.extend, lambda b: None)))
        await settle()
        for _ in range(3):
            await clock.advance(1)
        task.cancel()  # Ctrl-C, or the stream closed
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert out.decode() == "tick\n" * 4


def test_a_busy_loop_does_not_starve_the_event_loop():
    shell = new_shell()
    out = bytearray()

    async def scenario():
        task = asyncio.ensure_future(shell.run_line("while true; do echo spin; done", Streams(out.extend, lambda b: None)))
        for _ in range(5):
            await asyncio.sleep(0)  # this coroutine still gets turns
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert out.count(b"spin") >= 1
