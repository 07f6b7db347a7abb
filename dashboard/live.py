"""The page's list-then-watch: a snapshot, then every change after it, sent to one browser.

Guarantees:
- Started without a revision, it sends the hub's snapshot (`{"t": "snapshot", "revision": N, ...}`,
  with the spokes' desired states from the supervisor's ConfigMap)
  and then the changes after N; started with the revision the browser last saw, it sends only the
  changes after it. Changes go out in revision order, none missed, none repeated, in batches
  (`{"t": "changes", "items": [...], "revision": R}`, R the newest revision seen, bookmarks too),
  at most one batch every `interval` seconds.
- After a snapshot it first replays up to `history` changes from before it, sent apart as
  `{"t": "history", "items": [...]}` (for the version log only: the snapshot already holds their
  effect); if that history was compacted it is skipped, never an error.
- It is a `control.client.reflector.Reflector` (the snapshot is its list, the change stream its
  watch, the outbox its sink) and so follows its rules, on the injected clock:
  - when the hub answers 410 (that revision was compacted away) it relists itself, once, after a
    jittered back-off, after telling the page what the hub answered (`{"t": "gone", "code": 410,
    "reason", "message", "revision": the one asked for}`, for the page to show; it need not act): a fresh snapshot replaces the page's picture (and any change still pending
    from before it), and the changes after it follow. It does the same when the browser falls more than `limit`
    changes behind, so its memory stays bounded. The page never has to ask again.
  - a hub that cannot be reached (or a broken stream, or a watch that ends at once with nothing)
    is retried from the last revision seen after a jittered exponential back-off, capped at
    `Backoff.limit`; the browser is told each time (`{"t": "hub-down"}`); nothing is lost because
    the revision is kept.
  - the back-off starts over once a watch delivers something (a healthy watch).
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable

from control import errors
from control.clock import REAL, Clock
from control.client.http import HubClient
from control.client.reflector import Backoff, Listing, Reflector
from control.client.resources import CONFIGMAPS
from dashboard import presenters

Send = Callable[[dict[str, Any]], Awaitable[None]]
SNAPSHOT_PATH = "/kubekitchen/snapshot"


class FellBehind(errors.Gone):
    """The browser did not keep up: it must relist, as after a 410."""


class ChangeStream:
    """The hub's change stream, shaped like a resource so `HubClient.watch` can follow it
    (it asks for `path()` and `plural` only)."""

    plural = "changes"

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        return "/kubekitchen/changes"


CHANGES = ChangeStream()


class Outbox:
    """Changes waiting for the browser, flushed together; never more than `limit` of them."""

    def __init__(self, send: Send, *, interval: float, limit: int, clock: Clock = REAL):
        self.send, self.interval, self.limit, self.clock = send, interval, limit, clock
        self.items: list[dict[str, Any]] = []
        self.revision = 0
        self.history_until = 0  # changes at or below this revision are history (before the snapshot)
        self._ready = asyncio.Event()
        self._lock = asyncio.Lock()

    def add(self, item: dict[str, Any] | None, revision: int) -> bool:
        """Queue one change (or only a newer revision, for a bookmark); False when over the limit."""
        if item is not None:
            if len(self.items) >= self.limit:
                self.items.clear()  # the browser will relist; what it missed no longer matters
                return False
            self.items.append(item)
        self.revision = max(self.revision, revision)
        self._ready.set()
        return True

    async def restart(self, snapshot: dict[str, Any], revision: int) -> None:
        """Send a (re)list's snapshot in place of whatever was pending: changes of the old picture
        must not reach the page after the new one."""
        async with self._lock:
            self._ready.clear()
            self.items.clear()
            self.revision = self.history_until = revision
            await self.send(snapshot)

    async def notice(self, message: dict[str, Any]) -> None:
        """Send a message of the feed's own between two batches, never inside one."""
        async with self._lock:
            await self.send(message)

    async def flush(self) -> None:
        async with self._lock:
            self._ready.clear()
            items, self.items = self.items, []
            history = [item for item in items if item["rv"] <= self.history_until]
            if history:
                await self.send({"t": "history", "items": history})
                items = items[len(history):]
            await self.send({"t": "changes", "items": items, "revision": self.revision})

    async def run(self) -> None:
        while True:
            await self._ready.wait()
            await self.flush()
            await self.clock.sleep(self.interval)


class LiveFeed:
    """The browser's reflector: a `Reflector` whose list is the snapshot and whose watch is the
    change stream (`ListerWatcher`), with the outbox as its sink."""

    def __init__(self, client: HubClient, send: Send, *, interval: float = 0.05, limit: int = 20_000,
                 watch_seconds: int = 600, history: int = 200, clock: Clock = REAL,
                 backoff: Backoff | None = None):
        self.client, self.send, self.clock = client, send, clock
        self.outbox = Outbox(send, interval=interval, limit=limit, clock=clock)
        self.watch_seconds, self.history = watch_seconds, history
        self.backoff = backoff or Backoff()
        self._replay_from: int | None = None  # the first watch after a snapshot starts this far back

    async def run(self, revision: int | None) -> None:
        flusher = asyncio.ensure_future(self.outbox.run())
        try:
            await self._follow(revision)
        finally:
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)

    async def _follow(self, revision: int | None) -> None:
        if revision is not None:
            self.outbox.revision = max(self.outbox.revision, revision)
        reflector = Reflector(self, self, name="live feed", clock=self.clock, backoff=self.backoff,
                              resource_version="" if revision is None else str(revision),
                              version_of=lambda change: str(self.outbox.revision),
                              on_expired=self._expired, on_trouble=self._hub_down)
        await reflector.run()

    # --- the ListerWatcher: the snapshot, then the change stream ----------------------------

    async def list(self) -> Listing:
        body = await self.client.request("GET", SNAPSHOT_PATH)
        message = {"t": "snapshot", **presenters.snapshot(body), "spokes": await self._spoke_states()}
        return Listing([message], str(message["revision"]))

    async def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        """The changes after `resource_version`; the first watch after a snapshot starts `history`
        changes before it (history for the version log), and if those were compacted it skips them."""
        replay_from, self._replay_from = self._replay_from, None
        if replay_from is not None:
            try:
                async for change in self._changes(replay_from):
                    yield change
                return
            except FellBehind:
                raise
            except errors.Gone:
                pass  # the history before the snapshot was compacted: skip it, never an error
        async for change in self._changes(int(resource_version)):
            yield change

    def _changes(self, start: int) -> AsyncIterator[dict[str, Any]]:
        return self.client.watch(CHANGES, resource_version=str(start), timeout_seconds=self.watch_seconds)

    # --- the sink: the outbox ---------------------------------------------------------------

    async def replace(self, listing: Listing) -> None:
        """A snapshot replaces the page's picture, and whatever was pending from before it."""
        (message,) = listing.items
        revision = message["revision"]
        await self.outbox.restart(message, revision)
        self._replay_from = max(0, revision - self.history) if self.history else None

    def apply(self, change: dict[str, Any]) -> None:
        seen = int(change.get("revision") or self.outbox.revision)
        item = None if change.get("type") == "BOOKMARK" else presenters.change_item(change)
        if not self.outbox.add(item, seen):
            raise FellBehind("the browser fell too far behind; reload the snapshot")

    # --- what the page is told --------------------------------------------------------------

    async def _expired(self, gone: errors.ApiError, version: str) -> None:
        """That revision is gone: the page hears what the hub answered (it need not act; the
        snapshot that follows the back-off replaces its picture). A browser that fell behind
        is simply sent a new snapshot."""
        self._replay_from = None
        if not isinstance(gone, FellBehind):
            await self.outbox.notice({"t": "gone", "code": gone.code, "reason": gone.reason,
                                      "message": gone.message, "revision": int(version) if version else None})

    async def _hub_down(self, exc: Exception) -> None:
        self._replay_from = None
        await self.send({"t": "hub-down", "message": getattr(exc, "message", str(exc))})

    async def _spoke_states(self) -> dict[str, str]:
        """The spokes' desired states. Read after the snapshot: a newer state is fine, since the
        changes after the snapshot's revision end with the newest one anyway."""
        namespace, name = presenters.SPOKES_CONFIGMAP
        try:
            configmap = await self.client.get(CONFIGMAPS, name, namespace)
        except (errors.NotFound, errors.Forbidden):  # a user who may not read kube-system sees none
            return {}
        return presenters.spokes_vm(configmap)["states"]
