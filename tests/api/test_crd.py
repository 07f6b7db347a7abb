"""CustomResourceDefinitions through the in-process client: a created kind is served at once with
every verb, its schema validates, defaults and prunes, and deleting the definition removes it all."""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from tests.api.client import ApiClient, admin_authorization

pytestmark = pytest.mark.django_db(transaction=True)

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ORDERS = "/apis/kitchen.example.com/v1/namespaces/default/orders"

ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "required": ["menu"], "properties": {
            "menu": {"type": "string", "enum": ["pasta", "pizza"]},
            "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
            "table": {"type": "string", "pattern": "^t[0-9]+$"},
            "notes": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "replicas": {"type": "integer", "minimum": 0},
            "selector": {"type": "string"},
        }},
        "status": {"type": "object", "properties": {
            "phase": {"type": "string"},
            "replicas": {"type": "integer"},
            "conditions": {"type": "array", "items": {"type": "object", "properties": {
                "type": {"type": "string"}, "status": {"type": "string"}}}},
        }},
    },
}


def order_crd(**changes) -> dict:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "orders.kitchen.example.com"},
        "spec": {
            "group": "kitchen.example.com", "scope": "Namespaced",
            "names": {"plural": "orders", "singular": "order", "kind": "Order", "shortNames": ["ord"],
                      "categories": ["all", "kitchen"]},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": copy.deepcopy(ORDER_SCHEMA)},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                         "statusReplicasPath": ".status.replicas",
                                                         "labelSelectorPath": ".spec.selector"}},
                "additionalPrinterColumns": [
                    {"name": "Menu", "type": "string", "jsonPath": ".spec.menu"},
                    {"name": "Count", "type": "integer", "jsonPath": ".spec.count"},
                    {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                    {"name": "Table", "type": "string", "jsonPath": ".spec.table", "priority": 1},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
            }],
        },
    }
    crd["spec"].update(changes)
    return crd


def order(name: str = "o1", **spec) -> dict:
    return {"apiVersion": "kitchen.example.com/v1", "kind": "Order", "metadata": {"name": name, "labels": {"table": "t1"}},
            "spec": {"menu": "pasta", **spec}}


def send(api: ApiClient, method: str, path: str, body=None, content_type="application/json", **extra):
    data = "" if body is None else body if isinstance(body, (str, bytes)) else json.dumps(body)
    response = getattr(api, "request")(method, path, data=data, content_type=content_type, **extra)
    return response.status_code, json.loads(response.content) if response.content else None


@pytest.fixture
def orders(api):
    code, crd = send(api, "POST", CRDS, order_crd())
    assert code == 201, crd
    return crd


def test_created_definition_is_established_and_served_at_once(api, orders):
    conditions = {c["type"]: c["status"] for c in orders["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert orders["status"]["acceptedNames"]["kind"] == "Order"
    assert orders["status"]["storedVersions"] == ["v1"]
    assert orders["spec"]["names"]["listKind"] == "OrderList"
    code, created = send(api, "POST", ORDERS, order())
    assert code == 201, created
    assert created["metadata"]["generation"] == 1 and created["spec"]["count"] == 1  # default applied
    code, got = send(api, "GET", f"{ORDERS}/o1")
    assert code == 200 and got == created
    code, listed = send(api, "GET", ORDERS)
    assert code == 200 and listed["kind"] == "OrderList" and [i["metadata"]["name"] for i in listed["items"]] == ["o1"]
    code, everywhere = send(api, "GET", "/apis/kitchen.example.com/v1/orders")
    assert code == 200 and len(everywhere["items"]) == 1


def test_every_verb_and_selectors(api, orders):
    for name, table in (("a", "t1"), ("b", "t2")):
        body = order(name)
        body["metadata"]["labels"] = {"table": table}
        assert send(api, "POST", ORDERS, body)[0] == 201
    code, listed = send(api, "GET", ORDERS, QUERY_STRING="labelSelector=table%3Dt2")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["b"]
    code, listed = send(api, "GET", ORDERS, QUERY_STRING="fieldSelector=metadata.name%3Da")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    code, current = send(api, "GET", f"{ORDERS}/a")
    current["spec"]["menu"] = "pizza"
    code, updated = send(api, "PUT", f"{ORDERS}/a", current)
    assert code == 200 and updated["spec"]["menu"] == "pizza" and updated["metadata"]["generation"] == 2
    code, patched = send(api, "PATCH", f"{ORDERS}/a", {"spec": {"count": 3}}, "application/merge-patch+json")
    assert code == 200 and patched["spec"]["count"] == 3 and patched["metadata"]["generation"] == 3
    code, patched = send(api, "PATCH", f"{ORDERS}/a", [{"op": "replace", "path": "/spec/count", "value": 4}],
                         "application/json-patch+json")
    assert code == 200 and patched["spec"]["count"] == 4
    code, refused = send(api, "PATCH", f"{ORDERS}/a", {"spec": {"count": 5}}, "application/strategic-merge-patch+json")
    assert code == 415 and refused["reason"] == "UnsupportedMediaType"
    code, applied = send(api, "PATCH", f"{ORDERS}/c", "apiVersion: kitchen.example.com/v1\nkind: Order\n"
                         "metadata: {name: c}\nspec: {menu: pizza}\n", "application/apply-patch+yaml",
                         QUERY_STRING="fieldManager=me")
    assert code == 201 and applied["spec"] == {"menu": "pizza", "count": 1}
    code, gone = send(api, "DELETE", f"{ORDERS}/c")
    assert code == 200 and gone["status"] == "Success"
    code, left = send(api, "DELETE", ORDERS, QUERY_STRING="labelSelector=table%3Dt1")
    assert code == 200 and [i["metadata"]["name"] for i in left["items"]] == ["a"]
    code, listed = send(api, "GET", ORDERS)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["b"]


def test_status_subresource_keeps_spec_and_main_writes_keep_status(api, orders):
    send(api, "POST", ORDERS, {**order(), "status": {"phase": "ignored"}})
    code, got = send(api, "GET", f"{ORDERS}/o1")
    assert "status" not in got  # status is written through the subresource only
    code, patched = send(api, "PATCH", f"{ORDERS}/o1/status",
                         {"spec": {"menu": "pizza"}, "status": {"phase": "Cooking"}}, "application/merge-patch+json")
    assert code == 200 and patched["status"] == {"phase": "Cooking"} and patched["spec"]["menu"] == "pasta"
    assert patched["metadata"]["generation"] == 1
    code, patched = send(api, "PATCH", f"{ORDERS}/o1", {"spec": {"count": 2}, "status": {"phase": "x"}},
                         "application/merge-patch+json")
    assert patched["status"] == {"phase": "Cooking"} and patched["metadata"]["generation"] == 2
    code, status = send(api, "GET", f"{ORDERS}/o1/status")
    assert code == 200 and status["status"]["phase"] == "Cooking"


def test_schema_violations_are_422_with_kubernetes_causes(api, orders):
    code, refused = send(api, "POST", ORDERS, order(menu="soup", count=0, table="x", notes=["a", "b", "c"]))
    assert code == 422 and refused["reason"] == "Invalid"
    messages = {c["field"]: c["message"] for c in refused["details"]["causes"]}
    assert messages["spec.menu"] == 'Unsupported value: "soup": supported values: "pasta", "pizza"'
    assert messages["spec.count"] == "Invalid value: 0: spec.count in body should be greater than or equal to 1"
    assert messages["spec.table"] == "Invalid value: \"x\": spec.table in body should match '^t[0-9]+$'"
    assert messages["spec.notes"] == "Too many: 3: must have at most 2 items"
    assert refused["message"].startswith('Order.kitchen.example.com "o1" is invalid: ')
    body = order()
    del body["spec"]["menu"]
    code, refused = send(api, "POST", ORDERS, body)
    assert code == 422 and refused["details"]["causes"] == [
        {"reason": "FieldValueRequired", "field": "spec.menu", "message": "Required value"}]
    code, refused = send(api, "POST", ORDERS, order(count="three"))
    assert code == 422 and 'spec.count in body must be of type integer: "string"' in refused["message"]
    assert send(api, "GET", ORDERS)[1]["items"] == []


def test_unknown_fields_refused_under_strict_and_pruned_otherwise(api, orders):
    code, refused = send(api, "POST", ORDERS, order(extra="x"))
    assert code == 400
    assert refused["message"] == ('Order in version "v1" cannot be handled as a Order: strict decoding error: '
                                  'unknown field "spec.extra"')
    code, refused = send(api, "PATCH", f"{ORDERS}/o9", "apiVersion: kitchen.example.com/v1\nkind: Order\n"
                         "metadata: {name: o9}\nspec: {menu: pizza, foo: 1}\n", "application/apply-patch+yaml",
                         QUERY_STRING="fieldManager=me")
    assert code == 400 and ".spec.foo: field not declared in schema" in refused["message"]
    code, created = send(api, "POST", ORDERS, order(extra="x"), QUERY_STRING="fieldValidation=Ignore")
    assert code == 201 and "extra" not in created["spec"]


def test_scale_subresource(api, orders):
    send(api, "POST", ORDERS, order(replicas=2, selector="app=o1"))
    code, scale = send(api, "GET", f"{ORDERS}/o1/scale")
    assert code == 200 and scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 2 and scale["status"] == {"replicas": 0, "selector": "app=o1"}
    code, scale = send(api, "PATCH", f"{ORDERS}/o1/scale", {"spec": {"replicas": 5}}, "application/merge-patch+json")
    assert code == 200 and scale["spec"]["replicas"] == 5
    code, got = send(api, "GET", f"{ORDERS}/o1")
    assert got["spec"]["replicas"] == 5 and got["metadata"]["generation"] == 2


def test_table_uses_printer_columns(api, orders):
    body = order(count=2, table="t4")
    send(api, "POST", ORDERS, body)
    send(api, "PATCH", f"{ORDERS}/o1/status", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
         "application/merge-patch+json")
    code, table = send(api, "GET", ORDERS, HTTP_ACCEPT="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert code == 200 and table["kind"] == "Table"
    assert [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", 0), ("Menu", "string", 0), ("Count", "integer", 0), ("Ready", "string", 0),
        ("Table", "string", 1), ("Age", "date", 0)]
    cells = table["rows"][0]["cells"]
    assert cells[:5] == ["o1", "pasta", 2, "True", "t4"] and cells[5].endswith("s")


def test_discovery_and_openapi_follow_the_definition(api, orders):
    code, groups = send(api, "GET", "/apis")
    entry = next(g for g in groups["groups"] if g["name"] == "kitchen.example.com")
    assert entry["preferredVersion"]["version"] == "v1"
    code, resources = send(api, "GET", "/apis/kitchen.example.com/v1")
    by_name = {r["name"]: r for r in resources["resources"]}
    main = by_name["orders"]
    assert main["kind"] == "Order" and main["namespaced"] and main["singularName"] == "order"
    assert main["shortNames"] == ["ord"] and main["categories"] == ["all", "kitchen"] and "watch" in main["verbs"]
    assert by_name["orders/status"]["kind"] == "Order" and by_name["orders/scale"]["kind"] == "Scale"
    code, root = send(api, "GET", "/openapi/v3")
    assert "apis/kitchen.example.com/v1" in root["paths"]
    code, doc = send(api, "GET", "/openapi/v3/apis/kitchen.example.com/v1")
    schema = doc["components"]["schemas"]["com.example.kitchen.v1.Order"]
    assert schema["x-kubernetes-group-version-kind"] == [{"group": "kitchen.example.com", "kind": "Order", "version": "v1"}]
    assert schema["properties"]["spec"]["properties"]["menu"]["enum"] == ["pasta", "pizza"]
    assert "/apis/kitchen.example.com/v1/namespaces/{namespace}/orders/{name}/scale" in doc["paths"]


def test_deleting_the_definition_deletes_its_objects_and_stops_serving(api, orders):
    send(api, "POST", ORDERS, order("a"))
    send(api, "POST", ORDERS, order("b"))
    code, listed = send(api, "GET", ORDERS)
    revision = listed["metadata"]["resourceVersion"]
    code, gone = send(api, "DELETE", f"{CRDS}/orders.kitchen.example.com")
    assert code == 200
    code, missing = send(api, "GET", ORDERS)
    assert code == 404 and missing["reason"] == "NotFound"
    code, missing = send(api, "GET", "/apis/kitchen.example.com/v1")
    assert code == 404
    code, root = send(api, "GET", "/openapi/v3")
    assert "apis/kitchen.example.com/v1" not in root["paths"]
    changes = api.runner.run(_changes_after(int(revision)))
    assert sorted((c.type, c.name) for c in changes if c.resource == "kitchen.example.com/orders") == [
        ("DELETED", "a"), ("DELETED", "b")]
    # a new definition of the same name starts empty
    assert send(api, "POST", CRDS, order_crd())[0] == 201
    assert send(api, "GET", ORDERS)[1]["items"] == []


async def _changes_after(revision: int):
    from control.storage import store
    from control.storage.db import run_db

    return await run_db(lambda: store.events_since(revision))


def test_watch_sees_objects_of_a_custom_kind(api, orders):
    async def first_events():
        from control.api.app import hub_app

        sent: list[dict] = []
        got_enough = asyncio.Event()

        requested = False

        async def receive():
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await got_enough.wait()
            return {"type": "http.disconnect"}

        async def send_(message):
            sent.append(message)
            if b"o2" in message.get("body", b""):
                got_enough.set()

        scope = {"type": "http", "method": "GET", "path": ORDERS, "query_string": b"watch=1",
                 "headers": [(b"user-agent", b"pytest/1.0"), admin_authorization()]}
        task = asyncio.ensure_future(hub_app(scope, receive, send_))
        await asyncio.sleep(0.1)
        from control.api import verbs  # create through the API on this loop
        from control.api.request import Call
        from control.storage.db import run_db
        from control import kinds

        kind = kinds.by_resource("kitchen.example.com", "v1", "orders")
        call = Call(method="POST", kind=kind, namespace="default", name="", subresource="", query={},
                    actor="pytest", content_type="application/json", raw_body=json.dumps(order("o2")).encode())
        await run_db(verbs.create, call)
        await asyncio.wait_for(task, 5)
        return b"".join(m.get("body", b"") for m in sent[1:])

    send(api, "POST", ORDERS, order("o1"))
    body = api.runner.run(first_events())
    events = [json.loads(line) for line in body.splitlines() if line.strip()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "o1"), ("ADDED", "o2")]
    assert events[1]["object"]["apiVersion"] == "kitchen.example.com/v1"


def test_a_custom_kind_that_shares_a_built_in_name_follows_custom_rules(api):
    """Built-in rules (a pod's graceful deletion, a namespace's label-only names) key on the kind
    itself, not its name: a kind "Pod" or "Namespace" of another group gets none of them."""
    for kind, plural in (("Pod", "pods"), ("Namespace", "namespaces")):
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": f"{plural}.toys.example.com"},
               "spec": {"group": "toys.example.com", "scope": "Namespaced",
                        "names": {"plural": plural, "kind": kind},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {"type": "object",
                                                                     "x-kubernetes-preserve-unknown-fields": True}}}]}}
        assert send(api, "POST", CRDS, crd)[0] == 201
    pods = "/apis/toys.example.com/v1/namespaces/default/pods"
    code, created = send(api, "POST", pods, {"apiVersion": "toys.example.com/v1", "kind": "Pod",
                                             "metadata": {"name": "teddy"}, "status": {"phase": "Fluffy"}})
    assert code == 201 and created.get("status") == {"phase": "Fluffy"}  # no status subresource: kept, not reset
    code, gone = send(api, "DELETE", f"{pods}/teddy")
    assert code == 200 and gone["kind"] == "Status"  # deleted at once, no grace period
    assert send(api, "GET", f"{pods}/teddy")[0] == 404
    code, _ = send(api, "POST", "/apis/toys.example.com/v1/namespaces/default/namespaces",
                   {"apiVersion": "toys.example.com/v1", "kind": "Namespace", "metadata": {"name": "a.b"}})
    assert code == 201  # a subdomain name, as for every custom kind (a core Namespace's must be a label)
