"""The kube-apiserver-client signer against a fake hub: an approved request is issued a certificate
from the CA with its subject, usages and requested duration; unapproved, denied, failed, issued
and other signers' requests are left alone; disallowed usages get upstream's Failed condition."""

from __future__ import annotations

import base64
import datetime
import tempfile
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from control import errors, keys
from control.clock import FakeClock
from control.client.resources import CERTIFICATESIGNINGREQUESTS
from control.controllers.csrsigning import (CSRSigningController, client_usages_problem, duration, issue,
                                            validity)

from .fakes import START, FakeClient, fill, informers, metadata, run

FOLDER = Path(tempfile.mkdtemp(prefix="kk-csrsigning-"))
CA_PEM, CA_KEY = keys.ca_certificate(FOLDER), keys.ca_key(FOLDER)
CA = x509.load_pem_x509_certificate(CA_PEM)


def request_pem(cn: str = "bob", groups: tuple[str, ...] = ("kitchen-staff", "cooks")) -> bytes:
    names = [x509.NameAttribute(NameOID.COMMON_NAME, cn)] + \
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    built = (x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names))
             .add_extension(x509.SubjectAlternativeName([x509.DNSName("bob.example")]), critical=False)
             .sign(ec.generate_private_key(ec.SECP256R1()), hashes.SHA256()))
    return built.public_bytes(serialization.Encoding.PEM)


def csr(name: str = "bob", *, conditions=(), usages=("client auth", "digital signature"),
        signer: str = "kubernetes.io/kube-apiserver-client", seconds: int | None = 3600, certificate: str = "") -> dict:
    spec = {"request": base64.b64encode(request_pem()).decode(), "signerName": signer, "usages": list(usages)}
    if seconds is not None:
        spec["expirationSeconds"] = seconds
    status: dict = {"conditions": [{"type": c, "status": "True"} for c in conditions]}
    if certificate:
        status["certificate"] = certificate
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": metadata(name, None), "spec": spec, "status": status}


def setup(*objs):
    clock = FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    requests = shared.get(CERTIFICATESIGNINGREQUESTS)
    controller = CSRSigningController(client, requests, clock=clock, ca_pem=CA_PEM, ca_key=CA_KEY)
    fill(requests, *objs)
    return controller, client


def test_an_approved_request_is_issued_the_certificate_its_subject_asks_for():
    controller, client = setup(csr(conditions=("Approved",)))
    assert run(controller.reconcile("bob")).outcome == "done"
    [put] = client.of("replace/status", "certificatesigningrequests")
    assert put.name == "bob"
    issued = x509.load_pem_x509_certificate(base64.b64decode(put.body["status"]["certificate"]))
    assert issued.subject.rfc4514_string() == "O=cooks,O=kitchen-staff,CN=bob"
    assert issued.issuer == CA.subject
    issued.verify_directly_issued_by(CA)
    assert list(issued.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == \
        [ExtendedKeyUsageOID.CLIENT_AUTH]
    usage = issued.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.digital_signature and not usage.key_encipherment
    assert not issued.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert issued.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == ["bob.example"]
    start = datetime.datetime.fromtimestamp(START, datetime.timezone.utc)
    assert issued.not_valid_before_utc == start - datetime.timedelta(minutes=5)
    assert issued.not_valid_after_utc - issued.not_valid_before_utc == datetime.timedelta(hours=1)


@pytest.mark.parametrize("request_", [
    csr(), csr(conditions=("Denied",)), csr(conditions=("Approved", "Failed")),
    csr(conditions=("Approved",), certificate="Zm9v"), csr(conditions=("Approved",), signer="example.com/other"),
], ids=["pending", "denied", "failed", "issued", "another signer"])
def test_requests_this_signer_must_not_sign_are_left_alone(request_):
    controller, client = setup(request_)
    run(controller.reconcile("bob"))
    assert client.summary() == []


@pytest.mark.parametrize("usages, message", [
    (("server auth",), "invalid usage for client certificate: server auth"),
    (("digital signature",), "missing required usage for client certificate: client auth"),
])
def test_disallowed_usages_get_the_failed_condition_and_no_certificate(usages, message):
    controller, client = setup(csr(conditions=("Approved",), usages=usages))
    run(controller.reconcile("bob"))
    [put] = client.of("replace/status", "certificatesigningrequests")
    failed = put.body["status"]["conditions"][-1]
    assert (failed["type"], failed["status"], failed["reason"], failed["message"]) == \
        ("Failed", "True", "SignerValidationFailure", message)
    assert "certificate" not in put.body["status"]


def test_a_request_gone_meanwhile_ends_it_and_a_conflict_is_retried():
    controller, client = setup(csr(conditions=("Approved",)))
    client.fail("replace/status", "certificatesigningrequests", errors.Conflict("changed"))
    assert run(controller.reconcile("bob")).outcome == "retry"
    client.fail("replace/status", "certificatesigningrequests", errors.NotFound("gone"))
    assert run(controller.reconcile("bob")).outcome == "done"
    assert run(controller.reconcile("nobody")).outcome == "done"


def test_duration_and_validity_follow_upstreams_signing_policy():
    assert duration(None) == 365 * 86400 and duration(60) == 600 and duration(10 ** 9) == 365 * 86400
    assert duration(86400) == 86400
    assert validity(1000.0, 3600, 10 ** 9) == (700.0, 4300.0)  # short: backdated, not lengthened
    assert validity(1000.0, 86400, 10 ** 9) == (700.0, 87400.0)  # long: backdated and full length
    assert validity(1000.0, 86400, 5000.0) == (700.0, 5000.0)  # never past the CA's end
    assert client_usages_problem(["client auth", "key encipherment", "digital signature"]) == ""


def test_issue_refuses_what_is_not_a_request():
    with pytest.raises(ValueError):
        issue(b"junk", ["client auth"], 3600, CA_PEM, CA_KEY, START)
