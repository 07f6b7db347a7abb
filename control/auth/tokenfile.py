"""The hub's static token file (kube-apiserver's `--token-auth-file` CSV: `token,user,uid,"g1,g2"`),
kept in the data folder as `tokens.csv`.

Guarantees:
- `ensure(folder)` writes the file on first start, owner-only (0600), with a random token for the
  cluster admin (`kubernetes-admin` in `system:masters`) and one for every spoke identity in
  `IDENTITIES`; an existing file is read, never rewritten, except that identities it lacks (a
  kubelet of a new node, `identity_for`) are appended;
- `parse` reads upstream's format (a header-less CSV; the fourth column optional; a line with
  fewer than three columns is an error naming its line; duplicate tokens: the last wins, as
  upstream warns and keeps the last);
- `admin_token(folder)` is the one helper tests, benches and `manage.py kubeconfig` use.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path

from control import config

FILE = "tokens.csv"
ADMIN = "kubernetes-admin"
MASTERS = "system:masters"
_lock = threading.Lock()


@dataclass(frozen=True)
class Entry:
    token: str
    user: str
    uid: str
    groups: tuple[str, ...] = field(default_factory=tuple)


# user name -> groups: the identities a fresh data folder gets a token for.
IDENTITIES: dict[str, tuple[str, ...]] = {
    ADMIN: (MASTERS,),
    "system:kube-controller-manager": (),
    "system:kube-scheduler": (),
    "system:kube-proxy": (),
    "system:ingress-controller": (),
    "system:serviceaccount:kube-system:line-cook": ("system:serviceaccounts", "system:serviceaccounts:kube-system"),
    "system:serviceaccount:kube-system:garnish-cook": ("system:serviceaccounts",
                                                       "system:serviceaccounts:kube-system"),
    "system:serviceaccount:kube-system:gateway-controller": ("system:serviceaccounts",
                                                             "system:serviceaccounts:kube-system"),
    "kubekitchen:dashboard": (),
    "kubekitchen:supervisor": (),
}
NODES_GROUP = "system:nodes"


def node_user(node: str) -> str:
    return f"system:node:{node}"


class TokenFileError(ValueError):
    """The file is not in the token-auth-file format."""


def parse(text: str) -> dict[str, Entry]:
    """token -> Entry, as upstream's tokenfile.NewCSV reads it."""
    out: dict[str, Entry] = {}
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) < 3:
            raise TokenFileError(f"token file is in the wrong format: line {number} has {len(row)} fields, "
                                 "want at least 3 (token,user,uid)")
        token, user, uid = (cell.strip() for cell in row[:3])
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        out[token] = Entry(token, user, uid, groups)
    return out


def format_entry(entry: Entry) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([entry.token, entry.user, entry.uid, *([",".join(entry.groups)] if entry.groups else [])])
    return buffer.getvalue()


def path(folder: Path) -> Path:
    return Path(folder) / FILE


def _new_entry(user: str, groups: tuple[str, ...]) -> Entry:
    return Entry(secrets.token_urlsafe(32), user, user, groups)


def _append(target: Path, entries: list[Entry]) -> None:
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the data folder: owner-only
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, "".join(format_entry(e) for e in entries).encode())
    finally:
        os.close(fd)


def ensure(folder: Path, extra: dict[str, tuple[str, ...]] | None = None) -> dict[str, Entry]:
    """The file's entries, after adding a token for each identity (and `extra` one) it lacks."""
    target = path(folder)
    with _lock:
        entries = parse(target.read_text()) if target.exists() else {}
        users = {e.user for e in entries.values()}
        missing = [_new_entry(user, groups) for user, groups in {**IDENTITIES, **(extra or {})}.items()
                   if user not in users]
        if missing:
            _append(target, missing)
            entries.update({e.token: e for e in missing})
        return entries


def token_of(folder: Path, user: str, groups: tuple[str, ...] = ()) -> str:
    """The token of `user` in the folder's file (made and appended when missing)."""
    for entry in ensure(folder, {user: groups}).values():
        if entry.user == user:
            return entry.token
    raise TokenFileError(f"no token for {user}")  # pragma: no cover - ensure() just added it


def admin_token(folder: Path) -> str:
    """The cluster admin's token of the hub whose data folder is `folder`."""
    return token_of(folder, ADMIN, (MASTERS,))


def identity_for(component: str, node: str | None = None) -> tuple[str, tuple[str, ...]]:
    """(user, groups) a spoke runs as: its real counterpart's identity."""
    if component == "kubelet":
        return node_user(node or "node-1"), (NODES_GROUP,)
    users = {"controller-manager": "system:kube-controller-manager", "scheduler": "system:kube-scheduler",
             "kube-proxy": "system:kube-proxy", "ingress-controller": "system:ingress-controller",
             "line-cook": "system:serviceaccount:kube-system:line-cook",
             "garnish-cook": "system:serviceaccount:kube-system:garnish-cook",
             "gateway-controller": "system:serviceaccount:kube-system:gateway-controller",
             "dashboard": "kubekitchen:dashboard", "supervisor": "kubekitchen:supervisor"}
    user = users[component]
    return user, IDENTITIES.get(user, ())


def spoke_token(folder: Path, component: str, node: str | None = None) -> str:
    user, groups = identity_for(component, node)
    return token_of(folder, user, groups)


def operator_token(folder: Path) -> str:
    """The token a command run by the cluster's operator uses: `KK_TOKEN` when set, else the admin's."""
    return config.given("KK_TOKEN") or admin_token(folder)


def bearer(token: str) -> dict[str, str]:
    """The request header that carries `token` ({} for none)."""
    return {"Authorization": f"Bearer {token}"} if token else {}
