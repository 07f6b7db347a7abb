"""The hub's one writer: every store call of this process runs on ONE long-lived thread (the
database thread, or with `serve_on` the event loop's own), and calls that queue up while a commit
is under way share the next commit (group commit).

Guarantees:
- One persistent database connection per hub process: no connection set-up per request, no two
  threads of one process fighting over SQLite's write lock.
- Calls run in the order they were submitted. Each call is atomic on its own (a savepoint):
  a failing call leaves no trace and does not disturb the others in its batch. Calls submitted
  while a batch runs join it (up to MAX_BATCH) before it commits.
- A call's answer is released only after the transaction holding it has committed; if that
  commit fails, every call of the batch fails. Listeners hear of the writes after the commit,
  in revision order (Django's on_commit), exactly as with one transaction per write.
- On the database thread, the event loop never blocks on the database. `run_db`'s answers reach
  their event loop in one hand-off per batch and loop (not a thread-safe Future, its Condition and
  a wake-up per call); a call whose awaiting task was cancelled before it ran is not run, as with
  `submit`.

- `run_read` runs a read-only call on a second thread with a connection of its own when the
  database is PostgreSQL, so a read of what is already committed (the change feed filling a gap
  another hub's commit left, a watcher behind memory) never waits behind this hub's queued writes
  or their wait for the revision row another hub holds. With SQLite (one hub, and every commit
  already local) it is `run_db`.

- `serve_on(loop)` (the hub, `runhub`, on SQLite) moves that one writer onto the loop's own thread:
  the calls queued during one step of the loop run together, as one batch, between two steps,
  with the running loop hidden (they see a plain synchronous thread, as on the database thread:
  Django's thread connection, no async-context checks). The order, the atomicity of each call,
  the group commit and the answers after commit are as above. A call from another thread is put
  on that loop (run there once it runs); one from the loop's thread outside a coroutine (a
  synchronous `submit`) runs at once. The loop then does block on the database, for one batch at
  a time: it takes calls until it has run STEP_SECONDS (20 ms) or MAX_BATCH calls, and the loop
  reads and writes its sockets between two batches. On PostgreSQL it does nothing: there a write
  may wait for the revision row another hub holds, which must never stop the loop.

Group commit is etcd's own trick (its backend batches transactions): with eight clients the
fsync of one commit covers several writes instead of each paying for its own.

Why the loop's thread on SQLite: a write's statements each release the GIL (the driver lets go
around every SQLite call), and the database thread then waited for the loop thread to give it back.
While 1,000 pods came up it was busy 100 % of the time at 35 % CPU, and every write waited ~85 ms
in its queue; on the loop's thread the same writes wait ~45 ms and the hub spends 3-5 % less CPU
(no hand-offs between the two threads).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from django.conf import settings
from django.db import DatabaseError, InterfaceError, close_old_connections, connection, transaction

from control.clock import REAL as clock  # injected time: a test may replace `db.clock`
from control.storage import savepoints

log = logging.getLogger(__name__)

T = TypeVar("T")
_Call = tuple[Any, Callable[..., Any], tuple]  # (Future or _LoopCall, fn, args)
MAX_BATCH = 64
# serve_on: a batch on the loop's thread takes no more calls once it has run this long, so the loop
# serves its sockets (watches, /healthz, other attendees) at least this often between batches.
STEP_SECONDS = 0.02

_calls: "queue.SimpleQueue[_Call]" = queue.SimpleQueue()
_thread: threading.Thread | None = None
_lock = threading.Lock()
_reader: "ThreadPoolExecutor | None" = None
# serve_on: the loop whose thread runs the calls (None: the database thread does), that thread,
# the calls due at its next step, and whether that step is already asked for.
_home: "asyncio.AbstractEventLoop | None" = None
_home_thread = 0
_due: "deque[_Call]" = deque()
_step_asked = False


def _joiners(room: int) -> list[_Call]:
    """Calls queued meanwhile, up to `room`, whose callers still wait."""
    out = []
    while len(out) < room:
        try:
            call = _calls.get_nowait()
        except queue.Empty:
            break
        if call[0].set_running_or_notify_cancel():
            out.append(call)
    return out


def _run_batch(batch: list[_Call], more: Callable[[int], list[_Call]] = _joiners) -> None:
    """Run `batch`, and the calls `more(room)` gives while there is room, in one transaction."""
    # A call whose caller went away (its request was cancelled) is not run at all.
    batch = [call for call in batch if call[0].set_running_or_notify_cancel()]
    if not batch:
        return
    outcomes: list[tuple[Any, Any, BaseException | None]] = []
    try:
        with transaction.atomic():
            pending = batch
            while pending:
                for future, fn, args in pending:
                    try:
                        with savepoints.atomic("kk_call"):
                            outcomes.append((future, fn(*args), None))
                    except Exception as exc:  # this call's savepoint is rolled back; the batch goes on
                        outcomes.append((future, None, exc))
                # Calls that arrived while these ran join this commit instead of waiting for the
                # next one: one fsync for more writes (with 8 clients, 3.9 → 4.8 calls per commit).
                pending = more(MAX_BATCH - len(outcomes))
                batch = batch + pending
    except Exception as exc:  # the commit itself failed: nothing of the batch is stored
        log.exception("group commit of %d calls failed", len(batch))
        close_old_connections()
        outcomes = [(future, None, exc) for future, _, _ in batch]
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_LoopCall, Any, BaseException | None]]] = {}
    for future, value, error in outcomes:
        if isinstance(future, _LoopCall):
            by_loop.setdefault(future.loop, []).append((future, value, error))
        elif error is None:
            future.set_result(value)
        else:
            future.set_exception(error)
    for loop, answers in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, answers)
        except RuntimeError:  # that loop is closed: nobody awaits these answers any more
            pass


class _LoopCall:
    """A call from an event loop: its answer goes to an asyncio Future of that loop."""

    __slots__ = ("loop", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop, waiter: "asyncio.Future[Any]"):
        self.loop, self.waiter = loop, waiter

    def set_running_or_notify_cancel(self) -> bool:
        # Read from the database thread: a cancellation racing this check lets the call run, as a
        # concurrent Future's would once running; its answer is then dropped.
        return not self.waiter.cancelled()


def _settle(answers: list[tuple[_LoopCall, Any, BaseException | None]]) -> None:
    for call, value, error in answers:
        if call.waiter.cancelled():
            continue
        if error is None:
            call.waiter.set_result(value)
        else:
            call.waiter.set_exception(error)


def _serve() -> None:
    while True:
        batch = [_calls.get()]
        while len(batch) < MAX_BATCH:
            try:
                batch.append(_calls.get_nowait())
            except queue.Empty:
                break
        try:
            _run_batch(batch)
        except BaseException:  # the thread must outlive anything one batch does
            log.exception("database thread: a batch failed")


def _on_postgresql() -> bool:
    return settings.DATABASES["default"]["ENGINE"].endswith("postgresql")


def serve_on(loop: "asyncio.AbstractEventLoop | None") -> bool:
    """From now on run every call on `loop`'s thread (the caller's: call it from the thread that
    runs `loop`), between its steps; None goes back to the database thread. Only on SQLite: on
    PostgreSQL nothing changes and it answers False (see the module's guarantees)."""
    global _home, _home_thread
    if loop is not None and _on_postgresql():
        return False
    _home, _home_thread = loop, threading.get_ident()
    return True


def _queue_on_home(call: _Call) -> None:
    """On the home loop's thread: the call joins the batch of the loop's next step."""
    global _step_asked
    _due.append(call)
    if not _step_asked and _home is not None:
        _step_asked = True
        _home.call_soon(_run_due)


def _run_due() -> None:
    """One step's batch: the calls due, one after the other, until STEP_SECONDS have gone by or
    MAX_BATCH calls ran; the rest at the next step, after the loop has served its sockets once."""
    global _step_asked
    _step_asked = False
    started = clock.monotonic()

    def next_due(room: int) -> list[_Call]:
        while _due and room > 0 and clock.monotonic() - started < STEP_SECONDS:
            call = _due.popleft()
            if call[0].set_running_or_notify_cancel():
                return [call]
        return []

    if _due:
        _run_synchronously(_due.popleft(), next_due)
    if _due and _home is not None and not _step_asked:
        _step_asked = True
        _home.call_soon(_run_due)


def _run_synchronously(first: _Call, more: Callable[[int], list[_Call]] = lambda room: []) -> None:
    """A batch on this thread, as the database thread runs it: with no running loop in sight."""
    running = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        _run_batch([first], more)
    except Exception:  # the loop must outlive anything one batch does, as the thread does
        log.exception("database calls: a batch failed")
    finally:
        asyncio.events._set_running_loop(running)


def _ensure_thread() -> None:
    global _thread
    if _thread is None:
        with _lock:
            if _thread is None:
                _thread = threading.Thread(target=_serve, name="kk-db", daemon=True)
                _thread.start()


def submit(fn: Callable[..., T], *args: Any) -> "Future[T]":
    """Run `fn(*args)` as a database call; its Future is answered after the commit. From any
    thread; on the home loop's own thread it runs before this returns."""
    future: Future = Future()
    home = _home
    if home is not None:
        if threading.get_ident() == _home_thread:
            _run_synchronously((future, fn, args))
            return future
        if home.is_running():  # a loop that stopped would never take it: the database thread does
            home.call_soon_threadsafe(_queue_on_home, (future, fn, args))
            return future
    _ensure_thread()
    _calls.put((future, fn, args))
    return future


async def run_db(fn: Callable[..., T], *args: Any) -> T:
    """Run `fn(*args)` as a database call and wait for its answer (after the commit)."""
    loop = asyncio.get_running_loop()
    waiter = loop.create_future()
    call = (_LoopCall(loop, waiter), fn, args)
    home = _home
    if home is loop:
        _queue_on_home(call)
    elif home is not None and home.is_running():
        home.call_soon_threadsafe(_queue_on_home, call)
    else:
        _ensure_thread()
        _calls.put(call)
    return await waiter


def _read(fn: Callable[..., T], *args: Any) -> T:
    try:
        return fn(*args)
    except (DatabaseError, InterfaceError):
        connection.close()  # a broken connection is made again by the next read
        raise


async def run_read(fn: Callable[..., T], *args: Any) -> T:
    """Run a read of committed data: on the reader thread with PostgreSQL, else as `run_db`."""
    global _reader
    if not _on_postgresql():
        return await run_db(fn, *args)
    if _reader is None:
        with _lock:
            if _reader is None:
                _reader = ThreadPoolExecutor(1, thread_name_prefix="kk-db-read")
    return await asyncio.get_running_loop().run_in_executor(_reader, _read, fn, *args)


def close_reader() -> None:
    """Close the reader thread's connection and end the thread (a test's database can then be
    dropped; the next `run_read` starts them again)."""
    global _reader
    with _lock:
        reader, _reader = _reader, None
    if reader is not None:
        reader.submit(lambda: connection.close()).result()  # this thread's connection, not the caller's
        reader.shutdown(wait=True)
