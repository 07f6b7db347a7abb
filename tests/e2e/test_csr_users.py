"""A user the CKA way, with the real openssl and kubectl against a real hub and controller-manager:
a key and a CSR made with openssl, submitted, approved with `kubectl certificate approve`, the
certificate signed by the csrsigning controller, fetched, set as kubectl credentials; `kubectl auth
whoami` names the user, a list is 403 until a RoleBinding, then 200. Bad CSRs are 422 with
upstream's messages and are not stored; a denied CSR is never signed; a CSR with usages the signer
does not allow is marked Failed."""

from __future__ import annotations

import base64
import json
import subprocess

import pytest
import yaml

from tests.conftest import KUBECTL, Hub, Spoke, wait_for

pytestmark = pytest.mark.e2e
SIGNER = "kubernetes.io/kube-apiserver-client"


@pytest.fixture(scope="module")
def kitchen():
    hub = Hub(env={"KK_AUTHENTICATION": "on"}).start()
    manager = Spoke(hub, "controller-manager").start()
    try:
        yield hub
    finally:
        manager.stop()
        hub.stop()


def openssl_request(hub: Hub, name: str, subject: str) -> bytes:
    key, request = hub.dir / f"{name}.key", hub.dir / f"{name}.csr"
    subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
    subprocess.run(["openssl", "req", "-new", "-key", str(key), "-subj", subject, "-out", str(request)], check=True,
                   capture_output=True)
    return request.read_bytes()


def csr_manifest(name: str, request: bytes, usages: list[str], signer: str = SIGNER, seconds: int = 86400) -> str:
    return yaml.safe_dump({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                           "metadata": {"name": name},
                           "spec": {"request": base64.b64encode(request).decode(), "signerName": signer,
                                    "expirationSeconds": seconds, "usages": usages}})


def as_user(hub: Hub, kubeconfig, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(hub.dir / "cache-bob"),
                           *args], capture_output=True, text=True, timeout=60)


def test_a_user_made_with_openssl_is_approved_signed_and_authorized_by_rbac(kitchen):
    hub = kitchen
    request = openssl_request(hub, "bob", "/CN=bob/O=kitchen-staff")
    made = hub.kubectl("apply", "-f", "-", input=csr_manifest("bob", request, ["client auth", "digital signature",
                                                                              "key encipherment"]))
    assert made.stdout.strip() == "certificatesigningrequest.certificates.k8s.io/bob created"
    listed = hub.kubectl("get", "csr", "bob").stdout.split("\n")
    assert listed[0].split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    assert listed[1].split()[2:] == [SIGNER, "kubernetes-admin", "24h", "Pending"]

    approved = hub.kubectl("certificate", "approve", "bob")
    assert approved.stdout.strip() == "certificatesigningrequest.certificates.k8s.io/bob approved"
    issued = wait_for(lambda: hub.kubectl("get", "csr", "bob", "-o", "jsonpath={.status.certificate}").stdout,
                      what="the certificate")
    assert hub.kubectl("get", "csr", "bob").stdout.split("\n")[1].split()[-1] == "Approved,Issued"
    certificate = hub.dir / "bob.crt"
    certificate.write_bytes(base64.b64decode(issued))
    shown = subprocess.run(["openssl", "x509", "-in", str(certificate), "-noout", "-subject", "-issuer", "-ext",
                            "extendedKeyUsage"], capture_output=True, text=True, check=True).stdout
    assert "subject=CN = bob, O = kitchen-staff" in shown and "issuer=CN = kube-kitchen-ca" in shown
    assert "TLS Web Client Authentication" in shown

    kubeconfig = hub.dir / "kubeconfig-bob"
    kubeconfig.write_text(hub.kubeconfig.read_text())
    cluster = as_user(hub, kubeconfig, "config", "view", "-o", "jsonpath={.contexts[0].context.cluster}").stdout
    for step in (["config", "set-credentials", "bob", f"--client-certificate={certificate}",
                  f"--client-key={hub.dir / 'bob.key'}", "--embed-certs"],
                 ["config", "set-context", "bob", f"--cluster={cluster}", "--user=bob"],
                 ["config", "use-context", "bob"]):
        done = as_user(hub, kubeconfig, *step)
        assert done.returncode == 0, done.stderr
    whoami = as_user(hub, kubeconfig, "auth", "whoami", "-o", "json")
    assert json.loads(whoami.stdout)["status"]["userInfo"] == {
        "username": "bob", "groups": ["kitchen-staff", "system:authenticated"]}
    refused = as_user(hub, kubeconfig, "get", "pods")
    assert refused.returncode == 1
    assert refused.stderr.strip() == ('Error from server (Forbidden): pods is forbidden: User "bob" cannot list '
                                      'resource "pods" in API group "" in the namespace "default"')
    hub.kubectl("create", "rolebinding", "bob-view", "--clusterrole=view", "--user=bob")
    allowed = wait_for(lambda: (lambda r: r if r.returncode == 0 else None)(as_user(hub, kubeconfig, "get", "pods")),
                       what="bob's list allowed")
    assert allowed.stderr.strip() == "No resources found in default namespace."

    forged_key, forged = hub.dir / "mallory.key", hub.dir / "mallory.crt"  # a badge nobody issued
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(forged_key), "-out",
                    str(forged), "-days", "1", "-subj", "/CN=mallory/O=system:masters"], check=True, capture_output=True)
    as_user(hub, kubeconfig, "config", "set-credentials", "mallory", f"--client-certificate={forged}",
            f"--client-key={forged_key}", "--embed-certs")
    refused = as_user(hub, kubeconfig, "get", "pods", "--user=mallory")
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith("error: You must be logged in to the server (Unauthorized)")


def test_bad_requests_are_422_with_upstreams_messages_and_not_stored(kitchen):
    hub = kitchen
    good = openssl_request(hub, "carol", "/CN=carol")
    garbage = hub.kubectl("create", "-f", "-", check=False,
                          input=csr_manifest("garbage", b"hello", ["client auth"]))
    assert garbage.returncode == 1
    assert garbage.stderr.strip() == (
        'The CertificateSigningRequest "garbage" is invalid: spec.request: Invalid value: '
        '[]byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be CERTIFICATE REQUEST')
    signer = hub.kubectl("create", "-f", "-", check=False,
                         input=csr_manifest("nosigner", good, ["client auth"], signer="kitchen-signer"))
    assert signer.stderr.strip() == (
        'The CertificateSigningRequest "nosigner" is invalid: spec.signerName: Invalid value: "kitchen-signer": '
        "must be a fully qualified domain and path of the form 'example.com/signer-name'")
    short = hub.kubectl("create", "-f", "-", check=False,
                        input=csr_manifest("short", good, ["client auth"], seconds=60))
    assert "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds" in short.stderr
    masters = hub.kubectl("create", "-f", "-", check=False,
                          input=csr_manifest("root", openssl_request(hub, "root", "/CN=root/O=system:masters"),
                                             ["client auth"]))
    assert masters.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": certificatesigningrequests.certificates.k8s.io '
        '"root" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not '
        "allowed")
    names = hub.kubectl("get", "csr", "-o", "name").stdout.split()
    assert not {"certificatesigningrequest.certificates.k8s.io/" + n for n in ("garbage", "nosigner", "short", "root")} \
        & set(names)


def test_a_denied_request_is_never_signed_and_bad_usages_fail(kitchen):
    hub = kitchen
    hub.kubectl("create", "-f", "-", input=csr_manifest("dave", openssl_request(hub, "dave", "/CN=dave"),
                                                        ["client auth"]))
    assert hub.kubectl("certificate", "deny", "dave").stdout.strip() == \
        "certificatesigningrequest.certificates.k8s.io/dave denied"
    assert "is already Denied" in hub.kubectl("certificate", "approve", "dave", check=False).stderr  # kubectl's own guard
    denied = json.loads(hub.kubectl("get", "csr", "dave", "-o", "json").stdout)  # past kubectl's guard: the server's rule
    denied["status"]["conditions"].append({"type": "Approved", "status": "True", "reason": "Sneaky"})
    (hub.dir / "dave.json").write_text(json.dumps(denied))
    both = hub.kubectl("replace", "--raw", "/apis/certificates.k8s.io/v1/certificatesigningrequests/dave/approval",
                       "-f", str(hub.dir / "dave.json"), check=False)
    assert both.returncode == 1
    assert "status.conditions[1].type: Invalid value: \"Approved\": Approved and Denied conditions are mutually " \
        "exclusive" in both.stderr + both.stdout
    hub.kubectl("create", "-f", "-", input=csr_manifest("erin", openssl_request(hub, "erin", "/CN=erin"),
                                                        ["server auth"]))
    hub.kubectl("certificate", "approve", "erin")
    failed = wait_for(lambda: "Failed" in hub.kubectl("get", "csr", "erin").stdout and hub.kubectl(
        "get", "csr", "erin", "-o", "json").stdout, what="erin's Failed condition")
    conditions = {c["type"]: c for c in json.loads(failed)["status"]["conditions"]}
    assert conditions["Failed"]["reason"] == "SignerValidationFailure"
    assert conditions["Failed"]["message"] == "invalid usage for client certificate: server auth"
    assert hub.kubectl("get", "csr", "dave").stdout.split("\n")[1].split()[-1] == "Denied"
    assert not json.loads(failed)["status"].get("certificate")
    assert not hub.kubectl("get", "csr", "dave", "-o", "jsonpath={.status.certificate}").stdout


def test_the_badge_lesson_as_a_trainee_meets_it(kitchen, settings, tmp_path):
    """Lesson 21 step by step, as the lesson bar runs it (each check red before its step and green
    after, each "Do it" through `run_action`), and its kubectl commands run as written in a folder
    whose `lessons` is the checkout's, against the same hub."""
    import asyncio

    from control.client.http import HubClient
    from dashboard import discovery, lesson_checks
    from dashboard.lessons import load_all
    from tests.conftest import ROOT

    hub = kitchen
    settings.DATA_DIR = hub.dir  # the buttons find the hub's HTTPS address and CA in its data folder
    lesson = next(lesson for lesson in load_all().lessons if lesson.id == "21-new-cook-badge")
    (tmp_path / "lessons").symlink_to(ROOT / "lessons")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(hub.kubeconfig.read_text())

    def shell(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", " ".join(command.split())], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60, env={"KUBECONFIG": str(kubeconfig), "PATH": "/usr/bin:/bin",
                                                          "HOME": str(tmp_path)})

    async def with_client(work):
        client = HubClient(hub.url, agent="dashboard", token=hub.token)
        try:
            return await work(client)
        finally:
            await client.close()

    def do(step) -> lesson_checks.Done:
        return asyncio.run(with_client(lambda c: lesson_checks.run_action(c, step.action, discovery.resource_for)))

    def green(step) -> bool:
        return asyncio.run(with_client(lambda c: lesson_checks.run_check(c, step.check, discovery.resource_for))).ok

    request, approve, fetch, knock, role, again = lesson.steps
    assert not green(request) and not green(approve) and not green(role)
    assert do(request).message == "certificatesigningrequest.certificates.k8s.io/new-cook created"
    assert green(request) and not green(approve)
    assert hub.kubectl("get", "csr", "new-cook").stdout.split("\n")[1].split()[-1] == "Pending"
    assert do(approve).message == "certificatesigningrequest.certificates.k8s.io/new-cook approved"
    wait_for(lambda: green(approve), what="the approve step green (Approved and issued)")
    assert fetch.check is None and fetch.answer == 200  # a read: green on its answer, not on the CSR
    fetched_badge = do(fetch)
    assert fetched_badge.code == 200
    assert fetched_badge.message.startswith("badge: O=kitchen-staff,CN=new-cook, issued by kube-kitchen-ca, valid until ")
    fetched = shell(fetch.kubectl)
    assert fetched.returncode == 0, fetched.stderr
    refused = shell(knock.kubectl)
    assert refused.stderr.strip() == ('Error from server (Forbidden): pods is forbidden: User "new-cook" cannot '
                                      'list resource "pods" in API group "" in the namespace "default"')
    knocked = do(knock)
    assert knocked.code == knock.answer == 403 and 'User "new-cook" cannot list resource "pods"' in knocked.message
    assert shell(role.kubectl).returncode == 0 and green(role)
    allowed = wait_for(lambda: (lambda r: r if r.returncode == 0 else None)(shell(again.kubectl)),
                       what="the new cook allowed")
    assert allowed.stderr.strip() == "No resources found in default namespace."
    answered = do(again)
    assert answered.code == again.answer == 200
    assert answered.message == "allowed: 0 pod(s) listed with the badge of new-cook"
    whoami = shell("kubectl auth whoami --user=new-cook")
    assert whoami.stdout.split() == ["ATTRIBUTE", "VALUE", "Username", "new-cook", "Groups",
                                     "[kitchen-staff", "system:authenticated]"]
