"""The Gateway API's definitions through the in-process hub: all four established, defaults
applied (parentRef group/kind, backendRef kind/weight, a rule's PathPrefix / match, a fresh
status's Pending conditions), bad input answered 422 with kube-apiserver's words (a negative
weight, an unknown path or header match type, a bad hostname, too many hostnames), and
upstream's printer columns in the Table kubectl asks for."""

from __future__ import annotations

import copy
import json

import pytest

from control.auth import policystore
from control.bootstrap import cluster_bootstrap
from control.gateway.manifests import CRDS
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

DEFINITIONS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
BASE = "/apis/gateway.networking.k8s.io/v1"
ROUTES = f"{BASE}/namespaces/default/httproutes"
GATEWAYS = f"{BASE}/namespaces/default/gateways"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"

ROUTE = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "menu"},
         "spec": {"parentRefs": [{"name": "front"}], "hostnames": ["menu.example"],
                  "rules": [{"backendRefs": [{"name": "menu-v1", "port": 80, "weight": 90},
                                             {"name": "menu-v2", "port": 80, "weight": 10}]}]}}
GATEWAY = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "front"},
           "spec": {"gatewayClassName": "kube-kitchen", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}


@pytest.fixture
def api():
    policystore.forget()
    cluster_bootstrap()
    client = ApiClient()
    for crd in CRDS:
        response = client.post(DEFINITIONS, json.dumps(crd))
        assert response.status_code == 201, response.content
        conditions = {c["type"]: c["status"] for c in json.loads(response.content)["status"]["conditions"]}
        assert conditions["Established"] == "True"
    yield client
    client.close()


def send(api, method, path, body=None, **extra):
    response = api.request(method, path, data="" if body is None else json.dumps(body),
                           content_type="application/json", **extra)
    return response.status_code, json.loads(response.content) if response.content else None


def route(**changes):
    body = copy.deepcopy(ROUTE)
    body["spec"].update(changes)
    return body


def test_defaults_of_a_route_and_a_gateway(api):
    code, created = send(api, "POST", ROUTES, route())
    assert code == 201, created
    assert created["spec"]["parentRefs"] == [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "front"}]
    assert created["spec"]["rules"][0]["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
    assert created["spec"]["rules"][0]["backendRefs"][0] == {"group": "", "kind": "Service", "name": "menu-v1",
                                                              "port": 80, "weight": 90}
    code, created = send(api, "POST", GATEWAYS, GATEWAY)
    assert code == 201, created
    assert created["spec"]["listeners"][0]["allowedRoutes"] == {"namespaces": {"from": "Same"}}
    assert [(c["type"], c["status"], c["reason"]) for c in created["status"]["conditions"]] == [
        ("Accepted", "Unknown", "Pending"), ("Programmed", "Unknown", "Pending")]


def invalid(api, body):
    code, status = send(api, "POST", ROUTES, body)
    assert code == 422, status
    assert status["kind"] == "Status" and status["reason"] == "Invalid"
    return [(c["field"], c["message"]) for c in status["details"]["causes"]]


def test_a_negative_weight_is_refused_with_kube_apiservers_words(api):
    body = route()
    body["spec"]["rules"][0]["backendRefs"][1]["weight"] = -1
    field = "spec.rules[0].backendRefs[1].weight"
    assert invalid(api, body) == [(field, f"Invalid value: -1: {field} in body should be greater than or equal to 0")]


def test_bad_matches_hostnames_and_too_many_items_are_refused(api):
    bad_path = route(rules=[{"matches": [{"path": {"type": "Prefix", "value": "/"}}]}])
    [(field, message)] = invalid(api, bad_path)
    assert field == "spec.rules[0].matches[0].path.type"
    assert message == 'Unsupported value: "Prefix": supported values: "Exact", "PathPrefix", "RegularExpression"'
    bad_header = route(rules=[{"matches": [{"headers": [{"name": "x-guest", "value": "vip", "type": "Prefix"}]}]}])
    assert invalid(api, bad_header)[0][0] == "spec.rules[0].matches[0].headers[0].type"
    [(field, message)] = invalid(api, route(hostnames=["Menu_Example"]))
    assert field == "spec.hostnames[0]" and "should match" in message
    [(field, message)] = invalid(api, route(hostnames=[f"h{i}.example" for i in range(17)]))
    assert field == "spec.hostnames" and "must have at most 16 items" in message
    [(field, _)] = invalid(api, route(parentRefs=[{"name": f"g{i}"} for i in range(33)]))
    assert field == "spec.parentRefs"


def test_printer_columns_are_upstreams(api):
    assert send(api, "POST", GATEWAYS, GATEWAY)[0] == 201
    assert send(api, "POST", ROUTES, route())[0] == 201
    for path, columns, row in ((GATEWAYS, ["Name", "Class", "Address", "Programmed", "Age"],
                                ["front", "kube-kitchen", None, "Unknown"]),
                               (ROUTES, ["Name", "Hostnames", "Age"], ["menu", '["menu.example"]'])):
        response = api.request("GET", path, HTTP_ACCEPT=TABLE)
        table = json.loads(response.content)
        assert [c["name"] for c in table["columnDefinitions"]] == columns
        assert table["rows"][0]["cells"][:len(row)] == row
