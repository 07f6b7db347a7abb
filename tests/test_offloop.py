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
    assert asyncio.run(offloop.run(os.nice, 0)) == min(19, os.nice(0) + offloop.WORKER_NICENESS)  # 19: the kernel's floor


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


def test_a_worker_ends_when_the_process_it_serves_is_killed(tmp_path):
    """SIGKILL leaves the pool no chance to stop its workers: each watches its parent's pid."""
    import subprocess
    import sys
    import time

    script = tmp_path / "served.py"
    script.write_text("import asyncio, os, django\n"
                      "if __name__ == '__main__':  # spawned workers import this file again\n"
                      "    os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'control.settings')\n"
                      "    django.setup()\n"
                      "    from control import offloop\n"
                      "    print(asyncio.run(offloop.run(os.getpid)), flush=True)\n"
                      "    os.kill(os.getpid(), 9)\n")
    served = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                            cwd=os.getcwd(), env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert served.returncode == -signal.SIGKILL, served.stderr
    worker = int(served.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(worker):
        time.sleep(0.1)
    assert not _alive(worker), "the worker outlived the process it served"


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
