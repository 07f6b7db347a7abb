"""The hub's front door, through the ASGI app: 401 for a bad token, 403 with the apiserver's
message for what RBAC denies (anonymous included), impersonation, escalation prevention and the
node restriction."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from control.auth import policystore, tokenfile
from control.bootstrap import cluster_bootstrap
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def token(user: str, groups: tuple[str, ...] = ()) -> str:
    return tokenfile.token_of(settings.DATA_DIR, user, groups)


def body(answer) -> dict:
    return json.loads(answer.content)


def pod(name: str, node: str = "") -> str:
    spec = {"containers": [{"name": "c", "image": "nginx"}], **({"nodeName": node} if node else {})}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


@pytest.fixture(autouse=True)
def authentication_on(settings):
    settings.KK_AUTHENTICATION = "on"  # off by default until the dashboard can log in


@pytest.fixture
def hub():
    policystore.forget()
    cluster_bootstrap()
    clients = {"admin": ApiClient(), "anonymous": ApiClient(token=""), "alice": ApiClient(token=token("alice")),
               "bogus": ApiClient(token="not-a-token")}
    admin = clients["admin"]
    for ns in ("alice", "bob"):
        assert admin.post("/api/v1/namespaces", json.dumps({"metadata": {"name": ns}})).status_code == 201
    binding = {"metadata": {"name": "alice-edit"}, "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"}}
    assert admin.post(f"{RBAC}/namespaces/alice/rolebindings", json.dumps(binding)).status_code == 201
    yield clients
    for client in clients.values():
        client.close()


def test_an_unknown_token_is_a_401_as_kube_apiserver_answers(hub):
    answer = hub["bogus"].get("/api/v1/namespaces/default/pods")
    assert answer.status_code == 401
    assert body(answer) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_anonymous_gets_public_info_and_403_for_the_rest(hub):
    anonymous = hub["anonymous"]
    assert anonymous.get("/healthz").status_code == 200
    assert anonymous.get("/version").status_code == 200
    answer = anonymous.get("/api")
    assert answer.status_code == 403
    assert body(answer)["message"] == 'forbidden: User "system:anonymous" cannot get path "/api"'
    answer = anonymous.get("/api/v1/pods")
    assert body(answer)["message"] == ('pods is forbidden: User "system:anonymous" cannot list resource "pods" in '
                                       'API group "" at the cluster scope')


def test_edit_in_one_namespace_and_the_exact_403_in_another(hub):
    alice = hub["alice"]
    assert alice.post("/api/v1/namespaces/alice/pods", pod("web")).status_code == 201
    assert alice.get("/api/v1/namespaces/alice/pods").status_code == 200
    answer = alice.get("/api/v1/namespaces/bob/pods")
    assert answer.status_code == 403
    assert body(answer) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "bob"',
        "reason": "Forbidden", "details": {"kind": "pods"}, "code": 403}
    watch = alice.get("/api/v1/namespaces/bob/pods", QUERY_STRING="watch=1")
    assert "cannot watch resource" in body(watch)["message"]
    assert "cannot list resource \"pods\" in API group \"\" at the cluster scope" in \
        body(alice.get("/api/v1/pods"))["message"]
    scale = alice.get("/apis/apps/v1/namespaces/bob/deployments/web/scale")
    assert body(scale)["message"] == ('deployments.apps "web" is forbidden: User "alice" cannot get resource '
                                      '"deployments/scale" in API group "apps" in the namespace "bob"')
    log = alice.get("/api/v1/namespaces/bob/pods/web/log")
    assert 'cannot get resource "pods/log"' in body(log)["message"]


def test_a_grant_applies_to_the_next_request(hub):
    alice = hub["alice"]
    assert alice.get("/api/v1/namespaces/bob/configmaps").status_code == 403
    binding = {"metadata": {"name": "alice-view"}, "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}}
    assert hub["admin"].post(f"{RBAC}/namespaces/bob/rolebindings", json.dumps(binding)).status_code == 201
    assert alice.get("/api/v1/namespaces/bob/configmaps").status_code == 200


def test_escalation_needs_the_permissions_or_escalate_and_bind(hub):
    admin, alice = hub["admin"], hub["alice"]
    binding = {"metadata": {"name": "alice-admin"}, "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"}}
    assert admin.post(f"{RBAC}/namespaces/alice/rolebindings", json.dumps(binding)).status_code == 201
    held = {"metadata": {"name": "reader"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}
    assert alice.post(f"{RBAC}/namespaces/alice/roles", json.dumps(held)).status_code == 201
    greedy = {"metadata": {"name": "greedy"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["nodes"]}]}
    answer = alice.post(f"{RBAC}/namespaces/alice/roles", json.dumps(greedy))
    assert answer.status_code == 403
    assert body(answer)["message"] == (
        'roles.rbac.authorization.k8s.io "greedy" is forbidden: user "alice" (groups=["system:authenticated"]) is '
        'attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], '
        'Verbs:["get"]}')
    to_admin = {"metadata": {"name": "bob-admin"}, "subjects": [{"kind": "User", "name": "bob"}],
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}}
    assert alice.post(f"{RBAC}/namespaces/alice/rolebindings", json.dumps(to_admin)).status_code == 403
    to_edit = {**to_admin, "roleRef": {**to_admin["roleRef"], "name": "edit"}}
    assert alice.post(f"{RBAC}/namespaces/alice/rolebindings", json.dumps(to_edit)).status_code == 201


def test_impersonation_needs_the_impersonate_verb(hub):
    as_alice = hub["admin"].get("/api/v1/namespaces/bob/pods", HTTP_IMPERSONATE_USER="alice")
    assert 'User "alice" cannot list' in body(as_alice)["message"]
    assert hub["admin"].get("/api/v1/namespaces/alice/pods", HTTP_IMPERSONATE_USER="alice").status_code == 200
    refused = hub["alice"].get("/api/v1/namespaces/alice/pods", HTTP_IMPERSONATE_USER="kubernetes-admin")
    assert refused.status_code == 403
    assert body(refused)["message"] == ('users "kubernetes-admin" is forbidden: User "alice" cannot impersonate '
                                        'resource "users" in API group "" at the cluster scope')


def test_a_kubelet_writes_only_its_own_node_and_pods(hub):
    admin = hub["admin"]
    for name, node in (("mine", "node-1"), ("theirs", "node-2")):
        assert admin.post("/api/v1/namespaces/alice/pods", pod(name, node)).status_code == 201
    kubelet = ApiClient(token=token("system:node:node-1", ("system:nodes",)))
    try:
        patch = json.dumps({"status": {"message": "x"}})
        merge = "application/merge-patch+json"
        assert kubelet.patch("/api/v1/namespaces/alice/pods/mine/status", patch, merge).status_code == 200
        answer = kubelet.patch("/api/v1/namespaces/alice/pods/theirs/status", patch, merge)
        assert answer.status_code == 403
        assert body(answer)["message"] == ('pods "theirs" is forbidden: node "node-1" can only update pod status '
                                           "for pods with spec.nodeName set to itself")
        assert kubelet.delete("/api/v1/namespaces/alice/pods/theirs").status_code == 403
        # the kubelet's own way to write status: PUT of the whole pod, as read (also as a dry run)
        theirs = body(admin.get("/api/v1/namespaces/alice/pods/theirs"))
        sent = json.dumps({**theirs, "status": {"message": "mine now"}})
        for query in ("", "?dryRun=All"):
            answer = kubelet.put(f"/api/v1/namespaces/alice/pods/theirs/status{query}", sent)
            assert answer.status_code == 403 and "can only update pod status" in body(answer)["message"]
        # server-side apply of someone else's pod's status
        applied = "application/apply-patch+yaml"
        answer = kubelet.patch("/api/v1/namespaces/alice/pods/theirs/status?fieldManager=k", sent, applied)
        assert answer.status_code == 403 and "can only update pod status" in body(answer)["message"]
        assert body(admin.get("/api/v1/namespaces/alice/pods/theirs")) == theirs  # nothing was written
        answer = kubelet.patch("/api/v1/nodes/node-2", json.dumps({"metadata": {"labels": {"x": "y"}}}), merge)
        assert body(answer)["message"] == 'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"'
    finally:
        kubelet.close()


def test_the_node_restriction_judges_the_pod_its_write_read_without_a_read_of_its_own(hub, monkeypatch):
    """Upstream's NodeRestriction looks at the update's old object: here the handler's own read,
    inside the write's transaction, so a kubelet's status write costs the hub no second query."""
    from control.auth import gate

    admin = hub["admin"]
    assert admin.post("/api/v1/namespaces/alice/pods", pod("mine", "node-1")).status_code == 201
    lookups = []
    monkeypatch.setattr(gate, "_lookup", lambda *args: lookups.append(args))
    kubelet = ApiClient(token=token("system:node:node-1", ("system:nodes",)))
    try:
        mine = body(admin.get("/api/v1/namespaces/alice/pods/mine"))
        answer = kubelet.put("/api/v1/namespaces/alice/pods/mine/status", json.dumps({**mine, "status": {"message": "x"}}))
        assert answer.status_code == 200 and body(answer)["status"]["message"] == "x"
        assert kubelet.delete("/api/v1/namespaces/alice/pods/mine").status_code == 200
        assert lookups == []
    finally:
        kubelet.close()


def test_a_write_whose_handler_skips_the_stored_check_is_undone_not_answered(hub, monkeypatch):
    """Fail closed: a handler that writes a pod a node restriction guards without making the check
    (a bug) is answered 500 and its write rolled back, never let through."""
    from control.api import app, verbs
    from control.storage import store

    admin = hub["admin"]
    assert admin.post("/api/v1/namespaces/alice/pods", pod("theirs", "node-2")).status_code == 201

    def forgetful(call):  # writes the status without `call.admit_stored`
        store.object_update(resource="/pods", namespace="alice", name="theirs", actor="test",
                            mutate=lambda cur: {**cur, "status": {"message": "mine now"}})
        return verbs.get(call)

    monkeypatch.setitem(app.SYNC_VERBS, ("update", True, "status"), forgetful)
    kubelet = ApiClient(token=token("system:node:node-1", ("system:nodes",)))
    try:
        theirs = body(admin.get("/api/v1/namespaces/alice/pods/theirs"))
        answer = kubelet.put("/api/v1/namespaces/alice/pods/theirs/status", json.dumps(theirs))
        assert answer.status_code == 500
        assert "message" not in (body(admin.get("/api/v1/namespaces/alice/pods/theirs")).get("status") or {})
    finally:
        kubelet.close()


def test_with_authentication_off_everyone_is_admin(hub, settings):
    settings.KK_AUTHENTICATION = "off"
    assert hub["anonymous"].get("/api/v1/namespaces/bob/pods").status_code == 200
    assert hub["bogus"].get("/api/v1/pods").status_code == 200


def test_impersonating_groups_without_a_user_is_a_400(hub):
    answer = hub["admin"].get("/api/v1/namespaces/alice/pods", HTTP_IMPERSONATE_GROUP="dev")
    assert answer.status_code == 400
    assert body(answer)["message"] == "requested [{Group  dev    }] without impersonating a user"


def test_the_rest_of_the_request_runs_as_the_impersonated_user(hub):
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    answer = hub["admin"].post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json.dumps(review),
                               HTTP_IMPERSONATE_USER="bob", HTTP_IMPERSONATE_GROUP="devs",
                               HTTP_IMPERSONATE_EXTRA_SCOPES="view")
    assert answer.status_code == 201
    assert body(answer)["status"]["userInfo"] == {"username": "bob", "groups": ["devs", "system:authenticated"],
                                                  "extra": {"scopes": ["view"]}}
    # the admin's own rights are gone: bob may not list pods anywhere
    refused = hub["admin"].get("/api/v1/namespaces/alice/pods", HTTP_IMPERSONATE_USER="bob")
    assert body(refused)["message"] == ('pods is forbidden: User "bob" cannot list resource "pods" in API group "" '
                                        'in the namespace "alice"')


def test_alice_may_impersonate_a_service_account_of_her_namespace_only(hub):
    """`edit` grants `impersonate` on serviceaccounts, here in alice's namespace only."""
    review = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    path = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
    mine = hub["alice"].post(path, review, HTTP_IMPERSONATE_USER="system:serviceaccount:alice:default")
    assert body(mine)["status"]["userInfo"]["groups"] == ["system:serviceaccounts", "system:serviceaccounts:alice",
                                                          "system:authenticated"]
    theirs = hub["alice"].post(path, review, HTTP_IMPERSONATE_USER="system:serviceaccount:bob:default")
    assert theirs.status_code == 403
    assert body(theirs)["message"] == ('serviceaccounts "default" is forbidden: User "alice" cannot impersonate '
                                       'resource "serviceaccounts" in API group "" in the namespace "bob"')


def test_a_browser_websocket_authenticates_with_the_bearer_subprotocol():
    """upstream's websocket protocol authenticator: the token rides in a subprotocol, base64url."""
    import asyncio
    import base64

    from control.auth import gate

    alice = token("alice")
    encoded = base64.urlsafe_b64encode(alice.encode()).decode().rstrip("=")
    headers = [(b"sec-websocket-protocol", f"v5.channel.k8s.io, {gate.BEARER_PROTOCOL}{encoded}".encode())]
    assert gate.websocket_bearer(headers) == f"Bearer {alice}"
    assert asyncio.run(gate.authenticate(headers)).name == "alice"
    assert gate.websocket_bearer([(b"sec-websocket-protocol", b"v5.channel.k8s.io")]) == ""
    with pytest.raises(Exception) as refused:
        asyncio.run(gate.authenticate([(b"sec-websocket-protocol", f"{gate.BEARER_PROTOCOL}%%%".encode())]))
    assert getattr(refused.value, "code", None) == 401


def test_a_server_side_apply_is_judged_by_the_rules_it_states_a_merge_patch_needs_escalate(hub):
    """`kubectl apply --server-side` of a Role and its binding (the dashboard's "Do it" applies so)
    is held to the rules and roleRef its body states, as a create is; a merge patch states no whole
    object, so without `escalate`/`bind` it is refused (kube-apiserver judges the patched object)."""
    admin, alice = hub["admin"], hub["alice"]
    binding = {"metadata": {"name": "alice-admin"}, "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"}}
    assert admin.post(f"{RBAC}/namespaces/alice/rolebindings", json.dumps(binding)).status_code == 201
    apply = "application/apply-patch+yaml"
    query = "fieldManager=kubectl"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "pod-reader"},
            "rules": [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]}]}
    answer = alice.patch(f"{RBAC}/namespaces/alice/roles/pod-reader", json.dumps(role), apply, QUERY_STRING=query)
    assert answer.status_code == 201, body(answer)
    reads = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "reads"},
             "subjects": [{"kind": "ServiceAccount", "name": "trainee", "namespace": "alice"}],
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"}}
    answer = alice.patch(f"{RBAC}/namespaces/alice/rolebindings/reads", json.dumps(reads), apply, QUERY_STRING=query)
    assert answer.status_code == 201, body(answer)
    greedy = {**role, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["nodes"]}]}
    answer = alice.patch(f"{RBAC}/namespaces/alice/roles/pod-reader", json.dumps(greedy), apply, QUERY_STRING=query)
    assert answer.status_code == 403
    assert 'Resources:["nodes"]' in body(answer)["message"]
    merge = json.dumps({"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]})
    answer = alice.patch(f"{RBAC}/namespaces/alice/roles/pod-reader", merge, "application/merge-patch+json")
    assert answer.status_code == 403
    assert admin.get(f"{RBAC}/namespaces/alice/roles/pod-reader").status_code == 200


def test_a_kubelets_body_is_decoded_only_where_the_node_restriction_reads_it(hub, monkeypatch):
    from control.auth import gate
    from control.auth.rbac import Attributes, User

    node = User("system:node:node-1", groups=("system:nodes",))
    reads = {(verb, resource, sub, name): gate.node_reads_object(node, Attributes(verb, True, "", resource, sub,
                                                                                    "alice", name))
             for verb in ("create", "update") for resource in ("pods", "nodes", "events")
             for sub in ("", "status") for name in ("", "x")}
    assert {key for key, yes in reads.items() if yes} == {
        ("create", "pods", "", ""), ("create", "pods", "", "x"), ("create", "pods", "status", ""),
        ("create", "pods", "status", "x"), ("create", "nodes", "", ""), ("create", "nodes", "status", ""),
        ("update", "nodes", "", ""), ("update", "nodes", "status", "")}
    assert not gate.node_reads_object(User("alice"), Attributes("create", True, "", "pods"))
    assert not gate.node_reads_object(node, Attributes("create", True, "events.k8s.io", "events", namespace="a"))

    admin = hub["admin"]
    assert admin.post("/api/v1/namespaces/alice/pods", pod("mine", "node-1")).status_code == 201
    decoded = []
    real = gate._decoded
    monkeypatch.setattr(gate, "_decoded", lambda *args: decoded.append(args) or real(*args))
    kubelet = ApiClient(token=token("system:node:node-1", ("system:nodes",)))
    try:
        merge = "application/merge-patch+json"
        patch = json.dumps({"status": {"message": "x"}})
        assert kubelet.patch("/api/v1/namespaces/alice/pods/mine/status", patch, merge).status_code == 200
        assert decoded == []  # decided from the URL and the stored pod: decoded by its handler alone
        answer = kubelet.post("/api/v1/namespaces/alice/pods", pod("other", "node-1"))
        assert answer.status_code == 403 and len(decoded) == 1
        assert "can only create mirror pods" in body(answer)["message"]
    finally:
        kubelet.close()
