"""control.serving.reaping on Daphne's own Server (no sockets): an answered HTTP request leaves
`Server.connections` as soon as both its client is gone and its application ended cleanly; what
Daphne's sweep must still see (an exception, a running or cancelled application, a websocket)
stays for it; a second disconnect notice is harmless."""

from __future__ import annotations

import asyncio

import pytest
from daphne import http_protocol, server

from control.serving import reaping

reaping.install()


def request() -> http_protocol.WebRequest:
    """A WebRequest as a key of Server.connections (the wrappers only ask what it is)."""
    return object.__new__(http_protocol.WebRequest)


def daphne(app) -> server.Server:
    srv = server.Server(application=app, endpoints=["tcp:0"], signal_handlers=False)  # not started
    srv.connections = {}
    return srv


def served(app, protocol, kind: str = "http") -> server.Server:
    """A Daphne server that has accepted `protocol` and started `app` for it."""
    srv = daphne(app)
    srv.protocol_connected(protocol)
    srv.create_application(protocol, {"type": kind})
    return srv


async def ends_at_once(scope, receive, send):
    return None


async def settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


async def answered_then_ended():
    ended = asyncio.Event()

    async def app(scope, receive, send):
        await ended.wait()

    req = request()
    srv = served(app, req)
    srv.protocol_disconnected(req)  # the answer is written (Daphne's finish) ...
    await settle()
    assert req in srv.connections  # ... while the application still runs
    ended.set()
    await settle()
    return srv, req


def test_a_request_is_forgotten_when_its_application_ends_after_the_answer():
    srv, req = asyncio.run(answered_then_ended())
    assert req not in srv.connections


def test_a_request_is_forgotten_when_its_client_goes_after_the_application_ended():
    async def run():
        req = request()
        srv = served(ends_at_once, req)
        await settle()
        assert req in srv.connections  # the client is still there
        srv.protocol_disconnected(req)
        assert req not in srv.connections
        srv.protocol_disconnected(req)  # Twisted's connectionLost after finish: nothing to do
        assert req not in srv.connections

    asyncio.run(run())


@pytest.mark.parametrize("ending", ["raises", "cancelled", "runs"])
def test_what_daphnes_sweep_must_see_stays_for_it(ending):
    async def run():
        async def app(scope, receive, send):
            if ending == "raises":
                raise RuntimeError("boom")
            await asyncio.Event().wait()

        req = request()
        srv = served(app, req)
        if ending == "cancelled":
            srv.connections[req]["application_instance"].cancel()
        await settle()
        srv.protocol_disconnected(req)
        await settle()
        assert req in srv.connections
        instance = srv.connections[req]["application_instance"]
        if ending == "runs":
            instance.cancel()
            await settle()
        else:
            assert instance.done()

    asyncio.run(run())


def test_other_protocols_are_left_to_daphne():
    async def run():
        websocket = object()
        srv = served(ends_at_once, websocket, "websocket")
        await settle()
        srv.protocol_disconnected(websocket)
        assert websocket in srv.connections

    asyncio.run(run())


def test_install_is_idempotent():
    wrapped = (server.Server.create_application, server.Server.protocol_disconnected)
    reaping.install()
    assert (server.Server.create_application, server.Server.protocol_disconnected) == wrapped
