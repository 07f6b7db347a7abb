"""The Events the gateway controller records about its Gateways and HTTPRoutes, as ingress-nginx
and Envoy Gateway make theirs visible in `kubectl describe` / `kubectl events`: pure functions
from the status an object had to the status just written.

Guarantees:
- An event is said only when a condition CHANGES (its status or reason differs from the one
  written before, or there was none): a resync that writes nothing, or writes the same
  conditions again, says nothing, so there is no event at every reconcile.
- Gateway: `Programmed` turning True is `Normal Programmed` naming the address and the listeners'
  ports; `Programmed` turning False (for another reason than `Pending`) is a `Warning` with the
  condition's reason and message, and so is `Accepted` turning False (`ListenersNotValid`).
- HTTPRoute, per parent of ours (keyed by the parentRef's namespace/name/sectionName/port):
  `Accepted` turning True is `Normal Accepted` naming the Gateway; turning False is a `Warning`
  (`NotAllowedByListeners`, `NoMatchingParent`, `NoMatchingListenerHostname`, ...);
  `ResolvedRefs` turning False is a `Warning` with its reason (`RefNotPermitted`,
  `BackendNotFound`, `InvalidKind`) and message; turning True again after a False is
  `Normal ResolvedRefs`.
- `Said` remembers what was last said per (object uid, subject, condition type), so the same
  change seen twice (a stale cache between a write and its watch event) is said once.
"""

from __future__ import annotations

from typing import Any, NamedTuple

Obj = dict[str, Any]
QUIET = ("Pending",)  # upstream's initial reason: not worth a warning


class Event(NamedTuple):
    type: str  # Normal or Warning
    reason: str
    message: str
    subject: str  # which part of the object (a parent's key, "" for the object itself)
    condition: str
    state: tuple[str, str]  # the condition's (status, reason) that caused it


def _conditions(entry: Obj | None) -> dict[str, Obj]:
    return {c.get("type"): c for c in (entry or {}).get("conditions") or [] if isinstance(c, dict)}


def _state(condition: Obj | None) -> tuple[str, str] | None:
    return (str(condition.get("status")), str(condition.get("reason"))) if condition else None


def gateway_events(before: Obj | None, after: Obj) -> list[Event]:
    old, new = _conditions(before), _conditions(after)
    out: list[Event] = []
    programmed = new.get("Programmed")
    if programmed and _state(programmed) != _state(old.get("Programmed")):
        if programmed.get("status") == "True":
            addresses = ", ".join(str(a.get("value")) for a in after.get("addresses") or [] if isinstance(a, dict))
            served = [f"{l.get('name')} ({_conditions(l).get('Programmed', {}).get('message', '')})"
                      for l in after.get("listeners") or []
                      if isinstance(l, dict) and _conditions(l).get("Programmed", {}).get("status") == "True"]
            out.append(Event("Normal", "Programmed", f"Address {addresses or 'none'} assigned; listeners "
                             f"served: {', '.join(served) or 'none'}", "", "Programmed", _state(programmed)))
        elif programmed.get("reason") not in QUIET:
            out.append(Event("Warning", str(programmed.get("reason")), str(programmed.get("message") or ""), "",
                             "Programmed", _state(programmed)))
    accepted = new.get("Accepted")
    if accepted and accepted.get("status") == "False" and accepted.get("reason") not in QUIET \
            and _state(accepted) != _state(old.get("Accepted")):
        out.append(Event("Warning", str(accepted.get("reason")), str(accepted.get("message") or ""), "",
                         "Accepted", _state(accepted)))
    return out


def parent_key(parent: Obj, route_namespace: str) -> str:
    ref = parent.get("parentRef") or {}
    return (f"{ref.get('namespace') or route_namespace}/{ref.get('name')}"
            f"/{ref.get('sectionName') or ''}/{ref.get('port') or ''}")


def route_events(before: Obj | None, after: Obj, controller: str, route_namespace: str) -> list[Event]:
    def ours(status: Obj | None) -> dict[str, Obj]:
        return {parent_key(p, route_namespace): p for p in (status or {}).get("parents") or []
                if isinstance(p, dict) and p.get("controllerName") == controller}

    old_parents, out = ours(before), []
    for key, parent in ours(after).items():
        old, new = _conditions(old_parents.get(key)), _conditions(parent)
        gateway = key.split("/")[0] + "/" + key.split("/")[1]
        accepted, resolved = new.get("Accepted"), new.get("ResolvedRefs")
        if accepted and _state(accepted) != _state(old.get("Accepted")):
            if accepted.get("status") == "True":
                out.append(Event("Normal", "Accepted", f"Accepted by Gateway {gateway}", key, "Accepted",
                                 _state(accepted)))
            elif accepted.get("reason") not in QUIET:
                out.append(Event("Warning", str(accepted.get("reason")),
                                 f"Gateway {gateway}: {accepted.get('message') or ''}", key, "Accepted",
                                 _state(accepted)))
        if resolved and _state(resolved) != _state(old.get("ResolvedRefs")):
            if resolved.get("status") == "False":
                out.append(Event("Warning", str(resolved.get("reason")), str(resolved.get("message") or ""), key,
                                 "ResolvedRefs", _state(resolved)))
            elif old.get("ResolvedRefs", {}).get("status") == "False":
                out.append(Event("Normal", "ResolvedRefs", "All backend references are resolved", key,
                                 "ResolvedRefs", _state(resolved)))
    return out


class Said:
    """What was last said about each (uid, subject, condition): the same change is said once."""

    def __init__(self, limit: int = 10000):
        self.last: dict[tuple[str, str, str], tuple[str, str]] = {}
        self.limit = limit

    def fresh(self, uid: str, events: list[Event]) -> list[Event]:
        out = []
        for event in events:
            key = (uid, event.subject, event.condition)
            if self.last.get(key) == event.state:
                continue
            if len(self.last) >= self.limit:
                self.last.clear()  # a bounded memory: at worst a change is said twice
            self.last[key] = event.state
            out.append(event)
        return out
