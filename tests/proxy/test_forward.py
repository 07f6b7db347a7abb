"""kube-proxy -> kubelet: one request per pick over kept connections, a kept connection the
kubelet closed is replaced without failing the request, a silent kubelet is a 503."""

from __future__ import annotations

import asyncio
import json

from control.proxy.table import Endpoint
from tests.proxy.test_send import node, proxy_with

EP = Endpoint("10.244.1.2", 8080, "web-a", "node-1")


async def kubelet(answers: list, *, close_after_each: bool):
    """A kubelet stand-in: answers 200 with keep-alive, then (optionally) hangs up while idle."""

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                answers.append(head.split(b" ")[1].decode())
                body = json.dumps({"pod": "web-a"}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
                             + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
                await writer.drain()
                if close_after_each:
                    break
        except asyncio.IncompleteReadError:
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_forward_reuses_connections_and_survives_a_closed_one():
    async def scenario():
        answers = []
        server, port = await kubelet(answers, close_after_each=True)
        proxy = proxy_with(node(ip="127.0.0.1", port=port))
        assert await proxy.forward("node-1", EP, "default") == (200, {"pod": "web-a"})
        await asyncio.sleep(0.05)  # the kubelet has hung up the kept connection meanwhile
        assert await proxy.forward("node-1", EP, "default") == (200, {"pod": "web-a"})
        assert answers == ["/serve/default/web-a?port=8080&from=node-1"] * 2
        server.close()
        await proxy.close()

        kept = []
        server, port = await kubelet(kept, close_after_each=False)
        proxy = proxy_with(node(ip="127.0.0.1", port=port))
        for _ in range(5):
            assert (await proxy.forward("node-1", EP, "default"))[0] == 200
        pool = next(iter(proxy.pods._pools.values()))
        assert len(pool._idle) == 1 and len(kept) == 5, "one connection, kept"
        server.close()
        await proxy.close()

    asyncio.run(scenario())


def test_a_kubelet_that_does_not_answer_is_a_503(monkeypatch):
    monkeypatch.setattr("control.proxy.proxy.FORWARD_TIMEOUT", 0.1)

    async def scenario():
        async def silent(reader, writer):
            await asyncio.sleep(5)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        proxy = proxy_with(node(ip="127.0.0.1", port=server.sockets[0].getsockname()[1]))
        code, body = await proxy.forward("node-1", EP, "default")
        assert code == 503 and "did not answer" in body["error"]
        closed = proxy_with(node(ip="127.0.0.1", port=1))
        assert (await closed.forward("node-1", EP, "default"))[0] == 503
        server.close()
        await proxy.close()

    asyncio.run(scenario())
