"""`kubectl exec` for a lesson's button (dashboard.lesson_exec, and the `exec` button of
dashboard.lesson_buttons): against a small WebSocket server on loopback that answers as the hub's
exec subresource does (101 with the channel protocol, stdout and stderr frames, the final Status on
the error channel), or refuses the upgrade with a Status."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import struct
from urllib.parse import parse_qs, urlsplit

import pytest

from control import errors
from dashboard import lesson_buttons, lesson_exec
from dashboard.actions import ActionError

SUCCESS = {"metadata": {}, "status": "Success"}
EXIT_1 = {"metadata": {}, "status": "Failure", "message": "command terminated with non-zero exit code: error executing "
          "command [wget -qO- -T 2 http://kitchen], exit code 1", "reason": "NonZeroExitCode",
          "details": {"causes": [{"reason": "ExitCode", "message": "1"}]}}


def server_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    head = bytes([(0x80 if fin else 0) | opcode])
    size = len(payload)
    head += bytes([size]) if size < 126 else bytes([126]) + struct.pack(">H", size)
    return head + payload


async def serve(script, refuse: tuple[int, dict] | None = None):
    """A one-connection server; `script(writer)` sends the frames after the handshake. Returns
    (url, what it was asked: path, query, headers, and the client's frames)."""
    seen: dict = {"frames": []}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        request, *lines = head.split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
        target = urlsplit(request.split(" ")[1])
        seen.update(path=target.path, query=parse_qs(target.query), headers=headers)
        if refuse:
            body = json.dumps(refuse[1]).encode()
            writer.write(f"HTTP/1.1 {refuse[0]} No\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            writer.close()
            return
        accept = base64.b64encode(hashlib.sha1((headers["sec-websocket-key"] + lesson_exec.GUID).encode()).digest())
        writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Accept: " + accept + b"\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n")
        await script(writer)
        await writer.drain()
        try:
            while True:
                fin, opcode, payload = await lesson_exec.read_frame(reader)  # the client's frames are masked
                seen["frames"].append((opcode, payload))
                if opcode == 0x8:
                    break
        except asyncio.IncompleteReadError:
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}", seen


def run(script, refuse=None, command=("wget", "-qO-", "-T", "2", "http://kitchen"), **kwargs):
    async def go():
        server, url, seen = await serve(script, refuse)
        async with server:
            try:
                result = await lesson_exec.run_in_pod(url, "tok", None, "walk-24", "guest", list(command), **kwargs)
            except Exception as exc:  # noqa: BLE001 - the test looks at it
                result = exc
            await asyncio.sleep(0.05)  # the server reads the close frame
        return result, seen
    return asyncio.run(go())


def test_a_command_that_answers_its_output_and_exit_code_0():
    async def script(writer):
        writer.write(server_frame(0x2, b"\x01<title>Welcome to nginx!</title>"))
        writer.write(server_frame(0x2, b"\x01\n", fin=False) + server_frame(0x0, b"more"))  # continued
        writer.write(server_frame(0x9, b"ping?"))
        writer.write(server_frame(0x2, b"\x03" + json.dumps(SUCCESS).encode()))
    result, seen = run(script, container="guest")
    assert result == lesson_exec.ExecResult(0, "<title>Welcome to nginx!</title>\nmore", "")
    assert seen["path"] == "/api/v1/namespaces/walk-24/pods/guest/exec"
    assert seen["query"] == {"command": ["wget", "-qO-", "-T", "2", "http://kitchen"], "stdout": ["1"], "stderr": ["1"],
                             "container": ["guest"]}
    assert seen["headers"]["authorization"] == "Bearer tok" and seen["headers"]["upgrade"] == "websocket"
    assert seen["headers"]["sec-websocket-protocol"] == "v5.channel.k8s.io, v4.channel.k8s.io"
    assert (0xA, b"ping?") in seen["frames"] and seen["frames"][-1] == (0x8, struct.pack(">H", 1000))


def test_a_timeout_is_the_exit_code_and_stderr_of_the_command():
    async def script(writer):
        writer.write(server_frame(0x2, b"\x02wget: download timed out\n"))
        writer.write(server_frame(0x2, b"\x03" + json.dumps(EXIT_1).encode()))
    result, _ = run(script)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", "wget: download timed out\n")


def test_the_hubs_refusal_of_the_upgrade_is_its_status():
    refusal = {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404, "message": 'pods "guest" not found'}
    result, _ = run(None, refuse=(404, refusal))
    assert isinstance(result, errors.NotFound) and result.message == 'pods "guest" not found'


def test_a_stream_that_closes_before_the_status_or_runs_too_long_fails():
    async def closes(writer):
        writer.write(server_frame(0x2, b"\x01half"))
        writer.write(server_frame(0x8, struct.pack(">H", 1000)))
    result, _ = run(closes)
    assert isinstance(result, lesson_exec.ExecFailed) and "before the command's exit status" in str(result)

    async def hangs(writer):
        writer.write(server_frame(0x2, b"\x01..."))
    result, _ = run(hangs, timeout=0.2)
    assert isinstance(result, lesson_exec.ExecFailed) and "longer than 0.2 s" in str(result)


def test_exit_codes_as_kubectl_reads_them():
    assert lesson_exec.exit_code(SUCCESS) == 0
    assert lesson_exec.exit_code(EXIT_1) == 1
    with pytest.raises(lesson_exec.ExecFailed, match="container not found"):
        lesson_exec.exit_code({"status": "Failure", "reason": "InternalError", "message": 'container not found ("c")'})


# --- the button -------------------------------------------------------------------------------------

class Client:
    server = "http://hub.invalid"
    agent = "dashboard"


def press(monkeypatch, result, form=None):
    asked = {}

    async def fake_run(server, token, ca, namespace, pod, command, *, container="", agent=""):
        asked.update(namespace=namespace, pod=pod, command=command, container=container)
        if isinstance(result, Exception):
            raise result
        return result

    monkeypatch.setattr(lesson_exec, "run_in_pod", fake_run)
    form = form or {"namespace": "walk-24", "pod": "guest", "command": "wget -qO- -T 2 http://kitchen"}
    return asyncio.run(lesson_buttons.exec_in_pod(Client(), form)), asked


def test_the_button_shows_the_output_on_one_line(monkeypatch):
    answer, asked = press(monkeypatch, lesson_exec.ExecResult(0, "<html>\n  <title>Welcome to nginx!</title>\n" + "x" * 300, ""))
    assert answer.startswith("<html> <title>Welcome to nginx!</title> xxx") and answer.endswith("…")
    assert len(answer) == lesson_buttons.SHOWN_OUTPUT
    assert asked == {"namespace": "walk-24", "pod": "guest", "command": ["wget", "-qO-", "-T", "2", "http://kitchen"],
                     "container": ""}


def test_a_timed_out_command_is_504_and_another_failure_500(monkeypatch):
    answer, _ = press(monkeypatch, lesson_exec.ExecResult(1, "", "wget: download timed out\n"))
    assert answer.code == 504 and not answer.ok
    assert answer == "command terminated with exit code 1: wget: download timed out"
    answer, _ = press(monkeypatch, lesson_exec.ExecResult(1, "", "wget: bad address 'kitchen'\n"))
    assert answer.code == 500


def test_a_bad_form_or_a_broken_stream_is_an_action_error(monkeypatch):
    with pytest.raises(ActionError, match="at least one command"):
        press(monkeypatch, None, {"namespace": "default", "pod": "guest", "command": "  "})
    with pytest.raises(ActionError, match="not a valid name"):
        press(monkeypatch, None, {"namespace": "default", "pod": "Guest!", "command": "ls"})
    with pytest.raises(ActionError, match="exec in pod guest: the stream broke"):
        press(monkeypatch, lesson_exec.ExecFailed("the stream broke: x"))
