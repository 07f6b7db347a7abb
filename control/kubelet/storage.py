"""Where a container's files are kept: in memory (`MemoryTree`: the container's own layer, an
emptyDir, a projected ConfigMap/Secret/downward API volume) or on the kubelet's disk (`DiskTree`:
a persistentVolumeClaim's volume, `<data>/volumes/<pv name>/`).

Guarantees:
- Both speak the same small interface over paths relative to their root, always "/"-rooted and
  normalised by the caller (`Filesystem.resolve`); errors are `FsError` with strerror's wording.
- `DiskTree` never touches anything outside its root: its root's name is checked (`safe_name`),
  every path is re-normalised and refused when it climbs out (`..`), and the real path (symlinks
  resolved) must stay under the real root. A file grows to at most MAX_FILE_BYTES.
- `MemoryTree.replace` swaps a projected volume's whole content at once (the kubelet's atomic
  writer): a reader sees the old files or the new ones, never a mix.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from control.userland.files import FsError

NO_SUCH = "No such file or directory"
MAX_FILE_BYTES = 8 * 1024 * 1024
FILE_MODE, DIR_MODE = 0o644, 0o755
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")  # a DNS subdomain, as PV names are


def safe_name(name: str) -> bool:
    """A name that may become one directory on the kubelet's disk (no `/`, no `..`, not empty)."""
    return len(name) <= 253 and bool(_NAME.match(name)) and ".." not in name


def normal(path: str) -> str:
    """A path relative to a tree's root, "/"-rooted and without `.`/`..` (never above the root)."""
    joined = posixpath.normpath("/" + path.lstrip("/"))
    return "/" + joined.lstrip("/")


def relative_to(path: str, root: str) -> str | None:
    """`path` inside the directory `root` ("/" for root itself), or None when it is not inside."""
    if root == "/":
        return path
    if path == root:
        return "/"
    return path[len(root):] if path.startswith(root + "/") else None


@dataclass
class MemoryTree:
    files: dict[str, bytes] = field(default_factory=dict)
    directories: set[str] = field(default_factory=lambda: {"/"})
    modes: dict[str, int] = field(default_factory=dict)

    def kind(self, path: str) -> str | None:
        return "dir" if path in self.directories else "file" if path in self.files else None

    def mode(self, path: str) -> int:
        return self.modes.get(path, DIR_MODE if path in self.directories else FILE_MODE)

    def size(self, path: str) -> int:
        return len(self.files.get(path, b""))

    def _parent_must_exist(self, path: str) -> None:
        parent = posixpath.dirname(path)
        if parent not in self.directories:
            raise FsError(NO_SUCH if parent not in self.files else "Not a directory")

    def read(self, path: str) -> bytes:
        if path in self.directories:
            raise FsError("Is a directory")
        if path not in self.files:
            raise FsError(NO_SUCH)
        return self.files[path]

    def write(self, path: str, data: bytes, *, append: bool = False) -> None:
        if path in self.directories:
            raise FsError("Is a directory")
        self._parent_must_exist(path)
        content = (self.files.get(path, b"") + data) if append else data
        if len(content) > MAX_FILE_BYTES:
            raise FsError("File too large")
        self.files[path] = content

    def remove(self, path: str, *, recursive: bool = False) -> None:
        if path in self.files:
            del self.files[path]
            self.modes.pop(path, None)
            return
        if path not in self.directories:
            raise FsError(NO_SUCH)
        if not recursive:
            raise FsError("Is a directory")
        if path == "/":
            raise FsError("Device or resource busy")
        inside = path + "/"
        self.directories = {d for d in self.directories if d != path and not d.startswith(inside)}
        self.files = {f: data for f, data in self.files.items() if not f.startswith(inside)}

    def make_dir(self, path: str, *, parents: bool = False) -> None:
        if parents:
            current = ""
            for part in [p for p in path.split("/") if p]:
                current += "/" + part
                if current in self.files:
                    raise FsError("Not a directory")
                self.directories.add(current)
            return
        if self.kind(path):
            raise FsError("File exists")
        self._parent_must_exist(path)
        self.directories.add(path)

    def chmod(self, path: str, mode: int) -> None:
        if self.kind(path) is None:
            raise FsError(NO_SUCH)
        self.modes[path] = mode & 0o7777

    def list_dir(self, path: str) -> list[str]:
        if path not in self.directories:
            raise FsError(NO_SUCH if path not in self.files else "Not a directory")
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):] for p in (*self.directories, *self.files)
                 if p.startswith(prefix) and p != path and "/" not in p[len(prefix):]}
        return sorted(names)

    def replace(self, contents: dict[str, tuple[bytes, int]]) -> bool:
        """Make the tree hold exactly `contents` (path -> (bytes, mode)); whether anything changed."""
        files = {normal(p): data for p, (data, _) in contents.items()}
        modes = {normal(p): mode for p, (_, mode) in contents.items()}
        directories = {"/"}
        for path in files:
            parent = posixpath.dirname(path)
            while parent not in directories:
                directories.add(parent)
                parent = posixpath.dirname(parent)
        if files == self.files and modes == self.modes and directories == self.directories:
            return False
        self.files, self.modes, self.directories = files, modes, directories
        return True

    def copy(self, root: str = "/") -> MemoryTree:
        """A snapshot of the subtree at `root` (a subPath mount of a projected volume)."""
        out = MemoryTree()
        for path, data in self.files.items():
            inside = relative_to(path, root)
            if inside is not None and inside != "/":
                out.files[inside], out.modes[inside] = data, self.mode(path)
        out.directories |= {d for path in self.directories if (d := relative_to(path, root)) is not None}
        return out


class DiskTree:
    """A directory on the kubelet's disk, used as a volume."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.real_root = os.path.realpath(self.root)

    def _at(self, path: str) -> str:
        if normal(path) != path:  # `..` or `.` left in: the caller did not normalise; refuse
            raise FsError("Permission denied")
        real = os.path.realpath(os.path.join(self.real_root, path.lstrip("/")))
        if real != self.real_root and not real.startswith(self.real_root + os.sep):
            raise FsError("Permission denied")  # a symlink pointing out of the volume
        return real

    def kind(self, path: str) -> str | None:
        at = self._at(path)
        return "dir" if os.path.isdir(at) else "file" if os.path.isfile(at) else None

    def mode(self, path: str) -> int:
        try:
            return stat.S_IMODE(os.stat(self._at(path)).st_mode)
        except OSError:
            return FILE_MODE

    def size(self, path: str) -> int:
        try:
            return os.path.getsize(self._at(path))
        except OSError:
            return 0

    def read(self, path: str) -> bytes:
        at = self._at(path)
        if os.path.isdir(at):
            raise FsError("Is a directory")
        try:
            with open(at, "rb") as handle:
                return handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            raise FsError(NO_SUCH) from None

    def write(self, path: str, data: bytes, *, append: bool = False) -> None:
        at = self._at(path)
        if os.path.isdir(at):
            raise FsError("Is a directory")
        if not os.path.isdir(os.path.dirname(at)):
            raise FsError(NO_SUCH)
        if (os.path.getsize(at) if append and os.path.isfile(at) else 0) + len(data) > MAX_FILE_BYTES:
            raise FsError("File too large")
        with open(at, "ab" if append else "wb") as handle:
            handle.write(data)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        at = self._at(path)
        if os.path.isfile(at):
            os.remove(at)
        elif not os.path.isdir(at):
            raise FsError(NO_SUCH)
        elif not recursive:
            raise FsError("Is a directory")
        elif at == self.real_root:
            raise FsError("Device or resource busy")
        else:
            shutil.rmtree(at)

    def make_dir(self, path: str, *, parents: bool = False) -> None:
        at = self._at(path)
        try:
            if parents:
                os.makedirs(at, exist_ok=True)
            else:
                os.mkdir(at)
        except FileExistsError:
            raise FsError("File exists") from None
        except NotADirectoryError:
            raise FsError("Not a directory") from None
        except FileNotFoundError:
            raise FsError(NO_SUCH) from None

    def chmod(self, path: str, mode: int) -> None:
        try:
            os.chmod(self._at(path), mode & 0o7777)
        except OSError:
            raise FsError(NO_SUCH) from None

    def list_dir(self, path: str) -> list[str]:
        at = self._at(path)
        if not os.path.isdir(at):
            raise FsError(NO_SUCH if not os.path.exists(at) else "Not a directory")
        return sorted(os.listdir(at))
