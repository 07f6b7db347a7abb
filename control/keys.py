"""The hub's keys in its data folder: the ServiceAccount token signing key and the cluster CA.

Guarantees:
- `KK_DATA_DIR/keys/sa.key` (ECDSA P-256, PKCS#8 PEM; a folder made before holds RSA 2048, which
  is used as it is) and `keys/ca.key` + `keys/ca.crt` (RSA 2048, a self-signed CA, ten years) are
  made the first time they are asked for and then only read, so tokens stay
  valid across restarts; private keys are created 0600 (never chmod-ed later), the keys folder 0700;
- a file appears whole or not at all, and when two processes race to make one the first wins and
  both use it (written aside, then hard-linked into place, which refuses to replace);
- `key_id` is upstream's `keyIDFromPublicKey` (base64url of the SHA-256 of the DER public key),
  `algorithm` the JWS algorithm upstream signs with for a key (RSA: RS256, ECDSA P-256: ES256, as
  `signerFromRSAPrivateKey` / `signerFromECDSAPrivateKey`) and `jwk` the JSON Web Key
  kube-apiserver publishes at /openid/v1/jwks;
- `ca_key(folder)` is the CA's private key, for the CSR signer (kube-controller-manager's
  --cluster-signing-key-file);
- `signer(folder)` signs claims as JWTs with that key, its algorithm and its `kid` header (ES256
  signs in about a seventh of RS256's time: one token per pod the kubelets start);
- `node_access_token(folder)` is the cluster's node-access secret (`keys/node-access.token`, 256
  random bits, 0600, made once like the keys): the hub presents it to the kubelets' and
  kube-proxies' servers, which answer no one without it (`control.client.nodeaccess`).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
import secrets
import threading
from pathlib import Path
from typing import Any, Callable

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from control.clock import REAL
from control.datafolder import written_aside

SIGNING_KEY = "sa.key"
CA_KEY = "ca.key"
CA_CERT = "ca.crt"
CA_NAME = "kube-kitchen-ca"
CA_DAYS = 3650
NODE_ACCESS = "node-access.token"
_lock = threading.Lock()
_signers: dict[Path, Callable[[dict[str, Any]], str]] = {}


def default_data_dir() -> Path:
    """The data folder as the settings name it, for processes that do not load Django."""
    from control.installation import default_data_dir as named

    return named()


def _write_once(path: Path, content: bytes, mode: int) -> bytes:
    """Put `content` at `path` unless something is there already; return what `path` holds."""
    aside = written_aside(path, content, mode)  # its folder owner-only from the start
    try:
        os.link(aside, path)
    except FileExistsError:
        pass
    finally:
        aside.unlink(missing_ok=True)
    return path.read_bytes()


def _private_key(path: Path) -> rsa.RSAPrivateKey:
    key = _load_or_make(path, lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError(f"{path} does not hold an RSA private key")
    return key


def _load_or_make(path: Path, make: Callable[[], Any]) -> Any:
    if not path.exists():
        _write_once(path, make().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()), 0o600)
    return serialization.load_pem_private_key(path.read_bytes(), password=None)


SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def signing_key(data_dir: Path) -> SigningKey:
    """The ServiceAccount token signing key: ECDSA P-256 when made here, RSA when an older folder holds one."""
    path = Path(data_dir) / "keys" / SIGNING_KEY
    key = _load_or_make(path, lambda: ec.generate_private_key(ec.SECP256R1()))
    algorithm(key.public_key())  # refuses a key no token could be signed with
    return key


def algorithm(public_key: Any) -> str:
    """The JWS algorithm of tokens signed with this key (upstream's choice for it)."""
    if isinstance(public_key, rsa.RSAPublicKey):
        return "RS256"
    if isinstance(public_key, ec.EllipticCurvePublicKey) and isinstance(public_key.curve, ec.SECP256R1):
        return "ES256"
    raise ValueError("the signing key must be RSA or ECDSA P-256")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def key_id(public_key: Any) -> str:
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return _b64url(hashlib.sha256(der).digest())


def jwk(public_key: Any) -> dict[str, str]:
    alg = algorithm(public_key)
    if alg == "ES256":
        point = public_key.public_numbers()
        return {"use": "sig", "kty": "EC", "kid": key_id(public_key), "crv": "P-256", "alg": alg,
                "x": _b64url(point.x.to_bytes(32, "big")), "y": _b64url(point.y.to_bytes(32, "big"))}
    numbers = public_key.public_numbers()

    def unsigned(value: int) -> str:
        return _b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))

    return {"use": "sig", "kty": "RSA", "kid": key_id(public_key), "alg": alg,
            "n": unsigned(numbers.n), "e": unsigned(numbers.e)}


def signer(data_dir: Path) -> Callable[[dict[str, Any]], str]:
    """claims -> a compact JWT with the folder's signing key (made on first use)."""
    folder = Path(data_dir)
    with _lock:
        if folder not in _signers:
            key = signing_key(folder)
            kid, alg = key_id(key.public_key()), algorithm(key.public_key())
            _signers[folder] = lambda claims: jwt.encode(claims, key, algorithm=alg, headers={"kid": kid})
        return _signers[folder]


def ca_certificate(data_dir: Path, *, now: float | None = None) -> bytes:
    """The cluster CA's certificate (PEM), made with its key on first use (valid from `now`)."""
    folder = Path(data_dir) / "keys"
    path = folder / CA_CERT
    if path.exists():
        return path.read_bytes()
    key = _private_key(folder / CA_KEY)
    start = datetime.datetime.fromtimestamp(REAL.now() if now is None else now, datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME)])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start - datetime.timedelta(minutes=5))
            .not_valid_after(start + datetime.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return _write_once(path, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def ca_key(data_dir: Path) -> rsa.RSAPrivateKey:
    """The cluster CA's private key (made with its certificate on first use), for the CSR signer."""
    ca_certificate(data_dir)
    return _private_key(Path(data_dir) / "keys" / CA_KEY)


def node_access_token(data_dir: Path) -> str:
    """The cluster's node-access secret, made (0600) on first use and then only read."""
    path = Path(data_dir) / "keys" / NODE_ACCESS
    if not path.exists():
        _write_once(path, secrets.token_urlsafe(32).encode(), 0o600)
    token = path.read_text().strip()
    if len(token) < 32:
        raise ValueError(f"{path} holds no node-access secret (fewer than 32 characters)")
    return token
