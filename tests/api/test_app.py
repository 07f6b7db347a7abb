"""The routing table: each path family reaches its handler; no match is a 404 Status, a wrong
method a 405 Status; the extras are entries like any other."""

import json

import pytest

from control.api import app
from control.api.extras import kitchen, metrics, services

pytestmark = pytest.mark.django_db(transaction=True)


def _status(answer) -> dict:
    assert answer["Content-Type"] == "application/json" and answer.content.endswith(b"\n")
    return json.loads(answer.content)


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/livez"])
def test_health_is_plain_ok(api, path):
    answer = api.get(path)
    assert answer.status_code == 200 and answer.content == b"ok"


@pytest.mark.parametrize("path, key", [
    ("/version", "gitVersion"), ("/api", "versions"), ("/api/v1", "resources"), ("/apis", "groups"),
    ("/apis/apps", "preferredVersion"), ("/apis/apps/v1", "resources"), ("/openapi/v3", "paths"),
    ("/openapi/v3/api/v1", "components"), ("/api/v1/namespaces", "items"),
    ("/apis/apps/v1/namespaces/default/deployments", "items"), ("/kubekitchen/snapshot", "objects"),
    ("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", "items"),
])
def test_each_path_family_reaches_its_handler(api, path, key):
    answer = api.get(path)
    assert answer.status_code == 200, answer.content
    assert key in json.loads(answer.content)


@pytest.mark.parametrize("path", ["/api/v2", "/api/v1/nothings", "/apis/apps/v1/namespaces/default/nothings",
                                  "/openapi/v3/apis/nothing/v1", "/kubekitchen/nothing", "/healthz/deep",
                                  "/api/v1/namespaces/default/pods/x/proxy", "/apis/nothing/v1/things"])
def test_a_path_nothing_serves_is_a_404_status(api, path):
    answer = api.get(path)
    assert answer.status_code == 404
    assert _status(answer)["message"] == "the server could not find the requested resource"


@pytest.mark.parametrize("method, path", [("POST", "/version"), ("DELETE", "/apis"), ("POST", "/healthz"),
                                          ("PUT", "/kubekitchen/snapshot"), ("POST", "/apis/apps/v1")])
def test_a_document_answers_reads_only(api, method, path):
    answer = api.request(method, path, "{}")
    assert answer.status_code == 405 and _status(answer)["reason"] == "MethodNotAllowed"


def test_a_method_no_verb_answers_on_a_resource_is_a_405(api):
    answer = api.request("OPTIONS", "/api/v1/namespaces")
    assert answer.status_code == 405 and _status(answer)["details"] == {"kind": "namespaces"}


def test_the_extras_are_entries_before_the_generic_resource_path():
    entries = list(app.ROUTES)
    generic = next(i for i, e in enumerate(entries) if e.pattern.endswith("(?P<rest>.+)") and "group" in e.pattern)
    for extra in (*kitchen.ROUTES, *services.ROUTES, *metrics.ROUTES):
        assert entries.index(extra) < generic
    assert generic == len(entries) - 1
    assert metrics.ROUTES[0].match("/apis/metrics.k8s.io/v1beta1/nodes") == {"version": "v1beta1", "rest": "nodes"}
    assert metrics.ROUTES[0].match("/apis/metricsxk8s.io/v1beta1/nodes") is None


def test_the_service_paths_keep_their_own_methods(api):
    answer = api.request("POST", "/kubekitchen/resolve")
    assert answer.status_code == 405 and "POST" in _status(answer)["message"]


def test_each_header_is_sent_once_when_an_answer_sets_its_own_cache_control():
    """A watch sets Cache-Control itself; the wire view showed it twice."""
    from control.api.app import _headers

    names = [name for name, _ in _headers("application/json", {"Cache-Control": "no-cache, private",
                                                                "X-Content-Type-Options": "nosniff"})]
    assert names.count(b"cache-control") == 1 and b"x-content-type-options" in names
    assert [name for name, _ in _headers("application/json", {}, 5)] == [b"content-type", b"cache-control",
                                                                          b"content-length"]
