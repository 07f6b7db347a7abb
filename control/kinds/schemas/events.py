"""OpenAPI schemas of events.k8s.io/v1 Event, the core Event's other served version
(`control.kinds.events_v1` converts it).

Guarantees: names and field shapes follow Kubernetes' `io.k8s.api.events.v1.*`.
"""

from __future__ import annotations

from typing import Any

GROUP, VERSION = "events.k8s.io", "v1"
DEFINITION = "io.k8s.api.events.v1.Event"

_META = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
_CORE = "#/components/schemas/io.k8s.api.core.v1."


def _field(description: str, ref: str = "", kind: str = "string") -> dict[str, Any]:
    if ref:
        return {"allOf": [{"$ref": ref}], "description": description}
    return {"type": kind, "description": description}


DEFINITIONS: dict[str, dict[str, Any]] = {
    DEFINITION: {
        "type": "object", "description": "Event is a report of an event somewhere in the cluster.",
        "properties": {
            "apiVersion": _field("Versioned schema of this representation."),
            "kind": _field("The REST resource type this object represents."),
            "metadata": {**_field("Standard object metadata.", _META + "ObjectMeta"), "default": {}},
            "eventTime": _field("eventTime is the time when this Event was first observed.", _META + "MicroTime"),
            "series": _field("series is data about the Event series this event represents.",
                             "#/components/schemas/io.k8s.api.events.v1.EventSeries"),
            "reportingController": _field("reportingController is the name of the controller that emitted this "
                                          "Event, e.g. `kubernetes.io/kubelet`."),
            "reportingInstance": _field("reportingInstance is the ID of the controller instance."),
            "action": _field("action is what action was taken/failed regarding to the regarding object."),
            "reason": _field("reason is why the action was taken. It is human-readable."),
            "regarding": {**_field("regarding contains the object this Event is about.", _CORE + "ObjectReference"),
                          "default": {}},
            "related": _field("related is the optional secondary object for more complex actions.",
                              _CORE + "ObjectReference"),
            "note": _field("note is a human-readable description of the status of this operation."),
            "type": _field("type is the type of this event (Normal, Warning)."),
            "deprecatedSource": {**_field("deprecatedSource is the deprecated field assuring backward "
                                          "compatibility with core.v1 Event type.", _CORE + "EventSource"),
                                 "default": {}},
            "deprecatedFirstTimestamp": _field("deprecatedFirstTimestamp is the deprecated field assuring backward "
                                               "compatibility with core.v1 Event type.", _META + "Time"),
            "deprecatedLastTimestamp": _field("deprecatedLastTimestamp is the deprecated field assuring backward "
                                              "compatibility with core.v1 Event type.", _META + "Time"),
            "deprecatedCount": {"type": "integer", "format": "int32", "description": "deprecatedCount is the "
                                "deprecated field assuring backward compatibility with core.v1 Event type."},
        },
        "required": ["eventTime"],
        "x-kubernetes-group-version-kind": [{"group": GROUP, "kind": "Event", "version": VERSION}],
    },
    "io.k8s.api.events.v1.EventSeries": {
        "type": "object", "description": "EventSeries contain information on series of events.",
        "properties": {
            "count": {"type": "integer", "format": "int32", "description": "count is the number of occurrences "
                      "in this series up to the last heartbeat time."},
            "lastObservedTime": _field("lastObservedTime is the time when last Event from the series was seen.",
                                       _META + "MicroTime"),
        },
        "required": ["count", "lastObservedTime"],
    },
}
