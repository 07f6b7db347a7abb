"""The simulated container's shell (`sh`, `bash`, `ash`): parses a command line and runs it against
the container's filesystem (`filesystem`), its environment and the injected clock.

Guarantees:
- A line (read by `parsing`) is a list of pipelines joined by `;` (or a newline), `&&` and `||`;
  a pipeline is commands joined by `|` (the first may be a compound command: `done | grep x`),
  the last one's status the pipeline's. When every command after the first reads its pipe line by line
  (`table.STREAMING`: grep, cat) the pipeline streams (`tail -f log | grep x` prints each match as
  the line comes); otherwise its commands run one after the other, each reading what the one
  before it wrote, whole (a producer that never ends is interrupted as any command is).
  `$NAME`, `${NAME}`, `$?`, `$$`, `$0` and a leading `~` expand; `$((EXPRESSION))` is ash's
  integer arithmetic (`arithmetic`), whose error ends a script (a line, in a terminal);
  `NAME=value` alone sets a variable, before a command only for that command.
- `while`/`until`/`for`/`if` compound commands run as sh runs them (`compound`), on one line or
  across a script's lines.
- The programs (`table.PROGRAMS`) answer as busybox/coreutils do (same messages, same exit codes); an
  unknown program prints `sh: X: not found` (bash: `bash: X: command not found`) and exits 127;
  `$(COMMAND)` is replaced by COMMAND's output (`substitution`); what this shell does not
  simulate (`&`, `<`, backquotes) is a syntax error with exit 2, never a guess.
- `sleep` waits on the injected clock (so tests run on a FakeClock), and is where a running line
  can be interrupted (the caller cancels it: Ctrl-C); `exit N` raises `ShellExit`.
- Output goes to the caller's sinks as it is produced (an `echo` before a `sleep` is seen before
  the sleep ends); nothing here does I/O of its own.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from typing import Any, Awaitable, Callable

from control.clock import Clock
from control.userland import arithmetic, formatting, substitution, table
from control.userland.files import Files, FsError
from control.userland.parsing import Command, Redirect, Word, opens_compound, parse
from control.userland.streams import Lines, ShellExit, ShellSyntaxError, Sink, Streams

__all__ = ["SHELLS", "Command", "Shell", "ShellExit", "ShellSyntaxError", "Streams", "Word", "parse"]
SHELLS = ("sh", "bash", "ash", "dash")
ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
EXPANSION = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|([?$#0-9]))")
Stage = Callable[[Streams], Awaitable[int]]  # one command of a pipeline, run with its streams
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


# --- running ---------------------------------------------------------------------------------------

class Shell:
    """One shell process: its variables, working directory and last exit status."""

    def __init__(self, fs: Files, *, clock: Clock, hostname: str, env: dict[str, str] | None = None,
                 name: str = "sh"):
        self.fs, self.clock, self.hostname, self.name = fs, clock, hostname, name
        base = {"PATH": DEFAULT_PATH, "HOSTNAME": hostname, "HOME": "/root"}
        self.vars: dict[str, str] = {**base, **(env or {})}
        self.exported: set[str] = set(self.vars)
        self.cwd = "/"
        self.status = 0
        self.script = False  # running `sh -c` or a script: an expansion error ends it (interactive: the line)
        self.terminal: tuple[int, int] | None = None  # (columns, rows) when stdin is a terminal (`stty size`)
        self.resources: Any = None  # the container's load handle (the kubelet's `loads.StressHandle`), for `stress`
        self.network: Any = None  # the cluster network (`network.Network`, injected), for nslookup/wget/curl

    async def run_line(self, line: str, io: Streams) -> int:
        """Run one line; its status (also in `$?`). `exit` raises ShellExit."""
        from control.userland import compound

        try:
            nodes = compound.structure(parse(line))
        except (ShellSyntaxError, compound.Incomplete) as exc:
            io.err(f"{self.name}: {exc}\n".encode())
            self.status = 2
            return 2
        try:
            return await compound.run_list(self, nodes, io)
        except arithmetic.ArithmeticFault as exc:  # an expansion error: the line ends (a script ends: run_script)
            io.err(f"{self.name}: {exc}\n".encode())
            self.status = 2
            if self.script:
                raise ShellExit(2) from None
            return 2

    async def run_script(self, text: str, io: Streams) -> int:
        """`sh -c TEXT` or a script read from stdin: every line (a compound command left open goes
        on over the next lines), then the last status."""
        from control.userland import compound

        lines, pending = text.splitlines() or [""], ""
        self.script = True
        try:
            for index, line in enumerate(lines):
                text = f"{pending}\n{line}" if pending else line
                if index < len(lines) - 1 and opens_compound(text):
                    pending = text
                    continue
                pending = ""
                await self.run_line(text, io)
        except ShellExit as done:
            return done.code
        return self.status

    async def run_argv(self, argv: list[str], io: Streams) -> int:
        """A command given as words (exec's `command=`), not re-parsed: `sh -c TEXT` runs TEXT."""
        try:
            return await self._run_words(argv, io)
        except ShellExit as done:
            return done.code

    def expand(self, word: Word) -> str:
        out = []
        for index, (text, quoting) in enumerate(word):
            if quoting == "single":
                out.append(text)
                continue
            if quoting == "arith":
                out.append(str(arithmetic.evaluate(self._substitute(text), self.vars)))
                continue
            if quoting == "bare" and index == 0 and (text == "~" or text.startswith("~/")):
                text = self.vars.get("HOME", "/") + text[1:]
            out.append(self._substitute(text))
        return "".join(out)

    def _substitute(self, text: str) -> str:
        def value(match: re.Match) -> str:
            name = match.group(1) or match.group(2) or match.group(3)
            special = {"?": str(self.status), "$": "1", "#": "0", "0": self.name}
            return special[name] if name in special else ("" if name.isdigit() else self.vars.get(name, ""))
        parts = text.split("\\$")  # an escaped dollar (inside double quotes) stays a dollar
        return "$".join(EXPANSION.sub(value, part) for part in parts)

    async def run_command(self, command: Command, io: Streams) -> int:
        if command.pipe:
            first = Command(command.words, command.redirects)
            return await self.pipeline(lambda streams: self.run_command(first, streams), command.pipe, io)
        words = [self.expand(await substitution.substituted(self, w, io)) for w in command.words]
        assignments: dict[str, str] = {}
        # leading NAME=value words (written bare: a quoted "X=1" is a command name) are assignments
        while words and (m := ASSIGNMENT.match(words[0])) and command.words[len(assignments)][0][1] == "bare":
            assignments[m.group(1)] = words[0][m.end():]
            words = words[1:]
        if not words:  # assignments only: the status is the last substitution's, if any ran
            self.vars.update(assignments)
            return self.status if any(q == "command" for w in command.words for _, q in w) else 0
        redirects = [replace(r, target=await substitution.substituted(self, r.target, io)) if r.target else r
                     for r in command.redirects]  # copies: a loop's next turn substitutes again
        try:
            io = self._redirected(redirects, io)
        except FsError as exc:
            return self._fail(io, f"{self.name}: {exc}")
        saved = {k: self.vars.get(k) for k in assignments}
        newly_exported = set(assignments) - self.exported  # `X=1 cmd`: in cmd's environment only
        self.vars.update(assignments)
        self.exported |= newly_exported
        try:
            return await self._run_words(words, io)
        finally:
            self.exported -= newly_exported
            for key, old in saved.items():
                if old is None:
                    self.vars.pop(key, None)
                else:
                    self.vars[key] = old

    async def pipeline(self, first: Stage, rest: list[Command], io: Streams) -> int:
        """`first` (a command, or a compound command: `done | grep x`) piped into `rest`: each
        one's stdout is the next one's stdin; stderr goes where it went; the last status is the
        pipeline's. Every command of it runs in a subshell: `exit` ends only it. When every command
        after the first can read a pipe line by line (`table.STREAMING`), the pipeline streams:
        `tail -f log | grep x` prints each match as the line comes."""
        streamed = await self._streamed(first, rest, io)
        if streamed is not None:
            return streamed
        stages = [first, *[(lambda command: lambda streams: self.run_command(command, streams))(c) for c in rest]]
        data, status = io.stdin, 0
        for index, stage in enumerate(stages):
            caught = bytearray()
            last = index == len(stages) - 1
            try:
                status = await stage(Streams(io.out if last else caught.extend, io.err, data))
            except ShellExit as done:
                status = done.code
            data = bytes(caught)
        self.status = status
        return status

    async def _streamed(self, first: Stage, rest: list[Command], io: Streams) -> int | None:
        """Run the pipeline streaming, when it can; None when a command after the first cannot."""
        stages = []
        for command in rest:
            plain = all(quoting in ("bare", "single", "double") for word in command.words for _, quoting in word)
            if command.pipe or command.redirects or not command.words or not plain:
                return None
            words = [self.expand(word) for word in command.words]
            factory = table.STREAMING.get(posixpath.basename(words[0]))
            if factory is None or ASSIGNMENT.match(words[0]):
                return None
            stages.append((factory, words[1:]))
        feeders: list[Lines] = []
        sink = io.out
        for factory, args in reversed(stages):
            made = factory(self, args, Streams(sink, io.err))
            if made is None or isinstance(made, int):  # reads whole, or a usage error it will say when run
                return None
            feeders.insert(0, Lines(made))
            sink = feeders[0].write
        try:
            await first(Streams(sink, io.err, io.stdin))
        except ShellExit:
            pass
        status = 0
        for feeder in feeders:
            status = feeder.close()
        self.status = status
        return status

    def _redirected(self, redirects: list[Redirect], io: Streams) -> Streams:
        out, err = io.out, io.err
        for r in redirects:
            if r.onto_other or r.target is None:  # onto the other stream, as it is now
                out, err = (err, err) if r.fd == 1 else (out, out)
                continue
            path = self.fs.resolve(self.cwd, self.expand(r.target))
            try:
                if not r.append:
                    self.fs.write(path, b"")
                elif not self.fs.exists(path):
                    self.fs.write(path, b"")
            except FsError as exc:
                raise FsError(f"can't create {self.expand(r.target)}: {exc}") from None
            sink = self._file_sink(path)
            out, err = (sink, err) if r.fd == 1 else (out, sink)
        return Streams(out, err, io.stdin)

    def _file_sink(self, path: str) -> Sink:
        return lambda data: self.fs.write(path, data, append=True)

    def _fail(self, io: Streams, message: str, code: int = 1) -> int:
        io.err((message + "\n").encode())
        return code

    async def run_program(self, words: list[str], io: Streams) -> int:
        """Run already-expanded words as a command (what `env NAME=V COMMAND` runs)."""
        return await self._run_words(words, io)

    async def _run_words(self, words: list[str], io: Streams) -> int:
        program = posixpath.basename(words[0]) if words[0].startswith("/") else words[0]
        if program in SHELLS:
            return await self._nested_shell(program, words[1:], io)
        builtin = table.PROGRAMS.get(program)
        if builtin is None:
            found = "not found" if self.name != "bash" else "command not found"
            return self._fail(io, f"{self.name}: {words[0]}: {found}", 127)
        try:
            return await builtin(self, words[1:], io)
        except FsError as exc:
            return self._fail(io, f"{program}: {exc}")

    async def _nested_shell(self, name: str, args: list[str], io: Streams) -> int:
        child = type(self)(self.fs, clock=self.clock, hostname=self.hostname, name=name)  # a subclass stays one
        child.vars = {k: v for k, v in self.vars.items() if k in self.exported}
        child.exported, child.cwd, child.terminal = set(child.vars), self.cwd, self.terminal
        child.resources, child.network = self.resources, self.network
        if args and args[0] == "-c":
            if len(args) < 2:
                return self._fail(io, f"{name}: -c: option requires an argument", 2)
            return await child.run_script(args[1], io)
        if args:
            return self._fail(io, f"{name}: can't open '{args[0]}': No such file or directory", 2)
        return await child.run_script(io.stdin.decode(errors="replace"), Streams(io.out, io.err))

    def today(self) -> str:
        """`date`'s default format (UTC, as containers have no zone data)."""
        return formatting.today(self.clock.now())

