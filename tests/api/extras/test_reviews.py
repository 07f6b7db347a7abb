"""The review APIs in process: access reviews (self, subject, local), rules review, whoami and
token review."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from control.auth import tokenfile
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)
AUTHZ = "/apis/authorization.k8s.io/v1"
AUTHN = "/apis/authentication.k8s.io/v1"



@pytest.fixture(autouse=True)
def authentication_on(settings):
    settings.KK_AUTHENTICATION = "on"  # off by default until the dashboard can log in


@pytest.fixture
def alice(api):
    binding = {"metadata": {"name": "alice-view"}, "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}}
    assert api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
                    json.dumps(binding)).status_code == 201
    client = ApiClient(token=tokenfile.token_of(settings.DATA_DIR, "alice"))
    yield client
    client.close()


def review(client, path, body) -> tuple[int, dict]:
    answer = client.post(path, json.dumps(body))
    return answer.status_code, json.loads(answer.content)


def ssar(verb, resource, ns="", sub=""):
    return {"spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": ns,
                                            "subresource": sub}}}


def test_self_subject_access_review_answers_for_the_caller(alice):
    code, answer = review(alice, f"{AUTHZ}/selfsubjectaccessreviews", ssar("list", "pods", "default"))
    assert code == 201 and answer["status"] == {"allowed": True}
    assert answer["kind"] == "SelfSubjectAccessReview" and answer["apiVersion"] == "authorization.k8s.io/v1"
    assert review(alice, f"{AUTHZ}/selfsubjectaccessreviews", ssar("delete", "pods", "default"))[1]["status"] == \
        {"allowed": False}
    assert review(alice, f"{AUTHZ}/selfsubjectaccessreviews", ssar("get", "pods", "default", "exec"))[1][
        "status"]["allowed"] is False
    non = {"spec": {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}}
    assert review(alice, f"{AUTHZ}/selfsubjectaccessreviews", non)[1]["status"]["allowed"] is True


def test_an_access_review_needs_exactly_one_kind_of_attributes(alice):
    code, answer = review(alice, f"{AUTHZ}/selfsubjectaccessreviews", {"spec": {}})
    assert code == 422 and answer["reason"] == "Invalid"


def test_subject_access_review_is_the_admins_and_asks_about_anyone(api, alice):
    body = {"spec": {"user": "alice", **ssar("watch", "configmaps", "default")["spec"]}}
    assert review(api, f"{AUTHZ}/subjectaccessreviews", body)[1]["status"] == {"allowed": True}
    body["spec"]["resourceAttributes"]["namespace"] = "kube-system"
    assert review(api, f"{AUTHZ}/subjectaccessreviews", body)[1]["status"] == {"allowed": False}
    code, answer = review(alice, f"{AUTHZ}/subjectaccessreviews", body)
    assert code == 403 and 'cannot create resource "subjectaccessreviews"' in answer["message"]
    assert review(api, f"{AUTHZ}/subjectaccessreviews", {"spec": ssar("get", "pods")["spec"]})[0] == 422


def test_rules_review_lists_the_callers_rules_in_a_namespace(alice):
    code, answer = review(alice, f"{AUTHZ}/selfsubjectrulesreviews", {"spec": {"namespace": "default"}})
    assert code == 201 and answer["status"]["incomplete"] is False
    resources = {r for rule in answer["status"]["resourceRules"] for r in rule.get("resources", [])}
    assert {"pods", "selfsubjectaccessreviews", "deployments"} <= resources
    assert {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]} in \
        answer["status"]["nonResourceRules"]
    elsewhere = review(alice, f"{AUTHZ}/selfsubjectrulesreviews", {"spec": {"namespace": "kube-system"}})[1]
    assert "pods" not in {r for rule in elsewhere["status"]["resourceRules"] for r in rule.get("resources", [])}


def test_whoami_and_token_review(api, alice):
    code, answer = review(alice, f"{AUTHN}/selfsubjectreviews", {})
    assert code == 201
    assert answer["status"]["userInfo"] == {"username": "alice", "uid": "alice", "groups": ["system:authenticated"]}
    token = tokenfile.token_of(settings.DATA_DIR, "alice")
    answer = review(api, f"{AUTHN}/tokenreviews", {"spec": {"token": token}})[1]
    assert answer["status"]["authenticated"] is True and answer["status"]["user"]["username"] == "alice"
    assert review(api, f"{AUTHN}/tokenreviews", {"spec": {"token": "nope"}})[1]["status"] == {"user": {}}
