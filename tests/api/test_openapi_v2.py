"""/openapi/v2: the Swagger 2.0 document derived from the v3 documents, and its gnostic protobuf form.

The protobuf is read back here with the hub's own wire reader into the JSON shape, and then held
to the rules kubectl's strict v2 reader (kube-openapi `proto.NewOpenAPIData`) applies: a reference
stands alone and points at a definition, an array has one item schema, a type is one primitive.
"""

from __future__ import annotations

import json

import pytest

from control.api.openapi_v2 import (
    JSON, PROTOBUF, build_document, document_reply, schema, wants_protobuf,
)
from control.api.protobuf.gnostic import encode_document
from control.api.protobuf.wire import FIXED64, VARINT, fields
from control.kinds.base import Kind

POD = Kind(group="", version="v1", kind="Pod", plural="pods", namespaced=True,
           definition="io.k8s.api.core.v1.Pod", subresources=("status", "binding", "log"))
DEPLOYMENT = Kind(group="apps", version="v1", kind="Deployment", plural="deployments", namespaced=True,
                  definition="io.k8s.api.apps.v1.Deployment", subresources=("status", "scale"))
FAKE = (POD, DEPLOYMENT)
KUBECTL_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


# --- reading gnostic back (only what kubectl reads) --------------------------------------------

def _msg(data) -> list[tuple[int, int, object]]:
    return list(fields(memoryview(bytes(data))))


def _text(value) -> str:
    return bytes(value).decode()


def _yaml_any(data) -> object:
    [(number, _, text)] = _msg(data)
    assert number == 2
    return json.loads(_text(text))  # we write JSON, which YAML readers take as is


def _named(data) -> tuple[str, bytes]:
    parts = {number: value for number, _, value in _msg(data)}
    return _text(parts[1]), parts.get(2, b"")


def read_schema(data) -> dict:
    out: dict = {}
    names = {1: "$ref", 2: "format", 4: "description", 13: "pattern"}
    for number, wire, value in _msg(data):
        if number in names:
            out[names[number]] = _text(value)
        elif number == 5:
            out["default"] = _yaml_any(value)
        elif number in (7, 9) and wire == FIXED64:
            out["maximum" if number == 7 else "minimum"] = value
        elif number == 16 and wire == VARINT:
            out["uniqueItems"] = bool(value)
        elif number == 19:
            out.setdefault("required", []).append(_text(value))
        elif number == 20:
            out.setdefault("enum", []).append(_yaml_any(value))
        elif number == 21:
            [(choice, _, inner)] = _msg(value)
            out["additionalProperties"] = read_schema(inner) if choice == 1 else bool(inner)
        elif number == 22:
            out["type"] = [_text(v) for _, _, v in _msg(value)]
        elif number == 23:
            out["items"] = [read_schema(v) for _, _, v in _msg(value)]
        elif number == 25:
            out["properties"] = {}
            for _, _, named in _msg(value):
                name, sub = _named(named)
                out["properties"][name] = read_schema(sub)
        elif number == 31:
            name, any_value = _named(value)
            out[name] = _yaml_any(any_value)
    return out


def read_document(data: bytes) -> dict:
    out: dict = {"paths": {}, "definitions": {}}
    for number, _, value in _msg(data):
        if number == 1:
            out["swagger"] = _text(value)
        elif number == 8:
            for _, _, named in _msg(value):
                name, item = _named(named)
                out["paths"][name] = item
        elif number == 9:
            for _, _, named in _msg(value):
                name, sub = _named(named)
                out["definitions"][name] = read_schema(sub)
    return out


def read_patch_consumes(path_item: bytes) -> list[str]:
    """What kubectl's GetConsumes(gvk, "PATCH") reads: the PATCH operation's consumes (field 7)."""
    [op] = [v for n, _, v in _msg(path_item) if n == 8]
    return [_text(v) for n, _, v in _msg(op) if n == 7]


def check_like_kube_openapi(name: str, node: dict, definitions: dict) -> None:
    """kube-openapi's ParseSchema: every error it would raise while reading the document."""
    if "$ref" in node:
        assert "properties" not in node and "type" not in node, f"{name}: $ref with a type or fields"
        assert node["$ref"].startswith("#/definitions/"), name
        assert node["$ref"].removeprefix("#/definitions/") in definitions, f"{name}: dangling {node['$ref']}"
        return
    kinds = node.get("type", [])
    assert len(kinds) <= 1, f"{name}: several types"
    if kinds == ["array"]:
        assert len(node.get("items", [])) == 1, f"{name}: array without exactly one item schema"
        check_like_kube_openapi(name + "[]", node["items"][0], definitions)
    elif kinds and kinds != ["object"]:
        assert kinds[0] in ("string", "number", "integer", "boolean"), f"{name}: unknown type {kinds}"
    for field, sub in (node.get("properties") or {}).items():
        check_like_kube_openapi(f"{name}.{field}", sub, definitions)
    if isinstance(node.get("additionalProperties"), dict):
        check_like_kube_openapi(name + "{}", node["additionalProperties"], definitions)


# --- the tests -------------------------------------------------------------------------------

def test_the_protobuf_reads_back_as_the_json_document_for_kubectl():
    document = build_document(FAKE)
    data = encode_document(document)
    back = read_document(data)
    assert back["swagger"] == "2.0"
    assert set(back["definitions"]) == set(document["definitions"])
    assert set(back["paths"]) == set(document["paths"])
    for name, node in back["definitions"].items():
        check_like_kube_openapi(name, node, back["definitions"])
    deployment = back["definitions"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    strategy = back["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"]
    assert strategy == {"$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentStrategy", "default": {},
                        "description": strategy["description"], "x-kubernetes-patch-strategy": "retainKeys"}
    containers = back["definitions"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name" and containers["type"] == ["array"]
    item = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
    assert "application/strategic-merge-patch+json" in read_patch_consumes(back["paths"][item])


def test_every_real_definition_passes_kubectls_reader():
    back = read_document(encode_document(build_document()))
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.List" in back["definitions"]
    for name, node in back["definitions"].items():
        check_like_kube_openapi(name, node, back["definitions"])


def test_paths_and_operations_in_swagger_form():
    document = build_document(FAKE)
    item = document["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]
    patch = item["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Pod", "version": "v1"}
    assert patch["x-kubernetes-action"] == "patch"
    assert "application/apply-patch+yaml" in patch["consumes"]
    assert {"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": True,
            "description": patch["parameters"][2]["description"]} in patch["parameters"]
    [body] = [p for p in patch["parameters"] if p["in"] == "body"]
    assert body == {"name": "body", "in": "body", "required": True,
                    "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    assert patch["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.core.v1.Pod"}
    assert item["get"]["consumes"] == ["*/*"]
    log = document["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/log"]["get"]
    assert log["produces"] == ["text/plain"] and log["responses"]["200"]["schema"] == {"type": "string"}
    assert {p["name"] for p in item["parameters"]} == {"name", "namespace", "pretty"}
    assert document["security"] == [{"BearerToken": []}]


@pytest.mark.parametrize("v3, v2", [
    ({"allOf": [{"$ref": "#/components/schemas/X"}], "description": "d", "default": {}, "x-kubernetes-patch-strategy": "retainKeys"},
     {"$ref": "#/definitions/X", "description": "d", "default": {}, "x-kubernetes-patch-strategy": "retainKeys"}),
    ({"oneOf": [{"type": "integer"}, {"type": "string"}], "format": "int-or-string"},
     {"type": "string", "format": "int-or-string"}),
    ({"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {"type": "string"}}},
     {"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
    ({"type": "string", "nullable": True}, {}),
    ({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
     {"x-kubernetes-int-or-string": True}),
    ({"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": {"type": "string"}},
     {"x-kubernetes-preserve-unknown-fields": True}),
    ({"type": "array", "items": {"$ref": "#/components/schemas/Y"}},
     {"type": "array", "items": {"$ref": "#/definitions/Y"}}),
    ({"type": ["string", "integer"]}, {}),
    ({"type": "null", "description": "d"}, {"description": "d"}),
    ({"type": "array", "items": [{"type": "string"}]}, {}),
    ({"type": "object", "additionalProperties": {"type": "string", "nullable": True}},
     {"type": "object", "additionalProperties": {}}),
])
def test_v3_only_constructs_fold_into_what_kubectl_reads(v3, v2):
    assert schema(v3) == v2


def test_custom_kind_components_are_converted_too():
    crd = Kind(group="kitchen.example.com", version="v1", kind="Order", plural="orders", namespaced=True,
               definition="com.example.kitchen.v1.Order", crd="orders.kitchen.example.com", merges_strategically=False,
               schema={"type": "object", "properties": {"spec": {"type": "object", "properties": {
                   "dish": {"type": "string"}, "extras": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                                                          "properties": {"a": {"type": "string"}}}}}}})
    document = build_document((POD, crd))
    order = document["definitions"]["com.example.kitchen.v1.Order"]
    assert order["properties"]["spec"]["properties"]["extras"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    patch = document["paths"]["/apis/kitchen.example.com/v1/namespaces/{namespace}/orders/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in patch["consumes"]  # kubectl falls back to merge patch


@pytest.mark.parametrize("accept, protobuf", [
    (KUBECTL_ACCEPT, True),
    (PROTOBUF, True),
    (f"{KUBECTL_ACCEPT}, application/json", True),
    ("application/json", False),
    ("", False),
    ("*/*", False),
    (f"application/json, {KUBECTL_ACCEPT}", False),
])
def test_content_negotiation(accept, protobuf):
    assert wants_protobuf(accept) is protobuf
    body, content_type, etag = document_reply(accept)
    assert content_type == (PROTOBUF if protobuf else JSON)
    if not protobuf:
        assert json.loads(body)["swagger"] == "2.0"
    else:
        assert read_document(body)["swagger"] == "2.0"
    assert etag.startswith('"') and document_reply(accept)[2] == etag  # stable while the kinds are


@pytest.mark.django_db(transaction=True)
def test_the_hub_serves_it_at_openapi_v2(api):
    proto = api.get("/openapi/v2", HTTP_ACCEPT=KUBECTL_ACCEPT)
    assert proto.status_code == 200 and proto["content-type"] == PROTOBUF
    assert "io.k8s.api.core.v1.Pod" in read_document(proto.content)["definitions"]
    plain = api.get("/openapi/v2", HTTP_ACCEPT="application/json")
    assert plain["content-type"] == JSON and plain["etag"] == proto["etag"]
    assert "io.k8s.api.core.v1.Pod" in json.loads(plain.content)["definitions"]
    assert api.get("/openapi/v2/extra").status_code == 404
    assert api.post("/openapi/v2", data="{}").status_code == 405
