"""Request attributes as upstream's RequestInfoFactory reads them."""

from __future__ import annotations

from control.auth.rbac import Attributes
from control.auth.requestinfo import attributes


def test_resource_paths():
    assert attributes("GET", "/api/v1/namespaces/bob/pods", {}) == Attributes(
        "list", True, "", "pods", namespace="bob", path="/api/v1/namespaces/bob/pods")
    got = attributes("GET", "/api/v1/pods", {"watch": "true"})
    assert (got.verb, got.namespace) == ("watch", "")
    got = attributes("POST", "/apis/apps/v1/namespaces/a/deployments/web/scale", {})
    assert (got.verb, got.api_group, got.resource, got.name, got.subresource) == \
        ("create", "apps", "deployments", "web", "scale")
    got = attributes("GET", "/api/v1/namespaces/a/pods/web/log", {})
    assert (got.verb, got.resource, got.subresource) == ("get", "pods", "log")
    assert attributes("DELETE", "/api/v1/namespaces/a/pods", {}).verb == "deletecollection"
    assert attributes("PATCH", "/api/v1/nodes/n1/status", {}).subresource == "status"


def test_a_namespace_is_its_own_resource():
    got = attributes("GET", "/api/v1/namespaces/bob", {})
    assert (got.resource, got.name, got.namespace) == ("namespaces", "bob", "bob")
    got = attributes("PUT", "/api/v1/namespaces/bob/finalize", {})
    assert (got.resource, got.name, got.subresource) == ("namespaces", "bob", "finalize")


def test_a_list_for_one_name_carries_the_name():
    got = attributes("GET", "/api/v1/namespaces/a/configmaps", {"fieldSelector": "metadata.name=cm", "watch": "1"})
    assert (got.verb, got.name) == ("watch", "cm")


def test_everything_else_is_a_non_resource_request():
    for path in ("/healthz", "/api", "/apis/apps", "/apis/apps/v1", "/version", "/kubekitchen/traffic"):
        got = attributes("GET", path, {})
        assert not got.resource_request and got.path == path and got.verb == "get"
    assert attributes("POST", "/kubekitchen/traffic", {}).verb == "post"


def test_the_same_request_is_read_once_and_its_other_query_values_do_not_matter():
    from control.auth import requestinfo

    requestinfo._attributes.cache_clear()
    first = attributes("GET", "/api/v1/namespaces/a/pods", {"watch": "true", "limit": "5"})
    again = attributes("GET", "/api/v1/namespaces/a/pods", {"watch": "true", "resourceVersion": "9"})
    assert again is first and first.verb == "watch"
    assert attributes("GET", "/api/v1/namespaces/a/pods", {}).verb == "list"
    named = attributes("GET", "/api/v1/namespaces/a/pods", {"fieldSelector": "metadata.name=web"})
    assert (named.verb, named.name) == ("list", "web")
    assert requestinfo._attributes.cache_info().hits == 1


def test_traffic_to_a_named_service_is_also_a_question_about_its_proxy():
    """As upstream authorizes POST /api/v1/namespaces/NS/services/NAME/proxy: create services/proxy."""
    from control.auth.requestinfo import service_proxy_attributes

    def asked(**query):
        got = service_proxy_attributes("POST", "/kubekitchen/traffic", query)
        return got and (got.verb, got.resource, got.subresource, got.namespace, got.name, got.resource_request)

    assert asked(target="pasta", namespace="alice") == ("create", "services", "proxy", "alice", "pasta", True)
    assert asked(target="pasta") == ("create", "services", "proxy", "default", "pasta", True)
    for target in ("pasta.bob", "pasta.bob.svc", "pasta.bob.svc.cluster.local", "Pasta.Bob.svc.cluster.local."):
        assert asked(target=target, namespace="alice")[3:5] == ("bob", "pasta"), target  # the name says where
    for target in ("10.96.0.12", "::1", "web-0.pasta.bob", "pasta.bob.example.com", "", "-x", "a" * 64):
        assert asked(target=target, namespace="alice") is None, target  # no one Service of one namespace
    assert asked(target="pasta", namespace="alice", source="10.244.1.5") is None  # only the node names a source
    assert service_proxy_attributes("GET", "/kubekitchen/traffic", {"target": "pasta"}) is None
    assert service_proxy_attributes("POST", "/kubekitchen/resolve", {"target": "pasta"}) is None
