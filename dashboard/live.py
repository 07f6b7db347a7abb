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
- It follows the informer's rules (`control.client.informer`), on the injected clock:
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
from typing import Any, Awaitable, Callable

from control import errors
from control.clock import REAL, Clock
from control.client.http import HubClient
from control.client.informer import SHORT_WATCH, Backoff
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
    def __init__(self, client: HubClient, send: Send, *, interval: float = 0.05, limit: int = 20_000,
                 watch_seconds: int = 600, history: int = 200, clock: Clock = REAL,
                 backoff: Backoff | None = None):
        self.client, self.send, self.clock = client, send, clock
        self.outbox = Outbox(send, interval=interval, limit=limit, clock=clock)
        self.watch_seconds, self.history = watch_seconds, history
        self.backoff = backoff or Backoff()

    async def run(self, revision: int | None) -> None:
        flusher = asyncio.ensure_future(self.outbox.run())
        try:
            await self._follow(revision)
        finally:
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)

    async def _follow(self, revision: int | None) -> None:
        replay_from: int | None = None
        start: int | None = revision
        while True:
            try:
                if revision is None:
                    revision = await self._send_snapshot()
                    replay_from = max(0, revision - self.history) if self.history else None
                self.outbox.revision = max(self.outbox.revision, revision)
                start = revision if replay_from is None else replay_from
                started = self.clock.now()
                revision, delivered = await self._watch(start, revision)
                replay_from = None
                if not delivered and self.clock.now() - started < SHORT_WATCH:
                    await self._back_off()  # client-go's "very short watch": do not spin on it
            except errors.Gone as gone:
                if replay_from is not None and not isinstance(gone, FellBehind):
                    # the history before the snapshot was compacted: skip it
                    replay_from = None
                    continue
                # That revision is gone (or the page fell behind): relist, once, after a back-off,
                # so a hub that keeps compacting is not asked for a snapshot in a tight loop.
                if not isinstance(gone, FellBehind):
                    await self.outbox.notice({"t": "gone", "code": gone.code, "reason": gone.reason,
                                              "message": gone.message, "revision": start})
                revision = replay_from = None
                await self._back_off()
            except errors.ApiError as exc:  # unreachable, or the stream broke: resume where we were
                replay_from = None
                if revision is not None:
                    revision = max(revision, self.outbox.revision)
                await self.send({"t": "hub-down", "message": exc.message})
                await self._back_off()

    async def _back_off(self) -> None:
        await self.clock.sleep(self.backoff.next())

    async def _send_snapshot(self) -> int:
        body = await self.client.request("GET", SNAPSHOT_PATH)
        message = {"t": "snapshot", **presenters.snapshot(body), "spokes": await self._spoke_states()}
        await self.outbox.restart(message, message["revision"])
        return message["revision"]

    async def _spoke_states(self) -> dict[str, str]:
        """The spokes' desired states. Read after the snapshot: a newer state is fine, since the
        changes after the snapshot's revision end with the newest one anyway."""
        namespace, name = presenters.SPOKES_CONFIGMAP
        try:
            configmap = await self.client.get(CONFIGMAPS, name, namespace)
        except (errors.NotFound, errors.Forbidden):  # a user who may not read kube-system sees none
            return {}
        return presenters.spokes_vm(configmap)["states"]

    async def _watch(self, start: int, revision: int) -> tuple[int, bool]:
        """Follow the changes after `start` until the stream ends: the newest revision seen (never
        below `revision`, the one the browser already holds), and whether anything came."""
        delivered = False
        async for change in self.client.watch(CHANGES, resource_version=str(start),
                                              timeout_seconds=self.watch_seconds):
            delivered = True
            self.backoff.reset()  # a healthy watch: the next trouble starts the back-off over
            seen = int(change.get("revision") or revision)
            item = None if change.get("type") == "BOOKMARK" else presenters.change_item(change)
            if not self.outbox.add(item, seen):
                raise FellBehind("the browser fell too far behind; reload the snapshot")
            revision = max(revision, seen)
        return revision, delivered
