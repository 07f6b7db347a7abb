"""The HTTPS port's client certificates reach the app: the TLS connection is found under an HTTP/1.1
request, an HTTP/2 stream and a WebSocket alike, its peer certificate (and intermediates, without
the leaf twice) becomes ASGI's `tls` extension, and a plain connection or a client without a
certificate adds nothing. The options ask for a certificate without requiring one."""

from __future__ import annotations

import datetime
import tempfile
from pathlib import Path
from types import SimpleNamespace

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from OpenSSL import SSL, crypto
from twisted.internet.interfaces import ISSLTransport
from zope.interface import implementer

from control import keys
from control.api.extensions import TLS, client_chain as scope_chain
from control.auth.serving import serving_files
from control.serving import client_certs


def certificate(cn: str) -> x509.Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))


@implementer(ISSLTransport)
class FakeTLS:
    def __init__(self, leaf, extra=()):
        self.leaf = crypto.X509.from_cryptography(leaf) if leaf is not None else None
        self._tlsConnection = SimpleNamespace(get_peer_cert_chain=lambda: [crypto.X509.from_cryptography(c)
                                                                           for c in extra])

    def getPeerCertificate(self):  # noqa: N802 - Twisted's name
        return self.leaf


LEAF, MIDDLE = certificate("bob"), certificate("middle")
PEM = LEAF.public_bytes(serialization.Encoding.PEM).decode()


def test_the_chain_is_found_under_http1_http2_and_websocket():
    tls = FakeTLS(LEAF, [LEAF, MIDDLE])  # OpenSSL may list the leaf again: it is not repeated
    http1 = SimpleNamespace(channel=SimpleNamespace(transport=tls))
    http2 = SimpleNamespace(channel=SimpleNamespace(_conn=SimpleNamespace(transport=tls), transport=None))
    websocket = SimpleNamespace(transport=tls)
    for protocol in (http1, http2, websocket):
        assert client_certs.client_chain(protocol) == [PEM, MIDDLE.public_bytes(serialization.Encoding.PEM).decode()]


def test_plain_http_and_a_client_without_a_certificate_give_nothing():
    assert client_certs.client_chain(SimpleNamespace(channel=SimpleNamespace(transport=object()))) == []
    assert client_certs.client_chain(SimpleNamespace(transport=FakeTLS(None))) == []


def test_the_scope_carries_asgis_tls_extension_and_install_wraps_daphne_once():
    from daphne import server

    scope = client_certs.with_tls_extension(SimpleNamespace(transport=FakeTLS(LEAF)), {"type": "http"})
    assert scope_chain(scope["extensions"]) == (PEM,) and scope["extensions"][TLS]["client_cert_chain"] == [PEM]
    assert client_certs.with_tls_extension(SimpleNamespace(transport=object()), {"type": "http"}) == {"type": "http"}
    client_certs.install()
    wrapped = server.Server.create_application
    client_certs.install()
    assert server.Server.create_application is wrapped and wrapped._kk_client_certs


def test_the_options_ask_for_a_certificate_of_the_cluster_ca_without_requiring_one():
    folder = Path(tempfile.mkdtemp(prefix="kk-tls-"))
    key, cert = serving_files(folder, ["127.0.0.1"])
    keys.ca_certificate(folder)
    options = client_certs.tls_options(key, cert, folder / "keys" / keys.CA_CERT)
    context = options.getContext()
    assert context.get_verify_mode() == SSL.VERIFY_PEER  # not VERIFY_FAIL_IF_NO_PEER_CERT
    connection = SSL.Connection(context, None)
    [named] = connection.get_client_ca_list()
    assert named.CN == "kube-kitchen-ca"
