"""The kubelet's HTTP server: who answers `/serve`, the Summary API, keep-alive, and the log
routes still served as before."""

from __future__ import annotations

import asyncio
import json

import pytest

from control.client import nodeaccess
from control.clock import FakeClock
from control.client.timings import WORKSHOP, Timings
from control.kubelet.behaviour import Script
from control.kubelet.config import BackoffPolicy, KubeletConfig
from control.kubelet.containers import advance, new_container, stop
from control.kubelet.kubelet import Kubelet
from control.kubelet.logs import LogServer
from control.kubelet.server import BadRequest, KubeletServer, parse_serve, serve_answer
from tests.kubelet.test_pods import Node, manifest

AUTH = f"Authorization: Bearer {nodeaccess.token()}\r\n"  # the hub's proof, as node servers require it

T0 = 1_800_000_000.0
BACKOFF = BackoffPolicy(10, 300, 600)


def running():
    c, _ = advance(new_container("app", "nginx", "uid", T0, 0), Script(), "Always", T0 + 1, BACKOFF)
    return c


def answer(containers):
    return serve_answer(node="node-1", namespace="default", name="web", port=8080, pod_ip="10.244.1.5",
                        containers=containers)


def test_serve_answers_200_while_a_container_runs_503_when_none_404_when_unknown():
    assert answer((running(),)) == (200, {"pod": "web", "namespace": "default", "node": "node-1",
                                          "podIP": "10.244.1.5", "port": 8080, "server": "json"})
    creating = new_container("app", "nginx", "uid", T0, 5)
    assert answer((creating,))[0] == 503 and "no container" in answer((creating,))[1]["error"]
    assert answer(None)[0] == 404
    stopped, _ = stop(running(), T0 + 2)
    assert answer((stopped,))[0] == 503, "its process has ended (SIGTERM handled): the pod is about to go"
    never_ran, _ = stop(creating, T0 + 2)
    assert answer((never_ran,))[0] == 503


def test_parse_serve():
    assert parse_serve("/serve/default/web?port=80&from=node-2") == ("default", "web", 80, "node-2")
    assert parse_serve("/serve/default/web") == ("default", "web", None, "")
    assert parse_serve("/serveIP/10.244.1.5?port=80&from=node-2") == ("", "10.244.1.5", 80, "node-2")
    for target, status in (("/serve/default", 404), ("/serve/a/b?port=x", 400), ("/serve/a/b?port=70000", 400)):
        with pytest.raises(BadRequest) as caught:
            parse_serve(target)
        assert caught.value.status == status


async def exchange(reader, writer, method: str, target: str) -> tuple[int, dict, str]:
    writer.write(f"{method} {target} HTTP/1.1\r\nHost: x\r\n{AUTH}Content-Length: 2\r\n\r\n{{}}".encode())
    await writer.drain()
    head = (await reader.readuntil(b"\r\n\r\n")).decode()
    length = int(next(line.split(":")[1] for line in head.split("\r\n") if line.lower().startswith("content-length")))
    body = json.loads(await reader.readexactly(length))
    return int(head.split(" ")[1]), body, head


def test_the_server_keeps_connections_for_serve_and_stats_and_still_serves_logs():
    calls = []

    def serve(namespace, pod, port, sender):
        calls.append((namespace, pod, port, sender))
        return (200, {"pod": pod}) if pod == "web" else (404, {"error": "unknown"})

    logs = LogServer(lambda *_: None, clock=FakeClock(T0), interval=2)
    server = KubeletServer(logs, serve=serve, stats=lambda: {"node": {"nodeName": "node-1"}, "pods": []})

    async def scenario():
        port = await server.start("127.0.0.1")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert (await exchange(reader, writer, "POST", "/serve/default/web?port=80&from=node-2"))[:2] == (200, {"pod": "web"})
        status, body, head = await exchange(reader, writer, "POST", "/serve/default/gone")
        assert status == 404 and "keep-alive" in head, "the same connection answers again"
        assert (await exchange(reader, writer, "GET", "/stats/summary"))[1]["node"]["nodeName"] == "node-1"
        assert (await exchange(reader, writer, "GET", "/serve/default/web"))[0] == 405
        assert (await exchange(reader, writer, "POST", "/serve/default/web?port=no"))[0] == 400
        writer.close()
        assert calls == [("default", "web", 80, "node-2"), ("default", "gone", None, "")]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET /healthz HTTP/1.1\r\nHost: x\r\n{AUTH}\r\n".encode())
        assert (await reader.read()).endswith(b"\r\n\r\nok\n"), "log routes answer and close as before"
        writer.close()
        await server.close()

    asyncio.run(scenario())


def test_the_kubelet_counts_answered_requests_as_cpu_in_its_summary():
    node = Node()
    kubelet = Kubelet(node.hub, "node-1", clock=node.clock, timings=Timings(**WORKSHOP), config=KubeletConfig())
    kubelet.worker = node.worker

    async def scenario():
        assert kubelet.serve("default", "web", 80, "node-2")[0] == 404, "not a pod of this node yet"
        node.submit(manifest({"kubekitchen.dev/cpu": "50m"}))
        await node.reconcile()
        for _ in range(6):
            assert kubelet.serve("default", "web", 80, "node-2")[0] == 200
        pod = kubelet.stats()["pods"][0]
        assert pod["podRef"]["name"] == "web"
        assert pod["cpu"]["usageNanoCores"] == int((1 + 50 + 10 * 6 / 3) * 1_000_000), "6 requests in a 3 s window"
        await node.clock.advance(4)
        assert kubelet.stats()["pods"][0]["cpu"]["usageNanoCores"] == 51_000_000, "the window has passed"
        node.hub.objects.clear()
        node.sync()
        await node.reconcile()  # the pod is gone: forgotten
        assert kubelet.serve("default", "web", 80, "node-2")[0] == 404 and kubelet.stats()["pods"] == []

    asyncio.run(scenario())


def test_a_pod_ip_reaches_the_pod_that_has_it_and_answers_name_its_server():
    node = Node()
    kubelet = Kubelet(node.hub, "node-1", clock=node.clock, timings=Timings(**WORKSHOP), config=KubeletConfig())
    kubelet.worker = node.worker

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        ip = kubelet.worker.current("default", "web")[1].pod_ip
        assert ip
        code, body = kubelet.serve_ip(ip, 80, "node-2")
        assert code == 200 and body["pod"] == "web" and body["namespace"] == "default" and body["server"] == "nginx"
        assert kubelet.serve("default", "web", 9999, "node-2")[1]["server"] == "json", "no nginx on that port"
        assert kubelet.serve_ip("10.244.9.9", 80, "node-2")[0] == 404
        server = KubeletServer(kubelet.logs, serve=kubelet.serve, stats=kubelet.stats, serve_ip=kubelet.serve_ip)
        assert server.route("POST", f"/serveIP/{ip}?port=80&from=node-2")[1]["pod"] == "web"
        assert server.route("GET", f"/serveIP/{ip}")[0] == 405

    asyncio.run(scenario())
