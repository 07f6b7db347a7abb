"""Client certificates as kube-apiserver's x509 authenticator reads them: CN the user, O the
groups; a certificate of another CA, an expired one, one only for servers, or a chain through a
non-CA is refused; no CN means "not mine"; the authenticator chain puts a good certificate before
any token and never makes a bad one anonymous."""

from __future__ import annotations

import datetime
import tempfile
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from control import errors, keys
from control.auth.authenticate import ANONYMOUS, Authenticator
from control.auth.x509 import CertificateRejected, Verifier, certificate_user
from control.clock import FakeClock

NOW = 1_800_000_000.0
FOLDER = Path(tempfile.mkdtemp(prefix="kk-x509-"))
CA_PEM = keys.ca_certificate(FOLDER, now=NOW - 86400)
CA, CA_KEY = x509.load_pem_x509_certificate(CA_PEM), keys.ca_key(FOLDER)


def issued(cn: str = "bob", groups: tuple[str, ...] = ("kitchen-staff",), *, by=(CA, CA_KEY), eku=(
        ExtendedKeyUsageOID.CLIENT_AUTH,), start: float = NOW - 60, days: float = 1, ca: bool = False):
    issuer, key = by
    names = ([x509.NameAttribute(NameOID.COMMON_NAME, cn)] if cn else []) + \
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    own = ec.generate_private_key(ec.SECP256R1())
    utc = datetime.timezone.utc
    builder = (x509.CertificateBuilder().subject_name(x509.Name(names)).issuer_name(issuer.subject)
               .public_key(own.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(datetime.datetime.fromtimestamp(start, utc))
               .not_valid_after(datetime.datetime.fromtimestamp(start + days * 86400, utc))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if eku:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(eku)), critical=False)
    cert = builder.sign(key, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM).decode(), (cert, own)


def test_cn_is_the_user_and_each_o_a_group():
    pem, _ = issued(groups=("kitchen-staff", "cooks"))
    user = certificate_user([pem], CA, NOW)
    assert (user.name, user.groups) == ("bob", ("kitchen-staff", "cooks"))


def test_a_chain_through_an_intermediate_ca_the_client_sent_verifies():
    middle_pem, middle = issued("kitchen-intermediate", (), ca=True, eku=())
    leaf_pem, _ = issued(by=middle)
    assert certificate_user([leaf_pem, middle_pem], CA, NOW).name == "bob"
    not_a_ca_pem, not_a_ca = issued("someone", ())
    stray, _ = issued(by=not_a_ca)
    with pytest.raises(CertificateRejected, match="unknown authority"):
        certificate_user([stray, not_a_ca_pem], CA, NOW)


@pytest.mark.parametrize("made, reason", [
    (lambda: issued(by=(x509.load_pem_x509_certificate(keys.ca_certificate(Path(tempfile.mkdtemp()))),
                        ec.generate_private_key(ec.SECP256R1()))), "unknown authority"),
    (lambda: issued(start=NOW - 3 * 86400), "expired"),
    (lambda: issued(start=NOW + 3600), "not yet valid"),
    (lambda: issued(eku=(ExtendedKeyUsageOID.SERVER_AUTH,)), "incompatible key usage"),
], ids=["another CA", "expired", "not yet valid", "server only"])
def test_certificates_that_do_not_verify_are_rejected(made, reason):
    pem, _ = made()
    with pytest.raises(CertificateRejected, match=reason):
        certificate_user([pem], CA, NOW)


def test_no_cn_is_no_user_and_no_eku_means_any_use():
    assert certificate_user([issued(cn="")[0]], CA, NOW) is None
    assert certificate_user([issued(eku=())[0]], CA, NOW).name == "bob"


def test_the_verifier_reuses_an_answer_but_never_past_the_leafs_end():
    verifier, ca_der = Verifier(), CA.public_bytes(serialization.Encoding.DER)
    pem, _ = issued(start=NOW - 86400 + 30)  # ends 30 s from NOW
    assert verifier.user([pem], CA, ca_der, NOW).name == "bob"
    with pytest.raises(CertificateRejected, match="expired"):
        verifier.user([pem], CA, ca_der, NOW + 31)


def test_the_authenticator_puts_the_certificate_first_and_refuses_a_bad_one_without_a_token():
    authenticator = Authenticator(FOLDER, FakeClock(NOW))
    good, _ = issued()
    user = authenticator.user("", lambda *a: None, (good,))
    assert user.name == "bob" and user.groups == ("kitchen-staff", "system:authenticated")
    bad, _ = issued(start=NOW - 3 * 86400)
    with pytest.raises(errors.Unauthorized):
        authenticator.user("", lambda *a: None, (bad,))
    assert authenticator.user("", lambda *a: None, ()) is ANONYMOUS
    assert authenticator.user("", lambda *a: None, (issued(cn="")[0],)) is ANONYMOUS
