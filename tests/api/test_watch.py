"""The one watch loop (fake feed, fake clock) and the API watch's selector semantics."""

from __future__ import annotations

import asyncio
import json

import pytest

from control import errors
from control import kinds as registry
from control.api.request import Call
from control.api.watch import change_stream, watch
from control.clock import FakeClock
from control.storage.store import Change
from tests.api.client import admin_authorization


class FakeFeed:
    """Hands out prepared batches; an empty read lets the fake time pass by its timeout."""

    def __init__(self, clock: FakeClock, batches: list[list[Change] | errors.ApiError]):
        self.clock, self.batches, self.asked = clock, list(batches), []

    async def read_after(self, revision: int, *, timeout: float) -> list[Change]:
        self.asked.append(revision)
        if self.batches:
            batch = self.batches.pop(0)
            if isinstance(batch, errors.ApiError):
                raise batch
            return batch
        self.clock.t += timeout
        return []


def change(revision: int, name: str = "a", type_: str = "ADDED", body: str | None = None) -> Change:
    return Change(revision=revision, type=type_, resource="/configmaps", namespace="default", name=name,
                  actor="t", created_at=0.0, body=json.dumps({"metadata": {"name": name}}) if body is None else body)


def run(stream) -> list[bytes]:
    async def collect():
        return [chunk async for chunk in stream]
    return asyncio.run(collect())


def test_the_stream_sends_headers_then_batches_in_order_and_ends_at_its_timeout(settings):
    settings.KK_BOOKMARK_INTERVAL = 60
    clock = FakeClock(1000.0)
    feed = FakeFeed(clock, [[change(5), change(6, "b")], [change(7, "c")]])
    seen = []
    chunks = run(change_stream(4, render=lambda cs: [f"{c.revision}\n".encode() for c in cs], timeout=30,
                               delivered=lambda n, rv: seen.append((n, rv)), feed=feed, clock=clock,
                               opening=b"first\n"))
    assert chunks == [b"", b"first\n", b"5\n6\n", b"7\n"]
    assert feed.asked == [4, 6, 7] and seen == [(2, 6), (1, 7)]
    assert clock.now() == 1030.0


def test_a_large_batch_is_rendered_and_sent_in_parts_each_only_when_the_last_was_taken(settings, monkeypatch):
    from control.api import watch as watch_module
    monkeypatch.setattr(watch_module, "SLICE_BYTES", 60)
    settings.KK_BOOKMARK_INTERVAL = 60
    clock = FakeClock(1000.0)
    # 40 small changes a lagging watcher missed (16 bodies of 2 bytes stay under SLICE_BYTES)
    feed = FakeFeed(clock, [[change(rv, f"n{rv}", body="{}") for rv in range(5, 45)]])
    rendered, seen = [], []

    def render(changes):
        rendered.extend(c.revision for c in changes)
        return [b"x" * 6 for c in changes if c.revision != 44]  # the last change shows nothing

    async def first_two():
        stream = change_stream(4, render=render, timeout=30, feed=feed, clock=clock,
                               delivered=lambda n, rv: seen.append((n, rv)))
        assert await stream.__anext__() == b""
        part = await stream.__anext__()
        assert len(part) == 16 * 6 and rendered == list(range(5, 21)), "one part, nothing rendered ahead"
        rest = [chunk async for chunk in stream]
        return rest

    rest = asyncio.run(first_two())
    assert [len(chunk) for chunk in rest] == [16 * 6, 7 * 6]
    assert seen == [(16, 20), (16, 36), (7, 44)], "the last part carries the batch's last revision"


def test_large_objects_are_rendered_a_few_at_a_time_so_a_stalled_watcher_holds_one_chunk(settings, monkeypatch):
    from control.api import watch as watch_module
    monkeypatch.setattr(watch_module, "SLICE_BYTES", 250)
    settings.KK_BOOKMARK_INTERVAL = 60
    clock = FakeClock(1000.0)
    feed = FakeFeed(clock, [[change(rv, f"n{rv}", body="x" * 100) for rv in range(1, 11)]])  # 10 objects of 100 B
    rendered, seen = [], []

    def render(changes):
        rendered.append([c.revision for c in changes])
        return [c.body.encode() for c in changes]

    async def first_then_rest():
        stream = change_stream(0, render=render, timeout=30, feed=feed, clock=clock,
                               delivered=lambda n, rv: seen.append((n, rv)))
        assert await stream.__anext__() == b""
        first = await stream.__anext__()
        assert len(first) == 300 and rendered == [[1, 2, 3]], "three bodies reach the bound: nothing rendered ahead"
        return [first] + [chunk async for chunk in stream]

    chunks = asyncio.run(first_then_rest())
    assert [len(chunk) for chunk in chunks] == [300, 300, 300, 100]
    assert rendered == [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10]]
    assert seen == [(3, 3), (3, 6), (3, 9), (1, 10)]


def test_bookmarks_come_at_the_one_interval_with_the_newest_revision(settings):
    settings.KK_BOOKMARK_INTERVAL = 10
    clock = FakeClock(1000.0)
    feed = FakeFeed(clock, [[change(5)]])
    chunks = run(change_stream(4, render=lambda cs: [], timeout=25, feed=feed, clock=clock,
                               bookmark=lambda rv: f"mark {rv}\n".encode()))
    assert chunks == [b"", b"mark 5\n", b"mark 5\n"]  # at 10 s and 20 s; the dropped change still moves it


def test_no_bookmarks_unless_asked(settings):
    settings.KK_BOOKMARK_INTERVAL = 1
    clock = FakeClock(1000.0)
    assert run(change_stream(0, render=lambda cs: [], timeout=5, feed=FakeFeed(clock, []), clock=clock)) == [b""]


def test_a_compacted_start_is_one_error_line_with_a_410_status():
    clock = FakeClock(1000.0)
    feed = FakeFeed(clock, [errors.expired("too old resource version: 1 (9)")])
    chunks = run(change_stream(1, render=lambda cs: [], timeout=5, feed=feed, clock=clock))
    event = json.loads(chunks[-1])
    assert event["type"] == "ERROR" and event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    assert len(chunks) == 2


# --- the API watch against a real store ------------------------------------------------------------

pytestmark_db = pytest.mark.django_db(transaction=True)
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _configmap(name: str, **labels: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}})


def _events(api, query: dict[str, str], count: int, *, then: list[tuple[str, str, str]] = ()) -> list[tuple[str, str]]:
    """The first `count` events of a configmap watch; `then` are (method, path, body) requests made
    once the watch is running."""
    kind = registry.by_resource("", "v1", "configmaps")
    call = Call(method="GET", kind=kind, namespace="default", name="", subresource="", query=query, actor="t")

    async def read():
        stream = await watch(call)
        lines = []
        async for chunk in stream.chunks:
            if not chunk:  # the headers went out: the watch is running
                for method, path, body in then:
                    scope = {"type": "http", "method": method, "path": path, "query_string": b"",
                             "headers": [(b"content-type", b"application/json"), admin_authorization()]}
                    await api._call(scope, body.encode())
            lines += [json.loads(x) for x in chunk.splitlines() if x]
            if len(lines) >= count:
                break
        await stream.chunks.aclose()
        return lines

    return [(e["type"], e["object"]["metadata"]["name"]) for e in api.runner.run(read())]


@pytestmark_db
def test_a_selector_watch_resumed_from_a_list_reports_later_creations_as_added(api):
    assert api.post(CONFIGMAPS, _configmap("old", app="web")).status_code == 201
    listed = json.loads(api.get(CONFIGMAPS, QUERY_STRING="labelSelector=app%3Dweb").content)
    revision = listed["metadata"]["resourceVersion"]
    api.post(CONFIGMAPS, _configmap("new", app="web"))  # created after the list: ADDED, not MODIFIED
    api.post(CONFIGMAPS, _configmap("other", app="db"))  # does not match: nothing
    api.put(f"{CONFIGMAPS}/other", _configmap("other", app="web"))  # starts matching: ADDED
    api.put(f"{CONFIGMAPS}/new", _configmap("new", app="web", tier="x"))  # matched and matches: MODIFIED
    api.delete(f"{CONFIGMAPS}/new")
    events = _events(api, {"watch": "1", "resourceVersion": revision, "labelSelector": "app=web",
                           "timeoutSeconds": "5"}, 4)
    assert events == [("ADDED", "new"), ("ADDED", "other"), ("MODIFIED", "new"), ("DELETED", "new")]


@pytestmark_db
def test_an_object_that_stops_or_starts_matching_is_deleted_or_added(api):
    api.post(CONFIGMAPS, _configmap("old", app="web"))
    api.post(CONFIGMAPS, _configmap("late", app="db"))
    revision = json.loads(api.get(CONFIGMAPS).content)["metadata"]["resourceVersion"]
    events = _events(api, {"watch": "1", "resourceVersion": revision, "labelSelector": "app=web",
                           "timeoutSeconds": "5"}, 3, then=[
        ("PUT", f"{CONFIGMAPS}/old", _configmap("old", app="db")),
        ("PUT", f"{CONFIGMAPS}/late", _configmap("late", app="web")),
        ("PUT", f"{CONFIGMAPS}/late", _configmap("late", app="web", tier="x")),
    ])
    assert events == [("DELETED", "old"), ("ADDED", "late"), ("MODIFIED", "late")]


@pytestmark_db
def test_a_watch_without_a_revision_opens_with_the_selected_objects(api):
    api.post(CONFIGMAPS, _configmap("a", app="web"))
    api.post(CONFIGMAPS, _configmap("b", app="db"))
    assert _events(api, {"watch": "1", "labelSelector": "app=web", "timeoutSeconds": "5"}, 1) == [("ADDED", "a")]


@pytestmark_db
def test_a_resume_point_that_is_not_a_number_is_a_400_without_python_text(api):
    answer = api.get(CONFIGMAPS, QUERY_STRING="watch=1&resourceVersion=abc")
    status = json.loads(answer.content)
    assert answer.status_code == 400
    assert status["message"] == 'resourceVersion: Invalid value: "abc": must be an integer'


@pytestmark_db
def test_a_selector_watch_from_a_compacted_revision_is_one_410_error_event(api):
    from control.storage import store
    from control.storage.feed import get_feed

    for i in range(6):
        api.post(CONFIGMAPS, _configmap(f"c{i}", app="web"))
    through = store.log_compact(max_entries=2, max_age=10_000)
    kind = registry.by_resource("", "v1", "configmaps")
    call = Call(method="GET", kind=kind, namespace="default", name="", subresource="", actor="t",
                query={"watch": "1", "resourceVersion": "1", "labelSelector": "app=web", "timeoutSeconds": "5"})

    async def read():
        (await get_feed()).drop_through(through)
        stream = await watch(call)
        return b"".join([chunk async for chunk in stream.chunks])

    lines = api.runner.run(read()).splitlines()
    assert len(lines) == 1
    event = json.loads(lines[0])
    assert event["type"] == "ERROR" and event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"


class ResourceFeed(FakeFeed):
    """A FakeFeed that also knows the newest revision and lets a reader of one resource skip."""

    def __init__(self, clock: FakeClock, batches: list, last: int):
        super().__init__(clock, batches)
        self.last, self.skipped = last, []

    def skip(self, revision: int, resource: str) -> int:
        self.skipped.append((revision, resource))
        return max(revision, self.last)

    async def read_after(self, revision: int, *, timeout: float, resource: str | None = None) -> list[Change]:
        assert resource == "/configmaps"
        return await super().read_after(revision, timeout=timeout)


def test_a_watch_of_one_resource_steps_over_the_others_and_bookmarks_the_newest_revision(settings):
    settings.KK_BOOKMARK_INTERVAL = 10
    clock = FakeClock(1000.0)
    feed = ResourceFeed(clock, [], last=40)  # revisions 5..40 were all other resources' changes
    chunks = run(change_stream(4, render=lambda cs: [], timeout=15, feed=feed, clock=clock, resource="/configmaps",
                               bookmark=lambda rv: f"mark {rv}\n".encode()))
    assert chunks == [b"", b"mark 40\n"] and feed.asked[0] == 40
