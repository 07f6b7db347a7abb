"""The lesson button `front-door`: its form checked first, the Ingress's address read from its
status, the requests sent through the hub's traffic path with the path and Host, and the answer
summed up by pod and HTTP status (a 404 of the default backend is a refusal with that code)."""

from __future__ import annotations

import asyncio

import pytest

from dashboard import lesson_ingress as door
from dashboard.actions import ActionError

INGRESS = {"metadata": {"name": "menu"}, "status": {"loadBalancer": {"ingress": [
    {"ip": "127.0.1.1", "ports": [{"port": 8080, "protocol": "TCP"}]}]}}}


class Client:
    server = "http://hub"

    def __init__(self, ingress):
        self.ingress = ingress

    async def get(self, resource, name, namespace=None):
        return self.ingress


def run(monkeypatch, lines, ingress=INGRESS, **form):
    sent = []

    async def stream_lines(base, method, path, params):
        sent.append((method, path, params))
        for line in lines:
            yield line

    monkeypatch.setattr(door.hub, "stream_lines", stream_lines)
    answer = asyncio.run(door.front_door(Client(ingress), {"ingress": "menu", "host": "menu.example", **form}))
    return answer, sent


def line(pod, status, code=200):
    return {"seq": 0, "code": code, "pod": pod, "response": {"status": status}}


def test_answered_by_pods(monkeypatch):
    answer, sent = run(monkeypatch, [line("soup-1", 200), line("soup-2", 200), {"done": True}], path="/soup", count="2")
    assert answer == "2 request(s) to http://127.0.1.1:8080/soup (Host: menu.example): soup-1 1, soup-2 1"
    assert getattr(answer, "ok", True)
    assert sent == [("POST", "/kubekitchen/traffic", {"node": "node-1", "target": "127.0.1.1", "port": "8080",
                                                      "path": "/soup", "host": "menu.example",
                                                      "namespace": "default", "count": "2"})]


def test_the_default_backend_and_nobody(monkeypatch):
    answer, _ = run(monkeypatch, [line("", 404)], path="/cake", count="1")
    assert answer.code == 404 and "HTTP 404 × 1" in answer
    answer, _ = run(monkeypatch, [{"seq": 0, "code": 503, "error": "x"}], path="/soup")
    assert answer.code == 503 and "1 not answered" in answer


def test_no_address_yet_and_bad_forms(monkeypatch):
    with pytest.raises(ActionError, match="no address yet"):
        run(monkeypatch, [], ingress={"metadata": {"name": "menu"}}, path="/soup")
    for bad in ({"path": "soup"}, {"host": "Not A Host"}, {"count": "0"}, {"node": "Node!"}):
        with pytest.raises(ActionError):
            door.front_door_params({"ingress": "menu", **bad})
    assert door.address_of({"status": {"loadBalancer": {"ingress": [{"ip": "127.0.0.1"}]}}}) == ("127.0.0.1", 80)


def test_a_viewer_who_may_not_send_from_a_node_is_a_guest_from_this_machine(monkeypatch):
    from control import errors

    async def scenario():
        seen = []

        async def front(reader, writer):
            head = await reader.readuntil(b"\r\n\r\n")
            seen.append(head)
            body = b'{"pod":"soup-1"}'
            writer.write(b"HTTP/1.1 200 OK\r\nx-kubekitchen-pod: alice/soup-1\r\ncontent-length: %d\r\n"
                         b"connection: close\r\n\r\n%s" % (len(body), body))
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(front, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]

        async def forbidden(base, method, path, params):
            raise errors.Forbidden('forbidden: User "alice" cannot post path "/kubekitchen/traffic"')
            yield  # an async generator, as the hub's

        monkeypatch.setattr(door.hub, "stream_lines", forbidden)
        ingress = {"status": {"loadBalancer": {"ingress": [{"ip": "127.0.0.1", "ports": [{"port": port}]}]}}}
        answer = await door.front_door(Client(ingress), {"ingress": "menu", "host": "menu.alice.example",
                                                         "path": "/soup", "count": "2", "namespace": "alice"})
        server.close()
        assert answer == f"2 request(s) to http://127.0.0.1:{port}/soup (Host: menu.alice.example): soup-1 2"
        assert len(seen) == 2 and all(h.startswith(b"GET /soup HTTP/1.1") and b"host: menu.alice.example" in h.lower()
                                      for h in seen)
    asyncio.run(scenario())


def test_only_an_ip_address_in_the_status_is_a_front_door():
    assert door.address_of({"status": {"loadBalancer": {"ingress": [{"ip": "evil.example.com"}]}}}) is None
    assert door.address_of({"status": {"loadBalancer": {"ingress": [{"ip": "127.0.1.1"}]}}}) == ("127.0.1.1", 80)
