"""events.k8s.io/v1 Event as a converted view of the stored core/v1 Events, as kube-apiserver serves
both versions from one storage.

An events.k8s.io Event is the same object under other names (upstream's pkg/apis/events/v1
conversion): `regarding` is `involvedObject`, `note` is `message`, `reportingController` is
`reportingComponent`, `deprecatedSource`, `deprecatedFirstTimestamp`, `deprecatedLastTimestamp`
and `deprecatedCount` are `source`, `firstTimestamp`, `lastTimestamp` and `count`; `eventTime`,
`series`, `action`, `related`, `reason`, `type` and `reportingInstance` keep their names.

Guarantees: get and list (also as a Table, and with field selectors on `regarding.*` and
`reportingController`, translated to the core names) answer every stored Event, whoever wrote it,
in events.k8s.io/v1 field order; delete removes it. Writes of new-style events and watch are not
served here: they answer a 405 Status that names core/v1 events (what every component of this
cluster records, and what `kubectl events` reads).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from control import errors
from control.api import verbs
from control.api.discovery import View, resource_entries
from control.api.request import Call, Route
from control.api.responses import Reply, error_response, json_response
from control.kinds.core import EVENT
from control.storage.db import run_db

GROUP, VERSION = "events.k8s.io", "v1"
API_VERSION = f"{GROUP}/{VERSION}"
DEFINITION = "io.k8s.api.events.v1.Event"
SERVED_VERBS = ("delete", "get", "list")
KIND = dataclasses.replace(EVENT, group=GROUP, version=VERSION, definition=DEFINITION)
# core/v1 name -> events.k8s.io/v1 name, in the order Go marshals events/v1.Event after metadata
RENAMED = (("eventTime", "eventTime"), ("series", "series"), ("reportingComponent", "reportingController"),
           ("reportingInstance", "reportingInstance"), ("action", "action"), ("reason", "reason"),
           ("involvedObject", "regarding"), ("related", "related"), ("message", "note"), ("type", "type"),
           ("source", "deprecatedSource"), ("firstTimestamp", "deprecatedFirstTimestamp"),
           ("lastTimestamp", "deprecatedLastTimestamp"), ("count", "deprecatedCount"))
ALWAYS = ("regarding", "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp")
SELECTOR_NAMES = {"regarding.": "involvedObject.", "reportingController": "reportingComponent",
                  "deprecatedSource": "source"}

_META = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
_CORE = "#/components/schemas/io.k8s.api.core.v1."


def _field(description: str, ref: str = "", kind: str = "string") -> dict[str, Any]:
    if ref:
        return {"allOf": [{"$ref": ref}], "description": description}
    return {"type": kind, "description": description}


SCHEMAS: dict[str, dict[str, Any]] = {
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
VIEW = View(GROUP, VERSION, lambda: resource_entries(KIND, verbs=SERVED_VERBS, stored_as=EVENT), kinds=(KIND,),
            schemas=SCHEMAS)


def to_events_v1(event: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 shows it (eventTime always present, as Go's
    non-omitempty MicroTime: null when the recorder set none)."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": API_VERSION, "metadata": event.get("metadata") or {},
                           "eventTime": event.get("eventTime")}
    for core, renamed in RENAMED[1:]:
        value = event.get(core)
        if renamed in ALWAYS:  # Go writes structs and Times even when empty
            out[renamed] = value if value is not None or renamed not in ("regarding", "deprecatedSource") else {}
        elif value not in (None, "", 0, {}):
            out[renamed] = value
    return out


def parse(rest: str) -> tuple[str, str]:
    """(namespace, name) from the path after /apis/events.k8s.io/v1/."""
    parts = [p for p in rest.split("/") if p]
    namespace = ""
    if len(parts) >= 3 and parts[0] == "namespaces":
        namespace, parts = parts[1], parts[2:]
    if not parts or parts[0] != EVENT.plural or len(parts) > 2:
        raise errors.NotFound(errors.NOT_FOUND)
    return namespace, parts[1] if len(parts) > 1 else ""


def core_selector(selector: str) -> str:
    """`regarding.name=web` -> `involvedObject.name=web` (the field names the storage knows)."""
    terms = []
    for term in selector.split(","):
        for new, old in SELECTOR_NAMES.items():
            if term.startswith(new):
                term = old + term[len(new):]
                break
        terms.append(term)
    return ",".join(terms)


def _to_v1(reply: Reply) -> Reply:
    if reply.status >= 300 or not reply.content_type.startswith("application/json"):
        return reply
    data = reply.json()
    if data.get("kind") == EVENT.kind:
        data = to_events_v1(data)
    elif data.get("kind") == EVENT.list_kind:
        data["apiVersion"] = API_VERSION
        data["items"] = [to_events_v1(item) for item in data.get("items") or []]
    return json_response(data, reply.status, headers=reply.headers)


def _handler(method: str, name: str, watch: bool) -> Callable[[Call], Reply]:
    if method in ("GET", "HEAD") and not watch:
        return verbs.get if name else verbs.list_
    if method == "DELETE" and name:
        return verbs.delete
    raise errors.MethodNotAllowed("the server does not allow this method on the requested resource; "
                                  "record and watch events through core/v1 events", details={"kind": EVENT.plural})


def _run(handler: Callable[[Call], Reply], call: Call) -> Reply:
    try:
        return handler(call)
    except errors.ApiError as exc:
        return error_response(exc)


async def serve_request(request: Any, rest: str) -> Reply:
    namespace, name = parse(rest)
    query = dict(request.query)
    watch = query.get("watch") in ("1", "true", "True")
    request.tag.update({"verb": request.method.lower(), "resource": EVENT.plural, "namespace": namespace,
                        "name": name})
    try:
        handler = _handler(request.method, name, watch)
    except errors.ApiError as exc:
        return error_response(exc)
    if query.get("fieldSelector"):
        query["fieldSelector"] = core_selector(query["fieldSelector"])
    accept = request.headers.get("accept", "")
    call = Call(method=request.method, kind=EVENT, namespace=namespace, name=name, subresource="", query=query,
                actor=request.actor, accept="" if "as=Table" not in accept else accept,
                content_type=request.content_type, raw_body=request.body)
    if request.method == "DELETE":
        call.check_options()
    return _to_v1(await run_db(_run, handler, call))


ROUTES = (Route(r"/apis/events\.k8s\.io/v1/(?P<rest>.+)", serve_request, None),)
