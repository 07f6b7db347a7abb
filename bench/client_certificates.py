"""What a client certificate costs the hub's authenticator per request, beside a token: the
x509 authenticator's first verification of a chain (the CA's signature checked, times, usages) and
the answer it keeps for the same chain afterwards (kubectl sends the same certificate on every
request of a connection and every connection).

    .venv/bin/python bench/client_certificates.py [--requests 2000]

In process, no server: `control.auth.authenticate.Authenticator.user` on a temporary data folder
(its CA, its token file), for the admin's token from the token file, a certificate the CA signed
verified fresh every time (a new `Verifier` each call) and the same certificate through the
authenticator's kept answers. Figures (one JSON line): µs per call, median of 5 rounds of
`--requests` calls each.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

from control import keys  # noqa: E402
from control.auth import tokenfile  # noqa: E402
from control.auth.authenticate import Authenticator  # noqa: E402
from control.auth.x509 import Verifier  # noqa: E402


def client_certificate(folder: Path) -> str:
    ca = x509.load_pem_x509_certificate(keys.ca_certificate(folder))
    own = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bob"),
                                     x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kitchen-staff")]))
            .issuer_name(ca.subject).public_key(own.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(keys.ca_key(folder), hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def per_call_us(call, requests: int) -> float:
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(requests):
            call()
        rounds.append((time.perf_counter() - started) / requests * 1e6)
    return round(statistics.median(rounds), 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    requests = parser.parse_args().requests
    folder = Path(tempfile.mkdtemp(prefix="kk-bench-x509-"))
    authenticator = Authenticator(folder)
    bearer = f"Bearer {tokenfile.admin_token(folder)}"
    chain = (client_certificate(folder),)
    lookup = lambda *a: None  # noqa: E731 - no ServiceAccount tokens here

    def fresh() -> None:
        authenticator.verifier = Verifier()
        authenticator.user("", lookup, chain)

    print(json.dumps({
        "requests_per_round": requests,
        "token_us": per_call_us(lambda: authenticator.user(bearer, lookup), requests),
        "certificate_fresh_us": per_call_us(fresh, requests),
        "certificate_kept_us": per_call_us(lambda: authenticator.user("", lookup, chain), requests),
    }))


if __name__ == "__main__":
    main()
