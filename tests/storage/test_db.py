"""The database thread: calls run in order, each atomic, and a caller that went away harms nobody."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.db import transaction

from control.storage import db

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_cancelled_call_is_skipped_and_the_thread_keeps_serving():
    gate = threading.Event()
    blocker = db.submit(gate.wait, 5)
    abandoned = db.submit(lambda: "never")
    abandoned.cancel()
    gate.set()
    assert blocker.result(timeout=5) is True
    assert db.submit(lambda: 41 + 1).result(timeout=5) == 42


def test_a_failing_call_does_not_disturb_its_batch():
    gate = threading.Event()
    db.submit(gate.wait, 5)
    first = db.submit(lambda: "first")
    broken = db.submit(lambda: 1 / 0)
    last = db.submit(lambda: "last")
    gate.set()
    assert first.result(timeout=5) == "first" and last.result(timeout=5) == "last"
    with pytest.raises(ZeroDivisionError):
        broken.result(timeout=5)


def test_a_call_submitted_while_a_batch_runs_joins_its_commit():
    committed: list[str] = []
    running, gate = threading.Event(), threading.Event()

    def first() -> str:
        transaction.on_commit(lambda: committed.append("first"))
        running.set()
        gate.wait(5)
        return "first"

    earlier = db.submit(first)
    assert running.wait(5)
    joiner = db.submit(lambda: list(committed))  # queued while `first` runs
    gate.set()
    assert earlier.result(timeout=5) == "first"
    assert joiner.result(timeout=5) == [], "it ran before the commit of `first`: the two share one commit"
    assert committed == ["first"]


def test_run_db_from_the_event_loop():
    assert asyncio.run(db.run_db(lambda a, b: a * b, 6, 7)) == 42


def test_run_db_answers_a_batch_in_one_hand_off_and_skips_a_cancelled_call():
    ran: list[str] = []
    gate = threading.Event()

    async def main() -> list:
        loop = asyncio.get_running_loop()
        handed = []
        original = loop.call_soon_threadsafe

        def counting(callback, *args):
            handed.append(callback)
            return original(callback, *args)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        blocker = db.submit(gate.wait, 5)  # holds the thread so the next calls queue up as one batch
        calls = [asyncio.ensure_future(db.run_db(lambda i=i: ran.append(f"call {i}") or i)) for i in range(3)]
        doomed = asyncio.ensure_future(db.run_db(lambda: ran.append("doomed")))
        failing = asyncio.ensure_future(db.run_db(lambda: 1 / 0))
        await asyncio.sleep(0)  # every call is queued
        doomed.cancel()
        await asyncio.sleep(0)
        gate.set()
        answers = await asyncio.gather(*calls)
        with pytest.raises(ZeroDivisionError):
            await failing
        assert blocker.result(timeout=5) is True
        return [answers, len(handed)]

    answers, hand_offs = asyncio.run(main())
    assert answers == [0, 1, 2]
    assert ran == ["call 0", "call 1", "call 2"], "the cancelled call must not run"
    assert hand_offs == 1, "one batch, one loop: one hand-off"


# --- serve_on: the loop's own thread as the one writer (runhub on SQLite) ----------------------

@pytest.fixture
def on_the_loop():
    """Runs a coroutine on a fresh loop whose thread is the writer; back to the thread after."""
    def run(coroutine_function):
        async def main():
            assert db.serve_on(asyncio.get_running_loop()) is True
            return await coroutine_function()
        try:
            return asyncio.run(main())
        finally:
            db.serve_on(None)
    return run


def test_on_the_loop_a_call_runs_on_its_thread_with_no_running_loop_in_sight(on_the_loop):
    seen = {}

    def call() -> int:
        seen["thread"] = threading.get_ident()
        seen["loop"] = asyncio.events._get_running_loop()
        from django.db import connection
        seen["in_transaction"] = connection.in_atomic_block
        return 42

    async def main():
        seen["loop thread"] = threading.get_ident()
        answer = await db.run_db(call)
        seen["loop afterwards"] = asyncio.events._get_running_loop()
        return answer

    assert on_the_loop(main) == 42
    assert seen["thread"] == seen["loop thread"], "it ran on another thread"
    assert seen["loop"] is None, "Django would refuse the database inside a running loop"
    assert seen["in_transaction"], "a call runs inside its batch's transaction"
    assert seen["loop afterwards"] is not None


def test_on_the_loop_calls_of_one_step_share_one_commit_and_a_failing_one_disturbs_none(on_the_loop):
    committed: list[str] = []
    batches: list[int] = []
    original = db._run_batch

    def counting(batch, *more):
        batches.append(len(batch))
        return original(batch, *more)

    def call(i: int) -> int:
        transaction.on_commit(lambda: committed.append(f"call {i}"))
        assert committed == [], "an earlier call of the batch was committed on its own"
        return i

    async def main():
        db._run_batch = counting
        try:
            calls = [asyncio.ensure_future(db.run_db(call, i)) for i in range(3)]
            failing = asyncio.ensure_future(db.run_db(lambda: 1 / 0))
            answers = await asyncio.gather(*calls)
            with pytest.raises(ZeroDivisionError):
                await failing
            return answers
        finally:
            db._run_batch = original

    assert on_the_loop(main) == [0, 1, 2]
    assert len(batches) == 1, "the calls of one loop step are one batch"
    assert committed == ["call 0", "call 1", "call 2"], "each answered after the one commit, in order"


def test_on_the_loop_a_batch_ends_after_its_time_and_the_loop_serves_before_the_next(on_the_loop, monkeypatch):
    from control.clock import FakeClock

    clock = FakeClock()
    monkeypatch.setattr(db, "clock", clock)
    order: list[str] = []

    def call(i: int) -> None:
        order.append(f"call {i}")
        clock.t += 0.015  # each call takes 15 ms: the second one ends the 20 ms batch

    async def main():
        loop = asyncio.get_running_loop()
        calls = [asyncio.ensure_future(db.run_db(call, i)) for i in range(3)]
        await asyncio.sleep(0)  # all three due at the next step
        loop.call_soon(lambda: order.append("the loop"))  # ready after the first batch was asked for
        await asyncio.gather(*calls)

    on_the_loop(main)
    assert order == ["call 0", "call 1", "the loop", "call 2"]


def test_on_the_loop_a_cancelled_call_does_not_run(on_the_loop):
    ran: list[str] = []

    async def main():
        doomed = asyncio.ensure_future(db.run_db(lambda: ran.append("doomed")))
        kept = asyncio.ensure_future(db.run_db(lambda: ran.append("kept") or "kept"))
        await asyncio.sleep(0)  # both queued for the next step
        doomed.cancel()
        return await kept

    assert on_the_loop(main) == "kept"
    assert ran == ["kept"]


def test_on_the_loop_another_threads_submit_runs_on_the_loop_and_the_loops_own_at_once(on_the_loop):
    seen: dict[str, int] = {}

    async def main():
        seen["loop"] = threading.get_ident()
        from_thread = await asyncio.to_thread(lambda: db.submit(threading.get_ident).result(timeout=5))
        here = db.submit(threading.get_ident)  # a synchronous caller on the loop's thread
        assert here.done(), "the loop's own thread cannot wait for itself: it runs at once"
        return from_thread, here.result()

    from_thread, here = on_the_loop(main)
    assert from_thread == seen["loop"] and here == seen["loop"]


def test_after_serve_on_none_calls_go_to_the_database_thread_again(on_the_loop):
    on_the_loop(lambda: db.run_db(lambda: None))
    caller = threading.get_ident()
    assert db.submit(threading.get_ident).result(timeout=5) != caller
    assert asyncio.run(db.run_db(threading.get_ident)) != caller


def test_serve_on_leaves_postgresql_on_its_thread(monkeypatch):
    monkeypatch.setattr(db, "_on_postgresql", lambda: True)
    loop = asyncio.new_event_loop()
    try:
        assert db.serve_on(loop) is False
        assert db._home is None
    finally:
        loop.close()
