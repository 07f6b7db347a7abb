"""Who makes a request, as kube-apiserver's authenticator chain decides it: a client certificate
signed by the cluster CA (`control.auth.x509`), the static token file, then ServiceAccount tokens;
no credential at all is `system:anonymous`.

Guarantees:
- a verified client certificate is its user (CN, groups from O) and wins over a token, as
  upstream's x509 authenticator comes first; one that does not verify leaves the request to its
  token, and without one the request is refused (401), never made anonymous;
- a bearer token found in the token file is its user (uid, groups); a JWT the hub signed is the
  ServiceAccount `system:serviceaccount:NS:NAME` in `system:serviceaccounts` and
  `system:serviceaccounts:NS`, provided its signature, issuer, audience (one of the hub's),
  not-before and expiry (checked on the injected clock) hold and the ServiceAccount, and the Pod or
  Secret it is bound to, still exist with the uids the token names (upstream `validator.go`);
- any other token raises `Unauthorized` (401, message `Unauthorized`, as upstream's body);
- every authenticated user is also in `system:authenticated`; the anonymous user is
  `system:anonymous` in `system:unauthenticated`;
- the token file is re-read when it changes on disk (a new node's kubelet token), never per request:
  a token not in the memory copy has the file looked at again at once (a token added a moment ago
  works on its first request), a known one at most every `TokenFile.RECHECK` seconds (a token
  removed from the file stops working within that).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

import jwt

from control import errors, keys
from control.auth import tokenfile
from control.auth.rbac import User
from control.auth.x509 import CertificateRejected, Verifier
from control.clock import REAL, Clock
from control.kinds.tokens import AUDIENCES, ISSUER

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = User("system:anonymous", "", (UNAUTHENTICATED,))
MASTER = User("system:admin", "", ("system:masters", AUTHENTICATED))  # what every request is when auth is off

# (store resource, namespace, name) -> the stored object or None
Lookup = Callable[[str, str, str], "dict[str, Any] | None"]


def unauthorized() -> errors.Unauthorized:
    return errors.Unauthorized("Unauthorized")


class TokenFile:
    """The folder's token file, read again only when its modification time changes."""

    RECHECK = 1.0  # seconds a known token is trusted without looking at the file

    def __init__(self, folder: Path, clock: Clock = REAL):
        self.folder, self.clock = Path(folder), clock
        self._seen: tuple[float, int] | None = None
        self._entries: dict[str, tokenfile.Entry] = {}
        self._checked_at = float("-inf")
        self._lock = threading.Lock()

    def lookup(self, token: str) -> tokenfile.Entry | None:
        """The token's entry: from memory while the file was looked at within RECHECK seconds."""
        entry = self._entries.get(token)
        if entry is not None and self.clock.monotonic() - self._checked_at < self.RECHECK:
            return entry
        return self.entries().get(token)

    def entries(self) -> dict[str, tokenfile.Entry]:
        target = tokenfile.path(self.folder)
        with self._lock:
            self._checked_at = self.clock.monotonic()
            try:
                stat = target.stat()
            except FileNotFoundError:
                self._entries = tokenfile.ensure(self.folder)
                stat = target.stat()
            if self._seen != (stat.st_mtime, stat.st_size):
                self._entries = tokenfile.parse(target.read_text())
                self._seen = (stat.st_mtime, stat.st_size)
            return self._entries


def _with_authenticated(user: str, uid: str, groups: tuple[str, ...],
                        extra: dict[str, list[str]] | None = None) -> User:
    return User(user, uid, tuple(dict.fromkeys((*groups, AUTHENTICATED))), extra or {})


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2


def service_account_user(token: str, public_key: Any, lookup: Lookup, clock: Clock = REAL) -> User:
    """The ServiceAccount a hub-signed token stands for; Unauthorized when any check fails."""
    try:
        claims = jwt.decode(token, public_key, algorithms=[keys.algorithm(public_key)],
                            options={"verify_exp": False, "verify_nbf": False, "verify_iat": False,
                                     "verify_aud": False, "verify_iss": False})
    except jwt.PyJWTError:
        raise unauthorized() from None
    now = clock.now()
    audiences = claims.get("aud")
    audiences = [audiences] if isinstance(audiences, str) else audiences or []
    private = claims.get("kubernetes.io")
    if (claims.get("iss") != ISSUER or not set(audiences) & set(AUDIENCES) or not isinstance(private, dict)
            or not isinstance(claims.get("exp"), (int, float)) or claims["exp"] < now
            or (isinstance(claims.get("nbf"), (int, float)) and claims["nbf"] > now + 60)):
        raise unauthorized()
    namespace = private.get("namespace") or ""
    account = private.get("serviceaccount") or {}
    bound = [("/serviceaccounts", account)] + [(f"/{k}s", private[k]) for k in ("pod", "secret")
                                                if isinstance(private.get(k), dict)]
    for resource, ref in bound:
        stored = lookup(resource, namespace, ref.get("name") or "")
        if stored is None or (ref.get("uid") and stored["metadata"].get("uid") != ref.get("uid")):
            raise unauthorized()  # the bound object was deleted (or replaced): the token is dead
        if stored["metadata"].get("deletionTimestamp") and resource != "/serviceaccounts":
            raise unauthorized()
    name = account.get("name") or ""
    extra: dict[str, list[str]] = {}
    if isinstance(private.get("pod"), dict):
        extra = {"authentication.kubernetes.io/pod-name": [private["pod"].get("name", "")],
                 "authentication.kubernetes.io/pod-uid": [private["pod"].get("uid", "")]}
    return _with_authenticated(f"system:serviceaccount:{namespace}:{name}", account.get("uid") or "",
                               ("system:serviceaccounts", f"system:serviceaccounts:{namespace}"), extra)


def bearer_token(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer ...` header; None without one; "" for a malformed one."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None  # basic auth and others: no authenticator of ours takes them
    return token.strip()


class Authenticator:
    def __init__(self, folder: Path, clock: Clock = REAL):
        self.folder, self.clock = Path(folder), clock
        self.tokens = TokenFile(folder, clock)
        self._public_key: Any = None
        self._ca: tuple[Any, bytes] | None = None
        self.verifier = Verifier()

    def public_key(self) -> Any:
        if self._public_key is None:
            self._public_key = keys.signing_key(self.folder).public_key()
        return self._public_key

    def ca(self) -> tuple[Any, bytes]:
        """The cluster CA (the hub's --client-ca-file) and its DER bytes."""
        if self._ca is None:
            from cryptography import x509
            from cryptography.hazmat.primitives.serialization import Encoding

            cert = x509.load_pem_x509_certificate(keys.ca_certificate(self.folder))
            self._ca = (cert, cert.public_bytes(Encoding.DER))
        return self._ca

    def user(self, authorization: str, lookup: Lookup, client_chain: tuple[str, ...] = ()) -> User:
        rejected = False
        if client_chain:
            try:
                named = self.verifier.user(list(client_chain), *self.ca(), self.clock.now())
                if named is not None:
                    return _with_authenticated(named.name, named.uid, named.groups)
            except CertificateRejected:
                rejected = True
        token = bearer_token(authorization)
        if token is None:
            if rejected:
                raise unauthorized()
            return ANONYMOUS
        entry = self.tokens.lookup(token) if token else None
        if entry is not None:
            return _with_authenticated(entry.user, entry.uid, entry.groups)
        if token and looks_like_jwt(token):
            return service_account_user(token, self.public_key(), lookup, self.clock)
        raise unauthorized()


def user_info(user: User) -> dict[str, Any]:
    """authentication.k8s.io/v1 UserInfo."""
    info: dict[str, Any] = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    if user.groups:
        info["groups"] = list(user.groups)
    if user.extra:
        info["extra"] = {k: list(v) for k, v in user.extra.items()}
    return info
