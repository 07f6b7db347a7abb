"""The verbs through Django's test client (in-process, fast): semantics the real clients rely on."""

from __future__ import annotations

import json

import pytest
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

PODS = "/api/v1/namespaces/default/pods"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"


def pod(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def deployment(name: str = "web", replicas: int = 2) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def send(api: ApiClient, method: str, path: str, body=None, content_type="application/json", **extra):
    data = "" if body is None else body if isinstance(body, (str, bytes)) else json.dumps(body)
    response = getattr(api, method)(path, data=data, content_type=content_type, **extra)
    assert response["Content-Type"].startswith("application/json") or response["Content-Type"].startswith("text/plain")
    return response.status_code, json.loads(response.content) if response.content else None


def test_create_sets_server_metadata_and_get_returns_it(api):
    code, created = send(api, "post", PODS, pod("a"))
    assert code == 201
    meta = created["metadata"]
    assert meta["namespace"] == "default" and meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert int(meta["resourceVersion"]) > 0 and created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    code, got = send(api, "get", f"{PODS}/a")
    assert code == 200 and got == created


def test_generate_name(api):
    body = pod("")
    body["metadata"] = {"generateName": "web-"}
    code, created = send(api, "post", PODS, body)
    name = created["metadata"]["name"]
    assert code == 201 and name.startswith("web-") and len(name) == 9
    assert all(ch in "bcdfghjklmnpqrstvwxz2456789" for ch in name[4:])


def drawn(monkeypatch, *suffixes: str) -> list[str]:
    """Make the generated names' suffixes come from `suffixes` (in order); the names drawn."""
    from control.api import objects

    names: list[str] = []
    pending = list(suffixes)

    def generate(base: str) -> str:
        names.append(base + pending.pop(0))
        return names[-1]
    monkeypatch.setattr(objects, "generate_name", generate)
    return names


def test_a_generated_name_already_taken_is_drawn_again(api, monkeypatch):
    assert send(api, "post", PODS, pod("web-bbbbb"))[0] == 201
    assert send(api, "post", PODS, pod("web-ccccc"))[0] == 201
    names = drawn(monkeypatch, "bbbbb", "ccccc", "ddddd")
    body = pod("")
    body["metadata"] = {"generateName": "web-", "labels": {"app": "web"}}
    code, created = send(api, "post", PODS, body)
    assert code == 201 and created["metadata"]["name"] == "web-ddddd"
    assert names == ["web-bbbbb", "web-ccccc", "web-ddddd"]
    assert created["metadata"]["labels"] == {"app": "web"}  # each attempt from the request's body afresh


def test_generated_names_are_drawn_eight_times_at_most_and_a_given_name_never_again(api, monkeypatch):
    assert send(api, "post", PODS, pod("web-bbbbb"))[0] == 201
    names = drawn(monkeypatch, *["bbbbb"] * 9)
    body = pod("")
    body["metadata"] = {"generateName": "web-"}
    code, status = send(api, "post", PODS, body)
    assert (code, status["reason"]) == (409, "AlreadyExists") and len(names) == 8  # kube-apiserver's 8 attempts
    names.clear()
    code, status = send(api, "post", PODS, pod("web-bbbbb"))
    assert (code, status["reason"]) == (409, "AlreadyExists") and names == []  # a name of its own: no retry


def test_a_dry_run_create_of_a_taken_name_is_refused_as_the_create_would_be(api, monkeypatch):
    assert send(api, "post", PODS, pod("a"))[0] == 201
    code, status = send(api, "post", f"{PODS}?dryRun=All", pod("a"))
    assert (code, status["reason"], status["message"]) == (409, "AlreadyExists", 'pods "a" already exists')
    assert send(api, "post", f"{PODS}?dryRun=All", pod("b"))[0] == 201
    assert send(api, "get", f"{PODS}/b")[0] == 404  # a dry run stores nothing
    names = drawn(monkeypatch, "aaaaa", "bbbbb")
    assert send(api, "post", PODS, pod("web-aaaaa"))[0] == 201
    body = pod("")
    body["metadata"] = {"generateName": "web-"}
    code, created = send(api, "post", f"{PODS}?dryRun=All", body)
    assert code == 201 and created["metadata"]["name"] == "web-bbbbb" and names == ["web-aaaaa", "web-bbbbb"]


def test_already_exists_and_not_found_messages(api):
    send(api, "post", DEPLOYS, deployment())
    code, status = send(api, "post", DEPLOYS, deployment())
    assert (code, status["reason"], status["message"]) == (409, "AlreadyExists", 'deployments.apps "web" already exists')
    assert status["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    code, status = send(api, "get", f"{PODS}/nope")
    assert (code, status["reason"], status["message"]) == (404, "NotFound", 'pods "nope" not found')


def test_stale_put_is_conflict_with_the_kubernetes_message(api):
    _, created = send(api, "post", DEPLOYS, deployment())
    fresh = json.loads(json.dumps(created))
    fresh["spec"]["replicas"] = 5
    code, updated = send(api, "put", f"{DEPLOYS}/web", fresh)
    assert code == 200 and updated["metadata"]["generation"] == 2
    created["spec"]["replicas"] = 7
    code, status = send(api, "put", f"{DEPLOYS}/web", created)
    assert code == 409 and status["reason"] == "Conflict"
    assert status["message"] == ('Operation cannot be fulfilled on deployments.apps "web": the object has been '
                                 'modified; please apply your changes to the latest version and try again')


def test_main_resource_keeps_status_and_status_subresource_keeps_spec(api):
    _, created = send(api, "post", DEPLOYS, deployment())
    created["status"] = {"replicas": 9}
    _, after_put = send(api, "put", f"{DEPLOYS}/web", created)
    assert after_put.get("status", {}) == {}
    after_put["status"] = {"replicas": 2, "readyReplicas": 1}
    after_put["spec"]["replicas"] = 50
    code, after_status = send(api, "put", f"{DEPLOYS}/web/status", after_put)
    assert code == 200 and after_status["status"]["readyReplicas"] == 1 and after_status["spec"]["replicas"] == 2
    assert after_status["metadata"]["generation"] == 1


def test_invalid_object_is_422_with_causes_and_nothing_is_stored(api):
    bad = deployment()
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "else"}
    code, status = send(api, "post", DEPLOYS, bad)
    assert code == 422 and status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == "spec.template.metadata.labels"
    assert status["message"].startswith('Deployment.apps "web" is invalid:')
    assert send(api, "get", f"{DEPLOYS}/web")[0] == 404


def test_list_selectors_and_pages_keep_the_list_revision(api):
    for i in range(5):
        send(api, "post", PODS, pod(f"p{i}", tier="a" if i % 2 else "b"))
    code, page1 = send(api, "get", PODS, None, **{"QUERY_STRING": "limit=2"})
    assert code == 200 and [p["metadata"]["name"] for p in page1["items"]] == ["p0", "p1"]
    assert page1["metadata"]["remainingItemCount"] == 3
    send(api, "post", PODS, pod("p9"))  # created after the first page: not in the list
    token = page1["metadata"]["continue"]
    _, page2 = send(api, "get", PODS, None, **{"QUERY_STRING": f"limit=10&continue={token}"})
    assert [p["metadata"]["name"] for p in page2["items"]] == ["p2", "p3", "p4"]
    assert page2["metadata"]["resourceVersion"] == page1["metadata"]["resourceVersion"]
    _, selected = send(api, "get", PODS, None, **{"QUERY_STRING": "labelSelector=tier%20in%20(a)"})
    assert [p["metadata"]["name"] for p in selected["items"]] == ["p1", "p3"]
    _, by_name = send(api, "get", "/api/v1/pods", None, **{"QUERY_STRING": "fieldSelector=metadata.name%3Dp2"})
    assert [p["metadata"]["name"] for p in by_name["items"]] == ["p2"]
    code, status = send(api, "get", PODS, None, **{"QUERY_STRING": "fieldSelector=spec.color%3Dred"})
    assert (code, status["message"]) == (400, "field label not supported: spec.color")


def test_table_for_kubectl(api):
    send(api, "post", PODS, pod("a", app="x"))
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    code, table = send(api, "get", PODS, None, HTTP_ACCEPT=accept)
    assert code == 200 and table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert table["rows"][0]["cells"][:3] == ["a", "0/1", "Pending"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_binding_then_graceful_pod_deletion(api):
    send(api, "post", PODS, pod("a"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    code, status = send(api, "post", f"{PODS}/a/binding", binding)
    assert code == 201 and status["status"] == "Success"
    assert send(api, "post", f"{PODS}/a/binding", binding)[0] == 409
    _, bound = send(api, "get", f"{PODS}/a")
    assert bound["spec"]["nodeName"] == "node-1"
    code, marked = send(api, "delete", f"{PODS}/a")
    assert code == 200 and marked["metadata"]["deletionGracePeriodSeconds"] == 30
    assert send(api, "get", f"{PODS}/a")[0] == 200
    code, final = send(api, "delete", f"{PODS}/a", None, **{"QUERY_STRING": "gracePeriodSeconds=0"})
    assert code == 200 and send(api, "get", f"{PODS}/a")[0] == 404


def test_unbound_pod_goes_at_once_and_deployment_delete_answers_status(api):
    send(api, "post", PODS, pod("a"))
    assert send(api, "delete", f"{PODS}/a")[0] == 200
    assert send(api, "get", f"{PODS}/a")[0] == 404
    send(api, "post", DEPLOYS, deployment())
    code, status = send(api, "delete", f"{DEPLOYS}/web", {"propagationPolicy": "Background"})
    assert code == 200 and status["kind"] == "Status" and status["details"]["group"] == "apps"


def test_finalizers_hold_an_object_until_removed(api):
    body = deployment()
    body["metadata"]["finalizers"] = ["example.com/hold"]
    send(api, "post", DEPLOYS, body)
    code, held = send(api, "delete", f"{DEPLOYS}/web")
    assert code == 200 and held["metadata"]["deletionTimestamp"]
    code, _ = send(api, "patch", f"{DEPLOYS}/web", {"metadata": {"finalizers": None}},
                   content_type="application/merge-patch+json")
    assert code == 200 and send(api, "get", f"{DEPLOYS}/web")[0] == 404


def test_scale_subresource(api):
    send(api, "post", DEPLOYS, deployment(replicas=2))
    code, scale = send(api, "get", f"{DEPLOYS}/web/scale")
    assert code == 200 and scale["kind"] == "Scale" and scale["spec"]["replicas"] == 2
    assert scale["status"]["selector"] == "app=web"
    code, scale = send(api, "patch", f"{DEPLOYS}/web/scale", {"spec": {"replicas": 6}},
                       content_type="application/merge-patch+json")
    assert code == 200 and scale["spec"]["replicas"] == 6
    assert send(api, "get", f"{DEPLOYS}/web")[1]["spec"]["replicas"] == 6


def test_a_replication_controller_is_defaulted_and_scaled_through_its_scale_subresource(api):
    rcs = "/api/v1/namespaces/default/replicationcontrollers"
    body = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "nginx"},
            "spec": {"replicas": 3, "template": {"metadata": {"labels": {"app": "nginx"}},
                                                 "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}
    code, created = send(api, "post", rcs, body)
    assert code == 201 and created["spec"]["selector"] == {"app": "nginx"} and created["status"] == {"replicas": 0}
    assert created["metadata"]["labels"] == {"app": "nginx"} and created["metadata"]["generation"] == 1
    code, scale = send(api, "get", f"{rcs}/nginx/scale")
    assert code == 200 and scale["apiVersion"] == "autoscaling/v1" and scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 3 and scale["status"]["selector"] == "app=nginx"
    code, scale = send(api, "patch", f"{rcs}/nginx/scale", {"spec": {"replicas": 5}},
                       content_type="application/merge-patch+json")
    assert code == 200 and scale["spec"]["replicas"] == 5
    stored = send(api, "get", f"{rcs}/nginx")[1]
    assert stored["spec"]["replicas"] == 5 and stored["metadata"]["generation"] == 2
    code, status = send(api, "patch", f"{rcs}/nginx", {"spec": {"selector": {"app": "other"}}},
                        content_type="application/strategic-merge-patch+json")
    assert code == 422 and status["details"]["causes"][0]["field"] == "spec.template.metadata.labels"
    assert send(api, "get", f"{rcs}/nginx")[1]["spec"]["selector"] == {"app": "nginx"}, "store unchanged"

def test_patch_types(api):
    send(api, "post", DEPLOYS, deployment())
    smp = {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}}
    _, patched = send(api, "patch", f"{DEPLOYS}/web", smp, content_type="application/strategic-merge-patch+json")
    assert [c["name"] for c in patched["spec"]["template"]["spec"]["containers"]] == ["side", "c"] or \
        [c["name"] for c in patched["spec"]["template"]["spec"]["containers"]] == ["c", "side"]
    _, patched = send(api, "patch", f"{DEPLOYS}/web", [{"op": "replace", "path": "/spec/replicas", "value": 3}],
                      content_type="application/json-patch+json")
    assert patched["spec"]["replicas"] == 3
    code, status = send(api, "patch", f"{DEPLOYS}/web", {"spec": {}}, content_type="text/plain")
    assert code == 415 and status["reason"] == "UnsupportedMediaType"


def test_server_side_apply_creates_then_updates(api):
    body = deployment()
    code, created = send(api, "patch", f"{DEPLOYS}/web?fieldManager=kubectl", body, content_type="application/apply-patch+yaml")
    assert code == 201 and created["spec"]["replicas"] == 2
    body["spec"]["replicas"] = 4
    code, updated = send(api, "patch", f"{DEPLOYS}/web?fieldManager=kubectl", body, content_type="application/apply-patch+yaml")
    assert code == 200 and updated["spec"]["replicas"] == 4
    code, status = send(api, "patch", f"{DEPLOYS}/web", body, content_type="application/apply-patch+yaml")
    assert code == 422


def test_dry_run_stores_nothing(api):
    code, _ = send(api, "post", f"{PODS}?dryRun=All", pod("ghost"))
    assert code == 201 and send(api, "get", f"{PODS}/ghost")[0] == 404


def test_deletecollection_with_selector(api):
    for i in range(3):
        send(api, "post", PODS, pod(f"p{i}", keep="yes" if i == 0 else "no"))
    code, gone = send(api, "delete", PODS, None, **{"QUERY_STRING": "labelSelector=keep%3Dno"})
    assert code == 200 and sorted(p["metadata"]["name"] for p in gone["items"]) == ["p1", "p2"]
    _, left = send(api, "get", PODS)
    assert [p["metadata"]["name"] for p in left["items"]] == ["p0"]


def test_namespace_must_exist(api):
    code, status = send(api, "post", "/api/v1/namespaces/nowhere/pods", pod("a"))
    assert (code, status["message"]) == (404, 'namespaces "nowhere" not found')


def test_unknown_paths_and_methods_answer_status(api):
    assert send(api, "get", "/api/v1/widgets")[0] == 404
    assert send(api, "get", "/no/such/thing")[1]["kind"] == "Status"
    code, status = send(api, "post", f"{PODS}/a", pod("a"))
    assert code == 405 and status["reason"] == "MethodNotAllowed"


def test_namespace_deletion_waits_for_its_finalizer(api):
    send(api, "post", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    code, ns = send(api, "delete", "/api/v1/namespaces/shop")
    assert code == 200 and ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]
    code, status = send(api, "post", "/api/v1/namespaces/shop/pods", pod("late"))
    assert code == 403 and "being terminated" in status["message"]
    _, ns = send(api, "get", "/api/v1/namespaces/shop")
    ns["metadata"]["labels"]["touched"] = "yes"
    assert send(api, "put", "/api/v1/namespaces/shop", ns)[0] == 200, "an ordinary update does not finish it"
    ns = send(api, "get", "/api/v1/namespaces/shop")[1]
    ns["spec"]["finalizers"] = []
    assert send(api, "put", "/api/v1/namespaces/shop/finalize", ns)[0] == 200
    assert send(api, "get", "/api/v1/namespaces/shop")[0] == 404


def test_a_delete_answers_as_kube_apiserver_does_for_the_kind(api):
    """ReturnDeletedObject: pods, services and namespaces answer with the object; other kinds with a
    Status (Success) once the object is gone, and with the object while something holds it."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    assert send(api, "post", "/api/v1/namespaces/default/services", service)[0] == 201
    code, gone = send(api, "delete", "/api/v1/namespaces/default/services/web")
    assert code == 200 and gone["kind"] == "Service" and gone["metadata"]["name"] == "web"
    assert send(api, "get", "/api/v1/namespaces/default/services/web")[0] == 404

    send(api, "post", PODS, pod("a"))
    code, gone = send(api, "delete", f"{PODS}/a")
    assert code == 200 and gone["kind"] == "Pod"

    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    send(api, "post", "/api/v1/namespaces/default/configmaps", configmap)
    code, gone = send(api, "delete", "/api/v1/namespaces/default/configmaps/c")
    assert code == 200 and (gone["kind"], gone["status"]) == ("Status", "Success")
    assert gone["details"] == {"name": "c", "kind": "configmaps", "uid": gone["details"]["uid"]}

    send(api, "post", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    code, held = send(api, "delete", "/api/v1/namespaces/team")
    assert code == 200 and held["kind"] == "Namespace" and held["status"]["phase"] == "Terminating"
    assert held["metadata"]["deletionTimestamp"], "spec.finalizers hold it until the namespace controller is done"


def test_names_follow_the_kinds_rule(api):
    """A Service's name is a DNS-1035 label (starts with a letter), a Namespace's a DNS-1123 label,
    most kinds' a DNS-1123 subdomain (dots allowed)."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    code, status = send(api, "post", "/api/v1/namespaces/default/services", service)
    assert code == 422 and status["details"]["causes"][0]["field"] == "metadata.name"
    assert "a DNS-1035 label must consist of lower case alphanumeric characters" in status["message"]
    code, _ = send(api, "post", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": "a.b"}})
    assert code == 422
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "1.a.b"}}
    assert send(api, "post", "/api/v1/namespaces/default/configmaps", configmap)[0] == 201


SECRETS = "/api/v1/namespaces/default/secrets"


def test_a_secret_through_the_hub(api):
    """Secret is served from its kind module alone: stringData lands in data, bad base64 is a 422
    naming the field, an immutable Secret refuses data changes, the table has Type and Data."""
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": "b"}}
    code, created = send(api, "post", SECRETS, body)
    assert code == 201 and created["data"] == {"a": "Yg=="} and created["type"] == "Opaque"
    assert "stringData" not in send(api, "get", f"{SECRETS}/s")[1]
    bad = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"}, "data": {"x": "%%%"}}
    code, status = send(api, "post", SECRETS, bad)
    assert code == 422 and status["details"]["causes"][0]["field"] == "data[x]"
    code, _ = send(api, "patch", f"{SECRETS}/s", {"immutable": True}, content_type="application/merge-patch+json")
    assert code == 200
    code, status = send(api, "patch", f"{SECRETS}/s", {"stringData": {"a": "c"}},
                        content_type="application/merge-patch+json")
    assert code == 422 and "field is immutable when `immutable` is set" in status["message"]
    code, table = send(api, "get", SECRETS, None, HTTP_ACCEPT="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Type", "Data", "Age"]
    assert table["rows"][0]["cells"][:3] == ["s", "Opaque", 1]
    code, gone = send(api, "delete", f"{SECRETS}/s")
    assert code == 200 and gone["kind"] == "Status"


def test_server_side_apply_names_undeclared_fields_as_kube_apiserver(api):
    body = pod("a")
    body["spec"]["bogus"] = 1
    code, status = send(api, "patch", f"{PODS}/a", body, content_type="application/apply-patch+yaml",
                        QUERY_STRING="fieldManager=me")
    assert code == 400 and status["message"] == ("failed to create typed patch object (/v1, Kind=Pod): "
                                                 ".spec.bogus: field not declared in schema")


def test_an_update_reads_the_object_once_and_a_missing_one_is_the_same_404(api, monkeypatch):
    from control.storage import store

    gets = []
    real = store.object_get
    monkeypatch.setattr(store, "object_get", lambda **kw: gets.append(kw) or real(**kw))
    code, created = send(api, "post", PODS, pod("a"))
    assert code == 201
    created["metadata"]["labels"] = {"x": "y"}
    assert send(api, "put", f"{PODS}/a", created)[0] == 200
    created["status"] = {"phase": "Running"}
    created["metadata"].pop("resourceVersion")
    assert send(api, "put", f"{PODS}/a/status", created)[0] == 200
    assert [g for g in gets if g["resource"] == "/pods"] == []  # object_update's own read is the only one
    for path in (f"{PODS}/nope", f"{PODS}/nope/status"):
        code, status = send(api, "put", path, pod("nope"))
        assert (code, status["reason"], status["message"]) == (404, "NotFound", 'pods "nope" not found')
    code, status = send(api, "put", f"{PODS}/nope?dryRun=All", pod("nope"))
    assert (code, status["message"]) == (404, 'pods "nope" not found')


def test_a_status_write_checks_every_field_it_sends_and_answers_what_it_stored(api):
    _, created = send(api, "post", PODS, pod("st"))
    running = {**created, "status": {"phase": "Running", "podIP": "10.0.0.5"}}
    code, written = send(api, "put", f"{PODS}/st/status", running)
    assert code == 200 and written["status"]["phase"] == "Running"
    assert send(api, "get", f"{PODS}/st")[1] == written  # the answer is the object as stored
    # The stored spec sent back: the rest is still checked (an unknown status field is refused) ...
    code, refused = send(api, "put", f"{PODS}/st/status", {**written, "status": {"phase": "Running", "colour": 1}},
                         QUERY_STRING="fieldValidation=Strict")
    assert code == 400 and 'unknown field "status.colour"' in refused["message"]
    # ... and a spec that differs from the stored one is checked whole, as before.
    odd_spec = {**written["spec"], "colour": "red"}
    code, refused = send(api, "put", f"{PODS}/st/status", {**written, "spec": odd_spec},
                         QUERY_STRING="fieldValidation=Strict")
    assert code == 400 and 'unknown field "spec.colour"' in refused["message"]
    code, typed = send(api, "put", f"{PODS}/st/status", {**written, "spec": {**written["spec"], "nodeName": 5}})
    assert code == 400, typed


def test_a_status_write_walks_only_what_differs_from_the_stored_object(api, monkeypatch):
    from control.kinds.base import Kind

    _, created = send(api, "post", PODS, pod("walk"))
    walked = []
    real = Kind.field_report
    monkeypatch.setattr(Kind, "field_report", lambda self, obj: walked.append(sorted(obj)) or real(self, obj))
    running = {**created, "status": {"phase": "Running"}}
    code, written = send(api, "put", f"{PODS}/walk/status", running)
    assert code == 200 and written["status"]["phase"] == "Running"
    # The kubelet's case: the pod it read sent back, status changed: spec and metadata were checked when stored.
    assert walked == [["apiVersion", "kind", "status"]]
    assert send(api, "get", f"{PODS}/walk")[1] == written
    # Metadata that is not the stored metadata is walked, and an unknown field in it refused.
    walked.clear()
    odd_meta = {**written["metadata"], "colour": "red"}
    code, refused = send(api, "put", f"{PODS}/walk/status", {**written, "metadata": odd_meta},
                         QUERY_STRING="fieldValidation=Strict")
    assert code == 400 and 'unknown field "metadata.colour"' in refused["message"]
    assert walked == [["apiVersion", "kind", "metadata", "status"]]


def test_get_answers_the_stored_text_as_it_is(api):
    from control.storage import store

    send(api, "post", PODS, pod("a"))
    response = api.get(f"{PODS}/a")
    assert response.status_code == 200
    assert response.content.decode() == store.object_text(resource="/pods", namespace="default", name="a")


def test_a_binding_hands_the_watchers_the_bound_pod_already_parsed(api):
    from control.storage import store

    send(api, "post", PODS, pod("a"))
    heard = []
    unsubscribe = store.subscribe(heard.extend)
    try:
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
        assert send(api, "post", f"{PODS}/a/binding", binding)[0] == 201
    finally:
        unsubscribe()
    [change] = [c for c in heard if c.resource == "/pods"]
    assert change._obj is not None and change._obj["spec"]["nodeName"] == "node-1"
    assert change._obj == json.loads(change.body)
