"""The change feed: one per hub process, the committed log in revision order, shared by all watches.

Guarantees:
- The feed holds a contiguous run of recent changes (no gaps): a local commit is appended at
  once; a gap (a write by another process) is filled by reading the log, never skipped.
- Hints (local commits, PostgreSQL NOTIFY, a periodic poll) only say "look again"; the log is
  the truth, so a lost hint delays an event but never loses it. The log is read with `run_read`:
  with PostgreSQL on a connection of its own, so filling a gap never queues behind this hub's
  writes.
- `read_after(rev)` returns the changes after `rev` from memory, or from the log when `rev` is
  older than memory, or raises Gone when the log was compacted past `rev`.
- Each watcher reads at its own pace from the shared run: a slow one never slows a writer or
  another watcher.
- A reader that names its resource (`read_after(..., resource=R)`) is woken only by changes of R
  (or its timeout), not by every commit of the cluster; `skip(rev, R)` moves it past a run of
  other resources' changes without reading them (an idle watch of Pods costs nothing while
  Leases are renewed). Only revisions the feed saw committed since it started are skipped.
- A reader that has caught up may `join` the feed's watcher index (`control.storage.watchers`):
  from then on each offered change is handed only to the joined watchers it can concern (by
  resource, namespace and trigger value), in revision order, instead of every watcher of the
  resource reading and filtering every change; a dropped watcher (slow, or the feed restarted its
  run) reads for itself again from its own revision.
- A reader of one resource that waited at the head is never expired by its wait: when it wakes,
  the changes that left memory meanwhile (compacted, or past the byte or fresh bounds) are stepped
  over if none was its resource's, as kube-apiserver's per-resource watch cache never expires an
  idle watcher because other resources moved on (a quiet watch of Nodes missed a cordon for a
  second, a 410 and a relist later, when the log window was short).
- Memory is bounded in count (`capacity` changes) and in bytes (`max_bytes`, KK_FEED_MAX_BYTES:
  each change is charged its body and the event line made from it): past either bound the oldest
  changes leave memory, and a watcher behind them reads from the log, as one behind the count does.
- Memory also comes back with time, as kube-apiserver's watch cache shrinks: every housekeeping
  tick (log compaction, every KK_COMPACT_INTERVAL s) drops the changes older than FRESH_SECONDS
  (keeping the newest MIN_KEPT; a reader behind them reads the log) and then returns the freed
  pages to the system (`control.storage.memory.release_free_memory`), so after a burst (a
  namespace of 9,000 objects deleted) the hub's resident size comes back down instead of staying
  at its peak.
- Its life is the server's: `start_feed` (ASGI lifespan.startup, before the first request) starts
  it with its poll, log compaction and LISTEN connection on the running loop; `stop_feed`
  (lifespan.shutdown) stops all of them. `get_feed` returns the started feed and never starts one:
  a loop nobody started is a wiring bug, reported as such (`FeedNotStarted`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Callable

from django.conf import settings

from control.clock import REAL as clock
from control import errors
from control.storage import store
from control.storage.db import run_db, run_read
from control.storage.memory import release_free_memory
from control.storage.store import Change
from control.storage.watchers import Interest, Watcher, WatcherIndex

log = logging.getLogger(__name__)


PARSED_WINDOW = 1000
FRESH_SECONDS = 75.0  # kube-apiserver's watch cache eventFreshDuration: older changes may leave memory
MIN_KEPT = 100  # ... but the newest ones stay (the watch cache's lower bound of capacity)


def weight(change: Change) -> int:
    """What a change holds in memory: its body, and the watch line encoded from it once."""
    return 2 * len(change.body) + 200


class ChangeFeed:
    def __init__(self, *, loop: asyncio.AbstractEventLoop, start: int, capacity: int = 10000,
                 batch_window: float = 0.003, max_bytes: int | None = None):
        self.loop = loop
        self.capacity = capacity
        self.max_bytes = settings.KK_FEED_MAX_BYTES if max_bytes is None else max_bytes
        self.bytes = 0  # the sum of `weight` over `changes`
        self.changes: list[Change] = []
        self.first = start + 1  # revision of changes[0]
        self.last = start  # highest revision known, all of (first-1, last] are in `changes`
        self.compacted = 0
        self.origin = start  # every change after this revision passed through `offer`
        self.last_of: dict[str, int] = {}  # resource -> revision of its newest change since `origin`
        self.watchers = WatcherIndex(start)
        self.dropped_of: dict[str, int] = {}  # resource -> revision of its newest change that left memory
        self._wake: asyncio.Future = loop.create_future()
        self._resource_wakes: dict[str, asyncio.Future] = {}  # readers of one resource wait here
        self._woken: set[str] = set()  # resources changed since the last wake-up
        self._wake_pending = False
        self.batch_window = batch_window
        self._catching_up = False
        self._tasks: list[asyncio.Task] = []
        self._unsubscribe: Callable[[], None] | None = None
        self.stopped = threading.Event()  # also read by the LISTEN thread
        self._listener: threading.Thread | None = None

    # --- filling ---------------------------------------------------------------------------

    def offer(self, changes: list[Change]) -> None:
        """Append committed changes; on a gap, read the log instead (runs on the loop)."""
        grew = False
        for change in changes:
            if change.revision <= self.last:
                continue
            if change.revision != self.last + 1:
                self.hint()
                break
            self.changes.append(change)
            self.bytes += weight(change)
            self.last = change.revision
            self.last_of[change.resource] = change.revision
            self._woken.add(change.resource)
            self.watchers.dispatch(change)
            grew = True
            if len(self.changes) > PARSED_WINDOW:
                # Keep parsed objects (for selector watches) only near the head: memory stays flat.
                self.changes[-PARSED_WINDOW - 1].forget_parsed()
        if grew:
            self._trim()
            self._notify()

    def hint(self) -> None:
        """Something may have been committed elsewhere: read the log soon (thread-safe)."""
        self.loop.call_soon_threadsafe(self._schedule_catch_up)

    def _schedule_catch_up(self) -> None:
        if not self._catching_up:
            self._catching_up = True
            self._tasks.append(self.loop.create_task(self._catch_up()))

    async def _catch_up(self) -> None:
        try:
            while True:
                batch = await run_read(lambda: store.events_since(self.last, limit=1000))
                if not batch:
                    return
                self.offer(batch)
                if len(batch) < 1000:
                    return
        except errors.Gone:
            # We fell behind the log's window: restart the run from the newest revision.
            latest = await run_read(store.current_revision)
            self.changes, self.first, self.last, self.bytes = [], latest + 1, latest, 0
            self.origin = latest  # what fell between was never offered: nobody may skip over it
            self.watchers.drop_all(latest)  # nor be handed it: the joined watchers read the log again
            self.dropped_of = {}
            self._woken.update(self._resource_wakes)
            self._notify()
        except Exception:
            log.exception("change feed catch-up failed")
        finally:
            self._catching_up = False
            self._tasks = [t for t in self._tasks if not t.done()]

    def _trim(self) -> None:
        excess = len(self.changes) - self.capacity
        if excess > self.capacity // 4:
            self._drop_oldest(excess)
        if self.bytes > self.max_bytes:
            # Down to three quarters of the bound (not just under it): one trim per many appends.
            goal, cut, freed = self.bytes - self.max_bytes * 3 // 4, 0, 0
            while freed < goal and cut < len(self.changes):
                freed += weight(self.changes[cut])
                cut += 1
            self._drop_oldest(cut)

    def _drop_oldest(self, count: int) -> None:
        for change in self.changes[:count]:
            self.bytes -= weight(change)
            self.dropped_of[change.resource] = change.revision  # in revision order: the newest wins
        del self.changes[:count]
        self.first += count
        self.watchers.forget_before(self.first)

    def drop_stale(self, now: float) -> None:
        """Forget the changes committed before `now - FRESH_SECONDS`, all but the newest MIN_KEPT."""
        horizon, cut, most = now - FRESH_SECONDS, 0, len(self.changes) - MIN_KEPT
        while cut < most and self.changes[cut].created_at < horizon:
            cut += 1
        if cut:
            self._drop_oldest(cut)

    def drop_through(self, revision: int) -> None:
        """Forget changes at or below a compacted revision."""
        self.compacted = max(self.compacted, revision)
        if revision >= self.first:
            self._drop_oldest(min(revision - self.first + 1, len(self.changes)))

    def _notify(self) -> None:
        """Wake the readers, at most once per batch window: under a burst of commits each reader
        then takes several changes per wake-up instead of one (a few ms for a lot of CPU)."""
        if self._wake_pending:
            return
        if self.batch_window <= 0:
            self._wake_now()
        else:
            self._wake_pending = True
            self.loop.call_later(self.batch_window, self._wake_now)

    def _wake_now(self) -> None:
        self._wake_pending = False
        wake, self._wake = self._wake, self.loop.create_future()
        wake.set_result(None)
        self.watchers.wake()
        woken, self._woken = self._woken, set()
        for resource in woken:
            waiting = self._resource_wakes.pop(resource, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(None)

    # --- reading ---------------------------------------------------------------------------

    def skip(self, revision: int, resource: str) -> int:
        """Where a reader of `resource` at `revision` may continue without missing a change of it:
        the newest revision when every change after `revision` is another resource's; else, when
        every change after it that left memory is another resource's, the last one of those (the
        reader goes on from memory instead of the log, which may have been compacted past it)."""
        if revision < self.origin or revision >= self.last:
            return revision
        if self.last_of.get(resource, 0) <= revision:
            return self.last
        if revision + 1 < self.first and self.dropped_of.get(resource, 0) <= revision:
            return self.first - 1
        return revision

    def join(self, revision: int, resource: str | None, interest: Interest) -> Watcher | None:
        """Index a reader that stands at the head (`revision` is the last change offered), so the
        changes after it are handed to it as they come; None when it is not there yet."""
        if revision != self.last or revision < self.compacted:
            return None
        return self.watchers.join(resource, interest)

    async def read_after(self, revision: int, *, timeout: float, limit: int = 500,
                         resource: str | None = None) -> list[Change]:
        """Changes after `revision` (up to `limit`), waiting up to `timeout` for the first one (with
        `resource`: for the first change of that resource; what comes back may hold others too)."""
        if revision < self.compacted:
            raise errors.expired(f"too old resource version: {revision} ({self.compacted})")
        if revision >= self.last:
            wake = self._wake
            if resource is not None:
                wake = self._resource_wakes.get(resource) or self._resource_wakes.setdefault(
                    resource, self.loop.create_future())
            await asyncio.wait((wake,), timeout=timeout)
            if revision >= self.last:
                return []
            if resource is not None:  # what went by while it waited may have left memory
                revision = self.skip(revision, resource)
        if revision + 1 < self.first:
            # Behind memory: from the log, in pieces no bigger (by the changes in memory now) than a
            # quarter of the byte bound, so ten slow readers of big objects cannot pin gigabytes.
            if self.changes:
                average = max(1, self.bytes // len(self.changes))
                limit = max(1, min(limit, self.max_bytes // 4 // average))
            return await run_read(lambda: store.events_since(revision, limit=limit))
        start = revision + 1 - self.first
        return self.changes[start:start + limit]

    # --- life ------------------------------------------------------------------------------

    def start_background(self) -> None:
        self._unsubscribe = store.subscribe(self._committed)
        self._tasks.append(self.loop.create_task(self._poll()))
        self._tasks.append(self.loop.create_task(self._compact()))
        if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
            self._listener = threading.Thread(target=_listen_postgres, args=(self,), daemon=True, name="kk-listen")
            self._listener.start()

    def _committed(self, changes: list[Change]) -> None:
        """Store listener (runs on the database thread)."""
        if self.loop.is_closed():  # the loop this feed served is gone (tests): stop listening
            self.stop()
            _feeds.pop(self.loop, None)
            return
        self.loop.call_soon_threadsafe(self.offer, changes)

    def stop(self) -> None:
        """Stop listening, polling, compacting and catching up (thread-safe to call twice)."""
        self.stopped.set()
        if self._unsubscribe:
            self._unsubscribe()
        for task in self._tasks:
            task.cancel()

    async def _poll(self) -> None:
        while True:
            await clock.sleep(settings.KK_POLL_INTERVAL)
            try:
                if await run_read(store.current_revision) > self.last:
                    self._schedule_catch_up()
            except Exception:
                log.exception("change feed poll failed")

    async def _compact(self) -> None:
        while True:
            await clock.sleep(settings.KK_COMPACT_INTERVAL)
            try:
                through = await run_db(lambda: store.log_compact(
                    max_entries=settings.KK_LOG_MAX_ENTRIES, max_age=settings.KK_LOG_MAX_AGE))
                self.drop_through(through)
            except Exception:
                log.exception("log compaction failed")
            self.drop_stale(clock.now())
            release_free_memory()


def _listen_postgres(feed: ChangeFeed) -> None:
    """A dedicated connection that turns NOTIFY kk_revision into hints."""
    import psycopg

    db = settings.DATABASES["default"]
    while not feed.stopped.is_set():
        try:
            with psycopg.connect(host=db["HOST"] or None, port=db["PORT"] or None, user=db["USER"] or None,
                                 password=db["PASSWORD"] or None, dbname=db["NAME"], autocommit=True) as conn:
                conn.execute("LISTEN kk_revision")
                while not feed.stopped.is_set():  # wakes now and then to see whether the feed stopped
                    for _ in conn.notifies(timeout=0.25):
                        feed.hint()
        except Exception:
            if not feed.stopped.is_set():
                log.warning("LISTEN connection lost; the poll keeps the feed up to date meanwhile")
            feed.stopped.wait(1.0)


_feeds: dict[asyncio.AbstractEventLoop, ChangeFeed] = {}
_starting: dict[asyncio.AbstractEventLoop, asyncio.Future] = {}


def _revisions() -> tuple[int, int]:
    return store.current_revision(), store.compacted_revision()


async def start_feed() -> ChangeFeed:
    """Start this process's feed on the running loop (idempotent): at server start-up."""
    loop = asyncio.get_running_loop()
    if loop in _feeds:
        return _feeds[loop]
    if loop in _starting:
        return await asyncio.shield(_starting[loop])
    future = _starting[loop] = loop.create_future()
    try:
        # Read the revision first, then subscribe: a commit that falls between the two shows up
        # as a gap at the next offer (or poll) and is read from the log.
        latest, compacted = await run_db(_revisions)
        feed = ChangeFeed(loop=loop, start=latest)
        feed.compacted = compacted
        feed.start_background()
    except BaseException as exc:
        future.set_exception(exc)
        future.exception()  # retrieved, so no "never retrieved" warning
        del _starting[loop]
        raise
    _feeds[loop] = feed
    del _starting[loop]
    future.set_result(feed)
    return feed


class FeedNotStarted(RuntimeError):
    """A watch asked for the feed on a loop the server never started it on: a wiring bug."""


async def get_feed() -> ChangeFeed:
    """This process's feed for the running loop, as `start_feed` started it."""
    feed = _feeds.get(asyncio.get_running_loop())
    if feed is None:
        raise FeedNotStarted("the change feed was not started on this event loop: start the hub first "
                             "(control.api.app.startup, run by the ASGI lifespan)")
    return feed


async def stop_feed() -> None:
    """Stop the running loop's feed and wait for its tasks to end: at server shutdown."""
    feed = _feeds.pop(asyncio.get_running_loop(), None)
    if feed is None:
        return
    tasks = list(feed._tasks)
    feed.stop()
    await asyncio.gather(*tasks, return_exceptions=True)
    if feed._listener is not None:  # its connection closes within a quarter second
        await asyncio.to_thread(feed._listener.join, 2.0)
