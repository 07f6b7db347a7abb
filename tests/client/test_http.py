"""HubClient against a loopback hub stand-in served by the node servers' framing: the one
transport production uses, for requests and watches alike. Status answers become their error
classes, a watch yields events however chunks cut its lines and raises an ERROR event as its
error, and a hub that is gone or breaks an answer off is HubUnreachable."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qs, urlsplit

import pytest

from control import errors
from control.client.http import HubClient, HubUnreachable
from control.client.resources import PODS
from control.client.serving import Exchange, NodeServer, Request


def status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason,
            "code": code}


class Hub(NodeServer):
    """Answers GET of pod "a", 404s others; a watch streams `events` cut into `pieces` bytes each,
    then ends (or breaks off when `break_watch`)."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.piece = 5
        self.break_watch = False
        self.seen: list[Request] = []
        self.connections = 0

    def admits(self, request: Request) -> bool:
        return True  # a stand-in for the hub, which authenticates its callers itself: not a node server

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await super().handle(reader, writer)

    async def answer(self, request: Request, exchange: Exchange) -> None:
        self.seen.append(request)
        url = urlsplit(request.target)
        if "watch" in parse_qs(url.query):
            data = b"".join(json.dumps(e).encode() + b"\n" for e in self.events)
            await exchange.start(200, "application/json")
            for at in range(0, len(data), self.piece):
                await exchange.send(data[at:at + self.piece])
            if self.break_watch:
                exchange.wire.close()
                return
            return await exchange.end()
        if url.path == "/api/v1/namespaces/default/pods/a" and request.method == "GET":
            return await exchange.respond(200, "application/json", b'{"metadata":{"name":"a"}}')
        if url.path == "/text":
            return await exchange.respond(200, "text/plain", b"*filter\nCOMMIT\n")
        if url.path == "/cut":  # promises 100 bytes, sends 10, hangs up
            exchange.wire.writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)
            exchange.wire.close()
            return
        if url.path == "/plain-refusal":
            return await exchange.respond(502, "text/plain", b"bad gateway")
        await exchange.respond(404, "application/json", json.dumps(status(404, "NotFound", "no pod")).encode())


def run(scenario):
    async def main():
        hub = Hub()
        port = await hub.start("127.0.0.1", 0)
        client = HubClient(f"http://127.0.0.1:{port}", agent="test (kube-kitchen)")
        try:
            await asyncio.wait_for(scenario(hub, client), 5)
        finally:
            await client.close()
            await hub.close()

    asyncio.run(main())


def test_requests_answer_json_and_refusals_raise_their_status_error():
    async def scenario(hub, client):
        assert (await client.get(PODS, "a", "default"))["metadata"]["name"] == "a"
        with pytest.raises(errors.NotFound, match="no pod"):
            await client.get(PODS, "b", "default")
        with pytest.raises(errors.ApiError, match="bad gateway"):
            await client.request("GET", "/plain-refusal")
        assert await client.text("/text") == "*filter\nCOMMIT\n"
        agents = {dict(r.headers)[b"user-agent"] for r in hub.seen}
        assert agents == {b"test (kube-kitchen)"}

    run(scenario)


def test_a_watch_yields_events_whatever_the_chunks_and_raises_an_error_event():
    async def scenario(hub, client):
        hub.events = [{"type": "ADDED", "object": {"metadata": {"name": "a"}}},
                      {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "7"}}},
                      {"type": "ERROR", "object": status(410, "Expired", "too old resource version: 1 (5)")}]
        got = []
        with pytest.raises(errors.Gone, match="too old"):
            async for event in client.watch(PODS, "default", resource_version="1"):
                got.append(event["type"])
        assert got == ["ADDED", "BOOKMARK"]
        query = parse_qs(urlsplit(hub.seen[-1].target).query)
        assert query["resourceVersion"] == ["1"] and query["allowWatchBookmarks"] == ["true"]

    run(scenario)


def test_a_watch_the_hub_breaks_off_is_unreachable():
    async def scenario(hub, client):
        hub.events = [{"type": "ADDED", "object": {}}] * 3
        hub.break_watch = True
        got = []
        with pytest.raises(HubUnreachable, match="watch of pods"):
            async for event in client.watch(PODS):
                got.append(event)
        assert len(got) == 3

    run(scenario)


def test_ndjson_streams_come_line_by_line():
    async def scenario(hub, client):
        hub.events = [{"seq": n} for n in range(4)]
        hub.piece = 3
        assert [line async for line in client.stream_lines("POST", "/traffic", params={"watch": "1"})] == hub.events

    run(scenario)


def test_an_answer_cut_short_is_unreachable_and_the_next_request_takes_a_new_connection():
    async def scenario(hub, client):
        with pytest.raises(HubUnreachable, match="cannot reach the hub"):
            await client.request("GET", "/cut")
        assert (await client.get(PODS, "a", "default"))["metadata"]["name"] == "a"
        assert len(hub.seen) == 2 and hub.connections == 2, "the cut connection was not reused"

    run(scenario)


def test_a_hub_that_is_gone_is_unreachable():
    async def scenario(hub, client):
        await hub.close()
        hub.server.close()
        await hub.server.wait_closed()
        with pytest.raises(HubUnreachable):
            await client.get(PODS, "a", "default")
        with pytest.raises(HubUnreachable):
            async for _ in client.watch(PODS):
                pass

    run(scenario)


def test_every_request_and_stream_carries_the_bearer_token(monkeypatch):
    monkeypatch.setenv("KK_TOKEN", "from-the-parent")

    async def main():
        hub = Hub()
        port = await hub.start("127.0.0.1", 0)
        given = HubClient(f"http://127.0.0.1:{port}", agent="a", token="given")
        inherited = HubClient(f"http://127.0.0.1:{port}", agent="b")
        anonymous = HubClient(f"http://127.0.0.1:{port}", agent="c", token="")
        try:
            await given.get(PODS, "a", "default")
            [_ async for _ in given.watch(PODS, "default")]
            await inherited.get(PODS, "a", "default")
            await anonymous.get(PODS, "a", "default")
        finally:
            for client in (given, inherited, anonymous):
                await client.close()
            await hub.close()
        return [dict(r.headers).get(b"authorization") for r in hub.seen]

    assert asyncio.run(main()) == [b"Bearer given", b"Bearer given", b"Bearer from-the-parent", None]
