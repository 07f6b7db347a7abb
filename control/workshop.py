"""A workshop's attendees, provisioned on a running hub over HTTP, and the codes that log a browser
in, kept in the data folder.

Guarantees:
- `provision(url, data, names)` gives each attendee, idempotently (run it again and nothing changes,
  nothing fails): a namespace of their name; a user of their name in the token file (group
  `ATTENDEES`); a RoleBinding `workshop-admin` to the ClusterRole `admin` in their namespace; a view
  of the cluster's nodes (get/list/watch, the ClusterRole and ClusterRoleBinding `NODES_VIEW`, bound
  to the group); a ResourceQuota and a LimitRange `workshop` in their namespace, sized for a laptop
  (`ATTENDEE_QUOTA`, `ATTENDEE_LIMITS`: the 11th pod is refused, a container without resources gets
  the defaults);
  a kubeconfig `<data>/workshop/<name>.kubeconfig` (owner-only) whose context's namespace is theirs,
  over the hub's HTTPS address when it has one (for a hub listening on every address, the machine's
  primary address: 0.0.0.0 names no machine on an attendee's laptop); and a join code. An object
  that already exists is left as it is (an instructor's edits survive); a refusal of the hub raises
  `WorkshopError` with its message.
- `attendee_names(count=N)` is attendee-1..attendee-N; `read_names(text)` one name a line (blank lines
  and `#` comments skipped); a name that cannot be a namespace (DNS-1123 label) is refused by name.
- Join codes live in `<data>/workshop/codes.csv` (owner-only, lines `code,user,use`): an attendee's
  code (`use` = "join") is made once and kept, so running the provisioning again gives the same code;
  an instructor's code (`use` = "once") is new at every call of `instructor_code` and works once:
  `redeem` removes it.
- Codes are `CODE_LENGTH` characters of an alphabet without look-alikes (no 0/O, 1/I/L), read
  case-insensitively, spaces and dashes ignored; `redeem` of an unknown code is None, never an error.
- `redeem` answers the user and their token from the token file (`control.auth.tokenfile`), so a
  code is worth exactly what that user's token is worth, and RBAC applies to it. Codes are compared
  in constant time (`hmac.compare_digest`, every stored code compared, no early exit), so timing
  says nothing about how much of a guess was right. `peek` says whom a code stands for without
  using it up.
- A name is claimed once: `claim(data, name)` is True for exactly one caller, also among several hub
  processes sharing the data folder (an exclusive create of `<data>/workshop/claims/<name>`: the
  file system decides the race); later callers get False until `release(data, name)` (the
  instructor's). `claimed(data)` lists the claimed names. The claims survive restarts.
"""

from __future__ import annotations

import csv
import hmac
import io
import ipaddress
import os
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import httpx
import yaml

from control.auth import tokenfile

FOLDER = "workshop"
CODES = "codes.csv"
CLAIMS = "claims"
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
JOIN, ONCE = "join", "once"
_lock = threading.Lock()
ATTENDEES = "kubekitchen:attendees"
NODES_VIEW = "kubekitchen:workshop-nodes-view"
LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
RBAC = "/apis/rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"


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
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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
    if not normalized(code):
        return None
    with _lock:
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
    folder.mkdir(parents=True, exist_ok=True)
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


class WorkshopError(RuntimeError):
    """A name that cannot be an attendee's, or the hub refused an object."""


def attendee_names(count: int) -> list[str]:
    if count < 1:
        raise WorkshopError("--attendees must be at least 1")
    return [f"attendee-{n}" for n in range(1, count + 1)]


def read_names(text: str) -> list[str]:
    names = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    names = list(dict.fromkeys(name for name in names if name))
    bad = [name for name in names if not LABEL.match(name) or name.startswith(("kube-", "system"))]
    if bad:
        raise WorkshopError(f"not a valid attendee name (a DNS-1123 label, not kube-* or system*): {', '.join(bad)}")
    if not names:
        raise WorkshopError("the attendees file names no one")
    return names


Api = Callable[[str, str, dict[str, Any] | None], httpx.Response]
# What one attendee may use: enough for every lesson (the largest runs 10 pods), small enough that
# thirty attendees' runaway Deployments cannot fill the hub.
ATTENDEE_QUOTA = {"pods": "10", "services": "10", "persistentvolumeclaims": "5", "configmaps": "20",
                  "secrets": "20", "requests.cpu": "4", "requests.memory": "4Gi", "limits.cpu": "8",
                  "limits.memory": "8Gi"}
# A container that says nothing gets these (so the quota's cpu/memory can count it); none may ask for
# more than a small laptop's share.
ATTENDEE_LIMITS = {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                   "defaultRequest": {"cpu": "100m", "memory": "64Mi"}, "max": {"cpu": "2", "memory": "2Gi"}}


def _binding(kind: str, name: str, namespace: str, role_kind: str, role: str, subject: dict[str, str]) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role}, "subjects": [subject]}


def cluster_objects() -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) the whole workshop shares: the view of the nodes, for the group."""
    role = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": NODES_VIEW},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]}
    binding = _binding("ClusterRoleBinding", NODES_VIEW, "", "ClusterRole", NODES_VIEW,
                       {"apiGroup": RBAC_GROUP, "kind": "Group", "name": ATTENDEES})
    return [(f"{RBAC}/clusterroles", role), (f"{RBAC}/clusterrolebindings", binding)]


def attendee_objects(name: str) -> list[tuple[str, dict[str, Any]]]:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    binding = _binding("RoleBinding", "workshop-admin", name, "ClusterRole", "admin",
                       {"apiGroup": RBAC_GROUP, "kind": "User", "name": name})
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "workshop", "namespace": name},
             "spec": {"hard": dict(ATTENDEE_QUOTA)}}
    limits = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "workshop", "namespace": name},
              "spec": {"limits": [dict(ATTENDEE_LIMITS)]}}
    # the LimitRange before the quota: a pod created in between must already get its defaults
    return [("/api/v1/namespaces", namespace), (f"{RBAC}/namespaces/{name}/rolebindings", binding),
            (f"/api/v1/namespaces/{name}/limitranges", limits), (f"/api/v1/namespaces/{name}/resourcequotas", quota)]


def _creator(client: httpx.Client) -> Callable[[str, dict[str, Any]], None]:
    def create(path: str, body: dict[str, Any]) -> None:
        answer = client.post(path, json=body)
        if answer.status_code == 409 and answer.json().get("reason") == "AlreadyExists":
            return  # provisioned before: left as it is
        if answer.status_code >= 300:
            try:
                message = answer.json().get("message") or answer.text
            except ValueError:
                message = answer.text
            raise WorkshopError(f"{body['kind']} {body['metadata']['name']}: {answer.status_code} {message}")
    return create


def write_kubeconfig(data: Path, name: str, server: str, token: str, ca_pem: bytes) -> Path:
    from control.management.commands.kubeconfig import kubeconfig  # the one kubeconfig shape

    target = folder_of(data) / f"{name}.kubeconfig"
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig(server, name, token, ca_pem), sort_keys=False)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    return target


def kubectl_server(data: Path, url: str) -> tuple[str, bytes]:
    """(server, CA) for an attendee's kubectl: the hub's HTTPS address when it has one (kubectl
    sends no token over plain HTTP)."""
    from control import keys
    from control.auth.serving import secure_url_for

    secure = secure_url_for(data, url)
    return (_reachable(secure), keys.ca_certificate(data)) if secure else (_reachable(url), b"")


def _reachable(url: str) -> str:
    """`url` with an unspecified host (0.0.0.0, ::: the hub listens on every address) replaced by
    the machine's primary address, which other machines can reach and the serving certificate names."""
    from urllib.parse import urlsplit

    from control.serving.hosts import machine_names

    parts = urlsplit(url)
    if parts.hostname not in ("0.0.0.0", "::"):
        return url
    for name in machine_names():
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            continue  # the machine's name: attendees' laptops may not resolve it
        return parts._replace(netloc=f"{address}:{parts.port}" if parts.port else str(address)).geturl()
    return url


def provision(url: str, data: Path, names: list[str], *, admin: str | None = None,
              transport: httpx.BaseTransport | None = None) -> dict[str, str]:
    """Provision every attendee (see the module's guarantees); {name: join code}."""
    try:
        return _provision(url, Path(data), names, admin, transport)
    except httpx.HTTPError as exc:
        raise WorkshopError(f"cannot reach the hub at {url}: {exc or type(exc).__name__}") from None


def _provision(url: str, data: Path, names: list[str], admin: str | None,
               transport: httpx.BaseTransport | None) -> dict[str, str]:
    admin = admin or tokenfile.admin_token(data)
    server, ca = kubectl_server(data, url)
    codes: dict[str, str] = {}
    with httpx.Client(base_url=url, headers={**tokenfile.bearer(admin), "User-Agent": "workshop (kube-kitchen)"},
                      transport=transport, timeout=30.0) as client:
        create = _creator(client)
        for path, body in cluster_objects():
            create(path, body)
        for name in names:
            for path, body in attendee_objects(name):
                create(path, body)
            token = tokenfile.token_of(data, name, (ATTENDEES,))
            write_kubeconfig(data, name, server, token, ca)
            codes[name] = join_code(data, name)
    return codes


def kubeconfig_of(data: Path, name: str) -> str | None:
    """An attendee's kubeconfig, as provisioned (None for a name that was not)."""
    if not LABEL.match(name):
        return None
    target = folder_of(data) / f"{name}.kubeconfig"
    return target.read_text() if target.exists() else None
