"""CertificateSigningRequests through the hub's app: the requester recorded, a bad request 422 and
not stored, approval only through `approval` (also as the protobuf kubectl PUTs), the certificate
only through `status`, and the CertificateApproval/CertificateSigning admission: a user may write
the subresource but needs `approve`/`sign` on the signer too."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.conf import settings

from control.api.protobuf import MAGIC
from control.api.protobuf.wire import LENGTH_DELIMITED
from control.auth import policystore, tokenfile
from control.bootstrap import cluster_bootstrap
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)
PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def request_pem(cn: str = "bob") -> bytes:
    built = (x509.CertificateSigningRequestBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
             .sign(ec.generate_private_key(ec.SECP256R1()), hashes.SHA256()))
    return built.public_bytes(serialization.Encoding.PEM)


def csr(name: str = "bob", request: bytes | None = None, signer: str = "kubernetes.io/kube-apiserver-client") -> str:
    return json.dumps({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                       "metadata": {"name": name},
                       "spec": {"request": base64.b64encode(request or request_pem(name)).decode(),
                                "signerName": signer, "usages": ["client auth"], "username": "forged"},
                       "status": {"conditions": [{"type": "Approved", "status": "True"}]}})


@pytest.fixture(autouse=True)
def authentication_on(settings):
    settings.KK_AUTHENTICATION = "on"


@pytest.fixture
def clients():
    policystore.forget()
    cluster_bootstrap()
    carol = ApiClient(token=tokenfile.token_of(settings.DATA_DIR, "carol", ()))
    admin = ApiClient()
    yield admin, carol
    admin.close()
    carol.close()


def test_create_records_the_requester_drops_the_status_and_a_bad_request_is_not_stored(clients):
    admin, _ = clients
    made = admin.post(PATH, csr())
    assert made.status_code == 201, made.content
    stored = json.loads(made.content)
    assert stored["spec"]["username"] == "kubernetes-admin" and "system:masters" in stored["spec"]["groups"]
    assert stored["status"] == {}
    bad = admin.post(PATH, csr("junk", b"junk"))
    assert bad.status_code == 422
    assert json.loads(bad.content)["message"] == (
        'CertificateSigningRequest.certificates.k8s.io "junk" is invalid: spec.request: Invalid value: '
        "[]byte{0x6a, 0x75, 0x6e, 0x6b}: PEM block type must be CERTIFICATE REQUEST")
    assert admin.get(f"{PATH}/junk").status_code == 404
    table = admin.get(PATH, HTTP_ACCEPT="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [c["name"] for c in json.loads(table.content)["columnDefinitions"]][2:] == [
        "SignerName", "Requestor", "RequestedDuration", "Condition"]


def approval(stored: dict, kind: str = "Approved") -> str:
    stored["status"] = {"conditions": [{"type": kind, "status": "True", "reason": "KubectlApprove",
                                        "message": "This CSR was approved by kubectl certificate approve."}]}
    return json.dumps(stored)


def test_approval_only_through_its_subresource_and_status_cannot_approve(clients):
    admin, _ = clients
    stored = json.loads(admin.post(PATH, csr()).content)
    plain = admin.put(f"{PATH}/bob", approval(dict(stored)))
    assert plain.status_code == 200 and json.loads(plain.content)["status"] == {}, "the object keeps its status"
    via_status = admin.put(f"{PATH}/bob/status", approval(json.loads(plain.content)))
    assert via_status.status_code == 422 and 'updates may not add a condition of type \\"Approved\\"' in \
        via_status.content.decode()
    approved = admin.put(f"{PATH}/bob/approval", approval(json.loads(plain.content)))
    assert approved.status_code == 200, approved.content
    [condition] = json.loads(approved.content)["status"]["conditions"]
    assert condition["type"] == "Approved" and condition["lastUpdateTime"] and condition["lastTransitionTime"]
    assert "approval" in json.dumps(json.loads(admin.get("/apis/certificates.k8s.io/v1").content))


def _field(number: int, payload: bytes) -> bytes:
    return bytes([(number << 3) | LENGTH_DELIMITED]) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = b""
    while True:
        byte, value = value & 0x7F, value >> 7
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def test_kubectls_protobuf_approval_is_understood(clients):
    admin, _ = clients
    stored = json.loads(admin.post(PATH, csr()).content)
    meta = _field(1, stored["metadata"]["name"].encode()) + _field(6, stored["metadata"]["resourceVersion"].encode())
    spec = _field(1, base64.b64decode(stored["spec"]["request"])) + _field(7, stored["spec"]["signerName"].encode()) \
        + _field(5, b"client auth")
    condition = _field(1, b"Approved") + _field(6, b"True") + _field(2, b"KubectlApprove")
    message = _field(1, meta) + _field(2, spec) + _field(3, _field(1, condition))
    envelope = _field(1, _field(1, b"certificates.k8s.io/v1") + _field(2, b"CertificateSigningRequest")) + \
        _field(2, message)
    answer = admin.put(f"{PATH}/bob/approval", MAGIC + envelope, content_type="application/vnd.kubernetes.protobuf")
    assert answer.status_code == 200, answer.content
    assert json.loads(answer.content)["status"]["conditions"][0]["reason"] == "KubectlApprove"


def test_approving_needs_approve_on_the_signer_and_signing_needs_sign(clients):
    admin, carol = clients
    stored = json.loads(admin.post(PATH, csr()).content)
    writer = {"metadata": {"name": "csr-writer"}, "rules": [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval",
                                                             "certificatesigningrequests/status"],
         "verbs": ["update"]}]}
    assert admin.post(f"{RBAC}/clusterroles", json.dumps(writer)).status_code == 201
    for name, role in (("carol-writes", "csr-writer"), ("carol-approves",
                                                        "system:certificates.k8s.io:kube-apiserver-client-approver")):
        binding = {"metadata": {"name": name}, "subjects": [{"kind": "User", "name": "carol"}],
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}}
        if name == "carol-writes":
            assert admin.post(f"{RBAC}/clusterrolebindings", json.dumps(binding)).status_code == 201
            refused = carol.put(f"{PATH}/bob/approval", approval(dict(stored)))
            assert refused.status_code == 403
            assert json.loads(refused.content)["message"] == (
                'certificatesigningrequests.certificates.k8s.io "bob" is forbidden: user not permitted to approve '
                'requests with signerName "kubernetes.io/kube-apiserver-client"')
        else:
            assert admin.post(f"{RBAC}/clusterrolebindings", json.dumps(binding)).status_code == 201
    approved = carol.put(f"{PATH}/bob/approval", approval(dict(stored)))
    assert approved.status_code == 200, approved.content
    signed = json.loads(approved.content)
    signed["status"]["certificate"] = base64.b64encode(b"anything").decode()
    refused = carol.put(f"{PATH}/bob/status", json.dumps(signed))
    assert refused.status_code == 403 and "user not permitted to sign requests with signerName" in \
        json.loads(refused.content)["message"]


@pytest.mark.parametrize("body", [
    {"spec": "not an object"},
    {"spec": {"request": 42, "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}},
    {"spec": {"request": "aGk=", "signerName": ["x"], "usages": "client auth"}},
    {"spec": {"request": "aGk=", "signerName": "a.b/c", "usages": ["client auth"], "expirationSeconds": "600"}},
    {"spec": {"request": "%%%", "signerName": "a.b/c", "usages": ["client auth"]}},
    {"spec": {"request": base64.b64encode(b"-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST"
                                          b"-----\n").decode(), "signerName": "a.b/c", "usages": ["client auth"]}},
    {"spec": {}},
    {},
], ids=["spec a string", "request a number", "wrong types", "seconds a string", "not base64", "truncated DER",
        "empty spec", "no spec"])
def test_bad_bodies_are_4xx_statuses_and_nothing_is_stored(clients, body):
    admin, _ = clients
    answer = admin.post(PATH, json.dumps({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                                          "metadata": {"name": "odd"}, **body}))
    assert answer.status_code in (400, 422), answer.content
    assert json.loads(answer.content)["kind"] == "Status"
    assert admin.get(f"{PATH}/odd").status_code == 404


@pytest.mark.parametrize("status", [None, "x", {"conditions": "x"}, {"conditions": [{"type": 5}]},
                                    {"conditions": [None, {"type": "Approved"}]}, {"certificate": 5},
                                    {"conditions": [{"type": ""}]}])
def test_odd_approvals_and_statuses_are_never_a_500(clients, status):
    admin, _ = clients
    stored = json.loads(admin.post(PATH, csr()).content)
    for sub in ("approval", "status"):
        answer = admin.put(f"{PATH}/bob/{sub}", json.dumps({**stored, "status": status}))
        assert answer.status_code < 500, answer.content
