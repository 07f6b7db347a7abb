"""The watch verb: newline-delimited JSON events over one chunked HTTP response.

Guarantees:
- Without a resourceVersion (or with "0") the stream opens with a synthetic ADDED for every
  selected object, then continues from that list's revision; with one, it continues after it.
- Events come in revision order with none lost or repeated; each is one JSON object on one line,
  flushed as soon as it is known. A watch whose resume point was compacted gets one ERROR event
  carrying a 410 Expired Status, then the stream ends (HTTP 200, as Kubernetes does).
- With selectors, an object that stops matching is sent as DELETED and one that starts matching
  as ADDED. Bookmarks are sent when asked for; the stream ends after timeoutSeconds.
"""

from __future__ import annotations

import random
from typing import Any, AsyncIterator

from django.conf import settings

from control.clock import REAL as clock
from control import errors
from control.api import tables, traffic
from control.storage.db import run_db
from control.storage.feed import get_feed
from control.api.request import Call, bool_param, int_param, parse_revision
from control.api.responses import Stream, dumps
from control.api.selection import Selection
from control.api.verbs import list_objects, require_revision
from control.storage.store import Change

DEFAULT_TIMEOUT = 1800  # the real server picks 30–60 minutes


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


def _in_scope(call: Call, change: Change) -> bool:
    return change.resource == call.kind.resource and (not call.namespace or change.namespace == call.namespace)


class _Filter:
    """Selector bookkeeping: which objects this watcher currently sees as matching."""

    def __init__(self, selection: Selection, visible: set[tuple[str, str]]):
        self.selection = selection
        self.visible = visible

    def translate(self, change: Change) -> str | None:
        """The event type to send for a change, or None to send nothing."""
        if self.selection.everything:
            return change.type
        key = (change.namespace, change.name)
        was, now = key in self.visible, change.type != "DELETED" and self.selection.matches(change.obj())
        if change.type == "DELETED":
            self.visible.discard(key)
            return "DELETED" if was or self.selection.matches(change.obj()) else None
        if now:
            self.visible.add(key)
            return "MODIFIED" if was else "ADDED"
        if was:
            self.visible.discard(key)
            return "DELETED"
        return None


async def _events(call: Call, selection: Selection, start: int, initial: list[dict[str, Any]],
                  visible: set[tuple[str, str]], timeout: float, bookmarks: bool) -> AsyncIterator[bytes]:
    encoder = _Encoder(call)
    yield b""  # sends the status line and headers now: clients wait for them before the first event
    if initial:
        yield "".join(encoder.line("ADDED", None, obj) for obj in initial).encode()
    feed = await get_feed()
    keep = _Filter(selection, visible)
    revision = start
    deadline = clock.monotonic() + timeout
    bookmark_every = settings.KK_BOOKMARK_INTERVAL
    next_bookmark = clock.monotonic() + bookmark_every
    while True:
        remaining = deadline - clock.monotonic()
        if remaining <= 0:
            return
        try:
            changes = await feed.read_after(revision, timeout=min(remaining, max(0.05, next_bookmark - clock.monotonic())))
        except errors.Gone as gone:
            yield f'{{"type":"ERROR","object":{dumps(gone.status())}}}\n'.encode()
            return
        lines = []
        for change in changes:
            revision = change.revision
            if not _in_scope(call, change):
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
        if lines:
            traffic.delivered(call.actor, call.kind, len(lines), revision)
            yield b"".join(lines)
        if bookmarks and clock.monotonic() >= next_bookmark:
            next_bookmark = clock.monotonic() + bookmark_every
            mark = {"kind": call.kind.kind, "apiVersion": call.kind.api_version,
                    "metadata": {"resourceVersion": str(revision)}}
            yield f'{{"type":"BOOKMARK","object":{dumps(mark)}}}\n'.encode()


def _initial_state(call: Call, selection: Selection) -> tuple[list[dict[str, Any]], int]:
    items, revision, _, _ = list_objects(Call(**{**call.__dict__, "query": {}}), selection)
    if call.kind.on_read is not None:
        items = [call.kind.on_read(item) for item in items]
    return items, revision


async def wait_for_revision(revision: int, seconds: float = 3.0) -> None:
    """Until this hub has seen `revision` (it may have been written by another hub process)."""
    feed = await get_feed()
    deadline = clock.monotonic() + seconds
    while feed.last < revision:
        if clock.monotonic() > deadline:
            await run_db(require_revision, revision)  # raises the 504 unless the log got there after all
            return
        feed.hint()
        await clock.sleep(0.05)


async def watch(call: Call) -> Stream:
    selection = Selection.from_query(call.kind, call.query)
    timeout = int_param(call.query, "timeoutSeconds")
    timeout = float(timeout) if timeout else DEFAULT_TIMEOUT * (1 + random.random())
    if call.query.get("sendInitialEvents"):
        raise errors.invalid("ListOptions", "meta.k8s.io", "", [
            {"reason": "FieldValueForbidden", "field": "sendInitialEvents",
             "message": "Forbidden: sendInitialEvents is not supported by this server"}])
    requested = call.query.get("resourceVersion", "")
    feed = await get_feed()
    initial: list[dict[str, Any]] = []
    visible: set[tuple[str, str]] = set()
    if requested in ("", "0"):
        initial, start = await run_db(_initial_state, call, selection)
        visible = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in initial}
    else:
        start = parse_revision(requested)
        if start > feed.last:
            await wait_for_revision(start)
        if not selection.everything:
            current, _ = await run_db(_initial_state, call, selection)
            visible = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in current}
    stream = _events(call, selection, start, initial, visible, timeout, bool_param(call.query, "allowWatchBookmarks"))
    return Stream(stream, headers={"Cache-Control": "no-cache, private", "X-Content-Type-Options": "nosniff"})

