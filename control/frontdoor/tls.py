"""HTTPS at the front door: which certificate a TLS handshake gets, by the name it asks for (SNI).

Guarantees:
- `tls_table(ingresses)` (pure) maps each host an Ingress lists under `spec.tls[].hosts` to that
  entry's Secret (`namespace`, `secretName`); the oldest Ingress keeps a host two of them list.
- `secret_for(server_name, table)` (pure): the Secret of that exact host, else of the wildcard
  `*.<parent>` one level up, else None — the default certificate then answers, as ingress-nginx
  answers with its "Kubernetes Ingress Controller Fake Certificate".
- `redirected_hosts(ingresses)` (pure): the hosts whose plain-HTTP requests ingress-nginx answers
  with a 308 to HTTPS (its default `ssl-redirect`): those an Ingress lists under `spec.tls[].hosts`,
  unless that Ingress is annotated `nginx.ingress.kubernetes.io/ssl-redirect: "false"`.
- `fake_certificate()` makes that self-signed certificate (CN and SAN `ingress.local`, one year).
- `Certificates` turns a `kubernetes.io/tls` Secret's `tls.crt`/`tls.key` into an SSL context, once
  per Secret resourceVersion; a Secret that is missing, not TLS or unreadable gives the default
  context (the handshake still succeeds, with the fake certificate). The key material passes
  through a private (0700) temporary folder only for the moment `load_cert_chain` reads it.
- `Certificates.server_context()` is the listening socket's context: its SNI callback swaps in the
  chosen context before the handshake goes on.
"""

from __future__ import annotations

import base64
import datetime
import os
import ssl
import tempfile
from typing import Any, Callable, Iterable, Mapping

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from control.frontdoor.routing import _age_key

Obj = dict[str, Any]
FAKE_NAME = "Kubernetes Ingress Controller Fake Certificate"
TLS_TYPE = "kubernetes.io/tls"
SecretRef = tuple[str, str]  # (namespace, name)


def tls_table(ingresses: Iterable[Obj]) -> dict[str, SecretRef]:
    table: dict[str, SecretRef] = {}
    for ing in sorted(ingresses, key=_age_key):
        namespace = str((ing.get("metadata") or {}).get("namespace") or "default")
        for entry in (ing.get("spec") or {}).get("tls") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("secretName"), str):
                continue
            for host in entry.get("hosts") or []:
                if isinstance(host, str) and host:
                    table.setdefault(host.lower(), (namespace, entry["secretName"]))
    return table


SSL_REDIRECT = "nginx.ingress.kubernetes.io/ssl-redirect"


def redirected_hosts(ingresses: Iterable[Obj]) -> dict[str, SecretRef]:
    return tls_table(ing for ing in ingresses
                     if ((ing.get("metadata") or {}).get("annotations") or {}).get(SSL_REDIRECT) != "false")


def secret_for(server_name: str | None, table: Mapping[str, SecretRef]) -> SecretRef | None:
    if not server_name:
        return None
    name = server_name.lower().rstrip(".")
    if name in table:
        return table[name]
    if "." in name:
        return table.get("*." + name.split(".", 1)[1])
    return None


def fake_certificate(now: datetime.datetime | None = None) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) of the default certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = now or datetime.datetime.now(datetime.timezone.utc)
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme Co"),
                         x509.NameAttribute(NameOID.COMMON_NAME, FAKE_NAME)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("ingress.local")]), critical=False)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def context_from_pem(cert: bytes, key: bytes) -> ssl.SSLContext:
    """A server context for one certificate and key (ValueError/ssl.SSLError when they do not load)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory(prefix="kk-ingress-") as folder:
        os.chmod(folder, 0o700)
        cert_path, key_path = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
        for path, data in ((cert_path, cert), (key_path, key)):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
                handle.write(data)
        context.load_cert_chain(cert_path, key_path)
    return context


def pem_of(secret: Obj | None) -> tuple[bytes, bytes] | None:
    if not secret or secret.get("type") != TLS_TYPE:
        return None
    data = secret.get("data") or {}
    try:
        cert, key = base64.b64decode(data.get("tls.crt") or ""), base64.b64decode(data.get("tls.key") or "")
    except ValueError:
        return None
    return (cert, key) if cert and key else None


class Certificates:
    """SSL contexts by Secret, read through `secret(namespace, name)` (the informer's cache)."""

    def __init__(self, secret: Callable[[str, str], Obj | None], table: Callable[[], Mapping[str, SecretRef]]):
        self.secret, self.table = secret, table
        cert, key = fake_certificate()
        self.default = context_from_pem(cert, key)
        self.default_pem = cert
        self._contexts: dict[SecretRef, tuple[str, ssl.SSLContext]] = {}

    def context_for(self, server_name: str | None) -> ssl.SSLContext:
        ref = secret_for(server_name, self.table())
        if ref is None:
            return self.default
        secret = self.secret(*ref)
        version = str(((secret or {}).get("metadata") or {}).get("resourceVersion") or "")
        known = self._contexts.get(ref)
        if known is not None and known[0] == version:
            return known[1]
        pem = pem_of(secret)
        context = self.default
        if pem is not None:
            try:
                context = context_from_pem(*pem)
            except (ValueError, OSError, ssl.SSLError):
                context = self.default
        self._contexts[ref] = (version, context)
        return context

    def server_context(self) -> ssl.SSLContext:
        """The listening context: the default certificate (a client that sends no name gets it),
        and the SNI callback that swaps in the one a name asks for."""
        self.default.sni_callback = self._sni
        return self.default

    def _sni(self, sock: ssl.SSLObject, server_name: str | None, _context: ssl.SSLContext) -> None:
        sock.context = self.context_for(server_name)
        return None
