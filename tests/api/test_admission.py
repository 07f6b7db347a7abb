"""Admission on the generic create path: a kind's `admit` hook runs with a read-only lookup into
the store after the namespace is known to exist (a pod's ServiceAccount admission here)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def create_pod(api, spec, namespace="default", name="p"):
    answer = api.post(f"/api/v1/namespaces/{namespace}/pods",
                      json.dumps({"metadata": {"name": name}, "spec": spec}))
    return answer.status_code, json.loads(answer.content)


def test_a_pod_gets_its_account_and_the_token_volume(api):
    status, pod = create_pod(api, {"containers": [{"name": "c", "image": "nginx"}]})
    assert status == 201
    assert pod["spec"]["serviceAccountName"] == "default"
    [volume] = pod["spec"]["volumes"]
    assert volume["name"].startswith("kube-api-access-")
    assert pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"


def test_admission_reads_the_account_from_the_store(api):
    api.post("/api/v1/namespaces/default/serviceaccounts",
             json.dumps({"metadata": {"name": "quiet"}, "automountServiceAccountToken": False}))
    status, pod = create_pod(api, {"serviceAccountName": "quiet", "containers": [{"name": "c", "image": "nginx"}]})
    assert status == 201 and "volumes" not in pod["spec"]


def test_a_missing_account_is_forbidden_and_nothing_is_stored(api):
    status, body = create_pod(api, {"serviceAccountName": "sa", "containers": [{"name": "c", "image": "nginx"}]}, name="x")
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == 'pods "x" is forbidden: error looking up service account default/sa: serviceaccount "sa" not found'
    assert body["details"] == {"name": "x", "kind": "pods"}
    assert api.get("/api/v1/namespaces/default/pods/x").status_code == 404


def test_dry_run_is_admitted_too_and_a_missing_namespace_comes_first(api):
    answer = api.post("/api/v1/namespaces/default/pods", json.dumps(
        {"metadata": {"name": "d"}, "spec": {"serviceAccountName": "sa", "containers": [{"name": "c", "image": "x"}]}}),
        QUERY_STRING="dryRun=All")
    assert answer.status_code == 403
    status, body = create_pod(api, {"serviceAccountName": "sa", "containers": [{"name": "c"}]}, namespace="nowhere")
    assert status == 404 and body["message"] == 'namespaces "nowhere" not found'
