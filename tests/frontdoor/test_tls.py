"""HTTPS at the front door: the Secret an Ingress names for the host a client asks for (SNI),
exact before wildcard, the fake certificate otherwise, and contexts made once per Secret version."""

from __future__ import annotations

import base64
import ssl

from control.frontdoor.tls import Certificates, fake_certificate, pem_of, redirected_hosts, secret_for, tls_table


def ingress(name: str, created: str, *entries) -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "creationTimestamp": created},
            "spec": {"tls": [{"hosts": list(hosts), "secretName": secret} for hosts, secret in entries]}}


def test_the_table_and_the_choice_by_name():
    table = tls_table([ingress("new", "2026-01-02T00:00:00Z", (["menu.example"], "new-cert")),
                       ingress("old", "2026-01-01T00:00:00Z", (["menu.example", "*.menu.example"], "old-cert"))])
    assert table == {"menu.example": ("ns", "old-cert"), "*.menu.example": ("ns", "old-cert")}
    assert secret_for("MENU.example", table) == ("ns", "old-cert")
    assert secret_for("soup.menu.example", table) == ("ns", "old-cert")
    assert secret_for("a.soup.menu.example", table) is None
    assert secret_for(None, table) is None
    assert secret_for("other.example", table) is None


def secret(version: str = "1") -> dict:
    cert, key = fake_certificate()
    return {"type": "kubernetes.io/tls", "metadata": {"resourceVersion": version},
            "data": {"tls.crt": base64.b64encode(cert).decode(), "tls.key": base64.b64encode(key).decode()}}


def test_contexts_per_secret_and_the_default_otherwise():
    secrets = {("ns", "good"): secret(), ("ns", "opaque"): {**secret(), "type": "Opaque"},
               ("ns", "broken"): {"type": "kubernetes.io/tls", "data": {"tls.crt": "bm90", "tls.key": "bm90"}}}
    table = {"good.example": ("ns", "good"), "opaque.example": ("ns", "opaque"),
             "broken.example": ("ns", "broken"), "missing.example": ("ns", "missing")}
    certificates = Certificates(lambda ns, name: secrets.get((ns, name)), lambda: table)
    good = certificates.context_for("good.example")
    assert isinstance(good, ssl.SSLContext) and good is not certificates.default
    assert certificates.context_for("good.example") is good  # made once per resourceVersion
    secrets[("ns", "good")] = secret("2")
    assert certificates.context_for("good.example") is not good
    for name in ("opaque.example", "broken.example", "missing.example", "nobody.example", None):
        assert certificates.context_for(name) is certificates.default
    assert certificates.server_context() is certificates.default
    assert certificates.default.sni_callback is not None


def test_pem_of_needs_a_tls_secret_with_both_parts():
    assert pem_of(None) is None
    assert pem_of({"type": "kubernetes.io/tls", "data": {"tls.crt": "YQ=="}}) is None
    assert pem_of(secret()) is not None


def test_redirected_hosts_leave_out_an_ingress_that_says_no():
    listed = ingress("a", "2026-01-01T00:00:00Z", (["a.example"], "a"))
    kept = ingress("b", "2026-01-01T00:00:00Z", (["b.example"], "b"))
    kept["metadata"]["annotations"] = {"nginx.ingress.kubernetes.io/ssl-redirect": "false"}
    assert set(redirected_hosts([listed, kept])) == {"a.example"}
