"""The one clock (control/clock.py): fake time moves only when told, timers fire in deadline order,
and nothing outside the clock module and the entry points reads or sleeps on the real clock."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import time
from pathlib import Path

from control import clock as clocks
from control.clock import REAL, FakeClock, RealClock

ROOT = Path(__file__).resolve().parent.parent
# Entry points may use the real clock directly: they are where the real clock is chosen.
ENTRY_POINTS = (
    "control/clock.py",
    "control/management/commands/",  # runcluster, runhub, runcomponent: process start-up and shutdown
    "control/restaurant/install.py",  # runcluster's synchronous start-up step (waits for CRDs before serving)
)
STRAY = re.compile(r"\btime\.(time|monotonic|perf_counter|sleep)\b|\bfrom time import\b|\basyncio\.sleep\((?!0\))")


def stray_clock_uses(root: Path, packages: tuple[str, ...] = ("control", "dashboard")) -> list[str]:
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative.startswith(ENTRY_POINTS):
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                if STRAY.search(code):
                    found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_logic_reads_or_sleeps_on_the_real_clock():
    assert stray_clock_uses(ROOT) == []


def test_the_scan_finds_a_planted_real_clock(tmp_path):
    (tmp_path / "control" / "kubelet").mkdir(parents=True)
    (tmp_path / "control" / "management" / "commands").mkdir(parents=True)
    (tmp_path / "control" / "kubelet" / "x.py").write_text(
        "import time\nstarted = time.monotonic()\nawait asyncio.sleep(0)\nawait asyncio.sleep(1.5)\n"
        "now = time.time  # default\nlatency = time.perf_counter() - started\n")
    (tmp_path / "control" / "management" / "commands" / "run.py").write_text("time.sleep(1)\n")
    assert stray_clock_uses(tmp_path, ("control",)) == [
        "control/kubelet/x.py:2: started = time.monotonic()",
        "control/kubelet/x.py:4: await asyncio.sleep(1.5)",
        "control/kubelet/x.py:5: now = time.time  # default",
        "control/kubelet/x.py:6: latency = time.perf_counter() - started",
    ]


def test_the_clock_has_one_home():
    assert importlib.util.find_spec("control.client.clock") is None, "control.clock is the only clock module"
    assert isinstance(clocks.REAL, RealClock)


def test_real_clock_reads_wall_and_monotonic_time():
    before = time.time()
    assert before - 1 <= REAL.now() <= time.time() + 1
    first = REAL.monotonic()
    assert REAL.monotonic() >= first


def test_fake_clock_moves_only_when_told_and_wall_and_monotonic_together():
    clock = FakeClock(1000.0)
    assert clock.now() == clock.monotonic() == 1000.0
    asyncio.run(clock.advance(2.5))
    assert clock.now() == clock.monotonic() == 1002.5
    clock.t = 2000.0
    assert clock.monotonic() == 2000.0


def test_fake_timers_fire_in_deadline_order_at_their_own_time():
    clock, fired = FakeClock(0.0), []

    async def scenario() -> None:
        clock.call_later(3, lambda: fired.append(("c", clock.now())))
        clock.call_later(1, lambda: fired.append(("a", clock.now())))
        clock.call_later(2, lambda: fired.append(("b", clock.now())))
        await clock.advance(1.5)
        assert fired == [("a", 1.0)] and clock.pending() == 2
        await clock.advance(10)

    asyncio.run(scenario())
    assert fired == [("a", 1.0), ("b", 2.0), ("c", 3.0)] and clock.now() == 11.5 and clock.pending() == 0


def test_fake_sleep_wakes_when_time_reaches_it():
    clock = FakeClock(0.0)

    async def scenario() -> list[float]:
        woke: list[float] = []

        async def sleeper() -> None:
            await clock.sleep(5)
            woke.append(clock.now())

        task = asyncio.ensure_future(sleeper())
        await clocks.settle()
        await clock.advance(4.9)
        assert woke == []
        await clock.advance(0.2)
        await task
        return woke

    assert asyncio.run(scenario()) == [5.0]
