"""The framing helpers: lines rebuilt from pieces however they are cut, headers found by name."""

from __future__ import annotations

import asyncio

from control.client.framing import header, split_lines


async def pieces_of(*pieces: bytes):
    for piece in pieces:
        yield piece


def lines_of(*pieces: bytes) -> list[bytes]:
    async def collect():
        return [line async for line in split_lines(pieces_of(*pieces))]

    return asyncio.run(collect())


def test_lines_cut_anywhere_come_whole_and_blank_ones_are_skipped():
    assert lines_of(b'{"a"', b":1}\n", b"\n", b'{"b":2}\n{"c"', b":3}\n") == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
    assert lines_of(b"one\ntw", b"o") == [b"one", b"two"], "a last line without its newline still counts"
    assert lines_of() == []


def test_header_finds_a_lowercase_name():
    headers = [(b"content-type", b"application/json"), (b"user-agent", b"kubelet/node-1 (kube-kitchen)")]
    assert header(headers, b"user-agent") == "kubelet/node-1 (kube-kitchen)"
    assert header(headers, b"accept") == ""
