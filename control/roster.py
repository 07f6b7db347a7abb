"""The workshop's roster in the data folder: who the attendees are, the codes that log a browser in,
the names taken on the join page, the attendees' kubeconfigs. The one contract between the hub's
side that writes it (`control.workshop.provision`, `runcluster --attendees`, the instructor's code
`runcluster` prints) and the dashboard that reads and uses it (the join page, the login form, the
instructor's board); neither side touches these files but through this module.

Why files and not an API: the dashboard is served by the hub's own process (`control.asgi` routes the
pages to it), so `settings.DATA_DIR` is the hub's data folder; an HTTP endpoint that turns a code
into a bearer token would be one more thing to guard, for no reader that lacks the folder. A
dashboard served apart from its hub (`KK_HUB_URL`) must be given the hub's data folder
(`KK_DATA_DIR`) for workshops; it reaches the cluster's objects over HTTP as before.

Guarantees:
- Layout, under `<data>/workshop/` (0700, owner-only as the whole data folder, `control.datafolder`):
  `codes.csv` lines `code,user,use` (no header); `claims/<name>` one empty file per claimed name;
  `<name>.kubeconfig` an attendee's kubeconfig; `codes.lock`, the writers' lock. Files are 0600.
- A reader never sees half a `codes.csv`: it is written to a temporary file and renamed over the old
  one (`os.replace`). Every change of it (a join code made, a one-time code made or used up) holds
  an exclusive lock, the process's and the file system's (`fcntl.flock` on `codes.lock`), so several
  hub processes sharing the folder lose no code, and a one-time code logs in exactly once.
- An attendee's code (`use` = "join") is made once and kept (provisioning again gives the same
  code); an instructor's code (`use` = "once") is new at every `instructor_code` and `redeem` uses
  it up. `attendee_codes` lists the attendees in the order they were provisioned.
- Codes are `CODE_LENGTH` characters of an alphabet without look-alikes (no 0/O, 1/I/L), read
  case-insensitively, spaces and dashes ignored; an unknown code is None, never an error. Codes are
  compared in constant time (`hmac.compare_digest`, every stored code compared, no early exit).
- `redeem` answers the user and their token from the token file (`control.auth.tokenfile`, which
  owns that file's format), so a code is worth exactly what that user's token is worth, and RBAC
  applies to it; `peek` says whom a code stands for without using it up.
- A name is claimed once: `claim(data, name)` is True for exactly one caller among any number of
  threads and processes (an exclusive create: the file system decides the race); later callers get
  False until `release(data, name)` (the instructor's). Claims survive restarts. A name that is not
  a DNS-1123 label is never claimed, released or looked up (no path escapes the folder).
"""

from __future__ import annotations

import csv
import fcntl
import hmac
import io
import os
import re
import secrets
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from control.auth import tokenfile
from control.datafolder import replace_file
from control.kubeconfig import kubeconfig, write_private

FOLDER = "workshop"
CODES = "codes.csv"
LOCK = "codes.lock"
CLAIMS = "claims"
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
JOIN, ONCE = "join", "once"
LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_lock = threading.Lock()  # flock is per open file: threads of one process need their own lock too


@dataclass(frozen=True)
class Code:
    code: str
    user: str
    use: str


def folder_of(data: Path) -> Path:
    return Path(data) / FOLDER


def _codes_path(data: Path) -> Path:
    return folder_of(data) / CODES


@contextmanager
def _exclusive(data: Path) -> Iterator[None]:
    """Hold the roster's write lock: this process's threads and every other process's."""
    folder = folder_of(data)
    with _lock:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock


def normalized(code: str) -> str:
    return "".join(ch for ch in (code or "").upper() if ch not in " -\t")


def _read(data: Path) -> list[Code]:
    target = _codes_path(data)
    if not target.exists():
        return []
    rows = csv.reader(io.StringIO(target.read_text()))
    return [Code(row[0], row[1], row[2]) for row in rows if len(row) >= 3]


def _write(data: Path, codes: list[Code]) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([c.code, c.user, c.use] for c in codes)
    replace_file(_codes_path(data), buffer.getvalue().encode())  # readers see the old file or the new one


def _new_code(taken: set[str]) -> str:
    while True:
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
        if code not in taken:
            return code


def join_code(data: Path, user: str) -> str:
    """The attendee's join code, made on first call and the same ever after."""
    with _exclusive(data):
        codes = _read(data)
        for code in codes:
            if code.user == user and code.use == JOIN:
                return code.code
        made = Code(_new_code({c.code for c in codes}), user, JOIN)
        _write(data, [*codes, made])
        return made.code


def instructor_code(data: Path, user: str = tokenfile.ADMIN) -> str:
    """A new code that logs one browser in as `user` (the cluster admin), once."""
    with _exclusive(data):
        codes = _read(data)
        made = Code(_new_code({c.code for c in codes}), user, ONCE)
        _write(data, [*codes, made])
        return made.code


def attendee_codes(data: Path) -> dict[str, str]:
    """{attendee: join code}, in the order they were provisioned."""
    return {c.user: c.code for c in _read(data) if c.use == JOIN}


def matching(codes: list[Code], code: str) -> Code | None:
    """The stored code equal to `code`, compared in constant time against every one."""
    wanted = normalized(code).encode()
    found = None
    for known in codes:
        if hmac.compare_digest(known.code.encode(), wanted) and wanted:
            found = known  # no early exit: every code costs the same comparison
    return found


def peek(data: Path, code: str) -> Code | None:
    """Whom `code` stands for (and its use), without using it up; None when unknown."""
    return matching(_read(data), code)


def redeem(data: Path, code: str, uses: tuple[str, ...] = (JOIN, ONCE)) -> tuple[str, str] | None:
    """(user, token) the code stands for, or None; a one-time code is used up. Only codes whose
    use is in `uses` count (the join page takes no instructor code)."""
    if not normalized(code) or not _codes_path(data).exists():
        return None
    with _exclusive(data):
        codes = _read(data)
        found = matching(codes, code)
        if found is None or found.use not in uses:
            return None
        if found.use == ONCE:
            _write(data, [c for c in codes if c is not found])
    for entry in tokenfile.ensure(data).values():
        if entry.user == found.user:
            return found.user, entry.token
    return None  # the token file lost that user: the code is worth nothing


def _claims(data: Path) -> Path:
    return folder_of(data) / CLAIMS


def claim(data: Path, name: str) -> bool:
    """True when this call claimed `name`; False when it was claimed already (or is no name)."""
    if not LABEL.match(name or ""):
        return False
    folder = _claims(data)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        # O_EXCL: of any number of threads or processes creating the file, exactly one succeeds
        os.close(os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return False
    return True


def release(data: Path, name: str) -> bool:
    """Free a claimed name (the instructor's decision); True when it was claimed."""
    if not LABEL.match(name or ""):
        return False
    try:
        (_claims(data) / name).unlink()
    except FileNotFoundError:
        return False
    return True


def claimed(data: Path) -> set[str]:
    folder = _claims(data)
    return {entry.name for entry in folder.iterdir() if LABEL.match(entry.name)} if folder.is_dir() else set()


def write_kubeconfig(data: Path, name: str, server: str, token: str, ca_pem: bytes) -> Path:
    """An attendee's kubeconfig (`control.kubeconfig`'s shape, their namespace), owner-only."""
    return write_private(folder_of(data) / f"{name}.kubeconfig", kubeconfig(server, name, token, ca_pem))


def kubeconfig_of(data: Path, name: str) -> str | None:
    """An attendee's kubeconfig, as provisioned (None for a name that was not)."""
    if not LABEL.match(name):
        return None
    target = folder_of(data) / f"{name}.kubeconfig"
    return target.read_text() if target.exists() else None
