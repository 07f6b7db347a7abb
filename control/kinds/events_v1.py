"""events.k8s.io/v1 Event: the core/v1 Event's other served version, one storage as in
kube-apiserver (upstream's pkg/apis/events/v1 conversion).

An events.k8s.io Event is the same object under other names: `regarding` is `involvedObject`,
`note` is `message`, `reportingController` is `reportingComponent`, `deprecatedSource`,
`deprecatedFirstTimestamp`, `deprecatedLastTimestamp` and `deprecatedCount` are `source`,
`firstTimestamp`, `lastTimestamp` and `count`; `eventTime`, `series`, `action`, `related`,
`reason`, `type` and `reportingInstance` keep their names.

Guarantees: pure functions of plain dicts; `to_events_v1` writes the fields in events/v1's Go
order (eventTime always present, null when the recorder set none; the structs and Times Go always
writes are there); `from_events_v1` is its inverse for what the core type holds; `FIELD_GETTERS`
answer events/v1's field selectors (`regarding.*`, `reportingController`, `deprecatedSource`)
from the stored core object.
"""

from __future__ import annotations

from typing import Any, Callable

from control.kinds.base import Obj, field_value
from control.kinds.schemas.events import DEFINITION, GROUP, VERSION

__all__ = ["DEFINITION", "FIELD_GETTERS", "GROUP", "VERSION", "from_events_v1", "to_events_v1"]

API_VERSION = f"{GROUP}/{VERSION}"
# core/v1 name -> events.k8s.io/v1 name, in the order Go marshals events/v1.Event after metadata
RENAMED = (("eventTime", "eventTime"), ("series", "series"), ("reportingComponent", "reportingController"),
           ("reportingInstance", "reportingInstance"), ("action", "action"), ("reason", "reason"),
           ("involvedObject", "regarding"), ("related", "related"), ("message", "note"), ("type", "type"),
           ("source", "deprecatedSource"), ("firstTimestamp", "deprecatedFirstTimestamp"),
           ("lastTimestamp", "deprecatedLastTimestamp"), ("count", "deprecatedCount"))
ALWAYS = ("regarding", "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp")


def to_events_v1(event: Obj) -> Obj:
    """A stored core/v1 Event as events.k8s.io/v1 shows it."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": API_VERSION, "metadata": event.get("metadata") or {},
                           "eventTime": event.get("eventTime")}
    for core, renamed in RENAMED[1:]:
        value = event.get(core)
        if renamed in ALWAYS:  # Go writes structs and Times even when empty
            out[renamed] = value if value is not None or renamed not in ("regarding", "deprecatedSource") else {}
        elif value not in (None, "", 0, {}):
            out[renamed] = value
    return out


def from_events_v1(event: Obj) -> Obj:
    """An events.k8s.io/v1 Event as the core/v1 Event it is stored as (empty structs left out)."""
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Event", "metadata": event.get("metadata")}
    for core, renamed in RENAMED:
        value = event.get(renamed)
        if value is not None and value != {}:
            out[core] = value
    return out


def _stored(*path: str) -> Callable[[Obj], str]:
    return lambda event: field_value(event, *path)


FIELD_GETTERS: dict[str, Callable[[Obj], str]] = {
    **{f"regarding.{key}": _stored("involvedObject", key) for key in
       ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
    "reason": _stored("reason"),
    "reportingController": _stored("reportingComponent"),
    "deprecatedSource": _stored("source", "component"),
    "type": _stored("type"),
}
