"""What the gateway controller says about the Gateway API objects it owns, and the routers it
serves: pure functions of the objects (the informers' caches passed in as lookups) and the time.

Guarantees:
- Only GatewayClasses whose `spec.controllerName` is `CONTROLLER_NAME` are ours, and only the
  Gateways of such a class, and only the parentRefs of an HTTPRoute that name such a Gateway:
  nothing else gets a status from us (another controller's entries in `status.parents` are kept).
- GatewayClass: `Accepted` True (reason `Accepted`). Gateway: `Accepted` (True `Accepted` when at
  least one listener is valid, else False `ListenersNotValid`) and `Programmed` (True `Programmed`
  once a listener is served, False `Invalid`/`AddressNotAssigned` otherwise), `status.addresses`
  (the address it is served on), and per listener `supportedKinds` (HTTPRoute for HTTP),
  `attachedRoutes` (the accepted routes attached to it) and conditions `Accepted` (False
  `UnsupportedProtocol` for anything but HTTP), `ResolvedRefs`, `Programmed`, `Conflicted` (True,
  and the listener neither accepted nor served, for two listeners on one port with different
  protocols, `ProtocolConflict`, or the same hostname, `HostnameConflict`).
- HTTPRoute, one `status.parents[]` entry per parentRef to one of our Gateways (the parentRef
  as given, `controllerName`): `Accepted` (True `Accepted`; False `NoMatchingParent` for a
  sectionName/port no listener has, `NotAllowedByListeners` when allowedRoutes (namespaces: Same,
  All, Selector; kinds) keeps it out, `NoMatchingListenerHostname` when no hostname is shared) and
  `ResolvedRefs` (True `ResolvedRefs`; False `InvalidKind` for a backend that is not a core
  Service, `RefNotPermitted` for a Service in another namespace that no ReferenceGrant there lets
  this route's namespace refer to, `BackendNotFound` for a missing Service or port), each with the
  route's `observedGeneration`.
- A condition keeps its lastTransitionTime while its status holds (`new_condition`).
- `routers(...)` gives each served port of each Gateway the `routing.Router` of the routes
  accepted on its listeners, every backend carrying why it cannot be used, if it cannot.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

from control.gateway.manifests import CONTROLLER, GROUP
from control.gateway.routing import Backend, Match, Router, Rule, route_hostnames
from control.kinds.meta import find_condition, new_condition
from control.kinds.selectors import SelectorError, label_selector_from_object

Obj = dict[str, Any]
CONTROLLER_NAME = CONTROLLER
SERVED_PROTOCOLS = ("HTTP",)
ROUTE_KIND = {"group": GROUP, "kind": "HTTPRoute"}


@dataclass
class World:
    """Read-only lookups into the controller's caches."""
    classes: Callable[[str], Obj | None]
    gateways: Callable[[str, str], Obj | None]
    services: Callable[[str, str], Obj | None]
    namespaces: Callable[[str], Obj | None]
    grants: Callable[[str], list[Obj]]  # the ReferenceGrants of one namespace
    controller: str = CONTROLLER_NAME

    def ours(self, gateway: Obj | None) -> bool:
        if gateway is None:
            return False
        klass = self.classes(str((gateway.get("spec") or {}).get("gatewayClassName") or ""))
        return klass is not None and (klass.get("spec") or {}).get("controllerName") == self.controller


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _key(obj: Obj) -> str:
    return f"{_meta(obj).get('namespace', '')}/{_meta(obj).get('name', '')}"


def _cond(type_: str, ok: bool | None, reason: str, message: str, generation: Any, now: float,
          previous: list | None) -> Obj:
    status = "Unknown" if ok is None else ("True" if ok else "False")
    return new_condition(type_, status, now, find_condition(previous, type_), reason=reason, message=message,
                         observedGeneration=generation or 0)


# --- GatewayClass ----------------------------------------------------------------------------------

def class_status(klass: Obj, now: float) -> Obj:
    status = copy.deepcopy(klass.get("status") or {})
    previous = status.get("conditions")
    status["conditions"] = [_cond("Accepted", True, "Accepted", "Handled by Kube Kitchen's gateway controller",
                                  _meta(klass).get("generation"), now, previous)]
    return status


# --- HTTPRoute ---------------------------------------------------------------------------------------

@dataclass
class Attachment:
    """One parentRef of a route to one of our Gateways, as decided."""
    ref: Obj
    gateway: Obj
    listeners: dict[str, tuple[str, ...]] = field(default_factory=dict)  # listener -> effective hostnames
    reason: str = "Accepted"
    message: str = "Route is accepted"

    @property
    def accepted(self) -> bool:
        return bool(self.listeners)


def _ref_target(ref: Obj, namespace: str) -> tuple[str, str] | None:
    if (ref.get("group", GROUP) or "") != GROUP or (ref.get("kind") or "Gateway") != "Gateway":
        return None
    return str(ref.get("namespace") or namespace), str(ref.get("name") or "")


def _namespace_allowed(listener: Obj, gateway: Obj, namespace: str, world: World) -> bool:
    allowed = ((listener.get("allowedRoutes") or {}).get("namespaces") or {})
    origin = allowed.get("from") or "Same"
    if origin == "All":
        return True
    if origin == "Selector":
        try:
            selector = label_selector_from_object(allowed.get("selector") or {})
        except (SelectorError, ValueError, TypeError):
            return False
        return selector.matches(_meta(world.namespaces(namespace) or {}).get("labels") or {})
    return namespace == _meta(gateway).get("namespace")


def _kind_allowed(listener: Obj) -> bool:
    kinds = (listener.get("allowedRoutes") or {}).get("kinds") or []
    return not kinds or any((k.get("group", GROUP) or GROUP) == GROUP and k.get("kind") == "HTTPRoute"
                            for k in kinds if isinstance(k, dict))


def attach(route: Obj, ref: Obj, gateway: Obj, world: World) -> Attachment:
    namespace = str(_meta(route).get("namespace") or "")
    hostnames = [str(h) for h in (route.get("spec") or {}).get("hostnames") or []]
    out = Attachment(ref, gateway)
    listeners = [l for l in (gateway.get("spec") or {}).get("listeners") or [] if isinstance(l, dict)]
    if ref.get("sectionName"):
        listeners = [l for l in listeners if l.get("name") == ref["sectionName"]]
    if ref.get("port"):
        listeners = [l for l in listeners if l.get("port") == ref["port"]]
    if not listeners:
        out.reason, out.message = "NoMatchingParent", "No listener of the Gateway matches the parentRef"
        return out
    allowed = [l for l in listeners if l.get("protocol") in SERVED_PROTOCOLS and _kind_allowed(l)
               and _namespace_allowed(l, gateway, namespace, world)]
    if not allowed:
        out.reason, out.message = "NotAllowedByListeners", "No listener allows this route (its kind or namespace)"
        return out
    for listener in allowed:
        names = route_hostnames(str(listener.get("hostname") or ""), hostnames)
        if names is not None:
            out.listeners[str(listener.get("name"))] = names
    if not out.listeners:
        out.reason, out.message = "NoMatchingListenerHostname", "No hostname of the route matches a listener's"
    return out


def attachments(route: Obj, world: World) -> list[Attachment]:
    namespace = str(_meta(route).get("namespace") or "")
    out = []
    for ref in (route.get("spec") or {}).get("parentRefs") or []:
        if not isinstance(ref, dict):
            continue
        target = _ref_target(ref, namespace)
        gateway = world.gateways(*target) if target else None
        if gateway is not None and world.ours(gateway):
            out.append(attach(route, ref, gateway, world))
    return out


def _granted(route_namespace: str, target_namespace: str, service: str, world: World) -> bool:
    for grant in world.grants(target_namespace):
        spec = grant.get("spec") or {}
        if not any(f.get("group") == GROUP and f.get("kind") == "HTTPRoute" and f.get("namespace") == route_namespace
                   for f in spec.get("from") or [] if isinstance(f, dict)):
            continue
        if any((t.get("group") or "") == "" and t.get("kind") == "Service" and (not t.get("name") or t["name"] == service)
               for t in spec.get("to") or [] if isinstance(t, dict)):
            return True
    return False


def backend_problem(route: Obj, ref: Obj, world: World) -> tuple[str, str]:
    """("", "") for a usable backendRef, else (ResolvedRefs reason, message)."""
    namespace = str(_meta(route).get("namespace") or "")
    if (ref.get("group") or "") != "" or (ref.get("kind") or "Service") != "Service":
        return "InvalidKind", f"{ref.get('group') or 'core'}/{ref.get('kind')} is not a supported backend kind"
    target = str(ref.get("namespace") or namespace)
    name = str(ref.get("name") or "")
    if target != namespace and not _granted(namespace, target, name, world):
        return "RefNotPermitted", (f"Backend ref to Service {target}/{name} not permitted by any ReferenceGrant "
                                   f"in namespace {target}")
    service = world.services(target, name)
    if service is None:
        return "BackendNotFound", f"Service {target}/{name} not found"
    ports = [p.get("port") for p in (service.get("spec") or {}).get("ports") or [] if isinstance(p, dict)]
    if ref.get("port") is None:
        return "BackendNotFound", f"backendRef to Service {target}/{name} names no port"
    if ref.get("port") not in ports:
        return "BackendNotFound", f"Service {target}/{name} has no port {ref.get('port')}"
    return "", ""


def backends(route: Obj, rule: Obj, world: World) -> tuple[Backend, ...]:
    namespace = str(_meta(route).get("namespace") or "")
    out = []
    for ref in rule.get("backendRefs") or []:
        if isinstance(ref, dict):
            _, message = backend_problem(route, ref, world)
            weight = ref.get("weight", 1)
            out.append(Backend(str(ref.get("namespace") or namespace), str(ref.get("name") or ""),
                               ref.get("port") if isinstance(ref.get("port"), int) else None,
                               weight if isinstance(weight, int) else 1, message))
    return tuple(out)


def route_status(route: Obj, world: World, now: float) -> Obj:
    status = copy.deepcopy(route.get("status") or {})
    generation = _meta(route).get("generation")
    kept = [p for p in status.get("parents") or [] if isinstance(p, dict) and p.get("controllerName") != world.controller]
    previous = {repr(sorted((p.get("parentRef") or {}).items())): p.get("conditions")
                for p in status.get("parents") or [] if isinstance(p, dict)}
    problems = [backend_problem(route, ref, world) for rule in (route.get("spec") or {}).get("rules") or []
                for ref in (rule.get("backendRefs") or []) if isinstance(ref, dict)]
    problem = next((p for p in problems if p[0]), ("", ""))
    mine = []
    for found in attachments(route, world):
        before = previous.get(repr(sorted(found.ref.items())))
        conditions = [
            _cond("Accepted", found.accepted, found.reason, found.message, generation, now, before),
            _cond("ResolvedRefs", not problem[0], problem[0] or "ResolvedRefs",
                  problem[1] or "Resolved all the Object references for the Route", generation, now, before),
        ]
        mine.append({"parentRef": copy.deepcopy(found.ref), "controllerName": world.controller,
                     "conditions": conditions})
    status["parents"] = kept + mine
    return status


# --- Gateway -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Served:
    """Where a Gateway's listeners are served: port -> bound "host:port", or the reason it is not."""
    host: str
    bound: dict[int, int]  # listener port -> the port bound on `host`
    failed: dict[int, str]  # listener port -> why it could not be bound


def gateway_status(gateway: Obj, routes: list[Obj], world: World, served: Served | None, now: float) -> Obj:
    status = copy.deepcopy(gateway.get("status") or {})
    generation = _meta(gateway).get("generation")
    previous = status.get("conditions")
    counts: dict[str, int] = {}
    for route in routes:
        for found in attachments(route, world):
            if _key(found.gateway) == _key(gateway):
                for name in found.listeners:
                    counts[name] = counts.get(name, 0) + 1
    old_listeners = {l.get("name"): l.get("conditions") for l in status.get("listeners") or [] if isinstance(l, dict)}
    listeners, valid, programmed = [], 0, 0
    conflicted = conflicts(gateway)
    for listener in (gateway.get("spec") or {}).get("listeners") or []:
        if not isinstance(listener, dict):
            continue
        name, port, before = str(listener.get("name")), listener.get("port"), old_listeners.get(listener.get("name"))
        clash = conflicted.get(name)
        supported = listener.get("protocol") in SERVED_PROTOCOLS and not clash
        kinds_ok = _kind_allowed(listener)
        up = served is not None and port in served.bound
        why_down = (served.failed.get(port) if served is not None else None) or "Waiting for the listener to be served"
        valid += supported and kinds_ok
        programmed += supported and kinds_ok and up
        if clash:
            accepted = _cond("Accepted", False, clash, f"Listener {name} conflicts with another on port {port}",
                             generation, now, before)
        elif not supported:
            accepted = _cond("Accepted", False, "UnsupportedProtocol",
                             f"Protocol {listener.get('protocol')} is not served here (HTTP only)", generation, now, before)
        else:
            accepted = _cond("Accepted", True, "Accepted", "Listener is accepted", generation, now, before)
        conditions = [
            accepted,
            _cond("ResolvedRefs", kinds_ok, "ResolvedRefs" if kinds_ok else "InvalidRouteKinds",
                  "Resolved all the Object references" if kinds_ok else "No supported route kind is allowed",
                  generation, now, before),
            _cond("Programmed", bool(supported and kinds_ok and up), "Programmed" if up and supported else "Invalid",
                  f"Listening on {served.host}:{served.bound[port]}" if up and served else why_down,
                  generation, now, before),
            _cond("Conflicted", bool(clash), clash or "NoConflicts",
                  f"Another listener on port {port} has the same {'hostname' if clash == 'HostnameConflict' else 'port'}"
                  if clash else "No conflicts", generation, now, before),
        ]
        listeners.append({"name": name, "supportedKinds": [dict(ROUTE_KIND)] if supported and kinds_ok else [],
                          "attachedRoutes": counts.get(name, 0) if supported else 0, "conditions": conditions})
    accepted = valid > 0
    status["conditions"] = [
        _cond("Accepted", accepted, "Accepted" if accepted else "ListenersNotValid",
              "Gateway is accepted" if accepted else "No listener is valid", generation, now, previous),
        _cond("Programmed", programmed > 0, "Programmed" if programmed else ("AddressNotAssigned" if accepted else "Invalid"),
              "Address assigned to the Gateway, listeners served" if programmed else "No listener is served yet",
              generation, now, previous),
    ]
    status["listeners"] = listeners
    if programmed and served is not None:
        status["addresses"] = [{"type": "IPAddress", "value": served.host}]
    else:
        status.pop("addresses", None)
    return status


def conflicts(gateway: Obj) -> dict[str, str]:
    """listener name -> why it conflicts with another of the Gateway's (`ProtocolConflict`: the same
    port with another protocol; `HostnameConflict`: the same port, protocol and hostname)."""
    listeners = [l for l in (gateway.get("spec") or {}).get("listeners") or [] if isinstance(l, dict)]
    out = {}
    for listener in listeners:
        for other in listeners:
            if other is listener or other.get("port") != listener.get("port"):
                continue
            if other.get("protocol") != listener.get("protocol"):
                out[str(listener.get("name"))] = "ProtocolConflict"
            elif (other.get("hostname") or "") == (listener.get("hostname") or ""):
                out.setdefault(str(listener.get("name")), "HostnameConflict")
    return out


def routers(gateway: Obj, routes: list[Obj], world: World) -> dict[int, Router]:
    """listener port -> the Router of this Gateway's HTTP listeners on it (conflicted ones left out)."""
    conflicted = conflicts(gateway)
    listeners = [l for l in (gateway.get("spec") or {}).get("listeners") or []
                 if isinstance(l, dict) and l.get("protocol") in SERVED_PROTOCOLS and _kind_allowed(l)
                 and str(l.get("name")) not in conflicted]
    by_port: dict[int, list[Obj]] = {}
    for listener in listeners:
        if isinstance(listener.get("port"), int):
            by_port.setdefault(listener["port"], []).append(listener)
    rules: dict[str, list[Rule]] = {}
    for route in routes:
        for found in attachments(route, world):
            if _key(found.gateway) != _key(gateway):
                continue
            for index, rule in enumerate((route.get("spec") or {}).get("rules") or []):
                if not isinstance(rule, dict):
                    continue
                matches = tuple(Match.of(m) for m in rule.get("matches") or [{}] if isinstance(m, dict))
                for listener, names in found.listeners.items():
                    rules.setdefault(listener, []).append(
                        Rule(_key(route), str(_meta(route).get("creationTimestamp") or ""), index, names,
                             matches or (Match(),), backends(route, rule, world), listener))
    out = {}
    for port, group in by_port.items():
        names = tuple((str(l.get("name")), str(l.get("hostname") or "")) for l in group)
        out[port] = Router(names, tuple(r for name, _ in names for r in rules.get(name, [])))
    return out
