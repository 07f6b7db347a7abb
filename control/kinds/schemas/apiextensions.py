"""OpenAPI component schemas of apiextensions.k8s.io/v1 CustomResourceDefinition.

Guarantees: the names are Kubernetes' (`io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.*`);
`JSONSchemaProps` refers to itself (properties, items, additionalProperties), as in Kubernetes, so
decoding a CRD checks its whole schema tree for unknown fields and wrong types; the values a schema
may carry as arbitrary JSON (`default`, `enum`, `example`, `items`, `additionalProperties`) are
declared without a type.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    REF_PREFIX, Schema, array, boolean, int64, kind_obj, metadata, number, obj, ref, string, strings, time,
)

EXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
GVK = ("apiextensions.k8s.io", "v1", "CustomResourceDefinition")


def _json(description: str) -> Schema:
    """Any JSON value: Kubernetes' apiextensions JSON component, which has no type."""
    return ref(EXT + "JSON", description, default=False)


def _props_ref(description: str) -> Schema:
    return ref(EXT + "JSONSchemaProps", description, default=False)


def _props_map(description: str) -> Schema:
    return {"type": "object", "additionalProperties": {"$ref": REF_PREFIX + EXT + "JSONSchemaProps"},
            "description": description}


_JSON_SCHEMA_PROPS = obj("A JSON-Schema following Specification Draft 4 (http://json-schema.org/).", {
    "$ref": string("Not allowed in a structural schema."),
    "$schema": string("Not allowed in a structural schema."),
    "additionalItems": _json("Not allowed in a structural schema."),
    "additionalProperties": _json("A schema for the values of a map, or a boolean."),
    "allOf": array(EXT + "JSONSchemaProps", "Every one of these schemas must hold.", list_type="atomic"),
    "anyOf": array(EXT + "JSONSchemaProps", "At least one of these schemas must hold.", list_type="atomic"),
    "default": _json("The value set when the field is missing (structural schemas only)."),
    "definitions": _props_map("Not allowed in a structural schema."),
    "dependencies": {"type": "object", "additionalProperties": {"$ref": REF_PREFIX + EXT + "JSON"},
                     "description": "Not allowed in a structural schema."},
    "description": string("What the field means."),
    "enum": {"type": "array", "items": {"$ref": REF_PREFIX + EXT + "JSON"}, "description": "The allowed values.",
             "x-kubernetes-list-type": "atomic"},
    "example": _json("An example value."),
    "exclusiveMaximum": boolean("Whether maximum itself is excluded."),
    "exclusiveMinimum": boolean("Whether minimum itself is excluded."),
    "externalDocs": {"type": "object", "description": "Where more is written about the field.",
                     "properties": {"description": string("What is there."), "url": string("Where.")}},
    "format": string("A format such as int32, int64, date-time, byte."),
    "id": string("Not allowed in a structural schema."),
    "items": _json("The schema of the elements of an array."),
    "maxItems": int64("The largest number of elements."),
    "maxLength": int64("The longest string."),
    "maxProperties": int64("The largest number of keys."),
    "maximum": number("The largest value."),
    "minItems": int64("The smallest number of elements."),
    "minLength": int64("The shortest string."),
    "minProperties": int64("The smallest number of keys."),
    "minimum": number("The smallest value."),
    "multipleOf": number("Values must be a multiple of this."),
    "not": _props_ref("This schema must not hold."),
    "nullable": boolean("Whether null is a valid value (it is kept rather than pruned)."),
    "oneOf": array(EXT + "JSONSchemaProps", "Exactly one of these schemas must hold.", list_type="atomic"),
    "pattern": string("A regular expression strings must match."),
    "patternProperties": _props_map("Not allowed in a structural schema."),
    "properties": _props_map("The schemas of the object's fields."),
    "required": strings("The fields that must be present.", list_type="atomic"),
    "title": string("A title."),
    "type": string("object, array, string, integer, number or boolean."),
    "uniqueItems": boolean("Whether the elements must differ from each other."),
    "x-kubernetes-embedded-resource": boolean("The object is a whole Kubernetes object (apiVersion, kind, metadata)."),
    "x-kubernetes-int-or-string": boolean("The value may be an integer or a string."),
    "x-kubernetes-list-map-keys": strings("The keys of a map-type list.", list_type="atomic"),
    "x-kubernetes-list-type": string("atomic, set or map."),
    "x-kubernetes-map-type": string("granular or atomic."),
    "x-kubernetes-preserve-unknown-fields": boolean("Keep fields the schema does not declare."),
    "x-kubernetes-validations": {"type": "array", "description": "CEL validation rules (not evaluated by this hub).",
                                 "items": {"$ref": REF_PREFIX + EXT + "JSON"}, "x-kubernetes-list-type": "atomic"},
})

_COLUMN = obj("A column shown by kubectl get.", {
    "description": string("What the column shows."),
    "format": string("An OpenAPI format for the values."),
    "jsonPath": string("Where the value is, e.g. .spec.replicas."),
    "name": string("The column's header."),
    "priority": {"type": "integer", "format": "int32", "description": "0 shows by default; higher only with -o wide."},
    "type": string("integer, number, string, boolean or date."),
}, required=["name", "type", "jsonPath"])

_VERSION = obj("One version of the custom resource.", {
    "additionalPrinterColumns": array(EXT + "CustomResourceColumnDefinition", "Columns of kubectl get.",
                                      list_type="atomic"),
    "deprecated": boolean("Whether this version is deprecated."),
    "deprecationWarning": string("The warning sent to clients of a deprecated version."),
    "name": string("The version name, e.g. v1, v1beta1."),
    "schema": ref(EXT + "CustomResourceValidation", "The schema of this version.", default=False),
    "selectableFields": {"type": "array", "items": {"$ref": REF_PREFIX + EXT + "JSON"},
                         "description": "Fields usable in field selectors.",
                         "x-kubernetes-list-type": "atomic"},
    "served": boolean("Whether this version is served."),
    "storage": boolean("Whether objects are stored in this version (exactly one)."),
    "subresources": ref(EXT + "CustomResourceSubresources", "The status and scale subresources.", default=False),
}, required=["name", "served", "storage"])

_NAMES = obj("The names of the custom resource.", {
    "categories": strings("Groups of resources this one belongs to, e.g. all.", list_type="atomic"),
    "kind": string("The kind, in CamelCase."),
    "listKind": string("The kind of lists; defaults to <kind>List."),
    "plural": string("The plural name used in URLs, lower case."),
    "shortNames": strings("Short names for kubectl.", list_type="atomic"),
    "singular": string("The singular name, lower case; defaults to the lower-case kind."),
}, required=["plural", "kind"])

DEFINITIONS: dict[str, Schema] = {
    EXT + "CustomResourceDefinition": kind_obj(
        "Represents a resource that should be exposed on the API server. Its name MUST be in the format "
        "<.spec.name>.<.spec.group>.", GVK, {
            "metadata": metadata(),
            "spec": ref(EXT + "CustomResourceDefinitionSpec", "What the resource is and how it is served."),
            "status": ref(EXT + "CustomResourceDefinitionStatus", "What the server made of it."),
        }, required=["spec"]),
    EXT + "CustomResourceDefinitionSpec": obj("How a user wants their resource to appear.", {
        "conversion": ref(EXT + "CustomResourceConversion", "How versions are converted (None only here).",
                          default=False),
        "group": string("The API group, e.g. kitchen.example.com."),
        "names": ref(EXT + "CustomResourceDefinitionNames", "The names of the resource."),
        "preserveUnknownFields": boolean("Must be false in apiextensions.k8s.io/v1."),
        "scope": string("Namespaced or Cluster."),
        "versions": array(EXT + "CustomResourceDefinitionVersion", "The served versions.", list_type="atomic"),
    }, required=["group", "names", "scope", "versions"]),
    EXT + "CustomResourceConversion": obj("How versions are converted.", {
        "strategy": string("None or Webhook (this hub: None)."),
        "webhook": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                    "description": "Not supported by this hub."},
    }, required=["strategy"]),
    EXT + "CustomResourceDefinitionNames": _NAMES,
    EXT + "CustomResourceDefinitionVersion": _VERSION,
    EXT + "CustomResourceColumnDefinition": _COLUMN,
    EXT + "CustomResourceValidation": obj("The schema of a version.", {
        "openAPIV3Schema": _props_ref("An OpenAPI v3 schema of the objects of this version."),
    }),
    EXT + "CustomResourceSubresources": obj("The subresources of a version.", {
        "scale": ref(EXT + "CustomResourceSubresourceScale", "The scale subresource.", default=False),
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                   "description": "The status subresource (an empty object enables it)."},
    }),
    EXT + "CustomResourceSubresourceScale": obj("Where the scale subresource reads and writes.", {
        "labelSelectorPath": string("Where the label selector is, e.g. .status.selector."),
        "specReplicasPath": string("Where the desired replicas are, e.g. .spec.replicas."),
        "statusReplicasPath": string("Where the observed replicas are, e.g. .status.replicas."),
    }, required=["specReplicasPath", "statusReplicasPath"]),
    EXT + "JSONSchemaProps": _JSON_SCHEMA_PROPS,
    EXT + "JSON": {"description": "Any JSON value: a boolean, number, string, list, object or null."},
    EXT + "CustomResourceDefinitionStatus": obj("What the server made of the definition.", {
        "acceptedNames": ref(EXT + "CustomResourceDefinitionNames", "The names actually served."),
        "conditions": array(EXT + "CustomResourceDefinitionCondition", "NamesAccepted and Established.",
                            strategy="merge", key="type", list_type="map", map_keys=["type"]),
        "storedVersions": strings("Every version objects were ever stored in.", list_type="atomic"),
    }),
    EXT + "CustomResourceDefinitionCondition": obj("One condition of the definition.", {
        "lastTransitionTime": time("When the status last changed."),
        "message": string("Human-readable details."),
        "reason": string("Why, in CamelCase."),
        "status": string("True, False or Unknown."),
        "type": string("NamesAccepted or Established."),
    }, required=["type", "status"]),
}
