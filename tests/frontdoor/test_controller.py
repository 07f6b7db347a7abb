"""The ingress controller against a fake hub client: which Ingresses it serves, the
status.loadBalancer it writes (once, through the status subresource, with its ports when HTTP is
not on 80), the Sync events, and the answers (the pod's line, 404, 503, 502)."""

from __future__ import annotations

import asyncio
import json

from control import errors
from control.client.resources import INGRESSES
from control.frontdoor.controller import IngressController, listen_ports, load_balancer, ports_annotation
from control.frontdoor.endpoints import PodEndpoint
from tests.controllers.fakes import FakeClient, Recorder

KITCHEN = {"metadata": {"name": "kitchen", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
           "spec": {"controller": "kubekitchen.dev/ingress"}}


def menu(name: str = "menu", class_name: str | None = "kitchen", generation: int = 1) -> dict:
    spec: dict = {"rules": [{"host": "menu.example", "http": {"paths": [
        {"path": "/soup", "pathType": "Prefix", "backend": {"service": {"name": "soup", "port": {"number": 80}}}},
        {"path": "/salad", "pathType": "Prefix", "backend": {"service": {"name": "salad", "port": {"number": 80}}}}]}}]}
    if class_name:
        spec["ingressClassName"] = class_name
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": name, "namespace": "default", "generation": generation, "resourceVersion": "5",
                         "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec}


SOUP = {"metadata": {"name": "soup", "namespace": "default"}, "spec": {"ports": [{"name": "http", "port": 80}]}}
SALAD = {"metadata": {"name": "salad", "namespace": "default"}, "spec": {"ports": [{"name": "http", "port": 80}]}}
SOUP_SLICE = {"metadata": {"name": "soup-abc", "namespace": "default", "labels": {"kubernetes.io/service-name": "soup"}},
              "addressType": "IPv4", "ports": [{"name": "http", "port": 5678}],
              "endpoints": [{"addresses": ["10.244.1.5"], "conditions": {"ready": True}, "nodeName": "node-2",
                             "targetRef": {"kind": "Pod", "name": "soup-1"}}]}


def controller(*ingresses: dict) -> tuple[IngressController, FakeClient, Recorder]:
    client = FakeClient()
    front = IngressController(client, http_port=8080, https_port=8443)  # type: ignore[arg-type]
    recorder = Recorder()
    front.recorder = recorder  # type: ignore[assignment]
    front.classes.cache.put(KITCHEN)
    for obj in (SOUP, SALAD):
        front.services.cache.put(obj)
    front.slices.cache.put(SOUP_SLICE)
    for ing in ingresses:
        front.ingresses.cache.put(ing)
    front.rebuild()
    front.address, front.http_port, front.https_port = "127.0.1.1", 8080, 8443
    return front, client, recorder


def test_the_status_is_written_once_through_the_status_subresource():
    async def run():
        front, client, _ = controller(menu(), menu("elsewhere", class_name="other"))
        assert front.served == {"default/menu"}
        assert await front.write_status("default/menu")
        [action] = client.of("replace/status")
        assert action.name == "menu"
        assert action.body["status"]["loadBalancer"]["ingress"] == [
            {"ip": "127.0.1.1", "ports": [{"port": 8080, "protocol": "TCP"}, {"port": 8443, "protocol": "TCP"}]}]
        front.ingresses.cache.put(action.body)
        assert await front.write_status("default/menu")
        assert await front.write_status("default/elsewhere")  # not ours: left alone
        assert len(client.of("replace/status")) == 1
        client.fail("replace/status", "ingresses", errors.Conflict("the object has been modified"))
        front.ingresses.cache.put(menu())
        assert not await front.write_status("default/menu")  # a conflict: tried again later
    asyncio.run(run())


def test_load_balancer_on_port_80_names_no_ports():
    assert load_balancer("127.0.1.1", 80, 443) == [{"ip": "127.0.1.1"}]
    assert ports_annotation(8080, 8443) == "http=8080,https=8443"
    assert listen_ports(80) == [80, 8080, 0] and listen_ports(443) == [443, 8443, 0] and listen_ports(9000) == [9000, 0]


def test_sync_events_on_add_and_on_spec_changes_only():
    async def run():
        front, _, recorder = controller()
        front.ingresses.cache.put(menu())
        front._ingress_added(menu())
        front._ingress_updated(menu(), {**menu(), "status": {"loadBalancer": {}}})  # a status write: no event
        front._ingress_updated(menu(), menu(generation=2))
        front._ingress_added(menu("other", class_name="other"))
        await asyncio.sleep(0)
        assert recorder.events == [("menu", "Normal", "Sync", "Scheduled for sync")] * 2
        assert front._dirty == {"default/menu"}
    asyncio.run(run())


def test_answers():
    async def run():
        front, _, _ = controller(menu())
        sent = []

        async def forward(endpoint: PodEndpoint, namespace: str):
            sent.append((endpoint, namespace))
            return 200, {"pod": endpoint.pod, "namespace": namespace, "node": endpoint.node, "podIP": endpoint.ip,
                         "port": endpoint.port, "server": "json"}

        front.forward = forward  # type: ignore[method-assign]
        status, headers, body = await front.answer("GET", "/soup/today?x=1", "menu.example:8080")
        assert status == 200 and json.loads(body) == {"pod": "soup-1", "namespace": "default", "node": "node-2",
                                                      "podIP": "10.244.1.5", "port": 5678}
        assert (b"x-kubekitchen-pod", b"default/soup-1") in headers
        assert sent == [(PodEndpoint("10.244.1.5", 5678, "soup-1", "node-2"), "default")]
        status, _, body = await front.answer("GET", "/salad", "menu.example")
        assert status == 503 and b"503 Service Temporarily Unavailable" in body  # no endpoint
        status, _, body = await front.answer("GET", "/cake", "menu.example")
        assert status == 404 and b"<center>nginx</center>" in body

        async def refused(endpoint, namespace):
            return 503, {"error": "stopping"}

        front.forward = refused  # type: ignore[method-assign]
        assert (await front.answer("GET", "/soup", "menu.example"))[0] == 502
    asyncio.run(run())


def test_a_tls_host_is_redirected_to_https_unless_annotated():
    async def run():
        secure = menu()
        secure["spec"]["tls"] = [{"hosts": ["menu.example"], "secretName": "menu-tls"}]
        front, _, _ = controller(secure)

        async def forward(endpoint, namespace):
            return 200, {"pod": endpoint.pod, "server": "json"}

        front.forward = forward  # type: ignore[method-assign]
        status, headers, _ = await front.answer("GET", "/soup?x=1", "menu.example:8080")
        assert status == 308 and (b"location", b"https://menu.example:8443/soup?x=1") in headers
        assert (await front.answer("GET", "/soup", "menu.example", True))[0] == 200  # on HTTPS: served
        secure["metadata"]["annotations"] = {"nginx.ingress.kubernetes.io/ssl-redirect": "false"}
        front.ingresses.cache.put(secure)
        front.rebuild()
        assert (await front.answer("GET", "/soup", "menu.example"))[0] == 200
    asyncio.run(run())


def test_a_connection_node_1s_network_agent_drops_hangs_the_connect_timeout_then_504():
    from control.clock import FakeClock
    from control.frontdoor.controller import CONNECT_TIMEOUT

    async def run():
        front, _, _ = controller(menu())
        front.clock = clock = FakeClock(1_800_000_000.0)
        asked, sent = [], []

        async def dropped(ip, port):
            asked.append((ip, port))
            return {"direction": "ingress", "policies": ["default/deny-all"]}

        async def forward(endpoint, namespace):
            sent.append(endpoint)
            return 200, {}

        front.dropped, front.forward = dropped, forward  # type: ignore[method-assign]
        answer = asyncio.ensure_future(front.answer("GET", "/soup", "menu.example"))
        await asyncio.sleep(0)
        await clock.advance(CONNECT_TIMEOUT - 0.1)
        assert not answer.done(), "a dropped connection hangs"
        await clock.advance(0.2)
        status, _, body = await answer
        assert status == 504 and b"504 Gateway Time-out" in body
        assert asked == [("10.244.1.5", 5678)] and sent == []  # never sent to the pod
    asyncio.run(run())
