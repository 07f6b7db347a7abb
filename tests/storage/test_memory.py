"""Freed memory goes back to the system (glibc's malloc_trim), and the feed's housekeeping asks for it."""

from __future__ import annotations

import asyncio
import ctypes.util
import sys

import pytest

from control.storage import feed as feed_module
from control.storage import memory
from control.storage.feed import ChangeFeed


def rss_kib() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux") or "musl" in (ctypes.util.find_library("c") or ""),
                    reason="malloc_trim is glibc's")
def test_freed_bodies_are_given_back_to_the_system():
    bodies = [b"x" * 2000 + i.to_bytes(4, "big") for i in range(40_000)]  # 80 MB of C-allocated bodies
    keep = bodies[::50]  # a few survivors scattered through the heap keep it from shrinking by itself
    peak = rss_kib()
    del bodies
    assert memory.release_free_memory() is True
    assert rss_kib() < peak - 40_000, "most of the 80 MB went back although some bodies live on"
    assert len(keep) == 800


def test_without_malloc_trim_it_does_nothing(monkeypatch):
    monkeypatch.setattr(memory, "_malloc_trim", lambda: None)
    assert memory.release_free_memory() is False


@pytest.mark.django_db(transaction=True)
def test_the_feed_gives_memory_back_on_each_housekeeping_tick(monkeypatch, settings):
    settings.KK_COMPACT_INTERVAL = 0.001
    calls = []
    monkeypatch.setattr(feed_module, "release_free_memory", lambda: calls.append(1) or True)

    async def scenario():
        feed = ChangeFeed(loop=asyncio.get_running_loop(), start=0)
        ticking = asyncio.ensure_future(feed._compact())
        for _ in range(500):
            await asyncio.sleep(0.01)
            if len(calls) >= 2:
                break
        ticking.cancel()

    asyncio.run(scenario())
    assert len(calls) >= 2
