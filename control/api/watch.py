"""The watch verb, and the one event-stream loop every watch of the hub runs on.

Guarantees:
- `change_stream` is the only loop that turns the change feed into a stream: the API watch and
  `/kubekitchen/changes` both run on it. It sends the headers at once, then each batch of
  committed changes after the start revision (a large one in parts of about SLICE_BYTES, each
  rendered only when the last was taken), in revision order with none lost or repeated, as
  soon as it is known; a start revision that was compacted gets one ERROR line carrying a 410
  Expired Status, then the stream ends (HTTP 200, as Kubernetes does). Bookmarks come every
  `KK_BOOKMARK_INTERVAL` seconds (the one bookmark setting) when the caller asks for them; the
  stream ends after its timeout. Time is read from an injected clock.
- The API watch: without a resourceVersion (or with "0") it opens with a synthetic ADDED for every
  selected object, then continues from that list's revision; with one, it continues after it.
- With selectors, each change is translated as kube-apiserver's cache watcher does
  (cacher/cache_watcher.go convertToWatchEvent): matching now and before → MODIFIED, now but not
  before → ADDED, before but not now → DELETED, neither → nothing. "Before" is the object's
  previous version: none for a creation (so an object created after the resume point is always
  ADDED), else the version this watcher last saw, or for the first change of an object its state
  at the resume point as the list at that revision gives it.
"""

from __future__ import annotations

import random
from typing import Any, AsyncIterator, Callable, Iterator, Protocol

from django.conf import settings

from control import errors
from control.clock import REAL, Clock
from control.api import tables, traffic
from control.api.request import Call, bool_param, int_param, parse_revision
from control.api.responses import Stream, dumps
from control.api.selection import COMMON_FIELDS, Selection
from control.api.verbs import list_objects, require_revision
from control.storage.db import run_db
from control.storage.feed import get_feed
from control.storage.store import Change
from control.storage.watchers import Interest, Trigger, Watcher

DEFAULT_TIMEOUT = 1800  # the real server picks 30–60 minutes
Render = Callable[[list[Change]], list[bytes]]
SLICE_CHANGES = 16  # changes rendered at a time (fewer when their stored bodies reach SLICE_BYTES) ...
SLICE_BYTES = 256 * 1024  # ... and sent once their lines reach this size (or the batch ends)


class Feed(Protocol):
    async def read_after(self, revision: int, *, timeout: float) -> list[Change]: ...


class ResourceFeed(Feed, Protocol):
    """A feed that wakes a reader only for its resource (`control.storage.feed.ChangeFeed`)."""

    async def read_after(self, revision: int, *, timeout: float, resource: str | None = None) -> list[Change]: ...

    def skip(self, revision: int, resource: str) -> int: ...


def error_line(error: errors.ApiError) -> bytes:
    return f'{{"type":"ERROR","object":{dumps(error.status())}}}\n'.encode()


def _parts(changes: list[Change]) -> Iterator[list[Change]]:
    """The batch in consecutive parts of at most SLICE_CHANGES changes, a part ending early once its
    stored bodies reach SLICE_BYTES: sixteen 50 kB objects rendered at once would hold 800 kB of
    lines (twice, joined) for one watcher, however little of it the client can take."""
    part: list[Change] = []
    weight = 0
    for change in changes:
        part.append(change)
        weight += len(change.body)
        if len(part) == SLICE_CHANGES or weight >= SLICE_BYTES:
            yield part
            part, weight = [], 0
    if part:
        yield part


def _rendered(changes: list[Change], render: Render) -> Iterator[tuple[bytes, int, int]]:
    """A batch's event lines joined in chunks of about SLICE_BYTES: (chunk, lines in it, revision of
    the last change rendered into it). A watcher that fell behind is handed every change since it
    last read: rendered whole, all of it would sit in memory before the server could see that the
    client is not reading; as the stream is pulled a chunk at a time, the next part is rendered only
    once the last chunk was sent, and a chunk's lines are let go as soon as they are joined."""
    lines: list[bytes] = []
    size = last = 0
    for part in _parts(changes):
        rendered = render(part)
        lines += rendered
        size += sum(map(len, rendered))
        last = part[-1].revision
        if lines and size >= SLICE_BYTES:
            chunk, count = b"".join(lines), len(lines)
            lines, size = [], 0
            yield chunk, count, last
    if lines:
        chunk, count = b"".join(lines), len(lines)
        lines = []
        yield chunk, count, last


async def change_stream(start: int, *, render: Render, timeout: float,
                        bookmark: Callable[[int], bytes] | None = None,
                        delivered: Callable[[int, int], None] = lambda count, revision: None,
                        opening: bytes = b"", feed: Feed | None = None,
                        clock: Clock = REAL, resource: str | None = None, interest: Interest | None = None,
                        expired: Callable[[errors.ApiError], None] = lambda error: None) -> AsyncIterator[bytes]:
    """The lines of a watch from `start`: `render` turns each batch of changes into event lines
    (it may drop some), `bookmark(revision)` is the bookmark line (None: no bookmarks),
    `delivered(count, revision)` hears of every batch sent, `opening` goes first (the synthetic
    ADDED events of a watch without a resourceVersion), `expired(error)` hears of the 410 that ends
    a stream whose start was compacted. With `resource` (which `render` keeps alone) the stream is
    woken only by that resource's changes and steps over the others unread (the feed must then be
    a `ResourceFeed`); with an `interest` too, once it has caught up it joins the feed's watcher
    index and is handed only the changes that can concern it (`control.storage.watchers`), which
    `render` still translates; it leaves the index when the stream ends. An `interest` without a
    `resource` joins as a watcher of every resource, handed what its `admits` accepts."""
    yield b""  # sends the status line and headers now: clients wait for them before the first event
    if opening:
        yield opening
    feed = feed or await get_feed()
    revision = start
    deadline = clock.monotonic() + timeout
    every = settings.KK_BOOKMARK_INTERVAL
    next_bookmark = clock.monotonic() + every
    watcher: Watcher | None = None
    try:
        while True:
            remaining = deadline - clock.monotonic()
            if remaining <= 0:
                return
            wait = min(remaining, max(0.05, next_bookmark - clock.monotonic())) if bookmark else remaining
            if watcher is not None and watcher.dropped:
                watcher = None  # too slow, or the feed restarted: read for ourselves from `revision`
            if watcher is None and interest is not None:
                watcher = feed.join(revision, resource, interest)  # type: ignore[attr-defined]
            try:
                if watcher is not None:
                    await watcher.wait(wait)
                    if watcher.dropped:
                        continue
                    changes, revision = watcher.take()
                elif resource is None:
                    changes = await feed.read_after(revision, timeout=wait)
                else:
                    revision = feed.skip(revision, resource)  # type: ignore[attr-defined]
                    changes = await feed.read_after(revision, timeout=wait, resource=resource)  # type: ignore[call-arg]
                if watcher is None and changes:
                    revision = changes[-1].revision
            except errors.Gone as gone:
                expired(gone)
                yield error_line(gone)
                return
            for chunk, count, last in _rendered(changes, render):
                delivered(count, last)
                yield chunk
            if bookmark and clock.monotonic() >= next_bookmark:
                next_bookmark = clock.monotonic() + every
                if watcher is not None and not watcher.dropped:
                    changes, revision = watcher.take()
                    # handed over while the last batch was being sent: before the bookmark
                    for chunk, count, last in _rendered(changes, render):
                        delivered(count, last)
                        yield chunk
                elif resource is not None:
                    revision = feed.skip(revision, resource)  # type: ignore[attr-defined]
                yield bookmark(revision)
    finally:
        if watcher is not None:
            watcher.drop()


# --- the API watch -------------------------------------------------------------------------------

class _Encoder:
    """Turns objects into event lines: raw JSON, or one-row Tables for `kubectl get -w`."""

    def __init__(self, call: Call):
        self.call = call
        self.table = tables.wants_table(call.accept)
        self.include = call.query.get("includeObject", "Metadata")
        self.first = True

    def line(self, event_type: str, body: str | None, obj: dict[str, Any] | None) -> str:
        if self.table and obj is not None:
            tab = tables.table(self.call.kind, [obj], resource_version=obj["metadata"].get("resourceVersion", ""),
                               include=self.include, with_columns=self.first)
            self.first = False
            return f'{{"type":"{event_type}","object":{dumps(tab)}}}\n'
        return f'{{"type":"{event_type}","object":{body if body is not None else dumps(obj)}}}\n'


class _Filter:
    """Selector bookkeeping: which objects this watcher saw matching in their previous version."""

    def __init__(self, selection: Selection, visible: set[tuple[str, str]]):
        self.selection = selection
        self.visible = visible

    def translate(self, change: Change) -> str | None:
        """The event type to send for a change, or None to send nothing."""
        if self.selection.everything:
            return change.type
        key = (change.namespace, change.name)
        # A creation has no previous version, whatever this watcher's starting list held.
        before = key in self.visible and change.type != "ADDED"
        if change.type == "DELETED":
            self.visible.discard(key)
            return "DELETED" if before or self.selection.matches(change.obj()) else None
        if self.selection.matches(change.obj()):
            self.visible.add(key)
            return "MODIFIED" if before else "ADDED"
        self.visible.discard(key)
        return "DELETED" if before else None


def trigger_of(selection: Selection) -> Trigger | None:
    """The one value this selection requires exactly, for the watcher index (kube-apiserver's
    cacher picks its trigger the same way: a field the selector requires to equal one value):
    the first `field=value`, else the first `label=value` (or `label in (value)`); None when the
    selection requires no single value, and the watcher is then handed every change of its scope."""
    if selection.fields is not None:
        for name, op, value in selection.fields.requirements:
            if op == "=":
                getter = {**COMMON_FIELDS, **selection.kind.field_getters}[name]
                return Trigger(f"field:{name}", value, lambda obj, get=getter: _text(get(obj)))
    if selection.labels is not None and not selection.labels.matches_nothing:
        for requirement in selection.labels.requirements:
            if requirement.operator in ("=", "==", "in") and len(requirement.values) == 1:
                return Trigger(f"label:{requirement.key}", requirement.values[0],
                               lambda obj, key=requirement.key: ((obj.get("metadata") or {}).get("labels") or {}).get(key))
    return None


def _text(value: Any) -> str:
    """A field's value as a field selector compares it (None is the empty string)."""
    return "" if value is None else value


def _renderer(call: Call, keep: _Filter, encoder: _Encoder) -> Render:
    def render(changes: list[Change]) -> list[bytes]:
        lines = []
        for change in changes:
            if change.resource != call.kind.resource or (call.namespace and change.namespace != call.namespace):
                continue
            event_type = keep.translate(change)
            if event_type is None:
                continue
            if call.kind.on_read is not None:  # a custom kind: its requested version, with defaults
                lines.append(encoder.line(event_type, None, call.kind.on_read(change.obj())).encode())
            elif encoder.table:
                lines.append(encoder.line(event_type, None, change.obj()).encode())
            elif event_type == change.type:
                lines.append(change.line())  # encoded once, shared by every watcher
            else:
                lines.append(encoder.line(event_type, change.body, None).encode())
        return lines

    return render


def _listed(call: Call, selection: Selection, query: dict[str, str]) -> tuple[list[dict[str, Any]], int]:
    items, revision, _, _ = list_objects(Call(**{**call.__dict__, "query": query}), selection)
    if call.kind.on_read is not None:
        items = [call.kind.on_read(item) for item in items]
    return items, revision


def _keys(items: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in items}


async def wait_for_revision(revision: int, seconds: float = 3.0) -> None:
    """Until this hub has seen `revision` (it may have been written by another hub process)."""
    feed = await get_feed()
    deadline = REAL.monotonic() + seconds
    while feed.last < revision:
        if REAL.monotonic() > deadline:
            await run_db(require_revision, revision)  # raises the 504 unless the log got there after all
            return
        feed.hint()
        await REAL.sleep(0.05)


def _bookmark(call: Call) -> Callable[[int], bytes]:
    def line(revision: int) -> bytes:
        mark = {"kind": call.kind.kind, "apiVersion": call.kind.api_version,
                "metadata": {"resourceVersion": str(revision)}}
        return f'{{"type":"BOOKMARK","object":{dumps(mark)}}}\n'.encode()

    return line


def _error_stream(error: errors.ApiError) -> AsyncIterator[bytes]:
    async def lines() -> AsyncIterator[bytes]:
        yield b""
        yield error_line(error)

    return lines()


def _expired(call: Call, gone: errors.ApiError) -> None:
    """The dashboard hears of a watch answered 410 inside its stream (kubectl's `get --raw` of lesson 8)."""
    traffic.watch_expired(call.actor, call.kind.plural, call.kind.group, call.namespace, gone.status(), call.user)


async def watch(call: Call) -> Stream:
    selection = Selection.from_query(call.kind, call.query)
    timeout = int_param(call.query, "timeoutSeconds")
    timeout = float(timeout) if timeout else DEFAULT_TIMEOUT * (1 + random.random())
    if call.query.get("sendInitialEvents"):
        raise errors.invalid("ListOptions", "meta.k8s.io", "", [
            {"reason": "FieldValueForbidden", "field": "sendInitialEvents",
             "message": "Forbidden: sendInitialEvents is not supported by this server"}])
    headers = {"Cache-Control": "no-cache, private", "X-Content-Type-Options": "nosniff"}
    requested = call.query.get("resourceVersion", "")
    feed = await get_feed()
    opening = b""
    visible: set[tuple[str, str]] = set()
    encoder = _Encoder(call)  # one per stream: a Table's columns go with its first event only
    if requested in ("", "0"):
        initial, start = await run_db(_listed, call, selection, {})
        visible = _keys(initial)
        opening = "".join(encoder.line("ADDED", None, obj) for obj in initial).encode()
    else:
        start = parse_revision(requested)
        if start > feed.last:
            await wait_for_revision(start)
        if not selection.everything:
            # What matched at the resume point: the list at that revision.
            exact = {"resourceVersion": str(start), "resourceVersionMatch": "Exact"}
            try:
                listed, _ = await run_db(_listed, call, selection, exact)
            except errors.Gone as gone:
                _expired(call, gone)
                return Stream(_error_stream(gone), headers=headers)
            visible = _keys(listed)
    keep = _Filter(selection, visible)
    render = _renderer(call, keep, encoder)
    interest = Interest(call.namespace or "", trigger_of(selection), lambda: keep.visible)
    stream = change_stream(
        start, render=render, timeout=timeout, opening=opening, resource=call.kind.resource, interest=interest,
        bookmark=_bookmark(call) if bool_param(call.query, "allowWatchBookmarks") else None,
        delivered=lambda count, revision: traffic.delivered(call.actor, call.kind, count, revision, call.user,
                                                            call.namespace),
        expired=lambda gone: _expired(call, gone))
    return Stream(stream, headers=headers)
