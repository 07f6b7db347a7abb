"""Client certificates on the hub's HTTPS port, as kube-apiserver takes them: asked for, never
required (Go's tls.RequestClientCert with --client-ca-file), and handed to the x509 authenticator.

Guarantees:
- `tls_options(key, cert, ca)` serves the hub's certificate and asks every client for one of its
  own, naming the cluster CA as the acceptable issuer (so kubectl offers a certificate that CA
  signed); a client without one, or with one that does not verify, still completes the handshake:
  the authenticator judges the certificate (401 for a bad one with no other credential), as
  upstream does, rather than the TLS layer refusing the connection. ALPN (h2, http/1.1) is left
  to Twisted, as for the `ssl:` endpoint.
- `listen(server, host, port, options, backlog)` opens that port for a Daphne server once the reactor runs;
  a port that cannot be bound stops the server, as Daphne's own endpoints do.
- after `install()` (idempotent), every HTTP and WebSocket scope Daphne creates on a TLS
  connection whose client sent a certificate carries ASGI's `tls` extension with
  `client_cert_chain` (PEM strings, leaf first); HTTP/1.1 and HTTP/2 alike.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

from control.api.extensions import TLS

log = logging.getLogger(__name__)


def tls_options(key_path: Path, cert_path: Path, ca_path: Path) -> Any:
    from OpenSSL import SSL, crypto
    from twisted.internet import ssl

    class ClientCertificateOptions(ssl.CertificateOptions):
        def _makeContext(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - Twisted's name
            context = super()._makeContext(*args, **kwargs)
            # Ask, never require; accept whatever comes: the x509 authenticator verifies it.
            context.set_verify(SSL.VERIFY_PEER, lambda connection, cert, errno, depth, ok: True)
            context.load_client_ca(str(ca_path).encode())  # the issuers named in the CertificateRequest
            return context

    key = crypto.load_privatekey(crypto.FILETYPE_PEM, Path(key_path).read_bytes())
    chain = Path(cert_path).read_bytes()
    return ClientCertificateOptions(privateKey=key, certificate=crypto.load_certificate(crypto.FILETYPE_PEM, chain))


def listen(server: Any, host: str, port: int, options: Any, backlog: int = 50) -> None:
    """Listen on host:port with `options` for `server` (a daphne.server.Server) once its reactor runs."""
    from twisted.internet import reactor
    from twisted.internet.endpoints import SSL4ServerEndpoint

    def start() -> None:
        endpoint = SSL4ServerEndpoint(reactor, port, options, backlog=backlog, interface=host)
        listening = endpoint.listen(server.http_factory)
        listening.addCallback(server.listen_success)
        listening.addErrback(server.listen_error)
        server.listeners.append(listening)

    reactor.callWhenRunning(start)


def _tls_transport(protocol: Any) -> Any:
    """The TLS connection under a Daphne protocol: an HTTP/1.1 request's channel's, an HTTP/2
    stream's connection's, a WebSocket's own."""
    from twisted.internet.interfaces import ISSLTransport

    channel = getattr(protocol, "channel", None)
    for holder in (getattr(channel, "_conn", None), channel, protocol):
        transport = getattr(holder, "transport", None)
        # providedBy, not adaptation: a TLS transport provides the interface itself, and asking the
        # adapter registry about every plain-HTTP request's transport cost ~1 % of the hub's CPU
        if transport is not None and ISSLTransport.providedBy(transport):
            return transport
    return None


def client_chain(protocol: Any) -> list[str]:
    """The certificates the client presented on `protocol`'s connection (PEM, leaf first)."""
    from OpenSSL import crypto

    transport = _tls_transport(protocol)
    if transport is None:
        return []
    try:
        leaf = transport.getPeerCertificate()
    except Exception:  # noqa: BLE001 - a connection closing meanwhile has no peer to ask
        return []
    if leaf is None:
        return []
    chain = [leaf]
    connection = getattr(transport, "_tlsConnection", None)
    # On the server side OpenSSL's peer chain leaves out the leaf: what follows are intermediates.
    for extra in (connection.get_peer_cert_chain() if connection is not None else None) or []:
        if crypto.dump_certificate(crypto.FILETYPE_ASN1, extra) != crypto.dump_certificate(crypto.FILETYPE_ASN1, leaf):
            chain.append(extra)
    return [crypto.dump_certificate(crypto.FILETYPE_PEM, cert).decode() for cert in chain]


def with_tls_extension(protocol: Any, scope: dict[str, Any]) -> dict[str, Any]:
    """`scope` with ASGI's `tls` extension when `protocol`'s client presented a certificate."""
    chain = client_chain(protocol)  # none over plain HTTP: no TLS transport to ask
    if chain:
        scope.setdefault("extensions", {})[TLS] = {"client_cert_chain": chain, "server_cert": None,
                                                  "client_cert_name": None, "client_cert_error": None,
                                                  "tls_version": None, "cipher_suite": None}
    return scope


def install() -> None:
    from daphne import server

    if getattr(server.Server.create_application, "_kk_client_certs", False):
        return
    original = server.Server.create_application

    @functools.wraps(original)  # keeps the marks of the adjustments installed before (send_backlog's)
    def create_application(self: Any, protocol: Any, scope: dict[str, Any]) -> Any:
        return original(self, protocol, with_tls_extension(protocol, scope))

    create_application._kk_client_certs = True  # type: ignore[attr-defined]
    server.Server.create_application = create_application
