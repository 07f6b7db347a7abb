"""The hub's keys in its data folder: made once, private, reused, and published as upstream does."""

from __future__ import annotations

import base64
import hashlib
import stat
import threading

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

import pytest

from control import keys


def test_the_signing_key_is_made_once_private_and_then_reused(tmp_path):
    first = keys.signing_key(tmp_path)
    assert isinstance(first, ec.EllipticCurvePrivateKey) and first.curve.name == "secp256r1"
    path = tmp_path / "keys" / "sa.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = keys.signing_key(tmp_path)
    assert first.private_numbers() == again.private_numbers()
    assert [p.name for p in (tmp_path / "keys").iterdir()] == ["sa.key"], "nothing left aside"


def test_racing_makers_all_end_with_the_one_key_on_disk(tmp_path):
    found = []
    threads = [threading.Thread(target=lambda: found.append(keys.signing_key(tmp_path).private_numbers().private_value))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    on_disk = serialization.load_pem_private_key((tmp_path / "keys" / "sa.key").read_bytes(), None)
    assert set(found) == {on_disk.private_numbers().private_value}


def test_key_id_is_base64url_of_the_sha256_of_the_der_public_key(tmp_path):
    public = keys.signing_key(tmp_path).public_key()
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    expected = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")
    assert keys.key_id(public) == expected
    published = keys.jwk(public)
    assert {k: published[k] for k in ("use", "kty", "alg", "kid", "crv")} == {
        "use": "sig", "kty": "EC", "alg": "ES256", "kid": expected, "crv": "P-256"}
    numbers = public.public_numbers()
    assert [base64.urlsafe_b64decode(published[c] + "=") for c in ("x", "y")] == [
        numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big")], "each coordinate 32 bytes, as RFC 7518"


def _older_folder_with(tmp_path, key):
    (tmp_path / "keys").mkdir(mode=0o700)
    (tmp_path / "keys" / "sa.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def test_an_older_folders_rsa_key_keeps_signing_rs256_tokens_that_verify(tmp_path):
    _older_folder_with(tmp_path, rsa.generate_private_key(public_exponent=65537, key_size=2048))
    public = keys.signing_key(tmp_path).public_key()
    published = keys.jwk(public)
    assert {k: published[k] for k in ("kty", "alg", "e")} == {"kty": "RSA", "alg": "RS256", "e": "AQAB"}
    token = keys.signer(tmp_path)({"sub": "x", "aud": ["a"]})
    assert jwt.get_unverified_header(token)["alg"] == "RS256"
    assert jwt.decode(token, jwt.PyJWK(published).key, algorithms=["RS256"], audience="a")["sub"] == "x"


def test_a_key_no_token_could_be_signed_with_is_refused(tmp_path):
    _older_folder_with(tmp_path, ec.generate_private_key(ec.SECP384R1()))
    with pytest.raises(ValueError, match="RSA or ECDSA P-256"):
        keys.signing_key(tmp_path)


def test_a_signed_token_verifies_with_the_published_key_and_names_it(tmp_path):
    token = keys.signer(tmp_path)({"sub": "x", "aud": ["a"]})
    published = keys.jwk(keys.signing_key(tmp_path).public_key())
    assert jwt.get_unverified_header(token) == {"alg": "ES256", "kid": published["kid"], "typ": "JWT"}
    key = jwt.PyJWK(published).key
    assert jwt.decode(token, key, algorithms=["ES256"], audience="a")["sub"] == "x"
    other = tmp_path / "other"
    stranger = jwt.PyJWK(keys.jwk(keys.signing_key(other).public_key())).key
    try:
        jwt.decode(token, stranger, algorithms=["ES256"], audience="a")
    except jwt.InvalidSignatureError:
        pass
    else:
        raise AssertionError("a token verified with another hub's key")


def test_the_ca_is_a_self_signed_ca_made_once(tmp_path):
    pem = keys.ca_certificate(tmp_path, now=1_800_000_000)
    cert = x509.load_pem_x509_certificate(pem)
    assert cert.issuer == cert.subject
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert int(cert.not_valid_before_utc.timestamp()) == 1_800_000_000 - 300
    assert stat.S_IMODE((tmp_path / "keys" / "ca.key").stat().st_mode) == 0o600
    assert keys.ca_certificate(tmp_path) == pem, "read back, not made again"
    cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(),
                             cert.signature_hash_algorithm)  # signed by its own key


def test_the_node_access_secret_is_made_once_private_and_then_reused(tmp_path):
    first = keys.node_access_token(tmp_path)
    path = tmp_path / "keys" / keys.NODE_ACCESS
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert len(first) >= 43, "256 random bits, base64url"
    assert keys.node_access_token(tmp_path) == first
