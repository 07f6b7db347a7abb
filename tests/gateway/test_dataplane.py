"""The Gateway's data plane with a fake kubelet: what a request is answered (the pod's JSON line
naming it, 404 without a matching rule, 500 for a refused backend, 503 without an endpoint), the
ready endpoints of a Service port, and a 90/10 route measured over 1,000 requests (seeded RNG)."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

from control.clock import FakeClock
from control.client.serving import Request
from control.gateway.dataplane import GatewayServer, Target, ready_endpoints
from control.gateway.routing import Backend, Match, Router, Rule

SERVICE = {"metadata": {"name": "menu-v1", "namespace": "default"},
           "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "admin", "port": 9000}]}}


def slice_(*endpoints, port_name="http"):
    return {"addressType": "IPv4", "ports": [{"name": port_name, "port": 8080}],
            "endpoints": [{"addresses": [ip], "conditions": {"ready": ready}, "nodeName": "node-1",
                           "targetRef": {"kind": "Pod", "name": pod}} for ip, pod, ready in endpoints]}


def test_ready_endpoints_of_a_service_port():
    slices = [slice_(("10.244.1.2", "v1-a", True), ("10.244.1.3", "v1-b", False)),
              slice_(("10.244.1.2", "v1-a", True)), slice_(("10.244.1.9", "admin", True), port_name="admin")]
    assert ready_endpoints(SERVICE, 80, slices) == [Target("v1-a", "default", "node-1", "10.244.1.2", 8080)]
    assert ready_endpoints(SERVICE, 81, slices) == []


def router(*backends, path="/"):
    rule = Rule("default/menu", "2026-01-01T00:00:00Z", 0, ("",),
                (Match.of({"path": {"type": "PathPrefix", "value": path}}),), backends, "http")
    return Router((("http", ""),), (rule,))


PODS = {"menu-v1": [Target(f"menu-v1-{i}", "default", "node-1", f"10.244.1.{i}", 8080) for i in range(3)],
        "menu-v2": [Target("menu-v2-0", "default", "node-2", "10.244.2.1", 8080)]}


def server(route: Router, pods=PODS, code=200) -> GatewayServer:
    async def forward(target: Target):
        return code, {"pod": target.pod, "namespace": target.namespace, "node": target.node, "podIP": target.ip,
                      "port": target.port, "server": "json"}

    return GatewayServer(lambda: route, endpoints=lambda backend: pods.get(backend.name, []), forward=forward,
                         rng=random.Random(2026), clock=FakeClock(1_800_000_000.0))


def ask(gateway: GatewayServer, target="/", host="menu.example"):
    request = Request("GET", target, [(b"host", host.encode())], b"")
    return asyncio.run(gateway.handle_request(request))


def test_the_pod_answers_and_is_named():
    status, headers, body = ask(server(router(Backend("default", "menu-v1", 80))))
    assert status == 200
    answer = json.loads(body)
    assert answer["pod"].startswith("menu-v1-") and answer["namespace"] == "default"
    assert (b"x-kubekitchen-backend", b"default/menu-v1") in headers


def test_no_rule_no_endpoint_refused_backend_and_a_silent_kubelet():
    assert ask(server(router(Backend("default", "menu-v1", 80), path="/soup")), "/bread")[0] == 404
    assert ask(server(router(Backend("default", "nobody", 80))))[:3:2] == (503, b"no healthy upstream")
    assert ask(server(router(Backend("kitchen", "menu-v1", 80, problem="RefNotPermitted"))))[0] == 500
    assert ask(server(router(Backend("default", "menu-v1", 80, weight=0))))[0] == 500
    assert ask(server(router(Backend("default", "menu-v1", 80)), code=503))[0] == 503


def test_a_canary_of_90_10_over_1000_requests():
    gateway = server(router(Backend("default", "menu-v1", 80, 90), Backend("default", "menu-v2", 80, 10)))

    async def thousand():
        counts = Counter()
        for _ in range(1000):
            _, _, body = await gateway.handle_request(Request("GET", "/", [(b"host", b"x")], b""))
            counts[json.loads(body)["pod"].rsplit("-", 1)[0]] += 1
        return counts

    counts = asyncio.run(thousand())
    assert sum(counts.values()) == 1000 and 870 <= counts["menu-v1"] <= 930, counts


def test_a_connection_node_1s_network_agent_drops_hangs_envoys_connect_timeout_then_503():
    from control.gateway.dataplane import CONNECT_TIMEOUT

    async def run():
        gateway = server(router(Backend("default", "menu-v2", 80)))
        asked = []

        async def dropped(ip, port):
            asked.append((ip, port))
            return {"direction": "ingress", "policies": ["default/deny-all"]}

        gateway.dropped = dropped
        answer = asyncio.ensure_future(gateway.handle_request(Request("GET", "/", [(b"host", b"x")], b"")))
        await asyncio.sleep(0)
        await gateway.clock.advance(CONNECT_TIMEOUT + 0.1)
        status, _, body = await answer
        assert status == 503 and b"reset reason: connection timeout" in body and asked == [("10.244.2.1", 8080)]
    asyncio.run(run())
