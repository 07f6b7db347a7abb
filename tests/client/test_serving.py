import asyncio

import pytest

from control.client.serving import LAST_CHUNK, MAX_BODY, chunk, parse_head, read_request, response_head, wants_close


def test_a_head_gives_method_target_and_lowercase_headers():
    method, target, headers = parse_head(b"POST /serve/default/web?port=80 HTTP/1.1\r\nHost: x\r\n"
                                         b"Content-Length: 0\r\nConnection: Close\r\n\r\n")
    assert (method, target) == ("POST", "/serve/default/web?port=80")
    assert headers["content-length"] == "0" and wants_close(headers)


def test_answers_are_framed_by_length_or_chunked():
    assert response_head(200, "application/json", length=2, close=False) == (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n")
    assert b"Transfer-Encoding: chunked" in response_head(503, "text/plain", length=None, close=True)
    assert b"503 Service Unavailable" in response_head(503, "text/plain", length=None, close=True)
    assert chunk(b"hello") + LAST_CHUNK == b"5\r\nhello\r\n0\r\n\r\n"


def _reader(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


def test_a_body_is_read_and_dropped_so_the_next_request_follows():
    async def two():
        reader = _reader(b"POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\n\r\n")
        return [(await read_request(reader))[:2], (await read_request(reader))[:2]]

    assert asyncio.run(two()) == [("POST", "/a"), ("GET", "/b")]


def test_a_body_over_the_limit_is_refused_unread():
    async def oversized():
        await read_request(_reader(f"POST /a HTTP/1.1\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode()))

    with pytest.raises(ValueError):
        asyncio.run(oversized())
