"""The brake on guessing codes, on a fake clock: per address, overall, only failures count, and the
wait is the time until the oldest counted failure leaves the window."""

from __future__ import annotations

from control.clock import FakeClock
from dashboard.throttle import Failures


def test_an_address_waits_after_its_tenth_failure_until_the_first_is_a_minute_old():
    clock = FakeClock()
    door = Failures(clock=clock, per_client=10, overall=100, window=60)
    for _ in range(9):
        door.failed("10.0.0.1")
        clock.t += 1
    assert door.retry_after("10.0.0.1") == 0
    door.failed("10.0.0.1")  # the tenth, 9 s after the first
    assert door.retry_after("10.0.0.1") == 51
    assert door.retry_after("10.0.0.2") == 0, "another address is not held back"
    clock.t += 51
    assert door.retry_after("10.0.0.1") == 0


def test_failures_spread_over_many_addresses_slow_everyone_down():
    clock = FakeClock()
    door = Failures(clock=clock, per_client=10, overall=20, window=60)
    for n in range(20):
        door.failed(f"10.0.1.{n}")
    assert door.retry_after("10.9.9.9") == 60
    clock.t += 60
    assert door.retry_after("10.9.9.9") == 0


def test_memory_stays_bounded_under_a_flood():
    door = Failures(clock=FakeClock(), per_client=10, overall=50, window=60)
    for n in range(10_000):
        door.failed(f"10.{n // 256 % 256}.{n % 256}.1")
    assert len(door._all) == 50 and sum(len(v) for v in door._by_client.values()) == 50
