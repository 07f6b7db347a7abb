"""Validation, defaulting and pruning by a CRD's OpenAPI v3 schema, with Kubernetes' wording; the
structural-schema rules; the JSONPath subset of printer columns."""

from __future__ import annotations

import pytest

from control.kinds import jsonpath
from control.kinds.openapi_schema import apply_defaults, drop_nulls, prune, unknown_fields, validate
from control.kinds.structural import structural_causes


def spec_schema(**props) -> dict:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def messages(obj: dict, schema: dict) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in validate(obj, schema)]


@pytest.mark.parametrize("prop, value, expected", [
    ({"type": "integer", "minimum": 1}, 0, "spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"),
    ({"type": "integer", "minimum": 1, "exclusiveMinimum": True}, 1, "spec.x: Invalid value: 1: spec.x in body should be greater than 1"),
    ({"type": "number", "maximum": 2.5}, 3, "spec.x: Invalid value: 3: spec.x in body should be less than or equal to 2.5"),
    ({"type": "integer", "maximum": 2, "exclusiveMaximum": True}, 2, "spec.x: Invalid value: 2: spec.x in body should be less than 2"),
    ({"type": "string", "enum": ["pasta", "pizza"]}, "x", 'spec.x: Unsupported value: "x": supported values: "pasta", "pizza"'),
    ({"type": "string", "minLength": 2}, "a", 'spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long'),
    ({"type": "string", "maxLength": 2}, "abc", "spec.x: Too long: may not be longer than 2"),
    ({"type": "string", "pattern": "^[a-z]+$"}, "A1", "spec.x: Invalid value: \"A1\": spec.x in body should match '^[a-z]+$'"),
    ({"type": "array", "items": {"type": "string"}, "minItems": 1}, [], "spec.x: Invalid value: 0: spec.x in body should have at least 1 items"),
    ({"type": "array", "items": {"type": "string"}, "maxItems": 1}, ["a", "b"], "spec.x: Too many: 2: must have at most 1 items"),
    ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, ["a", "a"], 'spec.x[1]: Duplicate value: "a"'),
    ({"type": "integer"}, "1", 'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"'),
    ({"type": "integer"}, 1.5, 'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"'),
    ({"type": "integer", "format": "int32"}, 2**31, "spec.x: Invalid value: 2147483648: spec.x in body must be of type int32: 2147483648"),
    ({"type": "string"}, None, 'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"'),
    ({"x-kubernetes-int-or-string": True}, True, 'spec.x: Invalid value: "boolean": spec.x in body must be of type integer or string: "boolean"'),
    ({"type": "array", "items": {"type": "integer", "minimum": 0}}, [1, -1], "spec.x[1]: Invalid value: -1: spec.x[1] in body should be greater than or equal to 0"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"a": "b"}, 'spec.x.a: Invalid value: "string": spec.x.a in body must be of type integer: "string"'),
])
def test_value_errors_in_kubernetes_words(prop, value, expected):
    assert messages({"spec": {"x": value}}, spec_schema(x=prop)) == [expected]


@pytest.mark.parametrize("prop, value", [
    ({"type": "string", "nullable": True}, None),
    ({"x-kubernetes-int-or-string": True}, "50%"),
    ({"x-kubernetes-int-or-string": True}, 3),
    ({"type": "number"}, 3),
    ({"type": "integer"}, 3.0),
    ({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, {"any": ["thing"]}),
])
def test_valid_values(prop, value):
    assert messages({"spec": {"x": value}}, spec_schema(x=prop)) == []


def test_required_and_top_level_fields():
    schema = {"type": "object", "required": ["spec"], "properties": {
        "spec": {"type": "object", "required": ["menu"], "properties": {"menu": {"type": "string"}}}}}
    assert messages({"apiVersion": "a/v1", "kind": "K", "metadata": {}}, schema) == ["spec: Required value"]
    assert messages({"spec": {}}, schema) == ["spec.menu: Required value"]


def test_unknown_fields_and_pruning():
    schema = spec_schema(known={"type": "object", "properties": {"a": {"type": "string"}}},
                         free={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                         labels={"type": "object", "additionalProperties": {"type": "string"}},
                         items={"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}})
    obj = {"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"}, "extra": 1,
           "spec": {"known": {"a": "1", "b": 2}, "free": {"z": 1}, "labels": {"k": "v"}, "items": [{"n": 1, "m": 2}]}}
    assert unknown_fields(obj, schema) == ["extra", "spec.known.b", "spec.items[0].m"]
    assert prune(obj, schema) == {"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"},
                                  "spec": {"known": {"a": "1"}, "free": {"z": 1}, "labels": {"k": "v"}, "items": [{"n": 1}]}}


def test_defaults_fill_missing_fields_depth_first():
    schema = spec_schema(count={"type": "integer", "default": 1},
                         sauce={"type": "object", "default": {}, "properties": {"hot": {"type": "boolean", "default": False}}},
                         dishes={"type": "array", "items": {"type": "object", "properties": {
                             "size": {"type": "string", "default": "M"}}}})
    obj = {"spec": {"dishes": [{}, {"size": "L"}]}}
    apply_defaults(obj, schema)
    assert obj == {"spec": {"count": 1, "sauce": {"hot": False}, "dishes": [{"size": "M"}, {"size": "L"}]}}


def test_a_nested_kind_takes_its_default_the_roots_does_not():
    schema = {"type": "object", "properties": {"kind": {"type": "string", "default": "Root"},
                                               "spec": {"type": "object", "properties": {"ref": {
                                                   "type": "object", "properties": {
                                                       "kind": {"type": "string", "default": "Gateway"}}}}}}}
    obj = {"spec": {"ref": {}}}
    apply_defaults(obj, schema)
    assert obj == {"spec": {"ref": {"kind": "Gateway"}}}  # as a Gateway API parentRef's kind


def test_nulls_are_dropped_unless_nullable_so_defaults_apply():
    schema = spec_schema(a={"type": "string", "default": "x"}, b={"type": "string", "nullable": True})
    obj = drop_nulls({"metadata": {"creationTimestamp": None}, "spec": {"a": None, "b": None}}, schema)
    assert obj == {"metadata": {}, "spec": {"b": None}}
    apply_defaults(obj, schema)
    assert obj["spec"] == {"a": "x", "b": None}


def test_structural_schema_rules():
    good = spec_schema(n={"type": "integer"}, any={"x-kubernetes-int-or-string": True},
                       free={"x-kubernetes-preserve-unknown-fields": True})
    assert structural_causes(good, "s") == []
    assert [c["field"] for c in structural_causes({"type": "string"}, "s")] == ["s.type"]
    bad = spec_schema(n={"type": "array"}, r={"$ref": "#/x", "type": "object"}, p={"type": "string", "pattern": "("},
                      d={"type": "integer", "default": "one"})
    fields = [c["field"] for c in structural_causes(bad, "s")]
    assert fields == ["s.properties[spec].properties[n].items", "s.properties[spec].properties[r].$ref",
                      "s.properties[spec].properties[p].pattern", "s.properties[spec].properties[d].default"]
    assert structural_causes("nope", "s")[0]["message"] == "Required value: schemas are required"


def test_validation_never_raises_on_odd_input():
    deep: dict = {}
    node = deep
    for _ in range(500):
        node["spec"] = {}
        node = node["spec"]
    schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    assert validate(deep, schema) == [] and unknown_fields(deep, schema) == []
    assert validate({"spec": [1, {"a": None}]}, spec_schema()) != []


@pytest.mark.parametrize("path, expected", [
    (".spec.menu", ["pasta"]),
    ("{.spec.menu}", ["pasta"]),
    (".spec.dishes[1].name", ["b"]),
    (".spec.dishes[*].name", ["a", "b"]),
    ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
    (".status.conditions[?(@.type!='Ready')].status", ["False"]),
    (".spec.missing", []),
    ("spec", []),
    (".spec.dishes[9]", []),
    (".metadata['name']", ["o1"]),
])
def test_jsonpath(path, expected):
    obj = {"metadata": {"name": "o1"},
           "spec": {"menu": "pasta", "dishes": [{"name": "a"}, {"name": "b"}]},
           "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Cooked", "status": "False"}]}}
    assert jsonpath.find(obj, path) == expected


def test_jsonpath_set_value_creates_objects():
    obj: dict = {"spec": 3}
    jsonpath.set_value(obj, ".spec.replicas", 2)
    assert obj == {"spec": {"replicas": 2}}
    assert jsonpath.plain_fields(".a[0]") is None and jsonpath.valid(".a.b")


def test_embedded_resources_name_their_kind_and_keep_their_fields():
    schema = spec_schema(template={"type": "object", "x-kubernetes-embedded-resource": True,
                                   "x-kubernetes-preserve-unknown-fields": True})
    assert messages({"spec": {"template": {"metadata": {}}}}, schema) == [
        "spec.template.apiVersion: Required value: must not be empty", "spec.template.kind: Required value: must not be empty"]
    obj = {"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}}}}
    assert messages(obj, schema) == [] and unknown_fields(obj, schema) == []
