"""The page and its forms, through Django's test client, against a fake hub that records every
request: the manifest form applies each object as server-side apply after a dry run of all of
them; bad YAML or a refused object shows a message and stores nothing; each button sends the one
request it stands for."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from tests.dashboard.fakehub import FakeHub, status

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: pasta}
spec:
  replicas: 2
  selector: {matchLabels: {app: pasta}}
  template:
    metadata: {labels: {app: pasta}}
    spec: {containers: [{name: pasta, image: nginx}]}
---
apiVersion: v1
kind: Service
metadata: {name: pasta}
spec:
  selector: {app: pasta}
  ports: [{port: 80}]
"""
DEPLOYMENT_PATH = "/apis/apps/v1/namespaces/default/deployments/pasta"
SERVICE_PATH = "/api/v1/namespaces/default/services/pasta"


@pytest.fixture
def client():
    return Client()


def applied(fake: FakeHub, path: str, *, resource_version: str = "5", code: int = 200) -> None:
    """The hub's answer to a server-side apply (and its dry run) of `path`: 201 when it creates."""
    obj = {"metadata": {"name": path.rsplit("/", 1)[1], "resourceVersion": resource_version}}
    fake.answers[("PATCH", path)] = (code, obj)


def test_the_page_draws_the_hub_the_store_the_panels_and_the_form(client):
    response = client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    for part in ('id="hub-svg"', 'id="node-list"', 'id="log-list"', 'id="manifest-form"', 'id="wire-out"',
                 "vendor/htmx.min.js", "dashboard/app.js", 'id="kk-words"', "API server", "kind: Deployment"):
        assert part in page, part
    assert "{#" not in page and "#}" not in page, "a template comment left on the page (Django's {# #} is one line)"


def test_the_page_speaks_korean_when_chosen(client):
    response = client.post("/i18n/setlang/", {"language": "ko", "next": "/"})
    assert response.status_code == 302
    page = client.get("/").content.decode()
    assert 'lang="ko"' in page and "API 서버" in page and "노드와 파드" in page
    words = json.loads(re.search(r'<script id="kk-words" type="application/json">(.*?)</script>', page).group(1))
    assert words["terms"]["hub"] == {"k8s": "API 서버", "kitchen": "웨이터"}
    assert words["terms"]["store"]["kitchen"] == "메모장"
    assert words["terms"]["delete-pod"]["kitchen"] == "파스타를 바닥에 쏟기"


def test_a_good_manifest_is_dry_run_then_applied_object_by_object(fake, client):
    applied(fake, DEPLOYMENT_PATH, code=201)
    applied(fake, SERVICE_PATH)  # there, and left as it was: the same resourceVersion before and after
    response = client.post("/apply/", {"manifest": DEPLOYMENT})
    assert response.status_code == 200
    text = response.content.decode()
    assert "deployment.apps/pasta</code>" in text and "created" in text
    assert "service/pasta</code>" in text and "unchanged" in text
    patches = [r for r in fake.requests if r.method == "PATCH"]
    assert [(r.path, r.query.get("dryRun")) for r in patches] == [
        (DEPLOYMENT_PATH, "All"), (SERVICE_PATH, "All"), (DEPLOYMENT_PATH, None), (SERVICE_PATH, None)]
    assert all(r.content_type == "application/apply-patch+yaml" and r.query["fieldManager"] == "dashboard"
               and r.query["force"] == "true" for r in patches)
    assert patches[2].body["spec"]["replicas"] == 2


def test_an_attendees_manifest_goes_to_their_own_namespace_as_their_kubectl_would_put_it(fake, client, monkeypatch):
    from dashboard import hub
    monkeypatch.setattr(hub, "acting_attendee", lambda: "attendee-1")
    own = {"/apis/apps/v1/namespaces/attendee-1/deployments/pasta", "/api/v1/namespaces/attendee-1/services/pasta"}
    for path in own:
        applied(fake, path, code=201)
    response = client.post("/apply/", {"manifest": DEPLOYMENT})
    assert response.status_code == 200, response.content.decode()
    assert {r.path for r in fake.requests if r.method == "PATCH"} == own
    named = DEPLOYMENT.replace("{name: pasta}", "{name: pasta, namespace: default}", 1)
    client.post("/apply/", {"manifest": named})
    assert any(r.path == DEPLOYMENT_PATH for r in fake.requests), "a namespace the manifest names is kept"


@pytest.mark.parametrize("text, message", [
    ("kind: [unclosed", "the YAML cannot be read"),
    ("apiVersion: v1\nkind: Pod\n", "metadata.name must be set"),
    ("- just\n- a list\n", "document 1 is not an object"),
    ("a: &x [1, *x]\n", "anchor &#x27;x&#x27; value contains itself"),
    ("[" * 101 + "]" * 101, "exceeded max depth of 100"),
    ("", "the manifest is empty"),
])
def test_bad_yaml_shows_a_message_and_sends_nothing(fake, client, text, message):
    response = client.post("/apply/", {"manifest": text})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert fake.requests == []


def test_an_object_the_hub_refuses_shows_the_hubs_message_and_nothing_is_stored(fake, client):
    applied(fake, DEPLOYMENT_PATH)
    refusal = status(422, "Invalid", 'Service "pasta" is invalid: spec.ports[0].port: Invalid value: 0')
    fake.answers[("PATCH", SERVICE_PATH)] = (422, refusal)
    response = client.post("/apply/", {"manifest": DEPLOYMENT})
    assert response.status_code == 422
    text = response.content.decode()
    assert "spec.ports[0].port: Invalid value: 0" in text and "Nothing was stored" in text
    assert fake.writes() == []


@pytest.mark.parametrize("action, form, method, path, body", [
    ("delete-pod", {"namespace": "default", "name": "pasta-x"}, "DELETE", "/api/v1/namespaces/default/pods/pasta-x",
     {"kind": "DeleteOptions", "apiVersion": "v1"}),
    ("crash", {"namespace": "default", "name": "pasta-x"}, "PATCH", "/api/v1/namespaces/default/pods/pasta-x",
     {"metadata": {"annotations": {"kubekitchen.dev/crash-after": "1"}}}),
    ("cordon", {"name": "node-2"}, "PATCH", "/api/v1/nodes/node-2", {"spec": {"unschedulable": True}}),
    ("uncordon", {"name": "node-2"}, "PATCH", "/api/v1/nodes/node-2", {"spec": {"unschedulable": None}}),
    ("spoke", {"spoke": "kubelet/node-2", "state": "stopped"}, "PATCH",
     "/api/v1/namespaces/kube-system/configmaps/kubekitchen-spokes", {"data": {"kubelet.node-2": "stopped"}}),
    ("spoke", {"spoke": "scheduler", "state": "running"}, "PATCH",
     "/api/v1/namespaces/kube-system/configmaps/kubekitchen-spokes", {"data": {"scheduler": "running"}}),
    ("delete-custom", {"apiVersion": "kitchen.kubekitchen.dev/v1", "plural": "dishes", "namespace": "default",
                       "name": "dinner-2"}, "DELETE", "/apis/kitchen.kubekitchen.dev/v1/namespaces/default/dishes/dinner-2",
     {"kind": "DeleteOptions", "apiVersion": "v1"}),
    ("place-order", {"apiVersion": "kitchen.kubekitchen.dev/v1", "plural": "orders", "namespace": "default",
                     "menu": "pasta", "count": "3"}, "POST", "/apis/kitchen.kubekitchen.dev/v1/namespaces/default/orders",
     {"apiVersion": "kitchen.kubekitchen.dev/v1", "kind": "Order",
      "metadata": {"generateName": "pasta-", "namespace": "default"}, "spec": {"menu": "pasta", "count": 3}}),
])
def test_each_button_sends_its_one_request(fake, client, action, form, method, path, body):
    fake.answers[(method, path)] = (200, {"metadata": {"name": "x"}})
    response = client.post(f"/actions/{action}/", form)
    assert response.status_code == 200, response.content
    assert [(r.method, r.path, r.body) for r in fake.requests] == [(method, path, body)]
    if method == "PATCH":
        assert fake.requests[0].content_type == "application/merge-patch+json"
    assert fake.requests[0].agent.startswith("dashboard ")


def test_scaling_reads_the_scale_then_writes_it_with_the_resourceversion_read(fake, client):
    scale_path = "/apis/apps/v1/namespaces/default/deployments/pasta/scale"
    fake.answers[("GET", scale_path)] = (200, {"metadata": {"name": "pasta", "resourceVersion": "41"},
                                               "spec": {"replicas": 3}})
    fake.answers[("PATCH", scale_path)] = (200, {"spec": {"replicas": 2}})
    response = client.post("/actions/scale/", {"namespace": "default", "name": "pasta", "delta": "-1"})
    assert response.status_code == 200 and "scaled to 2" in response.content.decode()
    assert fake.requests[-1].body == {"metadata": {"resourceVersion": "41"}, "spec": {"replicas": 2}}


def test_scaling_to_a_number_patches_the_scale_with_no_precondition_as_kubectl_scale_replicas(fake, client):
    scale_path = "/apis/apps/v1/namespaces/diner/deployments/guests/scale"
    fake.answers[("PATCH", scale_path)] = (200, {"spec": {"replicas": 11}})
    response = client.post("/actions/scale/", {"namespace": "diner", "name": "guests", "replicas": "11"})
    assert response.status_code == 200 and "deployment.apps/guests scaled to 11" in response.content.decode()
    # no read, no resourceVersion: the controller's status write meanwhile is not a 409 (lesson 17)
    assert [(r.method, r.path, r.body) for r in fake.requests] == [("PATCH", scale_path, {"spec": {"replicas": 11}})]


def test_a_replicationcontroller_is_scaled_through_its_core_v1_scale(fake, client):
    scale_path = "/api/v1/namespaces/default/replicationcontrollers/nginx/scale"
    fake.answers[("GET", scale_path)] = (200, {"metadata": {"name": "nginx", "resourceVersion": "7"},
                                               "spec": {"replicas": 2}})
    fake.answers[("PATCH", scale_path)] = (200, {"spec": {"replicas": 3}})
    response = client.post("/actions/scale/", {"namespace": "default", "name": "nginx", "delta": "1",
                                               "kind": "replicationcontrollers"})
    assert response.status_code == 200 and "replicationcontroller/nginx scaled to 3" in response.content.decode()
    assert [(r.method, r.path) for r in fake.requests] == [("GET", scale_path), ("PATCH", scale_path)]
    assert fake.requests[-1].body == {"metadata": {"resourceVersion": "7"}, "spec": {"replicas": 3}}


def test_the_hubs_refusal_of_an_action_is_shown_with_its_code(fake, client):
    response = client.post("/actions/delete-pod/", {"namespace": "default", "name": "gone"})
    assert response.status_code == 404
    assert "not found" in response.content.decode()


def test_a_stopped_spoke_without_the_configmap_creates_it(fake, client):
    path = "/api/v1/namespaces/kube-system/configmaps"
    fake.answers[("POST", path)] = (201, {"metadata": {"name": "kubekitchen-spokes"}})
    response = client.post("/actions/spoke/", {"spoke": "controller-manager", "state": "stopped"})
    assert response.status_code == 200
    assert [(r.method, r.path) for r in fake.requests] == [("PATCH", f"{path}/kubekitchen-spokes"), ("POST", path)]
    assert fake.requests[1].body["data"] == {"controller-manager": "stopped"}


@pytest.mark.parametrize("action, form", [
    ("delete-pod", {"namespace": "default", "name": "../../nodes/x"}),
    ("spoke", {"spoke": "etcd", "state": "stopped"}),
    ("spoke", {"spoke": "scheduler", "state": "paused"}),
    ("scale", {"namespace": "default", "name": "pasta", "delta": "many"}),
    ("scale", {"namespace": "default", "name": "pasta", "delta": "1", "kind": "nodes"}),
    ("delete-custom", {"apiVersion": "v1", "plural": "pods", "namespace": "default", "name": "p"}),
    ("delete-custom", {"apiVersion": "apps/v1", "plural": "deployments", "namespace": "default", "name": "p"}),
    ("delete-custom", {"apiVersion": "kitchen.kubekitchen.dev/v1", "plural": "dishes/x", "namespace": "default",
                       "name": "p"}),
    ("place-order", {"apiVersion": "kitchen.kubekitchen.dev/v1", "plural": "orders", "namespace": "default",
                     "menu": "pasta", "count": "0"}),
    ("place-order", {"apiVersion": "kitchen.kubekitchen.dev/v1", "plural": "orders", "namespace": "default",
                     "menu": "Pasta!", "count": "2"}),
])
def test_bad_targets_are_refused_before_any_request(fake, client, action, form):
    response = client.post(f"/actions/{action}/", form)
    assert response.status_code == 400
    assert fake.requests == []


def test_unknown_actions_are_404(client):
    assert client.post("/actions/explode/", {}).status_code == 404


def test_a_manifest_over_the_apis_limit_is_413_before_it_is_decoded_and_nothing_is_sent(monkeypatch, client, fake):
    from django.conf import settings

    from control import offloop

    decoded: list = []

    async def decoder(fn, *args):
        decoded.append(fn)

    monkeypatch.setattr(offloop, "run", decoder)
    big = DEPLOYMENT + "\n#" + "x" * settings.KK_MAX_BODY_BYTES
    response = client.post("/apply/", {"manifest": big})
    assert response.status_code == 413
    assert f"Request entity too large: limit is {settings.KK_MAX_BODY_BYTES}" in response.content.decode()
    assert fake.requests == [] and decoded == []


def test_the_manifest_is_read_in_a_worker_process_within_the_yaml_budget(monkeypatch, fake, client):
    from control import offloop, safeyaml

    handed: list = []
    real_run = offloop.run

    async def spy(fn, *args):
        handed.append((fn, args[0]))
        return await real_run(fn, *args)

    monkeypatch.setattr(offloop, "run", spy)
    applied(fake, DEPLOYMENT_PATH)
    applied(fake, SERVICE_PATH)
    response = client.post("/apply/", {"manifest": DEPLOYMENT})
    assert response.status_code == 200, response.content.decode()
    assert handed == [(safeyaml.read_stream, DEPLOYMENT)]


def test_an_alias_bomb_is_refused_with_a_message_and_nothing_is_sent(fake, client):
    bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{chr(ord('b') + i)}: &{chr(ord('b') + i)} [{', '.join(['*' + chr(ord('a') + i)] * 9)}]\n" for i in range(8))
    response = client.post("/apply/", {"manifest": bomb})
    assert response.status_code == 400
    assert "document contains excessive aliasing" in response.content.decode()
    assert fake.requests == []


def test_healthz_answers_while_a_big_manifest_is_read(monkeypatch, fake):
    """A probe sent once the read has begun is answered by the hub before the read ends: the YAML
    (2 MB of a real ConfigMap) is decoded in a worker process, not on the loop."""
    import asyncio

    from django.test import AsyncClient

    from control import offloop
    from control.api.app import hub_app

    seen: dict[str, float] = {}
    real_run = offloop.run

    async def probe():
        sent: list[dict] = []

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        await hub_app({"type": "http", "method": "GET", "path": "/healthz", "query_string": b"",
                       "headers": [(b"user-agent", b"probe")]}, receive, send)
        assert sent[0]["status"] == 200
        seen["probe_answered"] = asyncio.get_running_loop().time()

    async def timed_run(fn, *args):
        await real_run(len, "")  # the worker process is up: what follows times the read alone
        asyncio.ensure_future(probe())
        try:
            return await real_run(fn, *args)
        finally:
            seen["read_done"] = asyncio.get_running_loop().time()

    monkeypatch.setattr(offloop, "run", timed_run)
    big = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n" + "".join(
        f"  key-{i:05d}: '{'x' * 40}'\n" for i in range(36_000))
    assert len(big) > 2_000_000

    async def scenario():
        return await AsyncClient().post("/apply/", {"manifest": big})

    asyncio.run(scenario())
    assert seen["probe_answered"] < seen["read_done"]


def test_the_traffic_form_sends_an_attendees_short_name_to_their_own_namespace(settings, tmp_path):
    from django.test import RequestFactory

    from control import roster
    from dashboard import hub, views

    settings.DATA_DIR = tmp_path
    roster.join_code(tmp_path, "attendee-1")
    post = RequestFactory().post("/traffic/", {"target": "soup", "count": "3"})
    with hub.acting_as(hub.Identity("attendee-1", "t1")):
        assert views._traffic_form(post)["namespace"] == "attendee-1"
        named = RequestFactory().post("/traffic/", {"target": "soup", "namespace": "attendee-1-b"})
        assert views._traffic_form(named)["namespace"] == "attendee-1-b", "a namespace the form names is kept"
    with hub.acting_as(hub.Identity("admin", "t0")):
        assert "namespace" not in views._traffic_form(post)
