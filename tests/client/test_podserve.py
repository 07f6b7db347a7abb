"""A pod's app through its kubelet: kept connections, one retry on a connection the kubelet closed,
the answer decoded, and a kubelet that never answers is KubeletUnreachable within the timeout."""

from __future__ import annotations

import asyncio

import pytest

from control.client.podserve import KubeletUnreachable, PodServe, decode


async def kubelet(seen: list[bytes], *, close_after_each: bool, answer: bytes = b'{"pod":"web-a"}'):
    async def serve(reader, writer):
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            seen.append(head)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                         % (len(answer), answer))
            await writer.drain()
            if close_after_each:
                break
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_requests_go_over_a_kept_connection_and_once_more_when_the_kubelet_closed_it():
    async def scenario():
        seen: list[bytes] = []
        server, port = await kubelet(seen, close_after_each=True)
        pods = PodServe("test")
        for _ in range(3):  # each answer closes its connection: the next request finds it closed
            assert await pods.serve(("127.0.0.1", port), "/serve/default/web-a?port=80") == (200, {"pod": "web-a"})
        assert len(seen) == 3 and all(h.startswith(b"POST /serve/default/web-a?port=80 ") for h in seen)
        await pods.close()
        server.close()
    asyncio.run(scenario())


def test_a_kubelet_that_does_not_answer_is_unreachable_within_the_timeout():
    async def scenario():
        async def silent(reader, writer):
            await asyncio.sleep(5)
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        pods = PodServe("test", timeout=0.05)
        with pytest.raises(KubeletUnreachable):
            await pods.serve(("127.0.0.1", server.sockets[0].getsockname()[1]), "/serve/a/b?port=80")
        await pods.close()
        server.close()
    asyncio.run(scenario())


def test_answers_that_are_not_a_json_object_are_errors():
    assert decode(b"") == {} and decode(b'{"pod":"a"}') == {"pod": "a"}
    assert decode(b"not json") == {"error": "not json"} and decode(b"[1]") == {"error": "[1]"}


def test_the_network_agent_is_asked_and_only_a_drop_is_said():
    async def scenario():
        verdicts = iter([b'{"allowed":false,"dropped":{"direction":"ingress","policies":["a/deny"]}}',
                         b'{"allowed":true,"allowedBy":["a/allow"]}'])
        seen: list[bytes] = []

        async def serve(reader, writer):
            while True:
                try:
                    seen.append(await reader.readuntil(b"\r\n\r\n"))
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                body = next(verdicts)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        where = ("127.0.0.1", server.sockets[0].getsockname()[1])
        pods = PodServe("test")
        assert await pods.dropped(where, "10.244.1.5", 80) == {"direction": "ingress", "policies": ["a/deny"]}
        assert await pods.dropped(where, "10.244.1.5", 80) is None
        assert seen[0].startswith(b"GET /decide?target=10.244.1.5&port=80&protocol=TCP ")
        await pods.close()
        server.close()
        assert await pods.dropped(("127.0.0.1", 1), "10.244.1.5", 80) is None  # nobody there: nothing decided
    asyncio.run(scenario())
