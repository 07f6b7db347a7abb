"""The gateway controller's address and announcement, through a fake client: by default it serves
on node-1's address (waiting for it), writes that address in the Gateway's status and announces
the ports it took in node-1's annotation `kubekitchen.dev/gateway-listeners` (what kube-proxy
reads); `KK_GATEWAY_ADDRESS` overrides the address (then nothing is announced); the announcement
goes when the last Gateway does. And its Events: said once per change, a Warning for a backend
that is not permitted or not found."""

from __future__ import annotations

import asyncio
import random

from control.client.shared import SharedInformers
from control.clock import FakeClock
from control.gateway.controller import PORTS_ANNOTATION, GatewayController
from control.kinds.network import GATEWAY_PORTS_ANNOTATION
from tests.controllers.fakes import START, FakeClient
from tests.gateway.test_status import gateway, gateway_class, meta, route, service

LOOPBACK = "127.0.0.1"  # node-1's address in loopback mode: bindable on every machine


def node(ip=LOOPBACK, announced=None):
    out = {"metadata": meta("node-1"), "status": {"addresses": [{"type": "InternalIP", "address": ip}]}}
    if announced is not None:
        out["metadata"]["annotations"] = {GATEWAY_PORTS_ANNOTATION: announced}
    return out


def controller(*objects, host=""):
    client = FakeClient()
    made = GatewayController(client, SharedInformers(client, clock=FakeClock(START)), clock=FakeClock(START),
                             rng=random.Random(1), host=host, port_offset=0, exact_ports=False)
    for kind, obj in objects:
        getattr(made, kind).cache.put(obj)
    return made, client


def statuses(client, plural):
    return {a.name: a.body["status"] for a in client.of("replace/status", plural)}


def conditions(status):
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


def events(client):
    return [(a.body["involvedObject"]["kind"], a.body["involvedObject"]["name"], a.body["type"], a.body["reason"],
             a.body["message"]) for a in client.of("create", "events")]


def settle(made, client):
    """What the watches would bring back: the statuses and annotations just written."""
    for action in client.of("replace/status"):
        informer = {"gatewayclasses": made.classes, "gateways": made.gateways, "httproutes": made.routes}[action.plural]
        informer.cache.put(action.body)
    for action in client.of("patch"):
        informer = {"gateways": made.gateways, "nodes": made.nodes}[action.plural]
        key = f"{action.namespace}/{action.name}" if action.namespace else action.name
        stored = informer.cache.get(key)
        annotations = {**(stored["metadata"].get("annotations") or {}), **action.body["metadata"]["annotations"]}
        stored["metadata"]["annotations"] = {k: v for k, v in annotations.items() if v is not None}
    client.actions.clear()


def test_served_on_node_1s_address_and_announced_for_kube_proxy():
    made, client = controller(("nodes", node()), ("classes", gateway_class()), ("gateways", gateway()),
                              ("services", service("menu-v1")), ("routes", route([{"name": "menu-v1", "port": 80}])))

    async def go():
        try:
            await made.reconcile("sync")
            port = made.bound[("default/front", 80)]
            first = client.of("patch", "nodes")
            settle(made, client)
            await made.reconcile("sync")  # nothing new: nothing written, nothing announced again
            return port, first, client.summary()
        finally:
            await made.close()

    port, [announce], again = asyncio.run(go())
    assert announce.name == "node-1" and announce.body == {"metadata": {"annotations": {
        GATEWAY_PORTS_ANNOTATION: f"http={port}"}}}
    assert again == []
    assert made.listening_on == LOOPBACK and made.host == LOOPBACK


def test_the_status_names_node_1s_address():
    made, client = controller(("nodes", node()), ("classes", gateway_class()), ("gateways", gateway()))

    async def go():
        try:
            await made.reconcile("sync")
            return made.bound[("default/front", 80)]
        finally:
            await made.close()

    port = asyncio.run(go())
    status = statuses(client, "gateways")["front"]
    assert status["addresses"] == [{"type": "IPAddress", "value": LOOPBACK}]
    assert conditions(status)["Programmed"] == ("True", "Programmed")
    [annotate] = client.of("patch", "gateways")
    assert annotate.body["metadata"]["annotations"][PORTS_ANNOTATION] == f"http={LOOPBACK}:{port}"


def test_waits_for_node_1_then_serves_when_it_comes():
    made, client = controller(("classes", gateway_class()), ("gateways", gateway()))

    async def go():
        try:
            await made.reconcile("sync")
            before = (dict(made.bound), statuses(client, "gateways")["front"], client.of("patch", "nodes"))
            made.nodes.cache.put(node())
            made._node_changed(node())  # node-1 registers: a sync is queued
            queued = len(made.queue)
            settle(made, client)
            await made.reconcile("sync")
            return before, queued
        finally:
            await made.close()

    (bound, status, patched), queued = asyncio.run(go())
    assert bound == {} and patched == [] and "addresses" not in status
    assert conditions(status)["Programmed"] == ("False", "AddressNotAssigned")
    assert status["listeners"][0]["conditions"][2]["message"] == "Waiting for the address of node-1"
    assert queued == 1
    assert conditions(statuses(client, "gateways")["front"])["Programmed"] == ("True", "Programmed")
    assert client.of("patch", "nodes")[0].body["metadata"]["annotations"][GATEWAY_PORTS_ANNOTATION].startswith("http=")


def test_an_override_address_is_served_and_not_announced_as_node_1s():
    # node-1 says 127.0.1.1, the setting says 127.0.0.1: served there, shown there, a stale announcement removed
    made, client = controller(("nodes", node("127.0.1.1", announced="http=30080")), ("classes", gateway_class()),
                              ("gateways", gateway()), host=LOOPBACK)

    async def go():
        try:
            await made.reconcile("sync")
        finally:
            await made.close()

    asyncio.run(go())
    assert statuses(client, "gateways")["front"]["addresses"] == [{"type": "IPAddress", "value": LOOPBACK}]
    [announce] = client.of("patch", "nodes")
    assert announce.body == {"metadata": {"annotations": {GATEWAY_PORTS_ANNOTATION: None}}}


def test_the_announcement_goes_with_the_last_gateway_and_node_heartbeats_are_ignored():
    made, client = controller(("nodes", node()), ("classes", gateway_class()), ("gateways", gateway()))

    async def go():
        try:
            await made.reconcile("sync")
            settle(made, client)
            made.queue = type(made.queue)(clock=made.clock)
            made._node_changed(made.nodes.cache.get("node-1"))  # a heartbeat: nothing to do
            quiet = len(made.queue)
            made.gateways.cache.pop("default/front")
            await made.reconcile("sync")
            return quiet
        finally:
            await made.close()

    quiet = asyncio.run(go())
    assert quiet == 0 and made.servers == {}
    [announce] = client.of("patch", "nodes")
    assert announce.body == {"metadata": {"annotations": {GATEWAY_PORTS_ANNOTATION: None}}}


def test_events_are_said_once_per_change():
    backends = [{"name": "soup", "namespace": "kitchen", "port": 80}]
    made, client = controller(("nodes", node()), ("classes", gateway_class()), ("gateways", gateway()),
                              ("services", service("soup", "kitchen")), ("routes", route(backends)))

    async def go():
        try:
            await made.reconcile("sync")
            first = events(client)
            port = made.bound[("default/front", 80)]
            client.actions.clear()
            await made.reconcile("sync")  # the watch has not brought the statuses back yet: the same change
            stale = events(client)
            settle(made, client)
            for _ in range(5):
                await made.reconcile("sync")  # resyncs
            return first, stale, events(client), port
        finally:
            await made.close()

    first, stale, resyncs, port = asyncio.run(go())
    assert ("Gateway", "front", "Normal", "Programmed",
            f"Address {LOOPBACK} assigned; listeners served: http (Listening on {LOOPBACK}:{port})") in first
    assert ("HTTPRoute", "menu", "Normal", "Accepted", "Accepted by Gateway default/front") in first
    [warning] = [e for e in first if e[2] == "Warning"]
    assert warning[:4] == ("HTTPRoute", "menu", "Warning", "RefNotPermitted") and "kitchen/soup" in warning[4]
    assert len(first) == 3 and stale == [] and resyncs == []


def test_a_missing_backend_is_a_warning_and_its_repair_a_normal_event():
    made, client = controller(("nodes", node()), ("classes", gateway_class()), ("gateways", gateway()),
                              ("routes", route([{"name": "nobody", "port": 80}])))

    async def go():
        try:
            await made.reconcile("sync")
            first = [e for e in events(client) if e[0] == "HTTPRoute"]
            settle(made, client)
            made.services.cache.put(service("nobody"))
            await made.reconcile("sync")
            return first, events(client)
        finally:
            await made.close()

    first, repaired = asyncio.run(go())
    assert ("HTTPRoute", "menu", "Warning", "BackendNotFound", "Service default/nobody not found") in first
    assert repaired == [("HTTPRoute", "menu", "Normal", "ResolvedRefs", "All backend references are resolved")]


def test_where_it_serves_and_what_it_shows():
    made, _ = controller(("nodes", node("127.0.1.1")))
    assert made.addresses() == ("127.0.1.1", "127.0.1.1")  # the default: node-1's own
    made.override = "0.0.0.0"
    assert made.addresses() == ("0.0.0.0", "127.0.1.1")  # every address; node-1's is the one shown
    made.listening_on, made.bound = "0.0.0.0", {("default/front", 80): 30080, ("default/back", 81): 30081}
    assert made.announcement() == "http=30080,http=30081"
    made.override, made.listening_on = "192.0.2.7", "192.0.2.7"
    assert made.addresses() == ("192.0.2.7", "192.0.2.7") and made.announcement() is None
    empty, _ = controller(host="0.0.0.0")
    assert empty.addresses() == (None, None)  # node-1 not registered yet: nothing to show
