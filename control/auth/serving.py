"""The hub's HTTPS face: a serving certificate signed by the data folder's CA, and where each hub
serves HTTPS, so `manage.py kubeconfig` can point kubectl at it (kubectl sends a bearer token only
over HTTPS: client-go's clientcmd reads user credentials only for a TLS transport).

Guarantees: `serving_files(folder, hosts)` gives (key path, certificate path) of a certificate for
`hosts` (IP addresses and DNS names, plus localhost, 127.0.0.1 and ::1; for 0.0.0.0 or :: the
machine's name and primary address, which an attendee's kubeconfig names), signed by the CA of
`control.keys` and made again only when its names change; the key is written 0600.
`advertise(folder, plain_url, secure_url)` records that the hub at `plain_url` also serves
`secure_url`; `secure_url_for(folder, plain_url)` reads it back ("" when none).
"""

from __future__ import annotations

import datetime
import ipaddress
import json
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from control import keys
from control.datafolder import replace_file
from control.clock import REAL

SERVING_KEY, SERVING_CERT, HUBS = "serving.key", "serving.crt", "hubs.json"
DAYS = 365


def _names(hosts: list[str]) -> list[str]:
    from control.serving.hosts import machine_names  # listening on every address: reached by these

    everywhere = machine_names() if {"0.0.0.0", "::"} & {h.strip("[]") for h in hosts} else []
    return sorted({*hosts, *everywhere, "localhost", "127.0.0.1", "::1"} - {"", "0.0.0.0", "::"})


def _san(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def serving_files(folder: Path, hosts: list[str]) -> tuple[Path, Path]:
    folder = Path(folder) / "keys"
    key_path, cert_path = folder / SERVING_KEY, folder / SERVING_CERT
    names = _names(hosts)
    ca_pem = keys.ca_certificate(folder.parent)
    if cert_path.exists() and key_path.exists():
        held = x509.load_pem_x509_certificate(cert_path.read_bytes())
        sans = held.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        if sorted(str(v) for v in (*sans.get_values_for_type(x509.DNSName),
                                    *sans.get_values_for_type(x509.IPAddress))) == sorted(
                str(ipaddress.ip_address(n)) if _is_ip(n) else n for n in names):
            return key_path, cert_path
    ca_key = keys._private_key(folder / keys.CA_KEY)
    ca = x509.load_pem_x509_certificate(ca_pem)
    key = keys.rsa.generate_private_key(public_exponent=65537, key_size=2048)
    start = datetime.datetime.fromtimestamp(REAL.now(), datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
            .issuer_name(ca.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start - datetime.timedelta(minutes=5))
            .not_valid_after(start + datetime.timedelta(days=DAYS))
            .add_extension(x509.SubjectAlternativeName([_san(n) for n in names]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    replace_file(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()), 0o600)
    replace_file(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return key_path, cert_path


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def advertise(folder: Path, plain_url: str, secure_url: str) -> None:
    target = Path(folder) / HUBS
    known = json.loads(target.read_text()) if target.exists() else {}
    known[plain_url.rstrip("/")] = secure_url
    replace_file(target, json.dumps(known, indent=1).encode(), 0o600)  # the data folder is owner-only


def secure_url_for(folder: Path, plain_url: str) -> str:
    target = Path(folder) / HUBS
    if not target.exists():
        return ""
    return json.loads(target.read_text()).get(plain_url.rstrip("/"), "")
