"""Small constructors for OpenAPI v3 component schemas in the shape the Kubernetes API server emits.

Guarantees: every helper returns a fresh dict carrying a `description`; references use
`#/components/schemas/<name>` (wrapped in `allOf` for object fields, plain for array items);
strategic-merge and list-type metadata use the `x-kubernetes-*` extension names that kubectl and
the strategic-merge-patch code read. Nothing here knows about HTTP or the store.
"""

from __future__ import annotations

from typing import Any, Iterable

Schema = dict[str, Any]

REF_PREFIX = "#/components/schemas/"
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
CORE = "io.k8s.api.core.v1."
APPS = "io.k8s.api.apps.v1."
COORDINATION = "io.k8s.api.coordination.v1."
AUTOSCALING = "io.k8s.api.autoscaling.v1."
TIME = META + "Time"
MICRO_TIME = META + "MicroTime"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

API_VERSION_TEXT = ("Versioned schema of this representation; the server converts recognised "
                    "versions and may reject unrecognised ones.")
KIND_TEXT = "The REST resource type this object represents, in CamelCase. Cannot be updated."


def full(name: str) -> str:
    """A component name; bare names ("PodSpec") are taken from core/v1."""
    return name if name.startswith("io.k8s.") else CORE + name


def string(description: str, *, enum: Iterable[str] | None = None, fmt: str | None = None) -> Schema:
    schema: Schema = {"type": "string", "description": description}
    if fmt:
        schema["format"] = fmt
    if enum is not None:
        schema["enum"] = list(enum)
    return schema


def int32(description: str) -> Schema:
    return {"type": "integer", "format": "int32", "description": description}


def int64(description: str) -> Schema:
    return {"type": "integer", "format": "int64", "description": description}


def number(description: str) -> Schema:
    return {"type": "number", "format": "double", "description": description}


def boolean(description: str) -> Schema:
    return {"type": "boolean", "description": description}


def _list_meta(schema: Schema, strategy: str | None, key: str | None,
               list_type: str | None, map_keys: Iterable[str] | None) -> Schema:
    if list_type:
        schema["x-kubernetes-list-type"] = list_type
    if map_keys:
        schema["x-kubernetes-list-map-keys"] = list(map_keys)
    if key:
        schema["x-kubernetes-patch-merge-key"] = key
    if strategy:
        schema["x-kubernetes-patch-strategy"] = strategy
    return schema


def strings(description: str, *, strategy: str | None = None, list_type: str | None = None) -> Schema:
    """An array of strings (set semantics when `list_type="set"`)."""
    schema: Schema = {"type": "array", "items": {"type": "string", "default": ""}, "description": description}
    return _list_meta(schema, strategy, None, list_type, None)


def integers(description: str, fmt: str = "int64", *, list_type: str | None = "atomic") -> Schema:
    schema: Schema = {"type": "array", "items": {"type": "integer", "format": fmt, "default": 0},
                      "description": description}
    return _list_meta(schema, None, None, list_type, None)


def string_map(description: str, *, fmt: str | None = None) -> Schema:
    value: Schema = {"type": "string", "default": ""}
    if fmt:
        value = {"type": "string", "format": fmt}
    return {"type": "object", "additionalProperties": value, "description": description}


def quantity_map(description: str) -> Schema:
    return {"type": "object", "additionalProperties": {"$ref": REF_PREFIX + QUANTITY}, "description": description}


def ref(name: str, description: str, *, default: bool = True) -> Schema:
    """An object-valued field pointing at another component (as `allOf` with one `$ref`)."""
    schema: Schema = {"allOf": [{"$ref": REF_PREFIX + full(name)}], "description": description}
    if default:
        schema["default"] = {}
    return schema


def time(description: str) -> Schema:
    return ref(TIME, description, default=False)


def micro_time(description: str) -> Schema:
    return ref(MICRO_TIME, description, default=False)


def quantity(description: str) -> Schema:
    return ref(QUANTITY, description, default=False)


def int_or_string(description: str) -> Schema:
    return ref(INT_OR_STRING, description, default=False)


def array(name: str, description: str, *, strategy: str | None = None, key: str | None = None,
          list_type: str | None = None, map_keys: Iterable[str] | None = None) -> Schema:
    """An array of another component, with optional strategic-merge and list-type metadata."""
    schema: Schema = {"type": "array", "items": {"$ref": REF_PREFIX + full(name)}, "description": description}
    return _list_meta(schema, strategy, key, list_type, map_keys)


def obj(description: str, properties: dict[str, Schema], *, required: Iterable[str] = (),
        gvk: tuple[str, str, str] | None = None) -> Schema:
    """An object component; `gvk` = (group, version, kind) marks a top-level kind."""
    schema: Schema = {"type": "object", "description": description, "properties": properties}
    required = list(required)
    if required:
        schema["required"] = required
    if gvk is not None:
        group, version, kind = gvk
        schema["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    return schema


def kind_obj(description: str, gvk: tuple[str, str, str], properties: dict[str, Schema], *,
             required: Iterable[str] = ()) -> Schema:
    """A top-level kind: `apiVersion` and `kind` first, then the given properties."""
    props = {"apiVersion": string(API_VERSION_TEXT), "kind": string(KIND_TEXT), **properties}
    return obj(description, props, required=required, gvk=gvk)


def metadata(description: str = "Standard object metadata: name, namespace, labels, annotations and "
                                "the fields the server maintains.") -> Schema:
    return ref(META + "ObjectMeta", description)


def free(description: str) -> Schema:
    """An object kept as given: its inner fields are neither listed nor checked."""
    return {"type": "object", "description": description, "x-kubernetes-preserve-unknown-fields": True}
