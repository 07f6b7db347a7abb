"""Admission on the generic create path: a kind's `admit` hook runs with a read-only lookup into
the store after the namespace is known to exist (a pod's ServiceAccount admission here)."""

from __future__ import annotations

import json

import pytest

from control.api import admission

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


# --- NamespaceLifecycle (control.api.admission) ---------------------------------------------------

@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_the_immortal_namespaces_may_not_be_deleted(api, name):
    api.post("/api/v1/namespaces", json.dumps({"metadata": {"name": name}}))  # bootstrap made most of them
    answer = api.delete(f"/api/v1/namespaces/{name}")
    body = json.loads(answer.content)
    assert answer.status_code == 403 and body["reason"] == "Forbidden"
    assert body["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    assert body["details"] == {"name": name, "kind": "namespaces"}
    ns = json.loads(api.get(f"/api/v1/namespaces/{name}").content)
    assert "deletionTimestamp" not in ns["metadata"] and ns["status"]["phase"] == "Active"


def test_a_dry_run_delete_of_default_is_refused_too_and_other_namespaces_go(api):
    assert api.delete("/api/v1/namespaces/default", QUERY_STRING="dryRun=All").status_code == 403
    api.post("/api/v1/namespaces", json.dumps({"metadata": {"name": "scratch"}}))
    assert api.delete("/api/v1/namespaces/scratch").status_code == 200


def test_deleting_every_namespace_spares_the_immortal_ones_and_says_so(api):
    api.post("/api/v1/namespaces", json.dumps({"metadata": {"name": "scratch"}}))
    answer = api.delete("/api/v1/namespaces")
    assert answer.status_code == 403 and "this namespace may not be deleted" in json.loads(answer.content)["message"]
    scratch = json.loads(api.get("/api/v1/namespaces/scratch").content)
    assert scratch["status"]["phase"] == "Terminating"
    assert "deletionTimestamp" not in json.loads(api.get("/api/v1/namespaces/default").content)["metadata"]


def test_nothing_is_created_in_a_terminating_namespace(api):
    api.post("/api/v1/namespaces", json.dumps({"metadata": {"name": "leaving"}}))
    assert api.delete("/api/v1/namespaces/leaving").status_code == 200  # held by spec.finalizers: Terminating
    answer = api.post("/api/v1/namespaces/leaving/configmaps", json.dumps({"metadata": {"name": "late"}}))
    body = json.loads(answer.content)
    assert answer.status_code == 403 and body["reason"] == "Forbidden"
    assert body["message"] == ('configmaps "late" is forbidden: unable to create new content in namespace leaving '
                               'because it is being terminated')
    assert body["details"] == {"name": "late", "kind": "configmaps", "causes": [
        {"reason": "NamespaceTerminating", "message": "namespace leaving is being terminated",
         "field": "metadata.namespace"}]}
    assert api.get("/api/v1/namespaces/leaving/configmaps/late").status_code == 404
    apps = api.post("/apis/apps/v1/namespaces/leaving/deployments", json.dumps({"metadata": {"generateName": "web-"}}))
    assert apps.status_code == 403
    assert json.loads(apps.content)["details"]["group"] == "apps"


def test_create_in_a_missing_namespace_is_404(api):
    answer = api.post("/api/v1/namespaces/ghost/configmaps", json.dumps({"metadata": {"name": "c"}}))
    body = json.loads(answer.content)
    assert answer.status_code == 404 and body["message"] == 'namespaces "ghost" not found'
    assert body["details"] == {"name": "ghost", "kind": "namespaces"}


@pytest.mark.parametrize("method,path", [("DELETE", "/api/v1/pods"), ("DELETE", "/api/v1/configmaps"),
                                         ("POST", "/api/v1/configmaps"), ("DELETE", "/apis/apps/v1/deployments")])
def test_writes_on_the_all_namespaces_path_are_405(api, method, path):
    api.post("/api/v1/namespaces/default/configmaps", json.dumps({"metadata": {"name": "kept"}}))
    answer = api.request(method, path, json.dumps({"metadata": {"name": "x"}}) if method == "POST" else "")
    body = json.loads(answer.content)
    assert answer.status_code == 405 and body["reason"] == "MethodNotAllowed"
    assert api.get("/api/v1/namespaces/default/configmaps/kept").status_code == 200
    assert api.get(path).status_code == 200  # list across namespaces still works



def test_a_stored_text_is_decoded_once_and_the_oldest_go_first():
    decoded: list[str] = []
    bodies = admission.DecodedBodies(max_chars=70, decode=lambda text: decoded.append(text) or json.loads(text))
    a, b, c = '{"n": "a", "pad": "xxxxxxxxxxxx"}', '{"n": "b"}', '{"n": "c", "pad": "xxxxxxxxxx"}'
    first = bodies.decoded(a)
    assert bodies.decoded(a) is first and decoded == [a]  # the same text: the same object, not decoded again
    bodies.decoded(b)
    bodies.decoded(a)  # a is now the most recently used
    bodies.decoded(c)  # 33 + 10 + 31 chars > 70: b, the least recently used, goes
    assert bodies.decoded(a) is first and bodies.decoded(c) and decoded == [a, b, c]
    bodies.decoded(b)
    assert decoded == [a, b, c, b]
    huge = '{"n": "' + "h" * 100 + '"}'
    assert bodies.decoded(huge) == {"n": "h" * 100} and bodies.decoded(huge) is not bodies.decoded(huge)  # never kept


def test_a_pod_create_under_a_quota_decodes_only_what_changed_since_the_last(api, monkeypatch):
    """ResourceQuota admission counts the namespace's pods at each create: each stored text once,
    not every pod again at every create."""
    assert api.post("/api/v1/namespaces/default/resourcequotas",
                    json.dumps({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "50"}}})).status_code == 201
    decoded: list[str] = []
    monkeypatch.setattr(admission, "_DECODED", admission.DecodedBodies(
        decode=lambda text: decoded.append(json.loads(text)["metadata"]["name"]) or json.loads(text)))
    for n in range(6):
        pod = {"metadata": {"name": f"p{n}"}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
        assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod)).status_code == 201
    pods = [name for name in decoded if name.startswith("p") and name[1:].isdigit()]
    assert pods == ["p0", "p1", "p2", "p3", "p4"]  # each pod once, each counted by the creates after it
