"""Workqueue and runner on a fake clock: dedup, one worker per key, backoff, outcomes."""

from __future__ import annotations

import asyncio

from control import errors
from control.clock import FakeClock, settle
from control.client.expectations import Expectations
from control.client.runner import DONE, Runner, drop, requeue_after, retry
from control.client.workqueue import WorkQueue


def test_keys_are_deduplicated_and_requeued_after_done():
    async def scenario():
        queue = WorkQueue(clock=FakeClock())
        queue.add("a"), queue.add("a"), queue.add("b")
        assert len(queue) == 2
        key = await queue.get()
        queue.add(key)  # while processing: not handed out again
        assert len(queue) == 1 and await queue.get() == "b"
        queue.done("b")
        queue.done(key)
        assert await queue.get() == "a"

    asyncio.run(scenario())


def test_rate_limited_adds_back_off_exponentially():
    async def scenario():
        clock = FakeClock()
        queue = WorkQueue(clock=clock, base_delay=1, max_delay=8)
        delays = [queue.add_rate_limited("k") for _ in range(5)]
        assert delays == [1, 2, 4, 8, 8]
        await clock.advance(0.5)
        assert len(queue) == 0
        await clock.advance(0.5)
        assert len(queue) == 1
        queue.forget("k")
        assert queue.add_rate_limited("k") == 1

    asyncio.run(scenario())


def test_runner_outcomes():
    async def scenario():
        clock = FakeClock()
        queue = WorkQueue(clock=clock, base_delay=1)
        answers = {"ok": DONE, "later": requeue_after(5), "flaky": retry("busy"), "bad": drop("nonsense")}
        calls: list[str] = []

        async def reconcile(key):
            calls.append(key)
            if key == "conflict":
                raise errors.Conflict("stale")
            return answers[key]

        runner = Runner("test", reconcile, queue, [])
        for key in ["ok", "later", "flaky", "bad", "conflict"]:
            await runner.process(key)
        assert queue.failures("flaky") == 1 and queue.failures("conflict") == 1 and queue.failures("bad") == 0
        await clock.advance(1)
        assert sorted(queue._queue) == ["conflict", "flaky"]
        await clock.advance(4)
        assert "later" in queue._queue

    asyncio.run(scenario())


def test_runner_waits_for_sync_and_one_worker_per_key():
    class Synced:
        synced = asyncio.Event()

    async def scenario():
        queue = WorkQueue(clock=FakeClock())
        active, overlap = set(), []

        async def reconcile(key):
            if key in active:
                overlap.append(key)
            active.add(key)
            await asyncio.sleep(0)
            active.discard(key)

        informer = Synced()
        runner = Runner("test", reconcile, queue, [informer], workers=3)
        task = asyncio.create_task(runner.run())
        for _ in range(5):
            queue.add("same")
        await settle()
        informer.synced.set()
        for _ in range(10):
            queue.add("same")
            await settle(3)
        queue.shutdown()
        await asyncio.wait_for(task, 1)
        assert overlap == []

    asyncio.run(scenario())


def test_expectations_until_observed_or_expired():
    clock = FakeClock()
    exp = Expectations(clock=clock, ttl=300)
    exp.expect("rs", adds=2, deletes={"u1"})
    assert not exp.satisfied("rs")
    exp.created("rs"), exp.created("rs")
    assert not exp.satisfied("rs")
    exp.deleted("rs", "u1")
    assert exp.satisfied("rs")
    exp.expect("rs", adds=1)
    clock.t += 301
    assert exp.satisfied("rs")
