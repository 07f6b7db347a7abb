"""An attendee (the `admin` ClusterRole bound in their own namespace only) sends Service traffic
through the hub as upstream's service proxy lets them: `create` on `services/proxy` of the Service
the target names. Their run stays in that namespace (kube-proxy is told `namespaceOnly`), is bounded,
and its records are scoped there; another namespace's Service, by name or by address, a `source`,
or a run beyond the bounds is refused before kube-proxy hears anything."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from control.api import traffic
from control.auth import tokenfile
from tests.api.client import ApiClient
from tests.api.extras import test_traffic_source

pytestmark = pytest.mark.django_db(transaction=True)
NAMESPACES = ("attendee-1", "attendee-2")
cluster = test_traffic_source.cluster  # the fixture: a hub with authentication on, two nodes, a fake kube-proxy


def _created(api: ApiClient, path: str, body: dict) -> dict:
    answer = api.post(path, json.dumps(body))
    assert answer.status_code == 201, answer.content
    return json.loads(answer.content)


@pytest.fixture
def room(cluster):
    admin = cluster["admin"]
    addresses = {}
    for namespace in NAMESPACES:
        _created(admin, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        _created(admin, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "workshop-admin"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": namespace}]})
        web = _created(admin, f"/api/v1/namespaces/{namespace}/services", {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}})
        addresses[namespace] = web["spec"]["clusterIP"]
    attendee = ApiClient(token=tokenfile.token_of(settings.DATA_DIR, "attendee-1", ("kubekitchen:attendees",)))
    cluster["proxy"].lines = [{"seq": 0, "code": 200, "pod": "web-0", "service": "attendee-1/web"}, {"done": True}]
    yield {**cluster, "attendee": attendee, "addresses": addresses}
    attendee.close()


def _send(client: ApiClient, query: str) -> tuple[int, dict | list]:
    answer = client.post("/kubekitchen/traffic", QUERY_STRING=query)
    body = b"".join(answer.streaming_content) if getattr(answer, "streaming", False) else answer.content
    if answer.status_code == 200:
        return 200, [json.loads(line) for line in body.splitlines() if line.strip()]
    return answer.status_code, json.loads(body)


@pytest.mark.parametrize("query", ["node=node-1&target=web&namespace=attendee-1",
                                   "node=node-1&target=web.attendee-1.svc.cluster.local",
                                   "node=node-1&target=web.attendee-1&namespace=default&count=20"])
def test_an_attendee_sends_to_a_service_of_their_namespace_and_kube_proxy_keeps_it_there(room, query):
    code, lines = _send(room["attendee"], query)
    assert code == 200 and lines[0]["pod"] == "web-0", lines
    (path, asked), = room["proxy"].asked
    assert path == "/send" and asked["namespace"] == "attendee-1" and asked["namespaceOnly"] == "true"
    assert asked["interval"] == "100" and asked["count"] in ("1", "20")
    record = next(r for r in reversed(traffic.recent) if r.get("type") == "service.request")
    assert record["user"] == "attendee-1" and record["scope"] == {"namespace": "attendee-1", "group": "",
                                                                   "resource": "services"}


@pytest.mark.parametrize("query", ["node=node-1&target=web&namespace=attendee-2",
                                   "node=node-1&target=web.attendee-2&namespace=attendee-1",
                                   "node=node-1&target=web.attendee-2.svc.cluster.local"])
def test_a_service_of_another_namespace_is_refused_as_upstreams_service_proxy_is(room, query):
    code, status = _send(room["attendee"], query)
    assert code == 403 and status["reason"] == "Forbidden"
    assert status["message"] == ('services "web" is forbidden: User "attendee-1" cannot create resource '
                                 '"services/proxy" in API group "" in the namespace "attendee-2"')
    assert status["details"] == {"name": "web", "kind": "services"}
    assert room["proxy"].asked == []


def test_an_address_is_refused_even_of_a_service_of_their_own_namespace(room):
    """An address may be another namespace's Service (or a pod): only the node's right covers one."""
    for namespace in NAMESPACES:
        code, status = _send(room["attendee"], f"node=node-1&target={room['addresses'][namespace]}&namespace=attendee-1")
        assert code == 403
        assert status["message"] == 'forbidden: User "attendee-1" cannot post path "/kubekitchen/traffic"'
    assert room["proxy"].asked == []


def test_naming_a_source_still_needs_the_node_itself(room):
    code, status = _send(room["attendee"], "node=node-1&target=web&namespace=attendee-1&source=10.244.1.5")
    assert code == 403
    assert status["message"] == 'forbidden: User "attendee-1" cannot post path "/kubekitchen/traffic"'
    assert room["proxy"].asked == []


@pytest.mark.parametrize("extra,field", [("count=1001", "count"), ("count=x", "count"), ("interval=10", "interval"),
                                         ("count=1000&interval=1000", "interval"), ("count=0", "count")])
def test_a_persons_run_is_bounded(room, extra, field):
    code, status = _send(room["attendee"], f"node=node-1&target=web&namespace=attendee-1&{extra}")
    assert code == 400 and status["message"].startswith(f"{field}: Invalid value"), status
    assert room["proxy"].asked == []


def test_a_node_and_the_instructor_keep_their_run_as_it_was(room):
    assert _send(room["admin"], "node=node-1&target=10.96.0.1&count=5000")[0] == 200
    assert _send(room["kubelet"], "node=node-1&target=web.attendee-2&count=2")[0] == 200
    assert [asked for _, asked in room["proxy"].asked] == [{"target": "10.96.0.1", "count": "5000"},
                                                            {"target": "web.attendee-2", "count": "2"}]
