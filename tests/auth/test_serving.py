"""The serving certificate: signed by the folder's CA, for the hub's names, made again only when
they change; and the record of each hub's HTTPS address."""

from __future__ import annotations

import ipaddress
import stat

from cryptography import x509

from control import keys
from control.auth.serving import advertise, secure_url_for, serving_files


def test_the_certificate_names_the_hub_and_is_signed_by_the_ca(tmp_path):
    key, cert = serving_files(tmp_path, ["10.0.0.5", "kitchen.lan"])
    held = x509.load_pem_x509_certificate(cert.read_bytes())
    ca = x509.load_pem_x509_certificate(keys.ca_certificate(tmp_path))
    assert held.issuer == ca.subject
    held.verify_directly_issued_by(ca)
    sans = held.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(sans.get_values_for_type(x509.DNSName)) == {"kitchen.lan", "localhost"}
    assert ipaddress.ip_address("10.0.0.5") in sans.get_values_for_type(x509.IPAddress)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    before = cert.read_bytes()
    serving_files(tmp_path, ["kitchen.lan", "10.0.0.5"])
    assert cert.read_bytes() == before  # same names: kept
    serving_files(tmp_path, ["other.lan"])
    assert cert.read_bytes() != before


def test_each_hub_records_its_https_address(tmp_path):
    assert secure_url_for(tmp_path, "http://127.0.0.1:8000") == ""
    advertise(tmp_path, "http://127.0.0.1:8000/", "https://127.0.0.1:8001")
    advertise(tmp_path, "http://127.0.0.1:9000", "https://127.0.0.1:9001")
    assert secure_url_for(tmp_path, "http://127.0.0.1:8000") == "https://127.0.0.1:8001"
