"""kube-proxy's HTTP server on a loopback port: health, rules (JSON, text, long-poll), traffic as
NDJSON, and its refusals."""

from __future__ import annotations

import asyncio
import json

from control.client import nodeaccess
from tests.proxy.test_send import fake_kubelet, feed, node, proxy_with
from tests.proxy.test_table import endpoints, service

AUTH = f"Authorization: Bearer {nodeaccess.token()}\r\n"  # the hub's proof, as node servers require it


async def request(port, method, target, *, reader_writer=None):
    reader, writer = reader_writer or await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{method} {target} HTTP/1.1\r\nHost: x\r\n{AUTH}\r\n".encode())
    await writer.drain()
    head = (await reader.readuntil(b"\r\n\r\n")).decode()
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head.split("\r\n")[1:]) if k}
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:
        body = b""
        while (size := int((await reader.readuntil(b"\r\n")).strip(), 16)):
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        await reader.readexactly(2)
    if reader_writer is None:
        writer.close()
    return int(head.split(" ")[1]), headers, body


def test_the_server_answers_health_rules_and_sends_traffic():
    proxy = proxy_with(service(), endpoints(rv="7"), node())
    fake_kubelet(proxy)

    async def scenario():
        port = await proxy.server.start("127.0.0.1", 0)
        connection = await asyncio.open_connection("127.0.0.1", port)
        assert (await request(port, "GET", "/healthz", reader_writer=connection))[2] == b"ok\n"
        status, headers, body = await request(port, "GET", "/rules", reader_writer=connection)
        rules = json.loads(body)
        assert status == 200 and headers["connection"] == "keep-alive"
        assert (rules["node"], rules["balance"], rules["version"]) == ("node-1", "round-robin", 2), "the Service, then its Endpoints"
        assert rules["services"][0]["endpoints"][0]["pod"] == "web-a" and rules["iptables"][0].startswith("-A KUBE-SERVICES")
        text = (await request(port, "GET", "/rules?format=text", reader_writer=connection))[2].decode()
        assert text.startswith("*filter") and "DNAT --to-destination 10.244.1.2:8080" in text
        connection[1].close()

        waiting = asyncio.ensure_future(request(port, "GET", "/rules?wait=2&timeoutSeconds=5&service=default/web"))
        await asyncio.sleep(0.05)
        assert not waiting.done(), "nothing changed yet: the long poll waits"
        feed(proxy, endpoints(rv="8", ready=[("10.244.2.2", "web-b")]), "MODIFIED")
        shown = json.loads((await asyncio.wait_for(waiting, 2))[2])
        assert shown["version"] == 3 and [e["pod"] for e in shown["services"][0]["endpoints"]] == ["web-b"]
        timed_out = json.loads((await request(port, "GET", "/rules?wait=3&timeoutSeconds=0.05"))[2])
        assert timed_out["version"] == 3

        status, headers, body = await request(port, "POST", "/send?target=web&count=3&interval=0")
        assert status == 200 and headers["content-type"] == "application/x-ndjson"
        assert headers["transfer-encoding"] == "chunked"
        lines = [json.loads(line) for line in body.splitlines()]
        assert [line.get("pod") for line in lines[:3]] == ["web-b"] * 3
        assert lines[-1] == {"done": True, "sent": 3, "answered": {"web-b": 3}, "failed": 0}

        for method, target, expected in (("POST", "/send?count=2", 400), ("POST", "/send?target=web&count=-1", 400),
                                         ("GET", "/send?target=web", 405), ("GET", "/nowhere", 404),
                                         ("GET", "/rules?wait=x", 400)):
            status, _, body = await request(port, method, target)
            assert status == expected and "error" in json.loads(body), target
        await proxy.close()

    asyncio.run(scenario())
