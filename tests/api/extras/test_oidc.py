"""ServiceAccount tokens through the hub: POST serviceaccounts/NAME/token answers a JWT that
verifies against the hub's own /openid/v1/jwks (signature, audience, expiry), and the discovery
documents say where to find that key."""

from __future__ import annotations

import json

import jwt
import pytest

from control.api import verbs
from control.clock import REAL, FakeClock

pytestmark = pytest.mark.django_db(transaction=True)

ISSUER = "https://kubernetes.default.svc.cluster.local"


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    return tmp_path


def post(api, path, body):
    answer = api.post(path, json.dumps(body))
    return answer.status_code, json.loads(answer.content)


def make_account(api, name="robot", namespace="default"):
    status, _ = post(api, f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": name}})
    assert status == 201


def published_key(api):
    answer = api.get("/openid/v1/jwks")
    assert answer.status_code == 200 and answer["content-type"] == "application/jwk-set+json"
    [key] = json.loads(answer.content)["keys"]
    return key


def test_the_openid_configuration_points_at_the_key_set(api):
    answer = api.get("/.well-known/openid-configuration")
    assert answer.status_code == 200
    assert json.loads(answer.content) == {
        "issuer": ISSUER, "jwks_uri": ISSUER + "/openid/v1/jwks", "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["ES256"]}


def test_a_token_verifies_against_the_published_key(api, data_dir):
    make_account(api)
    status, answer = post(api, "/api/v1/namespaces/default/serviceaccounts/robot/token",
                          {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                           "spec": {"audiences": ["vault"], "expirationSeconds": 600}})
    assert status == 201 and answer["kind"] == "TokenRequest"
    token = answer["status"]["token"]
    published = published_key(api)
    assert jwt.get_unverified_header(token) == {"alg": "ES256", "kid": published["kid"], "typ": "JWT"}
    claims = jwt.decode(token, jwt.PyJWK(published).key, algorithms=["ES256"], audience="vault", issuer=ISSUER)
    assert claims["sub"] == "system:serviceaccount:default:robot" and claims["exp"] - claims["iat"] == 600
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(token, jwt.PyJWK(published).key, algorithms=["ES256"], audience=ISSUER)
    assert (data_dir / "keys" / "sa.key").exists()


def test_an_expired_token_no_longer_verifies(api, monkeypatch):
    make_account(api)
    monkeypatch.setattr(verbs, "clock", FakeClock(REAL.now() - 3601))  # issued by the hub's clock, an hour ago
    _, answer = post(api, "/api/v1/namespaces/default/serviceaccounts/robot/token", {"spec": {}})
    key = jwt.PyJWK(published_key(api)).key
    claims = jwt.decode(answer["status"]["token"], key, algorithms=["ES256"], audience=ISSUER,
                        options={"verify_exp": False})
    assert claims["aud"] == [ISSUER] and claims["exp"] - claims["iat"] == 3600
    with pytest.raises(jwt.ExpiredSignatureError):
        jwt.decode(answer["status"]["token"], key, algorithms=["ES256"], audience=ISSUER)


def test_a_token_bound_to_a_pod_names_it(api):
    make_account(api)
    status, created = post(api, "/api/v1/namespaces/default/pods",
                           {"metadata": {"name": "p"}, "spec": {"serviceAccountName": "robot",
                                                                "containers": [{"name": "c", "image": "nginx"}]}})
    assert status == 201
    _, answer = post(api, "/api/v1/namespaces/default/serviceaccounts/robot/token",
                     {"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}})
    claims = jwt.decode(answer["status"]["token"], options={"verify_signature": False})
    assert claims["kubernetes.io"]["pod"] == {"name": "p", "uid": created["metadata"]["uid"]}


def test_refusals_are_statuses(api):
    make_account(api)
    status, body = post(api, "/api/v1/namespaces/default/serviceaccounts/robot/token", {"spec": {"expirationSeconds": 60}})
    assert status == 422 and body["reason"] == "Invalid"
    assert body["message"] == ('TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
                               "Invalid value: 60: may not specify a duration less than 10 minutes")
    status, body = post(api, "/api/v1/namespaces/default/serviceaccounts/nobody/token", {"spec": {}})
    assert status == 404 and body["message"] == 'serviceaccounts "nobody" not found'
    status, body = post(api, "/api/v1/namespaces/default/serviceaccounts/robot/token", {"kind": "Pod"})
    assert status == 400
    status, body = post(api, "/api/v1/namespaces/default/serviceaccounts/robot/token",
                        {"spec": {"boundObjectRef": {"kind": "Pod", "name": "absent"}}})
    assert status == 404 and body["message"] == 'pods "absent" not found'
    answer = api.get("/api/v1/namespaces/default/serviceaccounts/robot/token")
    assert answer.status_code == 405


def test_discovery_lists_the_token_subresource(api):
    resources = json.loads(api.get("/api/v1").content)["resources"]
    [token] = [r for r in resources if r["name"] == "serviceaccounts/token"]
    assert (token["group"], token["version"], token["kind"], token["verbs"]) == (
        "authentication.k8s.io", "v1", "TokenRequest", ["create"])
