"""control.offloop: the work runs in another process, one call per worker at a time, and a dead
worker is replaced."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from control import offloop


@pytest.fixture(autouse=True)
def fresh_workers():
    offloop.shutdown()
    yield
    offloop.shutdown()


def test_the_work_runs_in_another_process_at_a_lower_priority():
    assert asyncio.run(offloop.run(os.getpid)) != os.getpid()
    assert asyncio.run(offloop.run(os.nice, 0)) == os.nice(0) + offloop.WORKER_NICENESS


def test_a_worker_that_dies_raises_worker_lost_and_the_next_call_gets_a_new_one():
    async def scenario():
        worker = await offloop.run(os.getpid)
        with pytest.raises(offloop.WorkerLost):
            await offloop.run(os.kill, worker, signal.SIGKILL)
        assert await offloop.run(os.getpid) not in (worker, os.getpid())

    asyncio.run(scenario())


def test_calls_beyond_the_workers_wait_their_turn(settings):
    settings.KK_DECODE_WORKERS = 1

    async def scenario():
        turn = offloop._turn()
        first = asyncio.ensure_future(offloop.run(sum, [1, 2]))
        second = asyncio.ensure_future(offloop.run(sum, [3, 4]))
        await asyncio.sleep(0)
        assert turn.locked()  # the one worker is taken; the second call waits here, not in the pool
        assert await asyncio.gather(first, second) == [3, 7]

    asyncio.run(scenario())
