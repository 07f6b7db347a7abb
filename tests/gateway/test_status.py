"""The gateway controller's statuses, written through a fake client from filled caches: the
GatewayClass accepted, the Gateway accepted and programmed with its address and listeners, an
HTTPRoute's parents with Accepted and ResolvedRefs (a ReferenceGrant allowing, or not, a Service
of another namespace; a missing Service), and nothing written the second time."""

from __future__ import annotations

import asyncio
import random

from control.client.shared import SharedInformers
from control.clock import FakeClock
from control.gateway.controller import PORTS_ANNOTATION, GatewayController
from control.gateway.status import CONTROLLER_NAME
from tests.controllers.fakes import START, FakeClient


def meta(name, namespace=None, generation=1, **extra):
    out = {"name": name, "uid": f"uid-{name}", "resourceVersion": "1", "generation": generation,
           "creationTimestamp": "2026-01-01T00:00:00Z", **extra}
    if namespace:
        out["namespace"] = namespace
    return out


def gateway_class(controller=CONTROLLER_NAME):
    return {"metadata": meta("kitchen"), "spec": {"controllerName": controller}}


def gateway(listeners=None):
    return {"metadata": meta("front", "default"),
            "spec": {"gatewayClassName": "kitchen", "listeners": listeners or [
                {"name": "http", "port": 80, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "All"}}}]}}


def service(name, namespace="default"):
    return {"metadata": meta(name, namespace), "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 80}]}}


def route(backends, namespace="default", name="menu"):
    return {"metadata": meta(name, namespace, generation=3),
            "spec": {"parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "front",
                                     "namespace": "default"}],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                                "backendRefs": backends}]}}


def grant(namespace="kitchen", to_name=None):
    to = {"group": "", "kind": "Service", **({"name": to_name} if to_name else {})}
    return {"metadata": meta("let-default-in", namespace),
            "spec": {"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "default"}],
                     "to": [to]}}


def controller(*objects):
    client = FakeClient()
    informers = SharedInformers(client, clock=FakeClock(START))
    made = GatewayController(client, informers, clock=FakeClock(START), rng=random.Random(1), host="127.0.0.1",
                             port_offset=0, exact_ports=False)
    for kind, obj in objects:
        getattr(made, kind).cache.put(obj)
    return made, client


def written(client, plural):
    return {a.name: a.body["status"] for a in client.of("replace/status", plural)}


def parent_conditions(status):
    [parent] = status["parents"]
    assert parent["controllerName"] == CONTROLLER_NAME
    assert parent["parentRef"]["name"] == "front"
    return {c["type"]: (c["status"], c["reason"], c["observedGeneration"]) for c in parent["conditions"]}


def run(made):
    async def go():
        try:
            return await made.reconcile("sync")
        finally:
            await made.close()
    return asyncio.run(go())


def test_class_gateway_and_a_route_in_the_same_namespace():
    made, client = controller(("classes", gateway_class()), ("gateways", gateway()),
                              ("services", service("menu-v1")),
                              ("routes", route([{"name": "menu-v1", "port": 80, "weight": 90}])))

    async def go():
        try:
            await made.reconcile("sync")
            return made.bound[("default/front", 80)]
        finally:
            await made.close()

    port = asyncio.run(go())
    [klass] = written(client, "gatewayclasses").values()
    assert [(c["type"], c["status"], c["reason"]) for c in klass["conditions"]] == [("Accepted", "True", "Accepted")]
    status = written(client, "gateways")["front"]
    assert {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]} == {
        "Accepted": ("True", "Accepted"), "Programmed": ("True", "Programmed")}
    assert status["addresses"] == [{"type": "IPAddress", "value": "127.0.0.1"}]
    [listener] = status["listeners"]
    assert listener["attachedRoutes"] == 1 and listener["supportedKinds"] == [
        {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}]
    assert {c["type"]: c["status"] for c in listener["conditions"]} == {
        "Accepted": "True", "ResolvedRefs": "True", "Programmed": "True", "Conflicted": "False"}
    assert parent_conditions(written(client, "httproutes")["menu"]) == {
        "Accepted": ("True", "Accepted", 3), "ResolvedRefs": ("True", "ResolvedRefs", 3)}
    [annotate] = client.of("patch", "gateways")
    assert annotate.body["metadata"]["annotations"][PORTS_ANNOTATION] == f"http=127.0.0.1:{port}"


def test_a_service_of_another_namespace_needs_a_reference_grant():
    backends = [{"name": "soup", "namespace": "kitchen", "port": 80}]
    made, client = controller(("classes", gateway_class()), ("gateways", gateway()),
                              ("services", service("soup", "kitchen")), ("routes", route(backends)))
    run(made)
    conditions = parent_conditions(written(client, "httproutes")["menu"])
    assert conditions["ResolvedRefs"] == ("False", "RefNotPermitted", 3)
    assert conditions["Accepted"] == ("True", "Accepted", 3)

    made, client = controller(("classes", gateway_class()), ("gateways", gateway()), ("grants", grant()),
                              ("services", service("soup", "kitchen")), ("routes", route(backends)))
    run(made)
    assert parent_conditions(written(client, "httproutes")["menu"])["ResolvedRefs"] == ("True", "ResolvedRefs", 3)

    made, client = controller(("classes", gateway_class()), ("gateways", gateway()),
                              ("grants", grant(to_name="bread")),
                              ("services", service("soup", "kitchen")), ("routes", route(backends)))
    run(made)  # a grant for another Service name does not allow this one
    assert parent_conditions(written(client, "httproutes")["menu"])["ResolvedRefs"][1] == "RefNotPermitted"


def test_a_missing_service_is_backend_not_found():
    made, client = controller(("classes", gateway_class()), ("gateways", gateway()),
                              ("routes", route([{"name": "nobody", "port": 80}])))
    run(made)
    assert parent_conditions(written(client, "httproutes")["menu"])["ResolvedRefs"] == ("False", "BackendNotFound", 3)


def test_a_route_the_listener_does_not_allow():
    listeners = [{"name": "http", "port": 80, "protocol": "HTTP", "hostname": "menu.example",
                  "allowedRoutes": {"namespaces": {"from": "Same"}}}]
    other = route([{"name": "menu-v1", "port": 80}], namespace="guests")
    made, client = controller(("classes", gateway_class()), ("gateways", gateway(listeners)),
                              ("routes", other))
    run(made)
    assert parent_conditions(written(client, "httproutes")["menu"])["Accepted"] == ("False", "NotAllowedByListeners", 3)
    assert written(client, "gateways")["front"]["listeners"][0]["attachedRoutes"] == 0

    named = route([{"name": "menu-v1", "port": 80}])
    named["spec"]["hostnames"] = ["soup.example"]
    made, client = controller(("classes", gateway_class()), ("gateways", gateway(listeners)), ("routes", named))
    run(made)
    assert parent_conditions(written(client, "httproutes")["menu"])["Accepted"][1] == "NoMatchingListenerHostname"


def test_another_controllers_objects_are_left_alone_and_a_second_pass_writes_nothing():
    made, client = controller(("classes", gateway_class("example.com/other")), ("gateways", gateway()),
                              ("routes", route([{"name": "menu-v1", "port": 80}])))
    run(made)
    assert client.summary() == []

    made, client = controller(("classes", gateway_class()), ("gateways", gateway()), ("services", service("menu-v1")),
                              ("routes", route([{"name": "menu-v1", "port": 80}])))

    async def twice():
        try:
            await made.reconcile("sync")
            for action in client.of("replace/status"):
                informer = {"gatewayclasses": made.classes, "gateways": made.gateways,
                            "httproutes": made.routes}[action.plural]
                informer.cache.put(action.body)  # the watch brings back what was written
            for action in client.of("patch", "gateways"):
                stored = made.gateways.cache.get("default/front")
                stored["metadata"]["annotations"] = action.body["metadata"]["annotations"]
            before = len(client.summary())
            await made.reconcile("sync")
            return before
        finally:
            await made.close()

    before = asyncio.run(twice())
    assert len([s for s in client.summary() if s[1] != "events"]) == 4  # 3 statuses and the annotation
    assert len(client.of("create", "events")) == 2  # Programmed, Accepted: said once
    assert len(client.summary()) == before


def test_an_unsupported_protocol_is_not_accepted():
    listeners = [{"name": "tls", "port": 443, "protocol": "HTTPS"}]
    made, client = controller(("classes", gateway_class()), ("gateways", gateway(listeners)))
    run(made)
    status = written(client, "gateways")["front"]
    assert {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]} == {
        "Accepted": ("False", "ListenersNotValid"), "Programmed": ("False", "Invalid")}
    accepted = status["listeners"][0]["conditions"][0]
    assert (accepted["type"], accepted["status"], accepted["reason"]) == ("Accepted", "False", "UnsupportedProtocol")


def test_listeners_that_conflict_are_neither_accepted_nor_served():
    listeners = [{"name": "a", "port": 80, "protocol": "HTTP"}, {"name": "b", "port": 80, "protocol": "HTTP"},
                 {"name": "c", "port": 80, "protocol": "HTTP", "hostname": "menu.example"},
                 {"name": "d", "port": 81, "protocol": "HTTP"}]
    made, client = controller(("classes", gateway_class()), ("gateways", gateway(listeners)))
    run(made)
    status = written(client, "gateways")["front"]
    by_name = {l["name"]: {c["type"]: (c["status"], c["reason"]) for c in l["conditions"]} for l in status["listeners"]}
    assert by_name["a"]["Conflicted"] == ("True", "HostnameConflict") == by_name["b"]["Conflicted"]
    assert by_name["a"]["Accepted"] == ("False", "HostnameConflict") and by_name["a"]["Programmed"][0] == "False"
    assert by_name["c"]["Conflicted"] == ("False", "NoConflicts") and by_name["c"]["Programmed"][0] == "True"
    assert by_name["d"]["Programmed"][0] == "True"


def test_only_the_usual_web_ports_are_taken_as_they_are():
    client = FakeClient()
    made = GatewayController(client, SharedInformers(client, clock=FakeClock(START)), clock=FakeClock(START),
                             rng=random.Random(1), host="127.0.0.1", port_offset=30000)
    assert made._candidates(80) == [80, 30080, 0] and made._candidates(8443) == [8443, 38443, 0]
    assert made._candidates(5432) == [35432, 0]  # never a database's (or any other) port of this machine
    assert made._candidates(40000) == [0]
