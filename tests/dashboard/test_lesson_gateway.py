"""The gateway-traffic button: where it sends (only an IP address the controller wrote in the
Gateway's status, at the listener's port from the annotation), what it refuses before sending,
and its summary against a real listener (a stand-in answering as the gateway does)."""

from __future__ import annotations

import asyncio

import pytest

from dashboard.actions import ActionError
from dashboard.lesson_gateway import LISTENERS, gateway_traffic, listener_address


def gateway(annotation: str, addresses=("127.0.0.1",)) -> dict:
    return {"metadata": {"name": "front-door", "namespace": "default", "annotations": {LISTENERS: annotation}},
            "status": {"addresses": [{"type": "IPAddress", "value": a} for a in addresses]}}


def test_the_listener_address_comes_from_the_status_and_the_annotation():
    assert listener_address(gateway("http=127.0.0.1:30080")) == "127.0.0.1:30080"
    assert listener_address(gateway("admin=127.0.0.1:30081,http=127.0.0.1:30080"), "http") == "127.0.0.1:30080"
    assert listener_address(gateway("http=10.0.0.9:80")) is None  # not an address the controller wrote
    assert listener_address(gateway("http=example.com:80", ("example.com",))) is None  # names are not followed
    assert listener_address(gateway("http=127.0.0.1:99999")) is None
    assert listener_address(gateway("")) is None


class FakeHub:
    def __init__(self, obj):
        self.obj = obj

    async def get(self, resource, name, namespace=None):
        return self.obj


def test_a_bad_form_or_an_unserved_gateway_sends_nothing():
    hub = FakeHub(gateway(""))
    for form in ({"namespace": "default", "gateway": "Front!"}, {"namespace": "default", "gateway": "g", "count": "0"},
                 {"namespace": "default", "gateway": "g", "path": "soup"}):
        with pytest.raises(ActionError):
            asyncio.run(gateway_traffic(hub, form))
    with pytest.raises(ActionError, match="not served yet"):
        asyncio.run(gateway_traffic(hub, {"namespace": "default", "gateway": "front-door"}))


def test_the_summary_counts_each_backend():
    async def run():
        answered = iter(["default/menu-v1"] * 9 + ["default/menu-v2"])

        async def serve(reader, writer):
            while await reader.readuntil(b"\r\n\r\n"):
                backend = next(answered).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-kubekitchen-backend: " + backend + b"\r\n\r\n{}")
                await writer.drain()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            hub = FakeHub(gateway(f"http=127.0.0.1:{port}"))
            return await gateway_traffic(hub, {"namespace": "default", "gateway": "front-door", "count": "10"})
        finally:
            server.close()

    line = asyncio.run(run())
    assert line.endswith(": menu-v1 9 (90.0%), menu-v2 1 (10.0%)"), line


def test_guests_go_a_few_at_a_time_and_each_once():
    """The server answers nobody until AT_ONCE requests wait together: one guest after another
    would never get an answer (the run would time out)."""
    from dashboard.lesson_gateway import AT_ONCE

    async def run():
        waiting, seen = [], []
        everyone_in = asyncio.Event()

        async def serve(reader, writer):
            try:
                while await reader.readuntil(b"\r\n\r\n"):
                    seen.append(1)
                    waiting.append(1)
                    if len(waiting) >= AT_ONCE:
                        everyone_in.set()
                    await everyone_in.wait()
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-kubekitchen-backend: default/menu-v1"
                                 b"\r\n\r\n{}")
                    await writer.drain()
            except asyncio.IncompleteReadError:
                pass

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            hub = FakeHub(gateway(f"http=127.0.0.1:{port}"))
            line = await asyncio.wait_for(
                gateway_traffic(hub, {"namespace": "default", "gateway": "front-door", "count": "50"}), 10)
            return line, len(seen)
        finally:
            server.close()

    line, requests = asyncio.run(run())
    assert line.endswith(": menu-v1 50 (100.0%)") and requests == 50, (line, requests)
