"""The hand-typed OpenAPI schemas (control.kinds.schemas) against upstream's own type definitions as
the official Python client carries them (`kubernetes.client.models`: each model's `attribute_map`
and `openapi_types`, generated from kube-apiserver's OpenAPI document).

What it guards: every property we declare exists upstream under the same JSON name, with the same
shape (scalar type, array, map, or reference to the same type), so a typo or an invented field in
3.5k lines of schemas fails here. Upstream may have more properties (the client follows a newer
Kubernetes than the 1.32 we present, and we leave out fields nothing here uses). The client carries
no formats (int32/int64), required lists, defaults or `x-kubernetes-*` extensions (list types, merge
keys), which the hub needs for strategic merge and server-side apply: those stay hand-kept.
"""

from __future__ import annotations

import datetime
import re
import types
import typing

import pytest

from control.kinds.schemas import DEFINITIONS

models = pytest.importorskip("kubernetes.client.models")

SCALARS = {"int": "integer", "str": "string", "bool": "boolean", "float": "number", "datetime": "string",
           "date": "string"}


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[.-]", text))


def model_of(name: str) -> type | None:
    """The client's model of a component ("io.k8s.api.core.v1.Pod" -> V1Pod, CoreV1EventSeries, ...)."""
    parts = name.split(".")
    kind, version = parts[-1], parts[-2].capitalize()
    group = parts[-3] if len(parts) > 3 else ""
    for candidate in (f"{version}{kind}", f"{_camel(group)}{version}{kind}"):
        model = getattr(models, candidate, None)
        if model is not None and hasattr(model, "attribute_map"):
            return model
    return None


def _ref(schema: dict) -> str:
    ref = schema.get("$ref") or next((a.get("$ref") for a in schema.get("allOf") or [] if "$ref" in a), "")
    return ref.rsplit("/", 1)[-1]


def shape_problem(upstream: str, schema: dict) -> str:
    """Why a property's schema does not have the shape of the client's type ("" when it does)."""
    list_of = re.fullmatch(r"[Ll]ist\[(.+)\]", upstream)
    map_of = re.fullmatch(r"[Dd]ict\((?:str|\[str), ?(.+)[)\]]", upstream) or re.fullmatch(r"Dict\[str, ?(.+)\]", upstream)
    if list_of:
        return "" if schema.get("type") == "array" else f"upstream a list of {list_of.group(1)}"
    if map_of:
        return "" if schema.get("type") == "object" else f"upstream a map of {map_of.group(1)}"
    if upstream == "object":
        return ""  # any JSON (RawExtension, IntOrString, Quantity as the client sees them)
    target = DEFINITIONS.get(_ref(schema))
    if target is not None and "properties" not in target and target.get("type") != "object":
        schema = target  # a named scalar (meta.v1.Time is a string), compared as the scalar it is
    if upstream in SCALARS:
        alternatives = [schema, *(schema.get("oneOf") or [])]  # an inlined Quantity: string or number
        if any(a.get("type") == SCALARS[upstream] for a in alternatives) or schema.get("x-kubernetes-int-or-string"):
            return ""
        return f"upstream {upstream}, ours {schema.get('type') or _ref(schema) or schema}"
    ours = _ref(schema)
    if not ours:  # an inlined object or a Quantity-like string, as the client's own models allow
        return "" if schema.get("type") in ("object", "string") or schema.get("x-kubernetes-int-or-string") else \
            f"upstream {upstream}, ours {schema}"
    ours_model = model_of(ours)
    if ours_model is None or ours_model.__name__ == upstream:
        return ""
    return f"upstream {upstream}, ours {ours}"


def _pairs() -> list[tuple[str, type]]:
    return [(name, model) for name in DEFINITIONS if (model := model_of(name)) is not None]


def test_nearly_every_schema_has_an_upstream_model():
    unmapped = [name for name in DEFINITIONS if model_of(name) is None]
    assert len(_pairs()) >= 0.95 * len(DEFINITIONS), unmapped


def test_every_declared_property_exists_upstream_with_its_shape():
    problems = {}
    for name, model in _pairs():
        upstream = {json_name: model.openapi_types[py] for py, json_name in model.attribute_map.items()}
        for prop, schema in (DEFINITIONS[name].get("properties") or {}).items():
            if prop not in upstream:
                problems[f"{name}.{prop}"] = "not a field upstream"
            elif why := shape_problem(upstream[prop], schema):
                problems[f"{name}.{prop}"] = why
    assert problems == {}


def test_the_check_would_catch_a_typo_and_a_wrong_shape():
    assert shape_problem("List[V1Container]", {"type": "object"}) == "upstream a list of V1Container"
    assert shape_problem("int", {"type": "string"}) == "upstream int, ours string"
    assert shape_problem("V1ObjectMeta", {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]}) == \
        "upstream V1ObjectMeta, ours io.k8s.api.core.v1.PodSpec"
    assert "restartPolicy" in models.V1PodSpec.attribute_map.values()


# --- a prototype: deriving a group's schemas from the client's models ---------------------------
# The 37.x client's models are pydantic: each field has its JSON alias, its Python type and
# upstream's description. `derived` builds a component schema from that alone; for autoscaling/v1
# it gives exactly our properties and shapes (descriptions aside). Across all 310 components, 243
# derive the same properties, shapes and required list (measured when this was written); the rest
# need what the client flattens or lacks: named scalars (IntOrString becomes int, Quantity str),
# formats (int32/int64), `x-kubernetes-*` (list types, merge keys: strategic merge and apply need
# them), defaults, and a `required` list that follows the client's own generator rather than
# upstream's OpenAPI (it requires `spec` on top-level objects and not a condition's `type` and
# `status`); and a field that names another type comes without its description.


def _shape_of(annotation: typing.Any) -> dict:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return _shape_of(next(a for a in args if a is not type(None)))
    if origin is typing.Annotated:
        return _shape_of(args[0])
    if origin is list:
        return {"type": "array", "items": _shape_of(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _shape_of(args[1])}
    if annotation is datetime.datetime:
        return {"$ref": "io.k8s.apimachinery.pkg.apis.meta.v1.Time"}
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return {"$ref": next((n for n in DEFINITIONS if model_of(n) is annotation), annotation.__name__)}
    return {"type": SCALARS.get(getattr(annotation, "__name__", ""), "object")}


def derived(model: type) -> dict:
    """A component schema from a pydantic model of the client: properties, shapes, descriptions."""
    properties = {}
    for name, field in model.model_fields.items():
        properties[field.serialization_alias or field.alias or name] = {**_shape_of(field.annotation),
                                                                        "description": field.description}
    return {"type": "object", "properties": properties}


def _shape(schema: dict) -> dict:
    """A property's schema reduced to its shape: its type, item and value shapes, or its reference."""
    if ref := _ref(schema):
        return {"$ref": ref}
    out = {"type": schema.get("type")}
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            out[key] = _shape(schema[key])
    return out


@pytest.mark.skipif(not hasattr(models.V1HorizontalPodAutoscalerSpec, "model_fields"), reason="a pydantic client")
def test_autoscaling_v1_derives_from_the_client_models():
    group = [name for name in DEFINITIONS if name.startswith("io.k8s.api.autoscaling.v1.")]
    assert len(group) == 7
    for name in group:
        ours = {k: _shape(v) for k, v in DEFINITIONS[name]["properties"].items()}
        theirs = derived(model_of(name))["properties"]
        assert {k: _shape(v) for k, v in theirs.items()} == ours, name
        # upstream's descriptions come along, except on fields that name another type (the
        # generator drops them there: `metadata`, `spec`, `status` would stay hand-kept)
        assert all(v["description"] for v in theirs.values() if "$ref" not in v), name
