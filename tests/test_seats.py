"""control.seats: a request holding several seats (a big body decoded off the loop) fills its own
flow sooner, waits its turn in order, and gives every seat back."""

from __future__ import annotations

import asyncio

import pytest

from control import errors, seats
from control.clock import FakeClock, settle

LEVEL = seats.PriorityLevel("global-default", per_flow=4, queue_length=3, queue_wait=1.0)


def test_body_seats_grow_with_the_body_up_to_the_flows_all(settings):
    settings.KK_BYTES_PER_SEAT = 1000
    assert seats.body_seats(LEVEL, 10) == 1
    assert seats.body_seats(LEVEL, 2500) == 3
    assert seats.body_seats(LEVEL, 10**9) == 4
    assert seats.body_seats(seats.PriorityLevel("exempt"), 10**9) == 0


def test_a_wide_request_waits_until_its_seats_are_free_and_no_later_waiter_passes_it():
    async def scenario():
        limiter = seats.Limiter(FakeClock())
        small = await limiter.acquire(LEVEL, "u")
        wide = asyncio.ensure_future(limiter.acquire(LEVEL, "u", 4))
        await settle()
        assert not wide.done()  # three free seats are not four
        later = asyncio.ensure_future(limiter.acquire(LEVEL, "u"))
        await settle()
        assert not later.done()  # it would fit, but the wide one came first
        other = await limiter.acquire(LEVEL, "v", 4)  # another flow is untouched
        small()
        await settle()
        release_wide = wide.result()
        assert limiter.in_flight("global-default", "u") == 4 and not later.done()
        release_wide()
        await settle()
        later.result()()
        other()
        assert limiter.flows == {}

    asyncio.run(scenario())


def test_a_wide_waiter_refused_on_the_clock_lets_the_next_in():
    async def scenario():
        clock = FakeClock()
        limiter = seats.Limiter(clock)
        held = await limiter.acquire(LEVEL, "u", 2)
        wide = asyncio.ensure_future(limiter.acquire(LEVEL, "u", 4))
        await settle()
        narrow = asyncio.ensure_future(limiter.acquire(LEVEL, "u", 1))
        await settle()
        await clock.advance(1.1)  # the wide one's second ends first: refused, and the narrow one fits
        with pytest.raises(errors.TooManyRequests):
            wide.result()
        await settle()
        narrow.result()()  # served before its own timer came: that timer leaves it be
        held()
        assert limiter.flows == {}

    asyncio.run(scenario())


def test_a_waiter_behind_a_refused_wide_one_gets_its_seat():
    async def scenario():
        clock = FakeClock()
        limiter = seats.Limiter(clock)
        held = await limiter.acquire(LEVEL, "u", 2)
        wide = asyncio.ensure_future(limiter.acquire(LEVEL, "u", 4))
        await settle()
        await clock.advance(0.5)
        narrow = asyncio.ensure_future(limiter.acquire(LEVEL, "u", 1))
        await settle()
        assert not narrow.done()
        await clock.advance(0.6)  # the wide one's second is over, the narrow one's is not
        with pytest.raises(errors.TooManyRequests):
            wide.result()
        await settle()
        narrow.result()()
        held()
        assert limiter.flows == {}

    asyncio.run(scenario())


def test_the_levels_are_made_once_per_sizing_and_follow_a_change_of_the_settings(settings):
    from control.seats import levels

    settings.KK_FAIR_INFLIGHT_PER_USER = 3
    first = levels()
    assert levels() is first and first["workload-low"].per_flow == 3 and first["system"].per_flow == 12
    settings.KK_FAIR_INFLIGHT_PER_USER = 5
    assert levels()["workload-low"].per_flow == 5
    settings.KK_FAIR_INFLIGHT_PER_USER = 3
    assert levels() is first
    with pytest.raises(TypeError):
        first["exempt"] = first["system"]  # type: ignore[index]  # shared by every request: read-only
