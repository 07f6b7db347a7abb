"""One exec session on the kubelet's side: a shell in a container, wired to the frames of an
upgraded connection (`control.client.remotecommand`).

Guarantees:
- Without a TTY the command runs once: output streams on stdout/stderr as it is produced; a shell
  with no `-c` runs its stdin line by line as lines arrive (`echo ... | kubectl exec -i POD --
  sh`), a command that reads stdin (`cat`, `tar x`) gets it whole when the client closes it (CLOSE
  frame; more than MAX_STDIN is refused with exit 1, never held), any other runs at once.
- With a TTY and a shell, the session is an interactive terminal: a prompt, typed characters
  echoed, Enter runs the line, Backspace/Ctrl-U edit it, Ctrl-C interrupts a running command (or
  drops the line), Ctrl-D on an empty line or `exit` ends it; output has `\\n` turned into `\\r\\n`
  as a terminal's line discipline does; resize messages are taken (`{"Width","Height"}`).
- The session always ends with exactly one Status frame on the error channel (`exit_status`);
  a client that goes away cancels the running command.
"""

from __future__ import annotations

import asyncio
import json
import posixpath
from typing import Callable

from control.client.remotecommand import (CLOSE, ERROR, RESIZE, STDERR, STDIN, STDOUT, FrameError, FrameReader,
                                          exit_status, frame, status_json)
from control.userland import SHELLS, Shell, ShellExit, Streams
from control.userland.stdin import reads_stdin as shell_reads_stdin

BUSYBOX_IMAGES = ("busybox", "alpine")
INTERRUPTED = 130
CHUNK = 64 * 1024  # bytes of output per frame
MAX_STDIN = 64 << 20  # what a command reading all its stdin (tar x, cat) may be given: the kubelet's memory is bounded
ESCAPE_END = set(range(0x40, 0x7F))  # the final byte of a CSI sequence (arrow keys and the like)


def prompt_for(image: str, shell: Shell) -> str:
    """busybox's `/ # ` for busybox and alpine images, bash's `root@host:/# ` for the others."""
    name = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    cwd = "~" if shell.cwd == shell.vars.get("HOME") else shell.cwd
    if name in BUSYBOX_IMAGES:
        return f"{cwd} # "
    return f"root@{shell.hostname}:{cwd}# "


def interactive(argv: list[str]) -> bool:
    """A shell with neither `-c` nor a script: it reads its commands from stdin."""
    return bool(argv) and posixpath.basename(argv[0]) in SHELLS and (len(argv) == 1 or argv[1:] == ["-i"])


def reads_stdin(argv: list[str]) -> bool:
    """Whether a command reads its stdin to the end before it can finish (`cat` with no file,
    `tar x` from `-`, `sh -c cat`: `control.userland.shell.reads_stdin`); any other command runs at
    once, as `ls` does under `kubectl exec -it POD -- ls`."""
    return shell_reads_stdin(argv)


class Session:
    def __init__(self, shell: Shell, argv: list[str], *, image: str, stdin: bool, stdout: bool, stderr: bool,
                 tty: bool, send: Callable[[bytes], None]):
        self.shell, self.argv, self.image = shell, argv, image
        self.stdin, self.tty, self.send = stdin, tty, send
        self.size: tuple[int, int] | None = None
        if tty:
            shell.terminal = (0, 0)  # a new pty has no size until the client's first resize
        self.inbox: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        self.pending: list[tuple[int, bytes]] = []  # typed ahead while a command ran
        out = self._to(STDOUT) if stdout else _drop
        self.streams = Streams(out, out if tty else (self._to(STDERR) if stderr else _drop))

    def _to(self, channel: int) -> Callable[[bytes], None]:
        def write(data: bytes) -> None:
            if self.tty:
                data = data.replace(b"\n", b"\r\n")
            for start in range(0, len(data), CHUNK):  # a frame stays under MAX_FRAME (a tar of a big file)
                self.send(frame(channel, data[start:start + CHUNK]))
        return write

    async def run(self, frames: FrameReader) -> int:
        """Run to the end; the exit code (its Status already sent)."""
        pump = asyncio.ensure_future(self._pump(frames))
        try:
            code = await self._main()
        finally:
            pump.cancel()
        self.send(frame(ERROR, status_json(exit_status(self.argv, code))))
        return code

    async def _pump(self, frames: FrameReader) -> None:
        try:
            while (item := await frames.next()) is not None:
                channel, payload = item
                if channel == RESIZE:
                    self._resize(payload)
                else:
                    self.inbox.put_nowait(item)
        except (FrameError, OSError):  # a reset connection (a chatty command wrote to a closed one) is a leaving too
            pass
        self.inbox.put_nowait(None)  # the client went away

    def _resize(self, payload: bytes) -> None:
        try:
            size = json.loads(payload)
            self.size = (int(size["Width"]), int(size["Height"]))
            if self.tty:
                self.shell.terminal = self.size
        except (ValueError, TypeError, KeyError):
            pass  # a malformed resize is ignored, as the kubelet's resize loop does

    async def _main(self) -> int:
        if not self.argv:  # attached to a process that is no shell: nothing to say until the client leaves
            while (item := await self.inbox.get()) is not None and item[0] != CLOSE:
                pass
            return 0
        if self.tty and self.stdin and interactive(self.argv):
            return await self._terminal()
        if self.stdin and interactive(self.argv):
            return await self._lines()
        stdin = await self._read_stdin() if self.stdin and reads_stdin(self.argv) else b""
        if stdin is None:
            return INTERRUPTED
        if len(stdin) > MAX_STDIN:
            self.streams.err(f"{posixpath.basename(self.argv[0])}: standard input: more than the simulated "
                             f"container takes ({MAX_STDIN >> 20} MiB)\n".encode())
            return 1
        return await self._interruptible(self.shell.run_argv(self.argv, Streams(self.streams.out, self.streams.err,
                                                                                  stdin)))

    async def _read_stdin(self) -> bytes | None:
        data = bytearray()
        while (item := await self.inbox.get()) is not None:
            channel, payload = item
            if channel == CLOSE or (channel == STDIN and not payload):
                return bytes(data)
            if channel == STDIN and len(data) <= MAX_STDIN:  # past the limit the rest is dropped, then refused
                data += payload
        return None

    async def _interruptible(self, work) -> int:
        """Run a command; the client leaving or Ctrl-C (in a terminal) cancels it."""
        task = asyncio.ensure_future(work)
        while True:
            getter = asyncio.ensure_future(self.inbox.get())
            await asyncio.wait((task, getter), return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                getter.cancel()
                if not getter.cancelled() and getter.done() and getter.result() is not None:
                    self._typeahead(getter.result())
                return task.result()
            item = getter.result()
            if item is None or (self.tty and item[0] == STDIN and b"\x03" in item[1]):
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                if item is None:
                    raise ConnectionResetError("the client went away")
                self.streams.out(b"^C\n")
                self.shell.status = INTERRUPTED  # what `$?` says after a Ctrl-C, as in sh
                return INTERRUPTED
            self._typeahead(item)

    def _typeahead(self, item: tuple[int, bytes]) -> None:
        self.pending.append(item)

    async def _next_input(self) -> tuple[int, bytes] | None:
        if self.pending:
            return self.pending.pop(0)
        return await self.inbox.get()

    async def _lines(self) -> int:
        buffered = b""
        try:
            while (item := await self._next_input()) is not None:
                channel, payload = item
                if channel == CLOSE or (channel == STDIN and not payload):
                    break
                if channel != STDIN:
                    continue
                buffered += payload
                *lines, buffered = buffered.split(b"\n")
                for line in lines:
                    await self._interruptible(self.shell.run_line(line.decode(errors="replace"), self.streams))
            if buffered:
                await self.shell.run_line(buffered.decode(errors="replace"), self.streams)
        except ShellExit as done:
            return done.code
        return self.shell.status

    async def _terminal(self) -> int:
        line = bytearray()
        self.send(frame(STDOUT, prompt_for(self.image, self.shell).encode()))
        echo = self._to(STDOUT)
        escape = 0  # 1: after ESC; 2: inside a CSI/SS3 sequence (ESC [ ... or ESC O x)
        try:
            while (item := await self._next_input()) is not None:
                channel, payload = item
                if channel == CLOSE:
                    break
                for index, byte in enumerate(payload):
                    if escape == 1:  # ESC then `[`/`O` opens a sequence; any other byte is ESC's pair (Alt-x)
                        escape = 2 if byte in (0x5B, 0x4F) else 0
                        continue
                    if escape == 2:  # skip the sequence (no history or cursor movement here)
                        escape = 0 if byte in ESCAPE_END else 2
                        continue
                    if byte in (0x0D, 0x0A):
                        echo(b"\n")
                        text, line = line.decode(errors="replace"), bytearray()
                        rest = payload[index + 1:]
                        if rest:
                            self.pending.insert(0, (STDIN, rest))
                        await self._interruptible(self.shell.run_line(text, self.streams))
                        echo(prompt_for(self.image, self.shell).encode())
                        break
                    if byte == 0x03:  # Ctrl-C on a line being typed: drop it
                        line.clear()
                        echo(b"^C\n" + prompt_for(self.image, self.shell).encode())
                    elif byte == 0x04:  # Ctrl-D: the end of input on an empty line
                        if not line:
                            echo(b"\n")
                            return self.shell.status
                    elif byte in (0x7F, 0x08):
                        if line:
                            line.pop()
                            echo(b"\b \b")
                    elif byte == 0x15:  # Ctrl-U: kill the line
                        echo(b"\b \b" * len(line))
                        line.clear()
                    elif byte == 0x1B:
                        escape = 1
                    elif byte >= 0x20 or byte == 0x09:
                        line.append(byte)
                        echo(bytes((byte,)))
        except ShellExit as done:
            return done.code
        return self.shell.status


def _drop(data: bytes) -> None:
    pass
