"""The lean pool against scripted loopback servers that write exact bytes: answers by
Content-Length and chunked, keep-alive reuse, a server that closes mid-answer (ServerUnreachable,
the connection not reused), an idle connection the server closed is not sent on, timeouts, and a
stream whose lines are cut across chunks."""

from __future__ import annotations

import asyncio
import ssl

import pytest

from control.client.lean import ConnectionPool, ServerUnreachable


class Scripted:
    """A server that answers the n-th request (counted over all connections) with answers[n];
    None closes the connection instead of answering, ("cut", data) writes data then closes,
    "hang" never answers."""

    def __init__(self, answers: list):
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0
        self.hang = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), 0)
                self.requests.append(head + await reader.readexactly(length))
                answer = self.answers[len(self.requests) - 1]
                if answer is None:
                    break
                if answer == "hang":
                    await self.hang.wait()
                    break
                if isinstance(answer, tuple):
                    writer.write(answer[1])
                    await writer.drain()
                    break
                writer.write(answer)
                await writer.drain()
        except asyncio.IncompleteReadError:
            pass
        writer.close()

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"


def ok(body: bytes, *extra: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + b"".join(extra) + f"Content-Length: {len(body)}\r\n\r\n".encode() + body


CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"4\r\n{\"a\"\r\n6\r\n:1}\n{\"\r\n6\r\nb\":2}\n\r\n0\r\n\r\n")


def run(scenario):
    asyncio.run(asyncio.wait_for(scenario(), 5))


def test_answers_by_length_and_chunked_come_whole_and_the_connection_is_kept():
    async def scenario():
        server = Scripted([ok(b'{"x":1}'), CHUNKED, ok(b"")])
        pool = ConnectionPool(await server.start(), "test/1")
        assert await pool.request("GET", "/a?b=c", None, "application/json", 5) == (200, b'{"x":1}')
        assert await pool.request("POST", "/b", b'{"y":2}', "application/merge-patch+json", 5) == (
            200, b'{"a":1}\n{"b":2}\n')
        assert await pool.request("DELETE", "/c", None, "application/json", 5) == (200, b"")
        assert server.connections == 1 and len(pool._idle) == 1, "one connection, kept for all three"
        first, second, third = (r.decode() for r in server.requests)
        assert first.startswith("GET /a?b=c HTTP/1.1\r\n") and "user-agent: test/1" in first.lower()
        assert "content-type: application/merge-patch+json" in second.lower() and second.endswith('{"y":2}')
        assert "content-length: 0" in third.lower(), "a DELETE without a body says so"
        await pool.close()

    run(scenario)


def test_a_server_that_closes_mid_answer_is_unreachable_and_its_connection_not_reused():
    async def scenario():
        cut = ok(b'{"x":1}')[:-3]
        server = Scripted([("cut", cut), ok(b"{}")])
        pool = ConnectionPool(await server.start(), "test/1")
        with pytest.raises(ServerUnreachable):
            await pool.request("GET", "/a", None, "application/json", 5)
        assert pool._idle == []
        assert await pool.request("GET", "/b", None, "application/json", 5) == (200, b"{}")
        assert server.connections == 2, "the broken connection was not used again"
        await pool.close()

    run(scenario)


def test_a_server_that_closes_before_answering_and_one_that_refuses_are_unreachable():
    async def scenario():
        server = Scripted([None])
        pool = ConnectionPool(await server.start(), "test/1")
        with pytest.raises(ServerUnreachable):
            await pool.request("GET", "/a", None, "application/json", 5)
        server.server.close()
        await server.server.wait_closed()
        with pytest.raises(ServerUnreachable):
            await pool.request("GET", "/a", None, "application/json", 5)

    run(scenario)


def test_an_idle_connection_the_server_closed_is_replaced_before_sending():
    async def scenario():
        server = Scripted([ok(b"1", b"Connection: keep-alive\r\n"), ok(b"2")])
        pool = ConnectionPool(await server.start(), "test/1")
        await pool.request("GET", "/a", None, "application/json", 5)
        for wire in list(pool._idle):  # the server's FIN, as when its idle timeout passed
            wire.reader.feed_eof()
        assert await pool.request("POST", "/b", b"{}", "application/json", 5) == (200, b"2")
        assert server.connections == 2

    run(scenario)


def test_a_connection_the_server_asks_to_close_is_not_kept():
    async def scenario():
        server = Scripted([ok(b"1", b"Connection: close\r\n"), ok(b"2")])
        pool = ConnectionPool(await server.start(), "test/1")
        await pool.request("GET", "/a", None, "application/json", 5)
        assert pool._idle == []
        await pool.request("GET", "/b", None, "application/json", 5)
        assert server.connections == 2

    run(scenario)


def test_no_answer_in_time_is_unreachable():
    async def scenario():
        server = Scripted(["hang"])
        pool = ConnectionPool(await server.start(), "test/1")
        with pytest.raises(ServerUnreachable, match="in time"):
            await pool.request("GET", "/a", None, "application/json", 0.05)
        assert pool._idle == []
        server.hang.set()

    run(scenario)


def test_a_stream_yields_lines_cut_across_chunks_and_keeps_the_connection_when_read_to_the_end():
    async def scenario():
        lines = b'{"type":"ADDED"}\n{"type":"MOD' + b'IFIED"}\n\n{"type":"DELETED"}\n'
        pieces = [lines[:7], lines[7:30], lines[30:31], lines[31:]]
        body = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in pieces) + b"0\r\n\r\n"
        server = Scripted([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body, ok(b"{}")])
        pool = ConnectionPool(await server.start(), "test/1")
        async with pool.stream("GET", "/w?watch=1", read_timeout=5) as answer:
            assert answer.status == 200
            got = [line async for line in answer.lines()]
        assert got == [b'{"type":"ADDED"}', b'{"type":"MODIFIED"}', b'{"type":"DELETED"}']
        assert len(pool._idle) == 1
        await pool.request("GET", "/b", None, "application/json", 5)
        assert server.connections == 1

    run(scenario)


def test_a_stream_left_early_or_cut_closes_its_connection():
    async def scenario():
        endless = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab\n\r\n"
        server = Scripted([endless, endless])
        pool = ConnectionPool(await server.start(), "test/1")
        async with pool.stream("GET", "/w", read_timeout=5) as answer:
            async for line in answer.lines():
                assert line == b"ab"
                break
        assert pool._idle == [], "left mid-answer: not reusable"
        with pytest.raises(ServerUnreachable):
            async with pool.stream("GET", "/w", read_timeout=0.05) as answer:
                [line async for line in answer.lines()]
        assert pool._idle == []

    run(scenario)


def test_a_pool_makes_its_tls_context_once_and_none_for_plain_http():
    secure = ConnectionPool("https://127.0.0.1:6443", "test")
    context = secure._tls_context()
    assert context is not None and secure._tls_context() is context
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert ConnectionPool("http://127.0.0.1:8000", "test")._tls_context() is None
