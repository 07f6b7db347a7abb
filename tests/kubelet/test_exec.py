"""The kubelet's exec endpoint over a real loopback socket: the checks before the upgrade, the
101, frames both ways, the final Status, the terminal's line discipline, files kept per run."""

from __future__ import annotations

import asyncio
import logging
import json
from urllib.parse import urlencode

import pytest

from control.client import nodeaccess
from control.clock import FakeClock
from control.client.remotecommand import (CLOSE, ERROR, RESIZE, STDERR, STDIN, STDOUT, UpgradeRefused,
                                          connect_upgraded, exit_status, frame)
from control.client.serving import Exchange, HttpError, NodeServer, Request
from control.kubelet.behaviour import Script
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import advance, new_container
from control.kubelet.exec import ExecServer, parse_exec
from control.kubelet.terminal import prompt_for
from control.userland.shell import Shell
from control.kubelet.filesystem import Filesystem

AUTH = f"Authorization: Bearer {nodeaccess.token()}\r\n"  # the hub's proof, as node servers require it

T0 = 1_800_000_000.0
BACKOFF = BackoffPolicy(10, 300, 600)
POD = {"metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
       "spec": {"containers": [{"name": "app", "image": "busybox:1.36", "env": [{"name": "COLOR", "value": "blue"}]},
                               {"name": "late", "image": "nginx"}]}}


class Record:
    pod_ip = "10.244.1.9"


def containers(run_number: int = 0):
    app, _ = advance(new_container("app", "busybox", f"u1-{run_number}", T0, 0), Script(), "Always", T0 + 1, BACKOFF)
    late = new_container("late", "nginx", "u1", T0, 60)  # still creating
    return app, late


class Server(NodeServer):
    def __init__(self, execs: ExecServer):
        self.execs = execs

    async def answer(self, request: Request, exchange: Exchange) -> None:
        await self.execs.answer(request, exchange)


class Node:
    """A kubelet exec server on a loopback port, running one pod (or none)."""

    def __init__(self):
        self.found = (POD, Record(), containers())
        self.execs = ExecServer(lambda ns, name: self.found if (ns, name) == ("shop", "web") else None,
                                clock=FakeClock(T0))

    async def __aenter__(self):
        self.server = Server(self.execs)
        self.port = await self.server.start("127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc):
        await self.server.close()

    async def open(self, command=(), *, pod="web", container="app", stdin=False, tty=False, action="exec"):
        query = urlencode([("command", c) for c in command] + [("stdin", int(stdin)), ("stdout", 1),
                                                                ("stderr", int(not tty)), ("tty", int(tty))])
        return await connect_upgraded("127.0.0.1", self.port, f"/{action}/shop/{pod}/{container}?{query}",
                                      token=nodeaccess.token())

    async def run(self, command, stdin_data: bytes | None = None, **flags) -> dict[int, bytes]:
        frames, writer = await self.open(command, stdin=stdin_data is not None, **flags)
        if stdin_data is not None:
            writer.write(frame(STDIN, stdin_data) + frame(CLOSE, bytes((STDIN,))))
        seen: dict[int, bytes] = {}
        while (item := await frames.next()) is not None:
            seen[item[0]] = seen.get(item[0], b"") + item[1]
        writer.close()
        return seen


def status(seen: dict[int, bytes]) -> dict:
    return json.loads(seen[ERROR])


def test_a_command_streams_its_output_and_ends_with_success():
    async def scenario():
        async with Node() as node:
            seen = await node.run(["echo", "hi"])
            assert seen[STDOUT] == b"hi\n" and STDERR not in seen
            assert seen[ERROR] == b'{"metadata":{},"status":"Success"}'
            seen = await node.run(["sh", "-c", "echo $COLOR $HOSTNAME; nosuch"])
            assert seen[STDOUT] == b"blue web\n" and seen[STDERR] == b"sh: nosuch: not found\n"
            assert status(seen)["details"]["causes"] == [{"reason": "ExitCode", "message": "127"}]

    asyncio.run(scenario())


def test_a_non_zero_exit_is_the_kubelets_NonZeroExitCode_status_exactly():
    async def scenario():
        async with Node() as node:
            seen = await node.run(["sh", "-c", "exit 3"])
            assert seen[ERROR] == (b'{"metadata":{},"status":"Failure","message":"command terminated with non-zero '
                                   b'exit code: error executing command [sh -c exit 3], exit code 3","reason":'
                                   b'"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}')
            assert exit_status(["true"], 0) == {"metadata": {}, "status": "Success"}

    asyncio.run(scenario())


def test_stdin_feeds_a_shell_line_by_line_and_files_persist_for_the_run():
    async def scenario():
        async with Node() as node:
            seen = await node.run(["sh"], stdin_data=b"echo hello > /tmp/f; cat /tmp/f\n")
            assert seen[STDOUT] == b"hello\n" and status(seen)["status"] == "Success"
            seen = await node.run(["cat", "/tmp/f"])
            assert seen[STDOUT] == b"hello\n", "a later exec into the same run sees the file"
            seen = await node.run(["cat"], stdin_data=b"piped")
            assert seen[STDOUT] == b"piped"
            node.found = (POD, Record(), containers(run_number=1))  # the container restarted
            seen = await node.run(["cat", "/tmp/f"])
            assert seen[STDERR] == b"cat: can't open '/tmp/f': No such file or directory\n"

    asyncio.run(scenario())


def test_a_command_that_ignores_stdin_does_not_wait_for_it_to_close():
    async def scenario():
        async with Node() as node:
            frames, writer = await node.open(["ls", "/etc"], stdin=True, tty=True)  # stdin stays open
            seen = []
            while (item := await frames.next()) is not None:
                seen.append(item)
            writer.close()
            assert seen == [(STDOUT, b"hostname\r\nhosts\r\nresolv.conf\r\n"),
                            (ERROR, b'{"metadata":{},"status":"Success"}')]

    asyncio.run(scenario())


def test_tar_gets_its_whole_stdin_in_frames_and_its_big_output_comes_back_in_frames(monkeypatch):
    import io
    import tarfile

    from control.kubelet import terminal

    blob = bytes(range(256)) * 5000  # 1.2 MiB: more than one frame may carry (MAX_FRAME)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("blob")
        info.size = len(blob)
        tar.addfile(info, io.BytesIO(blob))
    stream = buffer.getvalue()

    async def scenario():
        async with Node() as node:
            frames, writer = await node.open(["tar", "-xmf", "-", "-C", "/tmp"], stdin=True)
            for start in range(0, len(stream), 32 * 1024):  # as kubectl sends it: chunk by chunk, then CLOSE
                writer.write(frame(STDIN, stream[start:start + 32 * 1024]))
            writer.write(frame(CLOSE, bytes((STDIN,))))
            while (item := await frames.next()) is not None:
                assert item == (ERROR, b'{"metadata":{},"status":"Success"}')
            writer.close()
            seen = await node.run(["tar", "cf", "-", "/tmp/blob"])
            with tarfile.open(fileobj=io.BytesIO(seen[STDOUT])) as tar:
                assert tar.extractfile("tmp/blob").read() == blob
            monkeypatch.setattr(terminal, "MAX_STDIN", 1024)
            seen = await node.run(["tar", "xf", "-"], stdin_data=stream[:8192])
            assert seen[STDERR] == b"tar: standard input: more than the simulated container takes (0 MiB)\n"
            assert status(seen)["details"]["causes"][0]["message"] == "1"

    asyncio.run(scenario())


@pytest.mark.parametrize("pod, container, command, status_code, message", [
    ("nope", "app", ["ls"], 404, "pod does not exist"),
    ("web", "late", ["ls"], 404, 'container not found ("late")'),
    ("web", "ghost", ["ls"], 404, 'container not found ("ghost")'),
    ("web", "app", [], 400, "you must specify at least one command for the container"),
])
def test_refusals_before_the_upgrade(pod, container, command, status_code, message):
    async def scenario():
        async with Node() as node:
            with pytest.raises(UpgradeRefused) as refused:
                await node.open(command, pod=pod, container=container)
            assert (refused.value.status, refused.value.message) == (status_code, message)

    asyncio.run(scenario())


def test_a_plain_post_without_the_upgrade_is_refused():
    with pytest.raises(HttpError) as caught:
        parse_exec("/exec/a/b/c?command=ls")  # no stream asked for
    assert caught.value.status == 400

    async def scenario():
        async with Node() as node:
            reader, writer = await asyncio.open_connection("127.0.0.1", node.port)
            writer.write(f"POST /exec/shop/web/app?command=ls&stdout=1 HTTP/1.1\r\nHost: x\r\n{AUTH}Content-Length: 0\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            writer.close()
            assert head.startswith(b"HTTP/1.1 400")

    asyncio.run(scenario())


def test_a_terminal_session_prompts_echoes_edits_and_exits_with_the_code():
    async def scenario():
        async with Node() as node:
            frames, writer = await node.open(["sh"], stdin=True, tty=True)
            writer.write(frame(RESIZE, b'{"Width":80,"Height":24}') + frame(RESIZE, b"not json"))
            out = bytearray()

            async def until(text: bytes) -> None:
                while text not in out:
                    channel, payload = await frames.next()
                    assert channel == STDOUT
                    out.extend(payload)

            await until(b"/ # ")
            writer.write(frame(STDIN, b"echo $HOSTNAMX\x7fE\r"))
            await until(b"web\r\n/ # ")
            assert b"echo $HOSTNAMX\b \bE\r\n" in out, "typed characters and backspaces are echoed"
            # arrow keys (CSI and SS3) are skipped; a lone Escape takes only the key after it (Alt-x)
            writer.write(frame(STDIN, b"\x1b[Aec\x1bOBho\x1b[1;5C ok\x1bx\r"))
            await until(b"ok\r\n/ # ")
            writer.write(frame(STDIN, b"stty size\r"))
            await until(b"24 80\r\n/ # ")  # the resize reached the terminal; the malformed one changed nothing
            writer.write(frame(STDIN, b"cd /tmp\rpwd\r"))
            await until(b"/tmp\r\n/tmp # ")
            writer.write(frame(STDIN, b"junk\x03"))
            await until(b"^C\r\n/tmp # ")
            writer.write(frame(STDIN, b"exit 7\r"))
            rest = []
            while (item := await frames.next()) is not None:
                rest.append(item)
            writer.close()
            assert rest[-1][0] == ERROR and json.loads(rest[-1][1])["details"]["causes"][0]["message"] == "7"

    asyncio.run(scenario())


def test_ctrl_c_interrupts_a_sleep_and_ctrl_d_ends_the_session():
    async def scenario():
        async with Node() as node:
            frames, writer = await node.open(["sh"], stdin=True, tty=True)
            out = bytearray()

            async def until(text: bytes) -> None:
                while text not in out:
                    out.extend((await frames.next())[1])

            await until(b"/ # ")
            writer.write(frame(STDIN, b"sleep 1000\r"))
            await until(b"sleep 1000\r\n")
            writer.write(frame(STDIN, b"\x03"))  # the fake clock never advances: only Ctrl-C ends it
            await until(b"^C\r\n/ # ")
            writer.write(frame(STDIN, b"echo $?\r"))
            await until(b"130\r\n/ # ")
            writer.write(frame(STDIN, b"\x04"))
            items = []
            while (item := await frames.next()) is not None:
                items.append(item)
            writer.close()
            assert items[-1] == (ERROR, b'{"metadata":{},"status":"Success"}'), "the last status (echo's) is the exit code"

    asyncio.run(scenario())


def test_prompts_follow_the_image():
    shell = Shell(Filesystem(), clock=FakeClock(), hostname="web")
    assert prompt_for("busybox:1.36", shell) == "/ # "
    assert prompt_for("docker.io/library/alpine", shell) == "/ # "
    assert prompt_for("nginx:1.27", shell) == "root@web:/# "


def test_a_client_leaving_a_chatty_command_ends_it():
    # Writing to the closed connection resets it before its end is read: still the client leaving,
    # so the command is cancelled, not left spinning in the kubelet.
    async def scenario():
        async with Node() as node:
            frames, writer = await node.open(["sh", "-c", "while true; do echo spin; done"])
            for _ in range(20):
                assert (await frames.next())[1].startswith(b"spin")
            writer.close()
            for _ in range(500):
                running = [t for t in asyncio.all_tasks() if "run_argv" in repr(t.get_coro())]
                if not running:
                    break
                await asyncio.sleep(0.01)
            assert not running, "the loop still runs after the client left"

    quiet, level = logging.getLogger("asyncio"), logging.getLogger("asyncio").level
    quiet.setLevel(logging.CRITICAL)  # "socket.send() raised exception", on purpose
    try:
        asyncio.run(scenario())
    finally:
        quiet.setLevel(level)
