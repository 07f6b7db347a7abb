"""Authentication: static tokens, ServiceAccount JWTs (signature, issuer, audience, expiry, bound
objects still there), anonymous, and upstream's 401."""

from __future__ import annotations

import pytest

from control import errors, keys
from control.auth import tokenfile
from control.auth.authenticate import ANONYMOUS, Authenticator, bearer_token, user_info
from control.clock import FakeClock
from control.kinds.tokens import AUDIENCES, token_claims

NOW = 1_800_000_000
ACCOUNT = {"metadata": {"name": "robot", "namespace": "ns1", "uid": "sa-uid"}}
POD = {"kind": "Pod", "metadata": {"name": "web", "namespace": "ns1", "uid": "pod-uid"}}


def stored(*objects):
    table = {(f"/{o.get('kind', 'ServiceAccount').lower()}s", o["metadata"]["namespace"], o["metadata"]["name"]): o
             for o in objects}
    return lambda resource, namespace, name: table.get((resource, namespace, name))


def token(folder, *, audiences=AUDIENCES, seconds=3600, bound=None, now=NOW, issuer=None):
    claims = token_claims(ACCOUNT, audiences=list(audiences), now=now, expiration_seconds=seconds,
                          token_id="jti", bound=bound)
    if issuer:
        claims["iss"] = issuer
    return keys.signer(folder)(claims)


@pytest.fixture
def authn(tmp_path):
    return Authenticator(tmp_path, FakeClock(NOW + 10))


def test_a_static_token_is_its_user_and_authenticated(authn, tmp_path):
    admin = tokenfile.admin_token(tmp_path)
    user = authn.user(f"Bearer {admin}", stored())
    assert (user.name, user.groups) == ("kubernetes-admin", ("system:masters", "system:authenticated"))


def test_no_token_is_anonymous_and_a_bad_one_is_unauthorized(authn):
    assert authn.user("", stored()) == ANONYMOUS
    assert ANONYMOUS.groups == ("system:unauthenticated",)
    with pytest.raises(errors.Unauthorized) as refused:
        authn.user("Bearer nope", stored())
    assert refused.value.status() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                      "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    assert bearer_token("Basic abc") is None


def test_a_service_account_token_is_its_account(authn, tmp_path):
    user = authn.user(f"Bearer {token(tmp_path)}", stored(ACCOUNT))
    assert user.name == "system:serviceaccount:ns1:robot"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated")
    assert user_info(user)["uid"] == "sa-uid"


@pytest.mark.parametrize("why", ["expired", "audience", "issuer", "account gone", "account replaced",
                                 "pod gone", "other key"])
def test_a_service_account_token_is_refused_when(why, authn, tmp_path):
    account, pod = dict(ACCOUNT), dict(POD)
    options = {"bound": POD}
    if why == "expired":
        authn.clock = FakeClock(NOW + 3601)
    elif why == "audience":
        options["audiences"] = ["vault"]
    elif why == "issuer":
        options["issuer"] = "https://elsewhere"
    elif why == "account replaced":
        account = {"metadata": {**ACCOUNT["metadata"], "uid": "another"}}
    folder = tmp_path / "other" if why == "other key" else tmp_path
    objects = [o for o, gone in ((account, why == "account gone"), (pod, why == "pod gone")) if not gone]
    with pytest.raises(errors.Unauthorized):
        authn.user(f"Bearer {token(folder, **options)}", stored(*objects))


def test_a_bound_token_carries_its_pod(authn, tmp_path):
    user = authn.user(f"Bearer {token(tmp_path, bound=POD)}", stored(ACCOUNT, POD))
    assert user.extra["authentication.kubernetes.io/pod-name"] == ["web"]


def test_the_token_file_is_read_again_when_it_changes(authn, tmp_path):
    tokenfile.ensure(tmp_path)
    with pytest.raises(errors.Unauthorized):
        authn.user("Bearer late", stored())
    with tokenfile.path(tmp_path).open("a") as f:
        f.write("late,latecomer,l1,team\n")
    assert authn.user("Bearer late", stored()).groups == ("team", "system:authenticated")


def test_a_known_token_is_trusted_from_memory_and_a_removed_one_stops_within_the_recheck(authn, tmp_path):
    tokenfile.ensure(tmp_path)
    with tokenfile.path(tmp_path).open("a") as f:
        f.write("gone-soon,leaver,u1,team\n")
    assert authn.user("Bearer gone-soon", stored()).name == "leaver"
    target = tokenfile.path(tmp_path)
    target.write_text("".join(line + "\n" for line in target.read_text().splitlines() if "gone-soon" not in line))
    assert authn.user("Bearer gone-soon", stored()).name == "leaver"  # within RECHECK: from memory, no stat
    authn.clock.t += authn.tokens.RECHECK
    with pytest.raises(errors.Unauthorized):
        authn.user("Bearer gone-soon", stored())
