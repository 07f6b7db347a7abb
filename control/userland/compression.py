"""busybox's `gzip`, `gunzip` and `zcat`, on the container's files or on stdin.

Guarantees: `gzip [-cdfk] [FILE...]` compresses each FILE into FILE.gz and removes FILE (`-k`
keeps it, `-c` writes to stdout instead); `-d` (and `gunzip`) decompresses FILE.gz into FILE;
`zcat` is `gunzip -c`. Without a FILE (or with `-`) it filters stdin to stdout. Errors are
busybox's: a missing file `gzip: FILE: No such file or directory`, data that is no gzip
`gunzip: invalid magic`, a FILE.gz that exists `gzip: can't open 'FILE.gz': File exists` (unless
`-f`), a name without `.gz` to decompress `gunzip: FILE: unknown suffix - ignored`; the status is 1
when any FILE failed.
"""

from __future__ import annotations

import gzip as gzip_format
import zlib
from typing import TYPE_CHECKING

from control.userland.files import FsError
from control.userland.streams import Streams

if TYPE_CHECKING:  # the shell imports the program table: only its type here
    from control.userland.shell import Shell


def _unpack(data: bytes) -> bytes | None:
    try:
        return gzip_format.decompress(data)
    except (OSError, EOFError, zlib.error):
        return None


def _pack(data: bytes) -> bytes:
    return gzip_format.compress(data, mtime=0)


async def _run(shell: Shell, name: str, args: list[str], io: Streams, decompress: bool, to_stdout: bool) -> int:
    flags = {c for a in args if a.startswith("-") and len(a) > 1 for c in a[1:]}
    unknown = flags - set("cdfkn9123456789")
    if unknown:
        io.err(f"{name}: invalid option -- '{sorted(unknown)[0]}'\n".encode())
        return 1
    decompress, to_stdout = decompress or "d" in flags, to_stdout or "c" in flags
    files = [a for a in args if not (a.startswith("-") and len(a) > 1)]
    if not files or files == ["-"]:
        data = _unpack(io.stdin) if decompress else _pack(io.stdin)
        if data is None:
            io.err(f"{name}: invalid magic\n".encode())
            return 1
        io.out(data)
        return 0
    status = 0
    for given in files:
        path = shell.fs.resolve(shell.cwd, given)
        if decompress and not given.endswith(".gz") and not to_stdout:
            io.err(f"{name}: {given}: unknown suffix - ignored\n".encode())
            status = 1
            continue
        try:
            data = shell.fs.read(path)
        except FsError as exc:
            io.err(f"{name}: {given}: {exc}\n".encode())
            status = 1
            continue
        result = _unpack(data) if decompress else _pack(data)
        if result is None:
            io.err(f"{name}: invalid magic\n".encode())
            status = 1
            continue
        if to_stdout:
            io.out(result)
            continue
        target = path[:-3] if decompress else path + ".gz"
        if shell.fs.exists(target) and "f" not in flags:
            io.err(f"{name}: can't open '{given[:-3] if decompress else given + '.gz'}': File exists\n".encode())
            status = 1
            continue
        try:
            shell.fs.write(target, result)
            if "k" not in flags:
                shell.fs.remove(path)
        except FsError as exc:
            io.err(f"{name}: {given}: {exc}\n".encode())
            status = 1
    return status


async def gzip(shell: Shell, args: list[str], io: Streams) -> int:
    return await _run(shell, "gzip", args, io, decompress=False, to_stdout=False)


async def gunzip(shell: Shell, args: list[str], io: Streams) -> int:
    return await _run(shell, "gunzip", args, io, decompress=True, to_stdout=False)


async def zcat(shell: Shell, args: list[str], io: Streams) -> int:
    return await _run(shell, "zcat", args, io, decompress=True, to_stdout=True)


def reads_stdin(args: list[str]) -> bool:
    """gzip, gunzip and zcat filter stdin when no FILE (or `-`) is given."""
    files = [a for a in args if not (a.startswith("-") and len(a) > 1)]
    return not files or files == ["-"]
