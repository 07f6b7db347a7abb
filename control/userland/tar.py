"""The simulated container's `tar` (busybox's): real tar streams (Python's `tarfile` on bytes in
memory) made from and unpacked into the container's simulated filesystem. It is what `kubectl cp`
runs through exec: `tar cf - /path` to copy out, `tar -xmf - -C dir` to copy in.

Guarantees:
- Modes `c` (create), `x` (extract) and `t` (list), with `f FILE` (`-` or none: stdin/stdout),
  `C DIR`, `v`, `m`, `o`, `p`, `O`, `z`, `h`, in busybox's old style (`tar cf - x`) or getopt
  style (`tar -xmf - -C dir`), and kubectl's `--no-same-permissions`/`--no-same-owner`.
- Create: files and directories (recursively, names sorted), a leading `/` dropped from member
  names with busybox's warning on stderr; a missing operand is reported and the exit is 1 after
  the rest is archived (busybox's "error exit delayed").
- Extract: directories made as needed, files written byte for byte with their modes (unless
  `--no-same-permissions`); the first failure (a read-only mount: `Read-only file system`, a
  missing `-C` directory, a stream that is not tar) ends it with busybox's message and exit 1,
  never an exception. An empty stream is an empty archive, as for busybox.
- Output is bytes; nothing is decoded, so binary files round-trip exactly.
"""

from __future__ import annotations

import datetime
import gzip
import io as bytes_io
import posixpath
import tarfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from control.userland.files import FsError
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell

WITH_VALUE = "fCXT"  # letters that take the next word as their value
LETTERS = set("cxtfCXTvmopOzhk")
LONG = {"--no-same-permissions": "no_perms", "--no-same-owner": "", "--same-owner": "", "--same-permissions": "",
        "--verbose": "v", "--extract": "x", "--create": "c", "--list": "t", "--gzip": "z", "--to-stdout": "O"}
USAGE = ("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\n"
         "Usage: tar c|x|t [-ZzJjahmvokO] [-f TARFILE] [-C DIR] [-T FILE] [-X FILE] [LONGOPT]... [FILE]...\n")


class TarUsage(Exception):
    """Bad options: the message (may be empty) and busybox's usage."""


@dataclass
class Options:
    letters: set[str] = field(default_factory=set)
    archive: str = "-"
    directory: str = ""
    operands: list[str] = field(default_factory=list)
    no_perms: bool = False

    @property
    def mode(self) -> str:
        return next(m for m in "cxt" if m in self.letters)


def parse_args(args: list[str]) -> Options:
    """busybox tar's command line; TarUsage when it is not one."""
    words = list(args)
    if words and not words[0].startswith("-"):
        words[0] = "-" + words[0]  # the old style: `tar cf - x` is `tar -cf - x`
    options, index = Options(), 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            options.operands += words[index:]
            break
        if word.startswith("--"):
            name, _, value = word.partition("=")
            if name in ("--directory", "--file"):
                if not value and index < len(words):
                    value, index = words[index], index + 1
                setattr(options, "directory" if name == "--directory" else "archive", value)
            elif name in LONG:
                if LONG[name] == "no_perms":
                    options.no_perms = True
                elif LONG[name]:
                    options.letters.add(LONG[name])
            else:
                raise TarUsage(f"tar: unrecognized option '{word}'\n")
            continue
        if not word.startswith("-") or word == "-":
            options.operands.append(word)
            continue
        for position, letter in enumerate(word[1:], start=1):
            if letter not in LETTERS:
                raise TarUsage(f"tar: invalid option -- '{letter}'\n")
            if letter in WITH_VALUE:
                value = word[position + 1:]
                if not value:
                    if index >= len(words):
                        raise TarUsage(f"tar: option requires an argument -- '{letter}'\n")
                    value, index = words[index], index + 1
                if letter == "f":
                    options.archive = value
                elif letter == "C":
                    options.directory = value
                break  # the rest of the word was the value
            options.letters.add(letter)
    modes = options.letters & set("cxt")
    if len(modes) != 1:
        raise TarUsage("")
    return options


def reads_stdin(args: list[str]) -> bool:
    """Whether `tar ARGS` reads its archive from stdin (the exec session must hand it over)."""
    try:
        options = parse_args(args)
    except TarUsage:
        return False
    return options.mode in "xt" and options.archive == "-"


async def tar(shell: Shell, args: list[str], io: Streams) -> int:
    try:
        options = parse_args(args)
    except TarUsage as bad:
        io.err(str(bad).encode() + USAGE.encode())
        return 1
    base = shell.cwd
    if options.directory:
        base = shell.fs.resolve(shell.cwd, options.directory)
        if not shell.fs.is_dir(base):
            reason = "Not a directory" if shell.fs.is_file(base) else "No such file or directory"
            io.err(f"tar: can't change directory to '{options.directory}': {reason}\n".encode())
            return 1
    if options.mode == "c":
        return _create(shell, options, base, io)
    return _unpack(shell, options, base, io)


# --- create ----------------------------------------------------------------------------------------

def _create(shell: Shell, options: Options, base: str, io: Streams) -> int:
    if not options.operands:
        io.err(b"tar: empty archive\n")
        return 1
    buffer = bytes_io.BytesIO()
    status, warned = 0, False
    # verbose names go to stderr when the archive itself is on stdout
    listing = io.err if options.archive == "-" else io.out
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for operand in options.operands:
            path = shell.fs.resolve(base, operand)
            if not shell.fs.exists(path):
                io.err(f"tar: {operand}: No such file or directory\n".encode())
                status = 1
                continue
            name = operand.rstrip("/") or operand
            if name.startswith("/"):
                if not warned:
                    io.err(b"tar: removing leading '/' from member names\n")
                    warned = True
                name = name.lstrip("/") or "."
            for member, data in _members(shell, path, name):
                archive.addfile(member, bytes_io.BytesIO(data) if data is not None else None)
                if "v" in options.letters:
                    listing((member.name + ("/" if member.isdir() else "") + "\n").encode())
    raw = buffer.getvalue()
    if "z" in options.letters:
        raw = gzip.compress(raw, mtime=int(shell.clock.now()))
    if options.archive == "-":
        io.out(raw)
    else:
        shell.fs.write(shell.fs.resolve(shell.cwd, options.archive), raw)  # FsError: the shell says it
    if status:
        io.err(b"tar: error exit delayed from previous errors\n")
    return status


def _members(shell: Shell, path: str, name: str) -> Iterator[tuple[tarfile.TarInfo, bytes | None]]:
    """(TarInfo, bytes or None) for `path` and, for a directory, everything under it."""
    info = tarfile.TarInfo(name)
    info.mode, info.mtime = shell.fs.mode(path), int(shell.clock.now())
    info.uname = info.gname = "root"
    if shell.fs.is_dir(path):
        info.type = tarfile.DIRTYPE
        yield info, None
        for child in shell.fs.list_dir(path):
            yield from _members(shell, posixpath.join(path, child), posixpath.join(name, child))
        return
    data = shell.fs.read(path)
    info.size = len(data)
    yield info, data


# --- extract and list ------------------------------------------------------------------------------

def _read_archive(shell: Shell, options: Options, io: Streams) -> bytes:
    if options.archive == "-":
        return io.stdin
    return shell.fs.read(shell.fs.resolve(shell.cwd, options.archive))


def _unpack(shell: Shell, options: Options, base: str, io: Streams) -> int:
    try:
        raw = _read_archive(shell, options, io)
    except FsError as exc:
        io.err(f"tar: can't open '{options.archive}': {exc}\n".encode())
        return 1
    if not raw:
        return 0  # busybox: no header at all is the end of an (empty) archive
    if "z" in options.letters:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            io.err(b"tar: invalid gzip magic\n")
            return 1
    try:
        with tarfile.open(fileobj=bytes_io.BytesIO(raw), mode="r:") as archive:
            for member in archive:
                if not _one(shell, options, base, archive, member, io):
                    return 1
    except tarfile.ReadError as exc:
        io.err(b"tar: short read\n" if "unexpected end" in str(exc) or "truncated" in str(exc)
               else b"tar: invalid tar magic\n")
        return 1
    return 0


def _listed(member: tarfile.TarInfo, verbose: bool) -> str:
    name = member.name + ("/" if member.isdir() and not member.name.endswith("/") else "")
    if not verbose:
        return name + "\n"
    kind = "d" if member.isdir() else "l" if member.issym() else "-"
    rwx = "".join(c if member.mode & (1 << (8 - i)) else "-" for i, c in enumerate("rwxrwxrwx"))
    owner = f"{member.uname or member.uid}/{member.gname or member.gid}"
    stamp = datetime.datetime.fromtimestamp(member.mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return f"{kind}{rwx} {owner:<16}{member.size:>9} {stamp} {name}\n"


def _one(shell: Shell, options: Options, base: str, archive: tarfile.TarFile, member: tarfile.TarInfo,
         io: Streams) -> bool:
    """List or extract one member; False after reporting a failure that ends the run."""
    verbose = "v" in options.letters
    if options.mode == "t":
        io.out(_listed(member, verbose).encode())
        return True
    if "O" in options.letters:
        if member.isfile():
            io.out(archive.extractfile(member).read())
        return True
    if verbose:
        io.out(_listed(member, False).encode())
    name = member.name.lstrip("/")
    path = shell.fs.resolve(base, name)
    try:
        if member.isdir():
            shell.fs.make_dir(path, parents=True)
        elif member.isfile() or member.islnk():  # a hard link is a copy of its target's bytes here
            shell.fs.make_dir(posixpath.dirname(path), parents=True)
            shell.fs.write(path, archive.extractfile(member).read())
        else:  # symbolic links and devices: this filesystem has only files and directories
            io.err(f"tar: {name}: only files and directories are simulated, skipped\n".encode())
            return True
    except FsError as exc:
        verb = "can't create directory" if member.isdir() else "can't open"
        io.err(f"tar: {verb} '{name}': {exc}\n".encode())
        return False
    if not options.no_perms:
        try:
            shell.fs.chmod(path, member.mode & 0o7777)
        except FsError:
            pass  # a mode the volume cannot keep is not worth failing the copy for
    return True
