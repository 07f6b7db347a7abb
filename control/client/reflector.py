"""The reflector: list, then watch from the list's resourceVersion, into a sink (client-go's
`tools/cache/reflector.go`). The one list/watch/relist loop of the spokes: the informer's cache,
the supervisor's ConfigMap and the dashboard's live feed all follow the hub through it.

Guarantees:
- It lists (`ListerWatcher.list`) when it holds no resourceVersion, hands the list to the sink
  (`Sink.replace`), and watches from the LIST's resourceVersion (never an object's); every event
  goes to the sink (`Sink.apply`) in the order the stream sent it, and the version it resumes from
  becomes the one the event carries (`version_of`: an object's, a bookmark's), so bookmarks keep it
  inside the hub's log window on a quiet resource.
- A stream that ends (its timeout) is followed by the next watch from the last version seen, at
  once; a broken stream, an unreachable hub, a refusal, or a stream that ended at once with nothing
  in it (client-go's "very short watch") is followed, after a back-off, by a watch from that same
  version: nothing is missed and nothing is repeated.
- On 410 Gone (`errors.Gone`, from the watch or raised by the sink) it forgets its version, waits
  the back-off and relists once; the sink's `replace` then sees the whole new list, so whatever
  changed meanwhile (deletions too) is not lost. A compacted log costs one relist per reflector.
- The back-off is client-go's: 0.8 s doubling, each wait jittered up to +100 % so that reflectors
  broken together (a compaction, a hub restart) do not come back together, never over 30 s (a
  workshop's restarted hub is found again within half a minute); it starts over after a watch that
  delivered an event. Time is the injected `control.clock.Clock`.
- The watch stream is closed when its round ends, however it ends (its connection is released).
- `run` is the endless loop; one round of it (`run_once`) is what tests drive.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Protocol

from control import errors
from control.clock import REAL, Clock

log = logging.getLogger(__name__)

Event = dict[str, Any]

SHORT_WATCH = 1.0  # seconds: a watch that ends this fast with no event is a failure (client-go's "very short watch")


@dataclass
class Listing:
    """What a list gives: the items, and the resourceVersion they are consistent with."""

    items: list[Any]
    resource_version: str


class ListerWatcher(Protocol):
    """How a reflector reaches its resource (client-go's ListerWatcher)."""

    async def list(self) -> Listing:
        """The current list; raises an `errors.ApiError` when the hub refuses or cannot be reached."""

    def watch(self, resource_version: str) -> AsyncIterator[Event]:
        """The events after `resource_version`, bookmarks included; raises `errors.Gone` on a 410
        and another `errors.ApiError` on any other failure."""


class Sink(Protocol):
    """Where a reflector puts what it learns (client-go's reflector Store); either method may be a
    coroutine function."""

    def replace(self, listing: Listing) -> Any:
        """A (re)list: the whole truth at `listing.resource_version`."""

    def apply(self, event: Event) -> Any:
        """One watch event, in stream order (may raise `errors.Gone` to ask for a relist)."""


@dataclass
class Backoff:
    """Jittered exponential back-off: `next()` is `current` times a factor in [1, 1 + jitter),
    at most `limit`."""

    initial: float = 0.8
    limit: float = 30.0
    jitter: float = 1.0
    random: Callable[[], float] = field(default=random.random, repr=False)
    current: float = field(default=0.0)

    def next(self) -> float:
        self.current = self.initial if self.current == 0 else min(self.limit, self.current * 2)
        return min(self.limit, self.current * (1.0 + self.jitter * self.random()))

    def reset(self) -> None:
        self.current = 0.0


def object_version(event: Event) -> str:
    """The resourceVersion an API watch event carries (its object's, or its bookmark's)."""
    return str(((event.get("object") or {}).get("metadata") or {}).get("resourceVersion") or "")


# What a round may run into and still carry on after a back-off: the hub's answers, and an
# unexpected body (a field missing or of the wrong type) in a list or an event.
TROUBLE = (errors.ApiError, ValueError, KeyError, TypeError)


class Reflector:
    def __init__(self, lister_watcher: ListerWatcher, sink: Sink, *, name: str = "reflector",
                 clock: Clock | None = None, backoff: Backoff | None = None, resource_version: str = "",
                 version_of: Callable[[Event], str] = object_version,
                 on_expired: Callable[[errors.ApiError, str], Any] | None = None,
                 on_trouble: Callable[[Exception], Any] | None = None):
        """`version_of(event)` is the version to resume from after an event ("" keeps the last);
        `on_expired(gone, version)` and `on_trouble(error)` hear of a 410 (with the version it
        answered) and of any other failure, before the back-off (they may be coroutines)."""
        self.lister_watcher, self.sink, self.name = lister_watcher, sink, name
        self.clock = clock or REAL
        self.backoff = backoff or Backoff()
        self.resource_version = resource_version
        self.version_of = version_of
        self.on_expired, self.on_trouble = on_expired, on_trouble

    async def run(self) -> None:
        while True:
            await self.run_once()

    async def run_once(self) -> None:
        """One list-or-resume plus one watch stream; a failure ends in a back-off sleep (after a
        410, with the version forgotten, so the next round relists)."""
        events = 0
        try:
            if not self.resource_version:
                await self.relist()
            started = self.clock.monotonic()
            stream = self.lister_watcher.watch(self.resource_version)
            try:
                async for event in stream:
                    await _call(self.sink.apply, event)
                    self.resource_version = self.version_of(event) or self.resource_version
                    events += 1
                    self.backoff.reset()
            finally:  # the stream's connection goes back now, also when the sink ends the watch
                close = getattr(stream, "aclose", None)
                if close is not None:
                    await close()
            if events == 0 and self.clock.monotonic() - started < SHORT_WATCH:
                await self._back_off("the watch ended at once with no event")
        except errors.Gone as gone:
            expired_at, self.resource_version = self.resource_version, ""
            await _call(self.on_expired, gone, expired_at)
            await self._back_off(f"the watch expired at {expired_at or 'the start'} ({gone.message}); relisting")
        except TROUBLE as exc:
            await _call(self.on_trouble, exc)
            await self._back_off(f"{exc!r}")

    async def relist(self) -> None:
        listing = await self.lister_watcher.list()
        await _call(self.sink.replace, listing)
        self.resource_version = listing.resource_version

    async def _back_off(self, why: str) -> None:
        delay = self.backoff.next()
        log.info("%s: %s; again in %.1f s", self.name, why, delay)
        await self.clock.sleep(delay)


async def _call(hook: Callable[..., Any] | None, *args: Any) -> None:
    """Call a sink method or hook, awaiting it when it is a coroutine."""
    if hook is not None:
        result = hook(*args)
        if hasattr(result, "__await__"):
            await result
