"""The data folder is its owner's alone, from the moment each thing in it exists.

The folder holds the SQLite database (session rows with users' tokens, every Secret), the token
file, the keys and the attendees' kubeconfigs: nothing in it is for another local user.

Guarantees:
- `prepare(folder)` makes the folder (and its missing parents) with mode 0700 — created so, not
  chmod-ed afterwards. A folder that already exists with group or other bits, and any file in it or
  in its private subfolders (`PRIVATE_SUBFOLDERS`) with such bits, is tightened to owner-only, and
  one warning per path names it with its old and new mode (stderr / the `control` log). Public
  certificates (`*.crt`) are left readable, as upstream leaves ca.crt; the kubelet's state
  (`kubelet/`, the pods' volumes with their own modes) is not walked.
- `private_file(path)` makes an empty file 0600 when none is there (os.open with that mode and
  O_EXCL, so it is never looser, whatever the umask); an existing file is left as it is, unopened.
- `replace_file(path, content, mode=0600)` puts `content` at `path` as a new file made beside it
  with `mode` and renamed over it: a reader sees the old file or the new one, never half of one,
  and an older, looser file is replaced, not reused (its folder is made 0700 when missing).
- `PrivateSQLiteConnection` is the `factory` the settings give sqlite3: it makes the database file
  0600 before SQLite opens it; SQLite gives the -wal, -shm and -journal files it makes the
  database file's permissions (os_unix.c findCreateFileMode), so they are 0600 from the start too.
  Test databases (settings `TEST.NAME`) are opened the same way.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FOLDER_MODE = 0o700
FILE_MODE = 0o600
LOOSE_BITS = 0o077  # any permission for the group or others
PRIVATE_SUBFOLDERS = ("keys", "workshop")  # the keys; the attendees' kubeconfigs and login codes
PUBLIC_SUFFIXES = (".crt",)


def _tighten(path: Path, what: str) -> None:
    """Drop the group and other bits of `path` when it has any, saying so once."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)  # a data folder given as a symlink: its target's
    except FileNotFoundError:
        return
    if mode & LOOSE_BITS:
        tight = mode & ~LOOSE_BITS
        os.chmod(path, tight)
        log.warning("the %s %s was %s (open to other users); it is now %s", what, path, oct(mode), oct(tight))


def prepare(folder: Path) -> Path:
    """Make the data folder owner-only (0700) or tighten an existing one and the files in it."""
    folder = Path(folder)
    if not folder.is_dir():
        return private_folder(folder)
    _tighten(folder, "data folder")
    for place in (folder, *(folder / name for name in PRIVATE_SUBFOLDERS)):
        if place is not folder:
            if not place.is_dir() or place.is_symlink():
                continue
            _tighten(place, "folder")
        for entry in place.iterdir():
            if entry.is_symlink() or not entry.is_file() or entry.name.endswith(PUBLIC_SUFFIXES):
                continue
            _tighten(entry, "file")
    return folder


def private_folder(folder: Path) -> Path:
    """`folder`, made 0700 with each missing parent when missing (an existing one is left as it is)."""
    folder = Path(folder)
    for place in (*reversed(folder.parents), folder):
        try:
            place.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            pass
    return folder


def private_file(path: Path) -> None:
    """Make `path` an empty 0600 file unless something is there already.

    An existing file is never opened: closing any descriptor of a file drops every POSIX lock this
    process holds on it, and SQLite's locks on an open database are such locks (another process
    would then checkpoint and remove the WAL under our connections: "disk I/O error")."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


def written_aside(path: Path, content: bytes, mode: int = FILE_MODE) -> Path:
    """`content` in a new file beside `path` (a name of this process and thread), `mode` from its
    creation; `path`'s folder made 0700 when missing. The caller renames or links it into place."""
    path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)
    return aside


def replace_file(path: Path, content: bytes, mode: int = FILE_MODE) -> Path:
    os.replace(written_aside(path, content, mode), path)
    return path


def _on_disk(database: Any) -> Path | None:
    """The file a sqlite3 `database` argument names, None for memory databases and URIs."""
    name = os.fspath(database) if isinstance(database, (str, bytes, os.PathLike)) else ""
    name = name.decode() if isinstance(name, bytes) else name
    if not name or name == ":memory:" or name.startswith("file:"):
        return None
    return Path(name)


class PrivateSQLiteConnection(sqlite3.Connection):
    """A sqlite3 connection whose database file, when SQLite would create it, is made 0600 first."""

    def __init__(self, database: Any, *args: Any, **kwargs: Any) -> None:
        path = _on_disk(database)
        if path is not None and path.parent.is_dir():
            private_file(path)
        super().__init__(database, *args, **kwargs)
