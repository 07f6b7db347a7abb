"""Pipes into the text filters courses use (grep, head, tail, wc) and `$(...)` command
substitution in the simulated shell, on a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from control.userland.table import STDIN_READERS
from tests.userland.test_shell import new_shell, run

LOG = "INFO start\nERROR disk full\ninfo ok\nWARN slow\nERROR again\n"


def with_log():
    shell = new_shell()
    shell.fs.write("/tmp/app.log", LOG.encode())
    return shell


@pytest.mark.parametrize("line, stdout, code", [
    ("cat /tmp/app.log | grep ERROR", "ERROR disk full\nERROR again\n", 0),
    ("cat /tmp/app.log | grep -i info", "INFO start\ninfo ok\n", 0),
    ("cat /tmp/app.log | grep -v ERROR", "INFO start\ninfo ok\nWARN slow\n", 0),
    ("cat /tmp/app.log | grep -c ERROR", "2\n", 0),
    ("cat /tmp/app.log | grep -ic error", "2\n", 0),
    ("cat /tmp/app.log | grep -vc ERROR", "3\n", 0),
    ("cat /tmp/app.log | grep -n WARN", "4:WARN slow\n", 0),
    ("cat /tmp/app.log | grep nothing", "", 1),
    ("cat /tmp/app.log | grep -c nothing", "0\n", 1),
    ("cat /tmp/app.log | grep -q ERROR && echo found", "found\n", 0),
    ("grep ERROR /tmp/app.log", "ERROR disk full\nERROR again\n", 0),
    ("grep -c ERROR /tmp/app.log /etc/hostname", "/tmp/app.log:2\n/etc/hostname:0\n", 0),
    ("cat /tmp/app.log | head -n 2", "INFO start\nERROR disk full\n", 0),
    ("cat /tmp/app.log | head -1", "INFO start\n", 0),
    ("head -n1 /tmp/app.log", "INFO start\n", 0),
    ("cat /tmp/app.log | tail -n 2", "WARN slow\nERROR again\n", 0),
    ("tail -n 1 /tmp/app.log", "ERROR again\n", 0),
    ("cat /tmp/app.log | tail -n 0", "", 0),
    ("cat /tmp/app.log | wc -l", "5\n", 0),
    ("wc -l /tmp/app.log", "5 /tmp/app.log\n", 0),
    ("printenv | grep GREETING", "GREETING=hello world\n", 0),
    ("env | grep -c GREETING", "1\n", 0),
    ("cat /tmp/app.log | grep ERROR | wc -l", "2\n", 0),
    ("cat /tmp/app.log | grep -v INFO | head -n 3 | tail -n 1", "WARN slow\n", 0),
    ("ls /etc | wc -l", "3\n", 0),
    ("echo -n abc | wc -c", "3\n", 0),
    ("echo a b | wc", "        1         2         4\n", 0),
])
def test_filters_read_the_previous_command_or_their_files(line, stdout, code):
    assert run(line, with_log()) == (stdout, "", code)


@pytest.mark.parametrize("line, stderr, code", [
    ("grep x /nope", "grep: /nope: No such file or directory\n", 2),
    ("grep -z x", "grep: invalid option -- 'z'\n", 2),
    ("head -n x /tmp/app.log", "head: invalid number 'x'\n", 1),
    ("tail /nope", "tail: can't open '/nope': No such file or directory\n", 1),
    ("wc -l /nope", "wc: /nope: No such file or directory\n", 1),
])
def test_filter_errors_say_what_busybox_says(line, stderr, code):
    assert run(line, with_log()) == ("", stderr, code)


def test_grep_without_a_pattern_prints_its_usage():
    out, err, code = run("grep")
    assert code == 2 and "Usage: grep" in err


def test_a_pipeline_s_status_is_its_last_command_s_and_stderr_is_not_piped():
    assert run("false | true; echo $?") == ("0\n", "", 0)
    assert run("true | false; echo $?") == ("1\n", "", 0)
    assert run("cat /nope | wc -l") == ("0\n", "cat: can't open '/nope': No such file or directory\n", 0)
    assert run("echo hi | grep -q hi && echo yes || echo no") == ("yes\n", "", 0)
    assert run("exit 3 | echo after; echo $?") == ("after\n0\n", "", 0), "each stage is a subshell"


def test_a_pipeline_reads_the_shells_stdin_first_and_writes_to_a_redirection():
    shell = new_shell()
    assert run("grep b | wc -l > /tmp/n; cat /tmp/n", shell, stdin=b"a\nb\nbb\n") == ("2\n", "", 0)


def test_pipes_work_inside_loops_and_a_compound_command_can_be_piped():
    assert run("for i in 1 2 3; do echo $i | grep 2; done") == ("2\n", "", 1), "the last grep found nothing"
    assert run("for i in 1 2; do echo $i; done | head -n 1") == ("1\n", "", 0)
    assert run("i=0; while [ $i -lt 4 ]; do echo tick $i; i=$((i+1)); done | grep -c tick") == ("4\n", "", 0)
    assert run("if true; then echo yes; fi | cat") == ("yes\n", "", 0)
    out, err, code = run("while true; do echo; do | head")
    assert (out, code) == ("", 2) and err == 'sh: syntax error: unexpected "|"\n', "only a closing word pipes"


def test_a_piped_loop_streams_into_grep_on_the_replayed_clock():
    """`while ...; sleep 1; done | grep`: each selected line is logged at the moment it was printed."""
    from control.kubelet.filesystem import Filesystem
    from control.kubelet.process import MainProcess

    fs = Filesystem.for_container(pod_name="p", namespace="default", pod_ip="10.0.0.1")
    loop = 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 1; done | grep -n "[02468]$"'
    process = MainProcess(fs, ["sh", "-c", loop], {}, "p", 100.0)
    process.advance(105.5)
    assert process.output.until(105.5) == [(100.0, "1:tick 0"), (102.0, "3:tick 2"), (104.0, "5:tick 4")]


def test_command_substitution_puts_a_commands_output_in_a_word():
    assert run("echo $(hostname)") == ("web-1\n", "", 0)
    assert run('echo "I am $(hostname), $(cat /etc/hostname | wc -c) bytes"') == ("I am web-1, 6 bytes\n", "", 0)
    assert run("echo '$(hostname)' \"\\$(hostname)\"") == ("$(hostname) $(hostname)\n", "", 0)
    assert run("echo $(echo $(echo nested))") == ("nested\n", "", 0)
    assert run("X=$(echo a b); echo [$X]") == ("[a b]\n", "", 0)
    assert run("echo $(X=5; cd /tmp; echo $X) [$X] $(pwd)") == ("5 [] /\n", "", 0), "a subshell's changes stay there"
    assert run("echo hi > /tmp/$(hostname); ls /tmp") == ("web-1\n", "", 0)
    assert run("for f in $(ls /etc); do echo f=$f; done") == ("f=hostname\nf=hosts\nf=resolv.conf\n", "", 0)
    assert run("echo $(nosuch); echo $?") == ("\n0\n", "sh: nosuch: not found\n", 0), "echo's own status"
    assert run("X=$(nosuch); echo $?") == ("127\n", "sh: nosuch: not found\n", 0), "an assignment's: the last $(...)'s"


def test_without_a_file_the_filters_read_exec_stdin():
    assert STDIN_READERS["grep"](["-i", "x"]) and not STDIN_READERS["grep"](["x", "/tmp/f"])
    assert STDIN_READERS["head"](["-n", "2"]) and not STDIN_READERS["head"](["-n", "2", "/tmp/f"])
    assert STDIN_READERS["wc"](["-l"]) and not STDIN_READERS["wc"](["/tmp/f"])


def test_grep_e_patterns_select_a_line_matching_any():
    assert run("cat /tmp/app.log | grep -e WARN -e disk", with_log()) == ("ERROR disk full\nWARN slow\n", "", 0)
    assert run("grep -c -e WARN -e again /tmp/app.log", with_log()) == ("2\n", "", 0)


def test_tail_f_into_grep_streams_each_match_as_the_line_comes():
    """`tail -f log | grep x`: the pipeline streams (grep reads its pipe line by line) on the shell's clock."""
    from control.clock import FakeClock, settle
    from control.userland.shell import Streams

    async def scenario():
        clock = FakeClock()
        shell = new_shell(clock=clock)
        await shell.run_line("echo start > /tmp/log", Streams(print, print))
        out: list[bytes] = []
        task = asyncio.ensure_future(shell.run_argv(["sh", "-c", "tail -f /tmp/log | grep -n x | cat"],
                                                    Streams(out.append, out.append)))
        await settle()
        assert out == []
        shell.fs.write("/tmp/log", b"a x\nb\nc x\n", append=True)
        await clock.advance(1)
        await settle()
        assert out == [b"2:a x\n", b"4:c x\n"], "seen within the second, the producer still running"
        shell.fs.write("/tmp/log", b"d x\n", append=True)
        await clock.advance(1)
        await settle()
        assert out[-1] == b"5:d x\n" and not task.done()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(scenario())


def test_a_pipeline_that_cannot_stream_runs_each_command_whole():
    assert run("printf 'b\\na\\n' | grep -c a") == ("1\n", "", 0)
    assert run("echo x | grep -q x && echo found") == ("found\n", "", 0)
    assert run("printf 'a\\nb\\n' | grep -v a | wc -l") == ("1\n", "", 0)
    assert run("echo abc | grep 'a.c'")[0] == "abc\n" and run("echo a.c | grep -F 'a.c'")[0] == "a.c\n"
    assert run("echo nope | grep x") == ("", "", 1), "a streamed grep that selected nothing exits 1"
