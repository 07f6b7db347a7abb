"""Client certificates as kube-apiserver's x509 authenticator reads them (--client-ca-file is the
cluster CA; apiserver/pkg/authentication/request/x509).

Guarantees:
- `certificate_user(chain, ca, now)` takes the chain a TLS client presented (PEM, leaf first, as
  ASGI's TLS extension gives `client_cert_chain`) and returns the user it names: CN the name, each
  O a group (`CommonNameUserConversion`), or None when the leaf has no CN (then the request is
  judged by its other credentials, as upstream's authenticator answers "not mine");
- the leaf must chain to the CA, directly or through CA certificates the client sent along, each
  signature verified; it must be valid at `now` (every certificate of the chain) and, when it names
  extended key usages, allow client authentication; otherwise `CertificateRejected` says why
  (upstream then answers 401 Unauthorized unless another credential authenticates the request);
- a chain is verified once per (chain, CA) and minute at most: `Verifier` keeps the last answers.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from control.auth.rbac import User

CLIENT_AUTH_OK = (ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE)


class CertificateRejected(ValueError):
    """A presented client certificate that does not verify (the message says why)."""


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False


def _issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        return False
    return True


def _check_times(chain: list[x509.Certificate], now: float) -> None:
    for cert in chain:
        if not cert.not_valid_before_utc.timestamp() <= now <= cert.not_valid_after_utc.timestamp():
            raise CertificateRejected("x509: certificate has expired or is not yet valid")


def _check_client_auth(leaf: x509.Certificate) -> None:
    try:
        usages = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return  # no extended key usage: any use (Go's Verify)
    if not any(usage in usages for usage in CLIENT_AUTH_OK):
        raise CertificateRejected("x509: certificate specifies an incompatible key usage")


def verified_leaf(chain_pem: list[str], ca: x509.Certificate, now: float) -> x509.Certificate:
    try:
        chain = [x509.load_pem_x509_certificate(pem.encode() if isinstance(pem, str) else pem) for pem in chain_pem]
    except ValueError:
        raise CertificateRejected("x509: malformed certificate") from None
    if not chain:
        raise CertificateRejected("no client certificate")
    leaf, intermediates = chain[0], [c for c in chain[1:] if _is_ca(c)]
    path, current = [leaf], leaf
    while not _issued_by(current, ca):
        step = next((c for c in intermediates if c not in path and _issued_by(current, c)), None)
        if step is None:
            raise CertificateRejected("x509: certificate signed by unknown authority")
        path.append(step)
        current = step
    _check_times([*path, ca], now)
    _check_client_auth(leaf)
    return leaf


def certificate_user(chain_pem: list[str], ca: x509.Certificate, now: float) -> User | None:
    return _user_of(verified_leaf(chain_pem, ca, now))


def _user_of(leaf: x509.Certificate) -> User | None:
    names = leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    name = str(names[0].value) if names else ""
    if not name:
        return None
    groups = tuple(str(a.value) for a in leaf.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return User(name, "", groups)


class Verifier:
    """`certificate_user` with the last answers kept (a client sends the same chain on every
    request): an answer is reused for at most TTL seconds, and a verified one never past its leaf's end."""

    SIZE, TTL = 256, 60.0

    def __init__(self) -> None:
        # (CA, chain) -> (checked at, usable until, the user or None, why it was rejected or "")
        self._answers: OrderedDict[tuple[bytes, tuple[str, ...]], tuple[float, float, User | None, str]] = OrderedDict()
        self._lock = threading.Lock()

    def user(self, chain_pem: list[str], ca: x509.Certificate, ca_der: bytes, now: float) -> User | None:
        key = (ca_der, tuple(chain_pem))
        with self._lock:
            held = self._answers.get(key)
        if held is None or not (now - held[0] < self.TTL and now <= held[1]):
            try:
                leaf = verified_leaf(chain_pem, ca, now)
                held = (now, leaf.not_valid_after_utc.timestamp(), _user_of(leaf), "")
            except CertificateRejected as bad:
                held = (now, now + self.TTL, None, str(bad))
            with self._lock:
                self._answers[key] = held
                self._answers.move_to_end(key)
                while len(self._answers) > self.SIZE:
                    self._answers.popitem(last=False)
        if held[3]:
            raise CertificateRejected(held[3])
        return held[2]
