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
