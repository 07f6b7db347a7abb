"""control.api.app's stream pump with control.serving.send_backlog's view: a client that stops reading has
its stream dropped once its unsent bytes stay over the bound for the stall time (fake clock); one
that catches up in time keeps its stream; a batch larger than the bound goes in pieces, each
checked; without the extension nothing changes."""

from __future__ import annotations

import asyncio

import pytest

from control.api import app
from control.api.responses import Stream
from control.clock import FakeClock, settle


class FakeBacklog:
    def __init__(self):
        self.bytes, self.aborted = 0, False

    def unsent(self) -> int:
        return self.bytes

    def abort(self) -> None:
        self.aborted = True


@pytest.fixture
def bounded(settings, monkeypatch):
    settings.KK_WATCH_MAX_BACKLOG_BYTES, settings.KK_WATCH_STALL_SECONDS = 100, 2.0
    clock = FakeClock()
    monkeypatch.setattr(app, "clock", clock)
    return clock


def pump(backlog, chunks: asyncio.Queue, sent: list):
    async def lines():
        while (chunk := await chunks.get()) is not None:
            yield chunk

    async def receive():
        await asyncio.Event().wait()

    async def send(message):
        sent.append(message)
        if backlog is not None and message["type"] == "http.response.body":
            backlog.bytes += len(message["body"])  # nobody reads: it all stays unsent

    return asyncio.ensure_future(app._send_stream(Stream(lines()), receive, send, backlog))


def test_a_client_that_stops_reading_is_dropped_after_the_stall(bounded):
    async def scenario():
        backlog, chunks, sent = FakeBacklog(), asyncio.Queue(), []
        task = pump(backlog, chunks, sent)
        for _ in range(3):
            chunks.put_nowait(b"x" * 60)  # 180 bytes unsent: over the bound of 100 at the third
        await settle()
        assert len(sent) == 1 + 2 and not task.done()  # the third waits for the client to catch up
        await bounded.advance(1.9)
        assert not task.done()
        await bounded.advance(0.2)
        assert task.done() and backlog.aborted
        assert not any(m.get("more_body") is False for m in sent)  # dropped, not ended cleanly

    asyncio.run(scenario())


def test_a_batch_larger_than_the_bound_is_sent_in_pieces_and_dropped_midway(bounded, settings):
    settings.KK_WATCH_MAX_BACKLOG_BYTES = 20_000  # pieces of 20 kB (never under 16 kB)

    async def scenario():
        backlog, chunks, sent = FakeBacklog(), asyncio.Queue(), []
        task = pump(backlog, chunks, sent)
        chunks.put_nowait(b"x" * 200_000)  # every change a stuck watcher waited for, as one batch
        await settle()
        assert [len(m["body"]) for m in sent[1:]] == [20_000, 20_000]  # the second put it over the bound
        await bounded.advance(2.1)
        assert task.done() and backlog.aborted and backlog.bytes == 40_000

    asyncio.run(scenario())


def test_a_client_that_catches_up_in_time_keeps_its_stream(bounded):
    async def scenario():
        backlog, chunks, sent = FakeBacklog(), asyncio.Queue(), []
        task = pump(backlog, chunks, sent)
        for _ in range(3):
            chunks.put_nowait(b"x" * 60)
        await settle()
        await bounded.advance(1.0)
        backlog.bytes = 0  # it read everything
        await bounded.advance(0.1)
        assert len(sent) == 1 + 3
        chunks.put_nowait(None)
        await settle()
        assert task.done() and not backlog.aborted and sent[-1]["more_body"] is False

    asyncio.run(scenario())


def test_without_the_extension_the_stream_is_pumped_as_before(bounded):
    async def scenario():
        chunks, sent = asyncio.Queue(), []
        task = pump(None, chunks, sent)
        for _ in range(50):
            chunks.put_nowait(b"x" * 60)
        chunks.put_nowait(None)
        await settle(200)
        assert task.done() and len(sent) == 1 + 50 + 1

    asyncio.run(scenario())
