"""ServiceAccounts and tokens with the real kubectl (v1.32) against a real hub and its
controller-manager: what a learner types in the first hour, and a token verified the way any
outsider would verify it (the hub's JWKS fetched with httpx, the key built from the JWK)."""

from __future__ import annotations

import json
import uuid

import httpx
import jwt
import pytest

from tests.conftest import Hub, Spoke, wait_for

pytestmark = pytest.mark.e2e

ISSUER = "https://kubernetes.default.svc.cluster.local"


@pytest.fixture(scope="module")
def cluster():
    hub = Hub().start()
    manager = Spoke(hub, "controller-manager").start()
    yield hub
    manager.stop()
    hub.stop()


@pytest.fixture
def ns(cluster) -> str:
    name = f"sa-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("create", "namespace", name)
    return name


def names(cluster, *args: str) -> list[str]:
    items = json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)["items"]
    return sorted(item["metadata"]["name"] for item in items)


def test_every_namespace_gets_default_and_the_ca_and_default_comes_back(cluster, ns):
    wait_for(lambda: names(cluster, "sa", "-n", ns) == ["default"], what="the default ServiceAccount")
    cm = wait_for(lambda: "kube-root-ca.crt" in names(cluster, "cm", "-n", ns) and
                  json.loads(cluster.kubectl("get", "cm", "kube-root-ca.crt", "-n", ns, "-o", "json").stdout),
                  what="kube-root-ca.crt")
    assert cm["data"]["ca.crt"] == (cluster.dir / "keys" / "ca.crt").read_text()
    uid = json.loads(cluster.kubectl("get", "sa", "default", "-n", ns, "-o", "json").stdout)["metadata"]["uid"]
    cluster.kubectl("delete", "sa", "default", "-n", ns)
    again = wait_for(lambda: "default" in names(cluster, "sa", "-n", ns) and
                     json.loads(cluster.kubectl("get", "sa", "default", "-n", ns, "-o", "json").stdout),
                     what="default made again")
    assert again["metadata"]["uid"] != uid


def test_create_and_get_serviceaccount(cluster, ns):
    assert cluster.kubectl("create", "serviceaccount", "robot", "-n", ns).stdout.strip() == "serviceaccount/robot created"
    lines = cluster.kubectl("get", "sa", "robot", "-n", ns).stdout.splitlines()
    assert lines[0].split() == ["NAME", "SECRETS", "AGE"] and lines[1].split()[:2] == ["robot", "0"]


def test_create_token_verifies_against_the_hubs_jwks(cluster, ns):
    cluster.kubectl("create", "serviceaccount", "robot", "-n", ns)
    token = cluster.kubectl("create", "token", "robot", "-n", ns, "--duration", "10m").stdout.strip()
    config = httpx.get(f"{cluster.url}/.well-known/openid-configuration", headers=cluster.auth).json()
    assert config["issuer"] == ISSUER and config["jwks_uri"].endswith("/openid/v1/jwks")
    [published] = httpx.get(f"{cluster.url}/openid/v1/jwks", headers=cluster.auth).json()["keys"]
    assert jwt.get_unverified_header(token)["kid"] == published["kid"]
    claims = jwt.decode(token, jwt.PyJWK(published).key, algorithms=["ES256"], audience=ISSUER, issuer=ISSUER)
    assert claims["sub"] == f"system:serviceaccount:{ns}:robot"
    assert claims["exp"] - claims["iat"] == 600
    assert claims["kubernetes.io"]["namespace"] == ns
    too_short = cluster.kubectl("create", "token", "robot", "-n", ns, "--duration", "1m", check=False)
    assert too_short.returncode != 0 and "may not specify a duration less than 10 minutes" in too_short.stderr


def test_pods_get_their_account_and_token_volume_or_are_refused(cluster, ns):
    wait_for(lambda: names(cluster, "sa", "-n", ns) == ["default"], what="the default ServiceAccount")
    cluster.kubectl("run", "web", "--image=nginx", "-n", ns)
    pod = json.loads(cluster.kubectl("get", "pod", "web", "-n", ns, "-o", "json").stdout)
    assert pod["spec"]["serviceAccountName"] == "default"
    [volume] = pod["spec"]["volumes"]
    assert volume["name"].startswith("kube-api-access-")
    assert pod["spec"]["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    bound = cluster.kubectl("create", "token", "default", "-n", ns, "--bound-object-kind", "Pod",
                            "--bound-object-name", "web").stdout.strip()
    assert jwt.decode(bound, options={"verify_signature": False})["kubernetes.io"]["pod"]["uid"] == pod["metadata"]["uid"]
    refused = cluster.kubectl("run", "lost", "--image=nginx", "-n", ns,
                              '--overrides={"spec":{"serviceAccountName":"ghost"}}', check=False)
    assert refused.returncode != 0
    assert (f'pods "lost" is forbidden: error looking up service account {ns}/ghost: serviceaccount "ghost" not found'
            in refused.stderr)
