"""CPU-heavy pure work (decoding request bodies) run in a worker process, never on the event loop.

Guarantees:
- `run(fn, *args)` runs `fn` in one of KK_DECODE_WORKERS worker processes: the event loop and the
  database thread never spend a moment on it, and, being another process, it does not contend for
  the serving process's interpreter lock either. At most KK_DECODE_WORKERS calls are handed to the
  workers at once; the others wait for their turn, in order.
- `fn` and its arguments and result must be plain (picklable) values; `fn` must not raise.
- A worker that dies (killed, out of memory) is replaced: its call raises `WorkerLost`, the next
  call gets a fresh worker. `shutdown()` stops the workers (the hub's lifespan.shutdown, tests).
- Workers are spawned (a fresh interpreter), never forked from a process with threads running,
  and run at a lower CPU priority (nice +10) than the process they serve. A worker ends when the
  process it serves is gone, however it went (killed too: a watch on its parent's pid,
  `control.parentwatch`, within a second).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from django.conf import settings

log = logging.getLogger(__name__)
# On a busy machine the serving process comes first: a worker decoding a sender's 3 MB of YAML
# takes a core only when serving leaves one.
WORKER_NICENESS = 10

_pool: ProcessPoolExecutor | None = None
_turns: asyncio.Semaphore | None = None
_turns_loop: asyncio.AbstractEventLoop | None = None


class WorkerLost(Exception):
    """The worker running a call died before answering."""


def _worker_start() -> None:
    """In each worker, first: lower its priority, and end it with the process it serves."""
    os.nice(WORKER_NICENESS)
    from control.parentwatch import watch_parent_in_thread

    # Not prctl's signal: that follows the *thread* that started the worker, which may end first.
    watch_parent_in_thread(os.getppid(), lambda: os._exit(0))


def _executor() -> ProcessPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(max_workers=settings.KK_DECODE_WORKERS,
                                    mp_context=multiprocessing.get_context("spawn"),
                                    initializer=_worker_start)
    return _pool


def _turn() -> asyncio.Semaphore:
    global _turns, _turns_loop
    loop = asyncio.get_running_loop()
    if _turns is None or _turns_loop is not loop:  # one per event loop (tests run several)
        _turns, _turns_loop = asyncio.Semaphore(settings.KK_DECODE_WORKERS), loop
    return _turns


async def run(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` in a worker process, waiting for a free worker first."""
    async with _turn():
        try:
            return await asyncio.get_running_loop().run_in_executor(_executor(), fn, *args)
        except BrokenProcessPool:
            log.warning("a worker process died running %s; the next call starts another", fn.__name__)
            shutdown()
            raise WorkerLost(fn.__name__) from None


def shutdown() -> None:
    """Stop the worker processes."""
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None
