"""OpenAPI schemas of the shared meta types: object and list metadata, selectors, Status, DeleteOptions,
the `v1 List` of any objects (with RawExtension items), and the scalar wrappers Time, MicroTime, Quantity and IntOrString.

Guarantees: names and shapes follow the Kubernetes API (`io.k8s.apimachinery.pkg...`); Quantity accepts
a string or a number and IntOrString an integer or a string (both as `oneOf`); ownerReferences merge by
uid and finalizers merge as a set, as kubectl's strategic merge expects.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    INT_OR_STRING, META, MICRO_TIME, QUANTITY, TIME, Schema, array, boolean, free, int32, int64, kind_obj,
    obj, ref, string, string_map, strings, time,
)

RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
_ALL_GROUPS = [("", "v1"), ("apps", "v1"), ("autoscaling", "v1"), ("autoscaling", "v2"),
               ("coordination.k8s.io", "v1"), ("policy", "v1")]

DEFINITIONS: dict[str, Schema] = {
    TIME: {
        "type": "string", "format": "date-time",
        "description": "A point in time written as an RFC 3339 string in UTC, to the second.",
    },
    MICRO_TIME: {
        "type": "string", "format": "date-time",
        "description": "A point in time written as an RFC 3339 string with microseconds.",
    },
    QUANTITY: {
        "oneOf": [{"type": "string"}, {"type": "number"}],
        "description": "An amount of a resource such as CPU or memory, e.g. \"100m\", \"1.5\", \"64Mi\" or "
                       "\"2G\"; written as a string, or as a plain number.",
    },
    INT_OR_STRING: {
        "oneOf": [{"type": "integer"}, {"type": "string"}], "format": "int-or-string",
        "description": "A value that is either a whole number or a string, e.g. a port number or a "
                       "port name, or a count or a percentage such as \"25%\".",
    },
    META + "FieldsV1": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True,
        "description": "The set of fields a manager owns, as a nested map of field names (f:), list "
                       "keys (k:), values (v:) and list indices (i:).",
    },
    META + "Patch": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True,
        "description": "The body of a PATCH request; its meaning depends on the Content-Type.",
    },
    META + "ObjectMeta": obj(
        "Metadata every persisted object carries: identity, labels and annotations, ownership and "
        "the bookkeeping the server maintains.",
        {
            "annotations": string_map("Free-form key/value notes stored with the object; not used "
                                      "for selection."),
            "creationTimestamp": time("When the server created the object. Set by the system; "
                                      "read-only."),
            "deletionGracePeriodSeconds": int64("Seconds the object is allowed to finish before it "
                                                "is removed, once deletion began. Read-only."),
            "deletionTimestamp": time("When the object will be (or was asked to be) removed; set by "
                                      "the server when a graceful delete starts. Read-only."),
            "finalizers": strings("Names of pending clean-up steps; the object stays until the list "
                                  "is empty after a delete.", strategy="merge", list_type="set"),
            "generateName": string("Prefix from which the server builds a unique name when `name` "
                                   "is empty (five random characters are appended)."),
            "generation": int64("Sequence number of the desired state, raised by the server on "
                                "every spec change. Read-only."),
            "labels": string_map("Key/value pairs used to organise objects and to select them "
                                 "(by Services, ReplicaSets, kubectl -l, ...)."),
            "managedFields": array(META + "ManagedFieldsEntry", "Which manager owns which fields, "
                                   "kept for server-side apply.", list_type="atomic"),
            "name": string("Name of the object, unique within its namespace (or the cluster for "
                           "cluster-scoped kinds). Cannot be updated."),
            "namespace": string("Namespace the object lives in; empty for cluster-scoped kinds. "
                                "Cannot be updated."),
            "ownerReferences": array(META + "OwnerReference", "Objects this one depends on; when "
                                     "every owner is gone the object is garbage collected.",
                                     strategy="merge", key="uid", list_type="map", map_keys=["uid"]),
            "resourceVersion": string("Opaque version of this object, changed on every write; "
                                      "used for optimistic concurrency and watches. Read-only."),
            "selfLink": string("Deprecated; left empty by the server."),
            "uid": string("Identifier unique in time and space, chosen by the server at creation. "
                          "Read-only."),
        },
    ),
    META + "OwnerReference": obj(
        "Names an owning object in the same namespace.",
        {
            "apiVersion": string("API version of the owner."),
            "blockOwnerDeletion": boolean("When true, a foreground delete of the owner waits for "
                                          "this object to be removed first."),
            "controller": boolean("True for the single owner that manages this object."),
            "kind": string("Kind of the owner."),
            "name": string("Name of the owner."),
            "uid": string("UID of the owner."),
        },
        required=["apiVersion", "kind", "name", "uid"],
    ),
    META + "ManagedFieldsEntry": obj(
        "One manager's claim on a set of fields, recorded by server-side apply.",
        {
            "apiVersion": string("API version the field set is expressed in."),
            "fieldsType": string("Format of `fieldsV1`; always \"FieldsV1\"."),
            "fieldsV1": ref(META + "FieldsV1", "The owned field set.", default=False),
            "manager": string("Name of the workflow that manages these fields."),
            "operation": string("Kind of write that produced this entry.", enum=["Apply", "Update"]),
            "subresource": string("Subresource the write went through, empty for the main "
                                  "resource."),
            "time": time("When the entry was last changed."),
        },
    ),
    META + "LabelSelector": obj(
        "A label query; its terms are ANDed. An empty selector matches everything, a missing one "
        "matches nothing.",
        {
            "matchExpressions": array(META + "LabelSelectorRequirement", "Set-based requirements, "
                                      "all of which must hold.", list_type="atomic"),
            "matchLabels": string_map("Exact key=value pairs that must all be present."),
        },
    ),
    META + "LabelSelectorRequirement": obj(
        "One set-based requirement: a key, an operator and values.",
        {
            "key": string("The label key."),
            "operator": string("How the key relates to the values: In, NotIn, Exists or "
                               "DoesNotExist."),
            "values": strings("Values for In and NotIn; must be empty for Exists and DoesNotExist.",
                              list_type="atomic"),
        },
        required=["key", "operator"],
    ),
    META + "ListMeta": obj(
        "Metadata of a list response.",
        {
            "continue": string("Token to ask for the next page, when the list was cut by `limit`."),
            "remainingItemCount": int64("Approximate number of items after this page."),
            "resourceVersion": string("Version of the store the list was read at; watch from it "
                                      "to see later changes."),
            "selfLink": string("Deprecated; left empty by the server."),
            "shardInfo": free("Which shard of a sharded list this page belongs to."),
        },
    ),
    # `kind: List` in a manifest: items of any kinds, each validated as its own kind by kubectl.
    META + "List": obj(
        "A list of objects of any kinds, which the server need not know (kubectl applies each).",
        {
            "apiVersion": string("Versioned schema of this representation, here v1."),
            "items": {"type": "array", "items": {"$ref": "#/components/schemas/" + RAW_EXTENSION},
                      "description": "The objects, each with its own apiVersion and kind."},
            "kind": string("The REST resource type, here List."),
            "metadata": ref(META + "ListMeta", "Standard list metadata."),
        },
        required=["items"],
    ),
    RAW_EXTENSION: {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True,
        "description": "A whole embedded object, kept as given.",
    },
    META + "Status": kind_obj(
        "The result of a call that does not return an object, and the body of every error.",
        ("", "v1", "Status"),
        {
            "code": int32("HTTP status code of the result."),
            "details": ref(META + "StatusDetails", "More about the failure, depending on `reason`.",
                           default=False),
            "message": string("Human-readable explanation."),
            "metadata": ref(META + "ListMeta", "Standard list metadata."),
            "reason": string("Machine-readable cause, e.g. NotFound, AlreadyExists, Conflict."),
            "status": string("\"Success\" or \"Failure\"."),
        },
    ),
    META + "StatusDetails": obj(
        "Names the object an error is about and lists its causes.",
        {
            "causes": array(META + "StatusCause", "Individual problems, e.g. one per invalid field.",
                            list_type="atomic"),
            "group": string("API group of the resource."),
            "kind": string("Kind (or resource) of the object."),
            "name": string("Name of the object."),
            "retryAfterSeconds": int32("Suggested wait before retrying."),
            "uid": string("UID of the object, when known."),
        },
    ),
    META + "StatusCause": obj(
        "One reason an operation failed.",
        {
            "field": string("Path of the field at fault, e.g. spec.containers[0].name."),
            "message": string("Human-readable explanation."),
            "reason": string("Machine-readable cause, e.g. FieldValueRequired."),
        },
    ),
    META + "Preconditions": obj(
        "Conditions that must hold for a delete to proceed.",
        {
            "resourceVersion": string("The object must still have this resourceVersion."),
            "uid": string("The object must still have this UID."),
        },
    ),
}

_delete = kind_obj(
    "Options for a delete call.", ("", "v1", "DeleteOptions"),
    {
        "dryRun": strings("When set to [\"All\"], run every step but do not persist.",
                          list_type="atomic"),
        "gracePeriodSeconds": int64("Seconds the object gets before it is removed; 0 means at once. "
                                    "Empty means the kind's default."),
        "ignoreStoreReadErrorWithClusterBreakingPotential": boolean("Delete even when the stored "
                                                                    "object cannot be read."),
        "orphanDependents": boolean("Deprecated; use propagationPolicy."),
        "preconditions": ref(META + "Preconditions", "Must be satisfied before deletion.",
                             default=False),
        "propagationPolicy": string("What happens to dependents: Orphan, Background or "
                                    "Foreground.", enum=["Background", "Foreground", "Orphan"]),
    },
)
_delete["x-kubernetes-group-version-kind"] = [
    {"group": g, "kind": "DeleteOptions", "version": v} for g, v in _ALL_GROUPS
]
DEFINITIONS[META + "DeleteOptions"] = _delete
