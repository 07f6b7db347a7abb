"""A pod's traffic to a host-network listener (the front door): recognised by the address and the
ports a Node announces, sent as one HTTP exchange with the plan's path and Host, answered whole."""

from __future__ import annotations

import asyncio

from control.proxy.hostports import announced, listener_at, send_to_listener
from control.proxy.send import SendPlan


INGRESS, GATEWAY = "ingress-controller", "gateway-controller"


def node(name: str, ip: str, ports: str | None, gateway: str | None = None) -> dict:
    meta: dict = {"name": name, "annotations": {}}
    if ports is not None:
        meta["annotations"]["kubekitchen.dev/ingress-controller-ports"] = ports
    if gateway is not None:
        meta["annotations"]["kubekitchen.dev/gateway-listeners"] = gateway
    return {"metadata": meta, "status": {"addresses": [{"type": "InternalIP", "address": ip}]}}


def test_the_listener_a_node_announces():
    nodes = [node("node-1", "127.0.1.1", "http=8080,https=8443"), node("node-2", "127.0.1.2", None)]
    assert announced(nodes[0]) == {8080: ("http", INGRESS), 8443: ("https", INGRESS)}
    assert listener_at(nodes, "127.0.1.1", 8080) == ("node-1", "http", INGRESS)
    assert listener_at(nodes, "127.0.1.1", 8443) == ("node-1", "https", INGRESS)
    assert listener_at(nodes, "127.0.1.1", None) is None  # port 80 is not announced
    assert listener_at(nodes, "127.0.1.2", 8080) is None
    assert listener_at([node("node-1", "127.0.1.1", "http=80")], "127.0.1.1", None) == ("node-1", "http", INGRESS)
    assert announced(node("n", "1.2.3.4", "http=x,ftp=21,https=443,http=0,http=70000")) == {443: ("https", INGRESS)}


def test_the_ingress_and_the_gateway_announce_side_by_side():
    both = node("node-1", "127.0.1.1", "http=80,https=443", gateway="http=30080,http=8080,http=80")
    assert announced(both) == {80: ("http", INGRESS), 443: ("https", INGRESS),  # a port claimed twice: the first's
                               30080: ("http", GATEWAY), 8080: ("http", GATEWAY)}
    assert listener_at([both], "127.0.1.1", 30080) == ("node-1", "http", GATEWAY)
    assert listener_at([both], "127.0.1.1", None) == ("node-1", "http", INGRESS)
    only = node("node-1", "127.0.0.1", None, gateway="http=80")  # loopback mode: node-1 is 127.0.0.1
    assert listener_at([only], "127.0.0.1", None) == ("node-1", "http", GATEWAY)
    assert listener_at([only], "127.0.0.1", 8080) is None
    assert listener_at([node("node-1", "127.0.1.1", None, gateway="")], "127.0.1.1", None) is None


def test_one_exchange_per_request_with_path_and_host():
    async def run():
        seen = []

        async def serve(reader, writer):
            head = await reader.readuntil(b"\r\n\r\n")
            seen.append(head)
            body = b'{"pod":"soup-1"}\n'
            writer.write(b"HTTP/1.1 200 OK\r\nx-kubekitchen-pod: default/soup-1\r\ncontent-length: %d\r\n\r\n%s"
                         % (len(body), body))
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        plan = SendPlan("127.0.0.1", port=port, count=2, interval=0, path="/soup", host="menu.example")
        lines = [line async for line in send_to_listener(plan, node="node-2", where=("node-1", "http"))]
        server.close()
        assert [line["pod"] for line in lines[:2]] == ["soup-1", "soup-1"]
        assert lines[0]["code"] == 200 and lines[0]["response"]["status"] == 200
        assert lines[0]["response"]["body"] == '{"pod":"soup-1"}\n' and lines[0]["via"] == "ingress-controller"
        assert lines[-1] == {"done": True, "sent": 2, "answered": {"soup-1": 2}, "failed": 0}
        assert seen[0].startswith(b"GET /soup HTTP/1.1\r\n") and b"host: menu.example" in seen[0]
        closed = SendPlan("127.0.0.1", port=port, count=1)
        [line, done] = [line async for line in send_to_listener(closed, node="node-2", where=("node-1", "http"))]
        assert line["code"] == 503 and done["failed"] == 1
        [line, done] = [line async for line in send_to_listener(closed, node="node-2",
                                                                 where=("node-1", "http", GATEWAY))]
        assert line["via"] == GATEWAY and "the gateway controller did not answer" in line["error"]
    asyncio.run(run())


def test_the_plan_reads_path_and_host():
    plan = SendPlan.parse({"target": "1.2.3.4", "path": "/soup?x=1", "host": "menu.example"})
    assert (plan.path, plan.host) == ("/soup?x=1", "menu.example")
    assert SendPlan.parse({"target": "web"}).path == "/"
    try:
        SendPlan.parse({"target": "web", "path": "soup"})
    except ValueError as exc:
        assert "path must start with /" in str(exc)
    else:
        raise AssertionError("a relative path was accepted")


def test_a_pods_egress_to_the_front_door_is_decided_first_and_a_dropped_one_never_connects():
    async def run():
        connected = []

        async def serve(reader, writer):
            connected.append(True)
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        asked = []

        async def deny(source, target, to_port, protocol):
            asked.append((source, target, to_port, protocol))
            return {"code": 0, "error": "connection timed out (dropped by NetworkPolicy)",
                    "dropped": {"direction": "egress", "policies": ["shop/no-exit"], "from": "shop/guest",
                                "to": target, "port": to_port, "protocol": protocol}}

        plan = SendPlan("127.0.0.1", port=port, count=1, interval=0, source="10.244.1.7")
        [line, done] = [line async for line in send_to_listener(plan, node="node-2", where=("node-1", "http"),
                                                                 decide=deny)]
        server.close()
        assert asked == [("10.244.1.7", "127.0.0.1", port, "TCP")]
        assert line["code"] == 0 and line["dropped"]["policies"] == ["shop/no-exit"] and "pod" in line
        assert done["failed"] == 1 and connected == []
    asyncio.run(run())
