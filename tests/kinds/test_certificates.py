"""certificates.k8s.io/v1 CertificateSigningRequest: upstream's validation messages, the three
write strategies (object, approval, status), the requester recorded on create, the system:masters
restriction, kubectl's columns."""

from __future__ import annotations

import base64
import copy

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from control.kinds import certificates as csrs
from control.kinds.certificates import (CERTIFICATESIGNINGREQUEST, KUBE_APISERVER_CLIENT, condition_text, csr_cells,
                                        record_requester, restrict_subject, signer_name_causes, update_approval,
                                        update_status, validate_csr)

NOW = "2027-01-15T08:00:00Z"
LATER = "2027-01-15T09:00:00Z"


def request_pem(cn: str = "bob", groups: tuple[str, ...] = ("kitchen-staff",), key=None) -> bytes:
    key = key or ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    names += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    built = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names)).sign(key, hashes.SHA256())
    return built.public_bytes(serialization.Encoding.PEM)


PEM = request_pem()


def csr(request: bytes = PEM, **spec) -> dict:
    body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": "bob"},
            "spec": {"request": base64.b64encode(request).decode(), "signerName": KUBE_APISERVER_CLIENT,
                     "usages": ["client auth"], **spec}}
    return body


def messages(causes) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_a_well_formed_request_is_valid():
    assert validate_csr(csr()) == []
    assert validate_csr(csr(expirationSeconds=600, signerName="example.com/my-signer")) == []


def test_a_request_that_is_not_a_pem_csr_is_refused_with_the_bytes_as_go_prints_them():
    assert messages(validate_csr(csr(b"hi"))) == [
        "spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST"]
    certificate = PEM.replace(b"CERTIFICATE REQUEST", b"CERTIFICATE")
    assert "PEM block type must be CERTIFICATE REQUEST" in messages(validate_csr(csr(certificate)))[0]


def test_a_request_whose_signature_does_not_verify_is_refused():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    der = bytearray(x509.load_pem_x509_csr(request_pem(key=key)).public_bytes(serialization.Encoding.DER))
    der[-5] ^= 0xFF  # inside the signature
    pem = b"-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(bytes(der)) + \
        b"-----END CERTIFICATE REQUEST-----\n"
    assert messages(validate_csr(csr(pem)))[0].endswith(": crypto/rsa: verification error")


def test_a_request_that_is_not_base64_is_refused():
    body = csr()
    body["spec"]["request"] = "not base64!"
    assert messages(validate_csr(body)) == ['spec.request: Invalid value: "not base64!": illegal base64 data at input '
                                            "byte 3"]


@pytest.mark.parametrize("spec, expected", [
    ({"usages": []}, ["spec.usages: Required value"]),
    ({"usages": ["client auth", "flying"]}, ['spec.usages[1]: Unsupported value: "flying": supported values: "any", '
                                             '"cert sign", "client auth", "code signing", "content commitment", '
                                             '"crl sign", "data encipherment", "decipher only", "digital signature", '
                                             '"email protection", "encipher only", "ipsec end system", "ipsec tunnel", '
                                             '"ipsec user", "key agreement", "key encipherment", "microsoft sgc", '
                                             '"netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", '
                                             '"timestamping"']),
    ({"usages": ["client auth", "client auth"]}, ['spec.usages[1]: Duplicate value: "client auth"']),
    ({"signerName": ""}, ["spec.signerName: Required value"]),
    ({"signerName": "kitchen"}, ['spec.signerName: Invalid value: "kitchen": must be a fully qualified domain and '
                                 "path of the form 'example.com/signer-name'"]),
    ({"signerName": "kitchen/badge"}, ['spec.signerName: Invalid value: "kitchen": should be a domain with at least '
                                       "two segments separated by dots"]),
    ({"signerName": "kubernetes.io/legacy-unknown"}, ['spec.signerName: Invalid value: "kubernetes.io/legacy-unknown":'
                                                      " the legacy signerName is not allowed via this API version"]),
    ({"expirationSeconds": 599}, ["spec.expirationSeconds: Invalid value: 599: may not specify a duration less than "
                                  "600 seconds (10 minutes)"]),
])
def test_spec_rules_with_upstreams_messages(spec, expected):
    assert messages(validate_csr(csr(**spec))) == expected


def test_a_signer_path_of_bad_labels_names_the_label():
    assert messages(signer_name_causes("example.com/Bad_Name")) == [
        'spec.signerName: Invalid value: "Bad_Name": validating label "Bad_Name": ' + csrs.SUBDOMAIN_TEXT]


def test_create_records_the_requester_and_empties_the_status():
    body = csr(username="mallory", groups=["system:masters"])
    body["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    CERTIFICATESIGNINGREQUEST.prepare_for_create(body)
    record_requester(body, {"username": "kubernetes-admin", "uid": "a1", "groups": ["system:masters",
                                                                                     "system:authenticated"]})
    assert body["status"] == {}
    assert (body["spec"]["username"], body["spec"]["uid"], body["spec"]["groups"]) == \
        ("kubernetes-admin", "a1", ["system:masters", "system:authenticated"])


def stored(**status) -> dict:
    body = csr(username="kubernetes-admin")
    body["status"] = status
    return body


def test_approval_adds_the_condition_with_its_times_and_keeps_spec_and_certificate():
    written = copy.deepcopy(stored())
    written["spec"]["usages"] = ["server auth"]
    written["status"] = {"conditions": [{"type": "Approved", "reason": "KubectlApprove"}], "certificate": "Zm9v"}
    result, causes = update_approval(stored(), written, NOW)
    assert causes == []
    assert result["spec"]["usages"] == ["client auth"] and "certificate" not in result["status"]
    assert result["status"]["conditions"] == [{"type": "Approved", "reason": "KubectlApprove", "status": "True",
                                               "lastUpdateTime": NOW, "lastTransitionTime": NOW}]


def test_approved_and_denied_are_mutually_exclusive_and_cannot_be_removed():
    denied = stored(conditions=[{"type": "Denied", "status": "True", "lastUpdateTime": NOW,
                                 "lastTransitionTime": NOW}])
    written = copy.deepcopy(denied)
    written["status"]["conditions"].append({"type": "Approved", "status": "True"})
    assert messages(update_approval(copy.deepcopy(denied), written, LATER)[1]) == [
        'status.conditions[1].type: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive']
    emptied = copy.deepcopy(denied)
    emptied["status"]["conditions"] = []
    assert messages(update_approval(copy.deepcopy(denied), emptied, LATER)[1]) == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Denied"']
    assert messages(update_approval(stored(), {**stored(), "status": {"conditions": [
        {"type": "Approved", "status": "False"}]}}, NOW)[1]) == [
        'status.conditions[0].status: Unsupported value: "False": supported values: "True"']


def test_status_keeps_the_approval_conditions_and_sets_the_certificate_once():
    approved = stored(conditions=[{"type": "Approved", "status": "True", "reason": "KubectlApprove",
                                   "lastUpdateTime": NOW, "lastTransitionTime": NOW}])
    cert_pem = b"-----BEGIN CERTIFICATE-----\nbm90IGRlcg==\n-----END CERTIFICATE-----\n"  # base64, not DER
    forged = copy.deepcopy(approved)
    forged["status"]["conditions"][0]["reason"] = "Forged"
    result, causes = update_status(copy.deepcopy(approved), forged, LATER)
    assert causes == [] and result["status"]["conditions"][0]["reason"] == "KubectlApprove"
    adding = copy.deepcopy(approved)
    adding["status"]["conditions"].append({"type": "Denied"})
    assert 'status.conditions: Forbidden: updates may not add a condition of type "Denied"' in \
        messages(update_status(copy.deepcopy(approved), adding, LATER)[1])
    bad_cert = copy.deepcopy(approved)
    bad_cert["status"]["certificate"] = base64.b64encode(cert_pem).decode()
    assert messages(update_status(copy.deepcopy(approved), bad_cert, LATER)[1]) == [
        'status.certificate: Invalid value: "<certificate data>": x509: malformed certificate']


def test_the_object_itself_changes_neither_spec_nor_status_and_approval_cannot_set_a_certificate():
    old = stored(conditions=[{"type": "Approved", "status": "True"}])
    new = csr(usages=["server auth"])
    CERTIFICATESIGNINGREQUEST.prepare_for_update(new, old)
    assert new["spec"] == old["spec"] and new["status"] == old["status"]
    assert CERTIFICATESIGNINGREQUEST.validate_update(new, old) == []
    with_cert = copy.deepcopy(old)
    with_cert["status"]["certificate"] = "Zm9v"
    assert "status.certificate: Forbidden: updates may not set certificate content" in \
        messages(csrs.update_causes(with_cert, old))


def test_a_kube_apiserver_client_request_for_system_masters_is_refused():
    assert restrict_subject(csr(request_pem(groups=("system:masters",))), None) == (
        "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed")
    assert restrict_subject(csr(request_pem(groups=("system:masters",)), signerName="example.com/x"), None) == ""
    assert restrict_subject(csr(), None) == "" and restrict_subject(csr(b"junk"), None) == ""


def test_columns_and_condition_text_as_kubectl_prints_them():
    body = stored(conditions=[{"type": "Approved", "status": "True"}], certificate="Zm9v")
    body["spec"]["expirationSeconds"] = 86400
    body["metadata"]["creationTimestamp"] = NOW
    assert [c.name for c in CERTIFICATESIGNINGREQUEST.columns] == ["Name", "Age", "SignerName", "Requestor",
                                                                  "RequestedDuration", "Condition"]
    assert csr_cells(body, 1_800_000_000)[2:] == [KUBE_APISERVER_CLIENT, "kubernetes-admin", "24h", "Approved,Issued"]
    assert condition_text(stored()) == "Pending"
    assert condition_text(stored(conditions=[{"type": "Denied"}, {"type": "Failed"}])) == "Denied,Failed"
    assert csr_cells(stored(), 0)[4] == "<none>"
