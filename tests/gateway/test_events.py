"""What the gateway controller says, from the status before and after: a change of a condition
once, nothing for a status that holds, and `Said` keeping the same change from being said twice."""

from __future__ import annotations

from control.gateway.events import Said, gateway_events, route_events

CONTROLLER = "kubekitchen.dev/gateway-controller"


def cond(type_, status, reason, message=""):
    return {"type": type_, "status": status, "reason": reason, "message": message}


def gateway_status(programmed="True", reason="Programmed"):
    return {"conditions": [cond("Accepted", "True", "Accepted"), cond("Programmed", programmed, reason, "why")],
            "addresses": [{"type": "IPAddress", "value": "127.0.1.1"}] if programmed == "True" else [],
            "listeners": [{"name": "http", "conditions": [cond("Programmed", programmed, reason,
                                                               "Listening on 127.0.1.1:30080")]}]}


def route_status(accepted=("True", "Accepted"), resolved=("True", "ResolvedRefs"), controller=CONTROLLER):
    return {"parents": [{"parentRef": {"name": "front"}, "controllerName": controller,
                         "conditions": [cond("Accepted", *accepted, "not here"),
                                        cond("ResolvedRefs", *resolved, "Service kitchen/soup not permitted")]}]}


def said(events):
    return [(e.type, e.reason, e.message) for e in events]


def test_a_gateway_programmed_is_said_once_and_a_lost_one_warned():
    first = gateway_events(None, gateway_status())
    assert said(first) == [("Normal", "Programmed", "Address 127.0.1.1 assigned; listeners served: "
                                                    "http (Listening on 127.0.1.1:30080)")]
    assert gateway_events(gateway_status(), gateway_status()) == []
    assert said(gateway_events(gateway_status(), gateway_status("False", "AddressNotAssigned"))) == [
        ("Warning", "AddressNotAssigned", "why")]
    assert gateway_events(None, gateway_status("Unknown", "Pending")) == []  # upstream's initial state: quiet


def test_a_routes_parents_warn_on_refused_backends_and_listeners():
    assert said(route_events(None, route_status(), CONTROLLER, "default")) == [
        ("Normal", "Accepted", "Accepted by Gateway default/front")]
    refused = route_status(resolved=("False", "RefNotPermitted"))
    assert said(route_events(route_status(), refused, CONTROLLER, "default")) == [
        ("Warning", "RefNotPermitted", "Service kitchen/soup not permitted")]
    assert route_events(refused, refused, CONTROLLER, "default") == []
    assert said(route_events(refused, route_status(), CONTROLLER, "default")) == [
        ("Normal", "ResolvedRefs", "All backend references are resolved")]
    outside = route_status(accepted=("False", "NotAllowedByListeners"))
    assert said(route_events(route_status(), outside, CONTROLLER, "default")) == [
        ("Warning", "NotAllowedByListeners", "Gateway default/front: not here")]
    assert route_events(None, route_status(controller="example.com/other"), CONTROLLER, "default") == []


def test_the_same_change_is_said_once_per_object():
    memory = Said()
    events = gateway_events(None, gateway_status())
    assert memory.fresh("uid-1", events) == events
    assert memory.fresh("uid-1", events) == []  # a stale cache shows the same change again
    assert memory.fresh("uid-2", events) == events  # another object
    lost = gateway_events(gateway_status(), gateway_status("False", "AddressNotAssigned"))
    assert memory.fresh("uid-1", lost) == lost
    assert memory.fresh("uid-1", events) == events  # programmed again: a new change
