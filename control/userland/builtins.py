"""The programs a simulated container has: the built-ins of busybox that lessons type.

Guarantees: each program is `async (shell, args, streams) -> exit status`, writes only to the
streams and the shell's filesystem, and answers bad input as busybox/coreutils do (the message on
stderr, their exit status), never with an exception; a failing file operation raises `FsError`,
which the shell prints after the program's name. `sleep` waits on the shell's clock.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from control.userland.files import FsError
from control.userland.inputs import each_input
from control.userland.streams import ShellExit, Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

UNAME = {"-s": "Linux", "-r": "5.15.0-kitchen", "-m": "x86_64", "-o": "GNU/Linux"}


def _flags(args: list[str]) -> tuple[set[str], list[str]]:
    """Single-letter flags (`-rf` is r and f) and the operands after them."""
    flags, rest = set(), []
    for index, arg in enumerate(args):
        if arg == "--":
            return flags, rest + args[index + 1:]
        if arg.startswith("-") and len(arg) > 1 and not rest:
            flags.update(arg[1:])
        else:
            rest.append(arg)
    return flags, rest


def _print(io: Streams, text: str) -> None:
    io.out(text.encode())


async def echo(shell: Shell, args: list[str], io: Streams) -> int:
    newline, escapes = True, False
    while args and args[0] in ("-n", "-e", "-ne", "-en", "-E"):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
    _print(io, text + ("\n" if newline else ""))
    return 0


async def true(shell: Shell, args: list[str], io: Streams) -> int:
    return 0


async def false(shell: Shell, args: list[str], io: Streams) -> int:
    return 1


async def exit_(shell: Shell, args: list[str], io: Streams) -> int:
    if args and not args[0].lstrip("-").isdigit():
        io.err(f"{shell.name}: exit: Illegal number: {args[0]}\n".encode())
        raise ShellExit(2)
    raise ShellExit(int(args[0]) % 256 if args else shell.status)


async def env(shell: Shell, args: list[str], io: Streams) -> int:
    """`env [-i] [-u NAME] [NAME=VALUE]... [COMMAND [ARG]...]`: the environment, or COMMAND run in
    the changed one (`env -i`: an empty one); the shell's own variables stay as they were."""
    environment = {k: v for k, v in shell.vars.items() if k in shell.exported}
    rest = list(args)
    while rest and (rest[0] in ("-i", "-", "-u") or "=" in rest[0].lstrip("=")):
        arg = rest.pop(0)
        if arg in ("-i", "-"):
            environment = {}
        elif arg == "-u":
            environment.pop(rest.pop(0) if rest else "", None)
        else:
            name, _, value = arg.partition("=")
            environment[name] = value
    if not rest:
        _print(io, "".join(f"{k}={v}\n" for k, v in environment.items()))
        return 0
    saved = (shell.vars, shell.exported)
    shell.vars, shell.exported = {**{k: v for k, v in shell.vars.items() if k not in saved[1]}, **environment}, \
        set(environment)
    try:
        return await shell.run_program(rest, io)
    finally:
        shell.vars, shell.exported = saved


async def printenv(shell: Shell, args: list[str], io: Streams) -> int:
    if not args:
        return await env(shell, args, io)
    exported = [shell.vars[name] for name in args if name in shell.exported and name in shell.vars]
    _print(io, "".join(f"{value}\n" for value in exported))
    return 0 if len(exported) == len(args) else 1


async def export(shell: Shell, args: list[str], io: Streams) -> int:
    for arg in args:
        name, has_value, value = arg.partition("=")
        if has_value:
            shell.vars[name] = value
        shell.exported.add(name)
    return 0


async def unset(shell: Shell, args: list[str], io: Streams) -> int:
    for name in args:
        shell.vars.pop(name, None)
        shell.exported.discard(name)
    return 0


async def cat(shell: Shell, args: list[str], io: Streams) -> int:
    if not args:
        io.out(io.stdin)
        return 0
    status = 0
    for data in each_input(shell, args, io, lambda name, exc: f"cat: can't open '{name}': {exc}\n"):
        if data is None:
            status = 1
        else:
            io.out(data)
    return status


class _Passthrough:
    def __init__(self, io: Streams):
        self.io = io

    def feed(self, line: bytes) -> None:
        self.io.out(line)

    def finish(self) -> int:
        return 0


def cat_stream(shell: Shell, args: list[str], io: Streams) -> _Passthrough | None:
    """`cat` (or `cat -`) in a pipe copies each line on as it comes; with files it runs whole."""
    return _Passthrough(io) if args in ([], ["-"]) else None


def _long_entry(shell: Shell, path: str, name: str) -> str:
    stamp = shell.today()[4:16]  # "Nov 23 15:57"
    mode = shell.fs.mode(path)
    if shell.fs.is_dir(path):
        return f"d{permissions(mode)}    2 root     root          4096 {stamp} {name}"
    size = shell.fs.size(path)
    return f"-{permissions(mode)}    1 root     root    {size:>10} {stamp} {name}"


def permissions(mode: int) -> str:
    """`ls -l`'s rwx letters of a mode (0o644 -> rw-r--r--)."""
    return "".join(letter if mode & (1 << (8 - i)) else "-" for i, letter in enumerate("rwxrwxrwx"))


async def ls(shell: Shell, args: list[str], io: Streams) -> int:
    flags, names = _flags(args)
    status, lines = 0, []
    for name in names or ["."]:
        path = shell.fs.resolve(shell.cwd, name)
        if not shell.fs.exists(path):
            io.err(f"ls: {name}: No such file or directory\n".encode())
            status = 1
            continue
        entries = [(path, name)] if shell.fs.is_file(path) else \
            [(posixpath.join(path, n), n) for n in shell.fs.list_dir(path) if "a" in flags or not n.startswith(".")]
        if len(names) > 1 and shell.fs.is_dir(path):
            lines.append(f"{name}:")
        lines += [_long_entry(shell, p, n) if "l" in flags else n for p, n in entries]
    _print(io, "".join(line + "\n" for line in lines))
    return status


async def touch(shell: Shell, args: list[str], io: Streams) -> int:
    if not args:
        io.err(b"touch: missing operand\n")
        return 1
    status = 0
    for name in args:
        try:
            shell.fs.touch(shell.fs.resolve(shell.cwd, name))
        except FsError as exc:
            io.err(f"touch: {name}: {exc}\n".encode())
            status = 1
    return status


async def rm(shell: Shell, args: list[str], io: Streams) -> int:
    flags, names = _flags(args)
    if not names and "f" not in flags:
        io.err(b"rm: missing operand\n")
        return 1
    status = 0
    for name in names:
        path = shell.fs.resolve(shell.cwd, name)
        if not shell.fs.exists(path) and "f" in flags:
            continue
        try:
            shell.fs.remove(path, recursive=bool(flags & {"r", "R"}))
        except FsError as exc:
            io.err(f"rm: can't remove '{name}': {exc}\n".encode())
            status = 1
    return status


async def mkdir(shell: Shell, args: list[str], io: Streams) -> int:
    flags, names = _flags(args)
    if not names:
        io.err(b"mkdir: missing operand\n")
        return 1
    status = 0
    for name in names:
        try:
            shell.fs.make_dir(shell.fs.resolve(shell.cwd, name), parents="p" in flags)
        except FsError as exc:
            io.err(f"mkdir: can't create directory '{name}': {exc}\n".encode())
            status = 1
    return status


async def pwd(shell: Shell, args: list[str], io: Streams) -> int:
    _print(io, shell.cwd + "\n")
    return 0


async def cd(shell: Shell, args: list[str], io: Streams) -> int:
    target = args[0] if args else shell.vars.get("HOME", "/")
    path = shell.fs.resolve(shell.cwd, target)
    if not shell.fs.is_dir(path):
        reason = "Not a directory" if shell.fs.is_file(path) else "No such file or directory"
        io.err(f"{shell.name}: cd: can't cd to {target}: {reason}\n".encode())
        return 2
    shell.cwd = path
    shell.vars["PWD"] = path
    return 0


async def hostname(shell: Shell, args: list[str], io: Streams) -> int:
    _print(io, shell.hostname + "\n")
    return 0


async def whoami(shell: Shell, args: list[str], io: Streams) -> int:
    _print(io, "root\n")
    return 0


async def uname(shell: Shell, args: list[str], io: Streams) -> int:
    flags, _ = _flags(args)
    order = ("s", "n", "r", "m", "o")
    wanted = order if "a" in flags else [f for f in order if f in flags] or ["s"]
    values = {**{k[1]: v for k, v in UNAME.items()}, "n": shell.hostname}
    _print(io, " ".join(values[f] for f in wanted) + "\n")
    return 0


async def stty(shell: Shell, args: list[str], io: Streams) -> int:
    """`stty size` says the terminal's rows and columns (what the client's resize set); other
    settings are taken and change nothing here."""
    if shell.terminal is None:
        io.err(b"stty: standard input: Not a tty\n")
        return 1
    if args == ["size"]:
        columns, rows = shell.terminal
        _print(io, f"{rows} {columns}\n")
    return 0


def _seconds(text: str) -> float | None:
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(text[-1:], None)
    number = text[:-1] if unit else text
    try:
        value = float(number) * (unit or 1)
    except ValueError:
        return None
    return value if value >= 0 else None


async def sleep(shell: Shell, args: list[str], io: Streams) -> int:
    if not args:
        io.err(b"sleep: missing operand\n")
        return 1
    seconds = [_seconds(a) for a in args]
    if None in seconds:
        bad = args[seconds.index(None)]
        io.err(f"sleep: invalid number '{bad}'\n".encode())
        return 1
    await shell.clock.sleep(sum(s for s in seconds if s is not None))
    return 0


def _test(shell: Shell, args: list[str]) -> bool | str:
    """test's verdict, or the error message (exit 2)."""
    if args and args[0] == "!":
        verdict = _test(shell, args[1:])
        return verdict if isinstance(verdict, str) else not verdict
    if not args:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, operand = args
        path = shell.fs.resolve(shell.cwd, operand)
        checks = {"-z": lambda: operand == "", "-n": lambda: operand != "", "-e": lambda: shell.fs.exists(path),
                  "-f": lambda: shell.fs.is_file(path), "-d": lambda: shell.fs.is_dir(path),
                  "-s": lambda: shell.fs.is_file(path) and shell.fs.size(path) > 0}
        return checks[op]() if op in checks else f"{op}: unknown operand"
    if len(args) == 3:
        left, op, right = args
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        numeric = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__,
                   "-gt": int.__gt__, "-ge": int.__ge__}
        if op in numeric:
            try:
                return numeric[op](int(left), int(right))
            except ValueError:
                return f"{left if not left.lstrip('-').isdigit() else right}: bad number"
        return f"{op}: unknown operand"
    return "syntax error"


async def test(shell: Shell, args: list[str], io: Streams) -> int:
    return await _judge(shell, "test", args, io)


async def _judge(shell: Shell, name: str, args: list[str], io: Streams) -> int:
    verdict = _test(shell, args)
    if isinstance(verdict, str):
        io.err(f"{shell.name}: {name}: {verdict}\n".encode())
        return 2
    return 0 if verdict else 1


async def bracket(shell: Shell, args: list[str], io: Streams) -> int:
    if not args or args[-1] != "]":
        io.err(f"{shell.name}: [: missing ]\n".encode())
        return 2
    return await _judge(shell, "[", args[:-1], io)

