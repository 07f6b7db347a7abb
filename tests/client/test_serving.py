"""The node servers' framing on a loopback port, spoken to in raw bytes: bodies by Content-Length
and chunked, keep-alive, a body over the cap refused unread with 413, a malformed request line
answered 400 and closed, HttpError as the answer, a streamed (chunked) answer, and 401 for a caller
without the node-access secret."""

from __future__ import annotations

import asyncio
import json

from control.client import nodeaccess
from control.client.serving import MAX_BODY, Exchange, HttpError, NodeServer, Request


class Echo(NodeServer):
    """Answers what it got; `/fail` raises HttpError, `/stream` streams three pieces."""

    access_token = "echo-secret"  # what callers present (a real server reads the data folder's)

    def __init__(self) -> None:
        self.seen: list[Request] = []

    async def answer(self, request: Request, exchange: Exchange) -> None:
        self.seen.append(request)
        if request.target == "/fail":
            raise HttpError(404, "no such thing")
        if request.target == "/stream":
            await exchange.start(200, "application/x-ndjson")
            for piece in (b'{"a":', b'1}\n{"b"', b":2}\n"):
                await exchange.send(piece)
            return await exchange.end()
        body = {"method": request.method, "target": request.target, "size": len(request.body),
                "body": request.body.decode()}
        await exchange.respond(200, "application/json", json.dumps(body).encode())


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    lines = head.split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:]) if k}
    if "content-length" in headers:
        return int(lines[0].split(" ")[1]), headers, await reader.readexactly(int(headers["content-length"]))
    body = b""
    while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
        body += await reader.readexactly(size)
        await reader.readexactly(2)
    await reader.readexactly(2)
    return int(lines[0].split(" ")[1]), headers, body


def serve(scenario):
    async def run():
        server = Echo()
        port = await server.start("127.0.0.1", 0)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await asyncio.wait_for(scenario(server, reader, writer), 5)
            writer.close()
        finally:
            await server.close()

    asyncio.run(run())


def test_bodies_by_length_and_chunked_are_read_whole_on_one_kept_connection():
    async def scenario(server, reader, writer):
        writer.write(b"POST /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\nContent-Length: 5\r\n\r\nhello")
        status, headers, body = await read_answer(reader)
        assert status == 200 and json.loads(body)["body"] == "hello"
        assert headers["connection"] == "keep-alive"
        writer.write(b"PUT /b HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n")
        assert json.loads((await read_answer(reader))[2]) == {"method": "PUT", "target": "/b", "size": 7,
                                                              "body": "abcdefg"}
        writer.write(b"GET /c?x=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\n\r\n")
        assert json.loads((await read_answer(reader))[2])["target"] == "/c?x=1"
        assert [r.target for r in server.seen] == ["/a", "/b", "/c?x=1"], "three requests, one connection"

    serve(scenario)


def test_a_head_request_gets_the_length_without_the_body_and_the_connection_stays():
    async def scenario(server, reader, writer):
        writer.write(b"HEAD /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\n\r\n")
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        assert head.startswith("HTTP/1.1 200 ") and "content-length: " in head.lower()
        status, _, body = await read_answer(reader)
        assert status == 200 and json.loads(body)["target"] == "/b", "the next answer follows at once"

    serve(scenario)


def test_a_client_that_asks_to_close_is_answered_then_closed():
    async def scenario(server, reader, writer):
        writer.write(b"GET /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\nConnection: close\r\n\r\n")
        status, headers, _ = await read_answer(reader)
        assert status == 200 and headers["connection"] == "close"
        assert await reader.read() == b""

    serve(scenario)


def test_a_body_over_the_cap_is_refused_with_413_and_the_connection_closed_unread():
    async def scenario(server, reader, writer):
        writer.write(f"POST /big HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode()
                     + b"x" * 1000)
        status, headers, body = await read_answer(reader)
        assert status == 413 and headers["connection"] == "close" and "over" in json.loads(body)["error"]
        assert await reader.read() == b"", "closed without waiting for the rest"
        assert server.seen == [], "never handed to the server"

    serve(scenario)


def test_a_chunked_body_that_grows_over_the_cap_is_refused_too():
    async def scenario(server, reader, writer):
        piece = b"x" * (64 * 1024)
        writer.write(b"POST /big HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(MAX_BODY // len(piece) + 1):
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        assert (await read_answer(reader))[0] == 413
        assert server.seen == []

    serve(scenario)


def test_a_malformed_request_line_is_answered_400_and_closed():
    async def scenario(server, reader, writer):
        writer.write(b"THIS IS NOT HTTP\r\n\r\n")
        status, headers, body = await read_answer(reader)
        assert status == 400 and headers["connection"] == "close" and "malformed" in json.loads(body)["error"]
        assert await reader.read() == b""

    serve(scenario)


def test_an_http_1_1_request_without_host_is_400_as_go_servers_answer():
    async def scenario(server, reader, writer):
        writer.write(b"GET /a HTTP/1.1\r\n\r\n")
        assert (await read_answer(reader))[0] == 400

    serve(scenario)


def test_an_http_error_is_the_answer_and_the_connection_stays():
    async def scenario(server, reader, writer):
        writer.write(b"GET /fail HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\n\r\n")
        status, _, body = await read_answer(reader)
        assert (status, json.loads(body)) == (404, {"error": "no such thing"})
        writer.write(b"GET /after HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\n\r\n")
        assert (await read_answer(reader))[0] == 200

    serve(scenario)


def test_a_streamed_answer_is_chunked_piece_by_piece():
    async def scenario(server, reader, writer):
        writer.write(b"GET /stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert b"Transfer-Encoding: chunked" in head
        assert await reader.readuntil(b"\r\n0\r\n\r\n") == b'5\r\n{"a":\r\n7\r\n1}\n{"b"\r\n4\r\n:2}\n\r\n0\r\n\r\n'

    serve(scenario)


def test_closing_the_server_ends_the_connections_still_open():
    async def scenario(server, reader, writer):
        writer.write(b"GET /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\n\r\n")
        await read_answer(reader)
        await server.close()
        assert await reader.read() == b""

    serve(scenario)


def test_a_request_without_the_node_access_secret_is_401_and_never_reaches_answer():
    async def scenario(server, reader, writer):
        for credential in (b"", b"Authorization: Bearer echo-secreT\r\n", b"Authorization: Bearer \r\n",
                           b"Authorization: Basic echo-secret\r\n",
                           b"Authorization: Bearer nope\r\nAuthorization: Bearer echo-secret\r\n"):
            writer.write(b"POST /a HTTP/1.1\r\nHost: x\r\n" + credential + b"Content-Length: 2\r\n\r\n{}")
            status, headers, body = await read_answer(reader)
            assert status == 401, credential
            assert headers["connection"] == "keep-alive"
            assert json.loads(body) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
        assert server.seen == []
        writer.write(b"GET /a HTTP/1.1\r\nHost: x\r\nauthorization: bearer echo-secret\r\n\r\n")
        assert (await read_answer(reader))[0] == 200, "the scheme is case-insensitive, as upstream's"
        assert [r.target for r in server.seen] == ["/a"]

    serve(scenario)


def test_open_paths_answer_anyone_and_only_they():
    class Health(Echo):
        open_paths = frozenset({"/healthz"})

    async def scenario():
        server = Health()
        port = await server.start("127.0.0.1", 0)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz?verbose=1 HTTP/1.1\r\nHost: x\r\n\r\n")
            assert (await read_answer(reader))[0] == 200
            writer.write(b"GET /healthz/more HTTP/1.1\r\nHost: x\r\n\r\n")
            assert (await read_answer(reader))[0] == 401
            writer.close()
        finally:
            await server.close()

    asyncio.run(scenario())


def test_a_server_expects_its_data_folders_secret_from_the_start():
    class Plain(Echo):
        access_token = ""

    async def scenario():
        server = Plain()
        port = await server.start("127.0.0.1", 0)
        try:
            assert server.access_token == nodeaccess.token() and len(server.access_token) >= 32
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer echo-secret\r\n\r\n")
            assert (await read_answer(reader))[0] == 401
            writer.write(f"GET /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {nodeaccess.token()}\r\n\r\n".encode())
            assert (await read_answer(reader))[0] == 200
            writer.close()
        finally:
            await server.close()

    asyncio.run(scenario())
