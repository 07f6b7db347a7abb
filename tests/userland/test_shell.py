"""The simulated shell: command lines in, (stdout, stderr, exit status) out, on a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from control.clock import FakeClock, settle
from control.kubelet.filesystem import Filesystem
from control.userland.shell import Shell, Streams
from control.userland.stdin import reads_stdin


def new_shell(name: str = "sh", clock: FakeClock | None = None) -> Shell:
    fs = Filesystem.for_container(pod_name="web-1", namespace="shop", pod_ip="10.244.1.7")
    return Shell(fs, clock=clock or FakeClock(), hostname="web-1", env={"GREETING": "hello world"}, name=name)


def run(line: str, shell: Shell | None = None, stdin: bytes = b"") -> tuple[str, str, int]:
    shell = shell or new_shell()
    out, err = bytearray(), bytearray()
    code = asyncio.run(shell.run_argv([shell.name, "-c", line], Streams(out.extend, err.extend, stdin)))
    return out.decode(), err.decode(), code


@pytest.mark.parametrize("line, stdout, stderr, code", [
    ("echo hi", "hi\n", "", 0),
    ("echo -n hi", "hi", "", 0),
    ("echo $GREETING", "hello world\n", "", 0),
    ("echo ${GREETING}!", "hello world!\n", "", 0),
    ("echo '$GREETING'", "$GREETING\n", "", 0),
    ('echo "say $GREETING"', "say hello world\n", "", 0),
    ('echo "a \\"b\\" \\$X"', 'a "b" $X\n', "", 0),
    ("echo $NOPE.", ".\n", "", 0),
    ("false; echo $?", "1\n", "", 0),
    ("true && echo yes || echo no", "yes\n", "", 0),
    ("false && echo yes || echo no", "no\n", "", 0),
    ("false || false", "", "", 1),
    ("X=1; echo $X", "1\n", "", 0),
    ("X=1 printenv X; echo [$X]", "1\n[]\n", "", 0),
    ("printenv GREETING", "hello world\n", "", 0),
    ("printenv NOPE", "", "", 1),
    ("hostname", "web-1\n", "", 0),
    ("echo $HOSTNAME", "web-1\n", "", 0),
    ("cat /etc/hostname", "web-1\n", "", 0),
    ("cat /nope", "", "cat: can't open '/nope': No such file or directory\n", 1),
    ("pwd; cd /tmp; pwd; cd ..; pwd", "/\n/tmp\n/\n", "", 0),
    ("cd /nope", "", "sh: cd: can't cd to /nope: No such file or directory\n", 2),
    ("nosuch arg", "", "sh: nosuch: not found\n", 127),
    ("nosuch; echo $?", "127\n", "sh: nosuch: not found\n", 0),
    ("exit 3", "", "", 3),
    ("echo a; exit 4; echo b", "a\n", "", 4),
    ("sh -c 'exit 5'; echo $?", "5\n", "", 0),
    ("test -f /etc/hosts && echo file", "file\n", "", 0),
    ("[ -d /tmp ] && echo dir", "dir\n", "", 0),
    ("[ -f /tmp ]", "", "", 1),
    ("[ 3 -gt 2 ]", "", "", 0),
    ("[ a = b ]", "", "", 1),
    ("[ -f /tmp", "", "sh: [: missing ]\n", 2),
    ("uname", "Linux\n", "", 0),
    ("stty size", "", "stty: standard input: Not a tty\n", 1),
    ("uname -n", "web-1\n", "", 0),
    ("echo a | cat", "a\n", "", 0),
    ("echo `hostname`", "", 'sh: syntax error: "`" is not simulated in this shell\n', 2),
    ("sleep 1 &", "", 'sh: syntax error: "&" is not simulated in this shell\n', 2),
    ("echo a |", "", "sh: syntax error: unexpected end of file\n", 2),
    ("| cat", "", 'sh: syntax error: unexpected "|"\n', 2),
    ("echo a | | cat", "", 'sh: syntax error: unexpected "|"\n', 2),
    ("echo a |&& cat", "", 'sh: syntax error: unexpected "&&"\n', 2),
    ("echo $(hostname", "", "sh: syntax error: unterminated $(\n", 2),
    ("echo 'open", "", "sh: syntax error: unterminated quoted string\n", 2),
    ("echo hi # a comment", "hi\n", "", 0),
    ("echo one\necho two", "one\ntwo\n", "", 0),
    ("echo err >&2", "", "err\n", 0),
    ("cat /nope 2>&1", "cat: can't open '/nope': No such file or directory\n", "", 1),
    ("sleep x", "", "sleep: invalid number 'x'\n", 1),
    ("cat /nope 2> /tmp/e; cat /nope 2>>/tmp/e; cat /tmp/e", "cat: can't open '/nope': No such file or directory\n" * 2,
     "", 0),
    ("echo a 1>&1 2>&2", "a\n", "", 0),
    ("echo a >", "", "sh: syntax error: unexpected redirection\n", 2),
    ("'X=1' true", "", "sh: X=1: not found\n", 127),
    ("&& echo x", "", 'sh: syntax error: unexpected "&&"\n', 2),
    ("whoami", "root\n", "", 0),
])
def test_command_lines(line, stdout, stderr, code):
    assert run(line) == (stdout, stderr, code)


def test_bash_says_command_not_found():
    assert run("nosuch", new_shell("bash")) == ("", "bash: nosuch: command not found\n", 127)


def test_files_written_persist_for_the_container():
    shell = new_shell()
    assert run("echo hello > /tmp/f; echo again >> /tmp/f", shell) == ("", "", 0)
    assert run("cat /tmp/f", shell) == ("hello\nagain\n", "", 0)
    assert run("echo over > /tmp/f; cat /tmp/f", shell) == ("over\n", "", 0)
    assert run("cd /tmp && cat f", shell) == ("over\n", "", 0)


def test_touch_ls_mkdir_rm():
    shell = new_shell()
    assert run("mkdir /data && touch /data/b /data/a && ls /data", shell) == ("a\nb\n", "", 0)
    assert run("ls -l /data/a", shell)[0].startswith("-rw-r--r--")
    assert run("mkdir /x/y", shell) == ("", "mkdir: can't create directory '/x/y': No such file or directory\n", 1)
    assert run("mkdir -p /x/y && ls /x", shell) == ("y\n", "", 0)
    assert run("rm /data", shell) == ("", "rm: can't remove '/data': Is a directory\n", 1)
    assert run("rm /data/a; ls /data", shell) == ("b\n", "", 0)
    assert run("rm /data/a", shell)[2] == 1
    assert run("rm -f /data/a", shell) == ("", "", 0)
    assert run("rm -rf /data; ls /data", shell) == ("", "ls: /data: No such file or directory\n", 1)
    assert run("echo x > /nope/f", shell) == ("", "sh: can't create /nope/f: No such file or directory\n", 1)


def test_env_lists_the_container_environment_and_exports():
    shell = new_shell()
    out, _, _ = run("export COLOR=blue; LOCAL=1; env", shell)
    lines = out.splitlines()
    assert "GREETING=hello world" in lines and "HOSTNAME=web-1" in lines and "HOME=/root" in lines
    assert "COLOR=blue" in lines and not any(line.startswith("LOCAL=") for line in lines)
    assert any(line.startswith("PATH=/") for line in lines)


def test_the_kubelet_files_are_as_kubernetes_writes_them():
    out, _, _ = run("cat /etc/resolv.conf")
    assert out == ("search shop.svc.cluster.local svc.cluster.local cluster.local\n"
                   "nameserver 10.96.0.10\noptions ndots:5\n")
    hosts, _, _ = run("cat /etc/hosts")
    assert hosts.startswith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n")
    assert hosts.endswith("10.244.1.7\tweb-1\n")


def test_date_reads_the_injected_clock():
    clock = FakeClock(start=1_800_000_000.0)  # 2027-01-15 08:00:00 UTC
    assert run("date", new_shell(clock=clock)) == ("Fri Jan 15 08:00:00 UTC 2027\n", "", 0)


def test_sleep_waits_on_the_injected_clock_and_output_before_it_is_seen_at_once():
    async def scenario():
        clock = FakeClock()
        shell = new_shell(clock=clock)
        out = bytearray()
        task = asyncio.ensure_future(shell.run_argv(["sh", "-c", "echo a; sleep 30; echo b"],
                                                    Streams(out.extend, out.extend)))
        await settle()
        assert out == b"a\n" and not task.done()
        await clock.advance(29)
        assert not task.done()
        await clock.advance(1)
        assert await task == 0 and out == b"a\nb\n"

    asyncio.run(scenario())


def test_a_script_on_stdin_runs_line_by_line():
    assert run("sh", stdin=b"") == ("", "", 0)
    shell = new_shell()
    out, err = bytearray(), bytearray()
    code = asyncio.run(shell.run_argv(["sh"], Streams(out.extend, err.extend, b"echo hello > /tmp/f\ncat /tmp/f\n")))
    assert (out, err, code) == (b"hello\n", b"", 0)


def test_argv_is_not_reparsed():
    shell = new_shell()
    out = bytearray()
    code = asyncio.run(shell.run_argv(["echo", "$GREETING;", "a b"], Streams(out.extend, out.extend)))
    assert (out, code) == (b"$GREETING; a b\n", 0)
    code = asyncio.run(shell.run_argv(["/bin/echo", "x"], Streams(out.extend, out.extend)))
    assert code == 0 and out.endswith(b"x\n")


@pytest.mark.parametrize("argv, reads", [
    (["sh", "-c", "cat"], True), (["sh", "-c", "x=1; cat | grep a"], True), (["sh", "-c", "echo hi"], False),
    (["sh", "-c", "echo a | cat"], False), (["bash", "-c", "sh -c 'wc -l'"], True), (["cat", "/etc/hosts"], False),
    (["sh", "-c", "while true; do cat; done"], True), (["sh", "-c", "tar xf - -C /tmp"], True),
    (["sh", "-c", "awk 'BEGIN { print 1 }'"], False), (["sh", "-c", "sed s/a/b/"], True), (["sh", "-c", "'"], False),
])
def test_which_commands_read_their_stdin(argv, reads):
    """exec hands stdin to a command that reads it (`echo hi | kubectl exec -i POD -- sh -c cat`)."""
    assert reads_stdin(argv) is reads


def test_sh_c_cat_prints_its_stdin():
    assert run("cat", stdin=b"hi\n") == ("hi\n", "", 0)


def test_env_prints_or_runs_a_command_in_a_changed_environment():
    assert run("env -i A=1 B=2") == ("A=1\nB=2\n", "", 0)
    assert run("env GREETING=hi printenv GREETING; echo $GREETING") == ("hi\nhello world\n", "", 0)
    assert run("env -i X=1 sh -c 'echo [$X] [$GREETING]'") == ("[1] []\n", "", 0)
    assert run("env -u GREETING | grep -c GREETING") == ("0\n", "", 1)
