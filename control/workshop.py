"""A workshop's attendees and the codes that log a browser in, kept in the data folder.

Guarantees:
- Join codes live in `<data>/workshop/codes.csv` (owner-only, lines `code,user,use`): an attendee's
  code (`use` = "join") is made once and kept, so running the provisioning again gives the same code;
  an instructor's code (`use` = "once") is new at every call of `instructor_code` and works once:
  `redeem` removes it.
- Codes are `CODE_LENGTH` characters of an alphabet without look-alikes (no 0/O, 1/I/L), read
  case-insensitively, spaces and dashes ignored; `redeem` of an unknown code is None, never an error.
- `redeem` answers the user and their token from the token file (`control.auth.tokenfile`), so a
  code is worth exactly what that user's token is worth, and RBAC applies to it.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from control.auth import tokenfile

FOLDER = "workshop"
CODES = "codes.csv"
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
JOIN, ONCE = "join", "once"
_lock = threading.Lock()


@dataclass(frozen=True)
class Code:
    code: str
    user: str
    use: str


def folder_of(data: Path) -> Path:
    return Path(data) / FOLDER


def _codes_path(data: Path) -> Path:
    return folder_of(data) / CODES


def normalized(code: str) -> str:
    return "".join(ch for ch in (code or "").upper() if ch not in " -\t")


def _read(data: Path) -> list[Code]:
    target = _codes_path(data)
    if not target.exists():
        return []
    rows = csv.reader(io.StringIO(target.read_text()))
    return [Code(row[0], row[1], row[2]) for row in rows if len(row) >= 3]


def _write(data: Path, codes: list[Code]) -> None:
    target = _codes_path(data)
    target.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([c.code, c.user, c.use] for c in codes)
    temporary = target.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, buffer.getvalue().encode())
    finally:
        os.close(fd)
    os.replace(temporary, target)  # readers see the old file or the new one, never half of one


def _new_code(taken: set[str]) -> str:
    while True:
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
        if code not in taken:
            return code


def join_code(data: Path, user: str) -> str:
    """The attendee's join code, made on first call and the same ever after."""
    with _lock:
        codes = _read(data)
        for code in codes:
            if code.user == user and code.use == JOIN:
                return code.code
        made = Code(_new_code({c.code for c in codes}), user, JOIN)
        _write(data, [*codes, made])
        return made.code


def instructor_code(data: Path, user: str = tokenfile.ADMIN) -> str:
    """A new code that logs one browser in as `user` (the cluster admin), once."""
    with _lock:
        codes = _read(data)
        made = Code(_new_code({c.code for c in codes}), user, ONCE)
        _write(data, [*codes, made])
        return made.code


def attendee_codes(data: Path) -> dict[str, str]:
    """{attendee: join code}, in the order they were provisioned."""
    return {c.user: c.code for c in _read(data) if c.use == JOIN}


def redeem(data: Path, code: str) -> tuple[str, str] | None:
    """(user, token) the code stands for, or None; a one-time code is used up."""
    wanted = normalized(code)
    if not wanted:
        return None
    with _lock:
        codes = _read(data)
        found = next((c for c in codes if c.code == wanted), None)
        if found is None:
            return None
        if found.use == ONCE:
            _write(data, [c for c in codes if c is not found])
    for entry in tokenfile.ensure(data).values():
        if entry.user == found.user:
            return found.user, entry.token
    return None  # the token file lost that user: the code is worth nothing
