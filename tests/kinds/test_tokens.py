"""The claims of a ServiceAccount token and the lifetime rules, as upstream writes them."""

from __future__ import annotations

from control.kinds.tokens import expiration_causes, subject, token_claims

SA = {"metadata": {"name": "build", "namespace": "ci", "uid": "u-1"}}


def test_claims_carry_the_registered_and_private_claims():
    claims = token_claims(SA, audiences=["a", "b"], now=100, expiration_seconds=600, token_id="j-1")
    assert claims == {"aud": ["a", "b"], "exp": 700, "iat": 100, "nbf": 100,
                      "iss": "https://kubernetes.default.svc.cluster.local", "jti": "j-1",
                      "sub": "system:serviceaccount:ci:build",
                      "kubernetes.io": {"namespace": "ci", "serviceaccount": {"name": "build", "uid": "u-1"}}}


def test_a_bound_secret_is_named_under_its_kind():
    secret = {"kind": "Secret", "metadata": {"name": "s", "uid": "u-s"}}
    claims = token_claims(SA, audiences=["a"], now=0, expiration_seconds=600, token_id="j", bound=secret)
    assert claims["kubernetes.io"]["secret"] == {"name": "s", "uid": "u-s"}
    assert "pod" not in claims["kubernetes.io"]


def test_lifetimes_between_ten_minutes_and_two_to_the_32_seconds():
    assert expiration_causes(600) == [] and expiration_causes(1 << 32) == []
    assert expiration_causes(599)[0]["message"].endswith("less than 10 minutes")
    assert expiration_causes((1 << 32) + 1)[0]["message"].endswith("larger than 2^32 seconds")
    assert expiration_causes(True)[0]["field"] == "spec.expirationSeconds"
    assert subject("ns", "n") == "system:serviceaccount:ns:n"
