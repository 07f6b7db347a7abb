"""The ASGI application's lifespan: the hub's feed and CRD follower start at lifespan.startup, before
any request, and stop at lifespan.shutdown; requests themselves start nothing."""

from __future__ import annotations

import asyncio

import pytest

from control.api import app as hub
from control.api import crds
from control.api.app import hub_app
from control.serving.asgi import ServedLifespan, application
from control.bootstrap import cluster_bootstrap
from control.storage import feed as feeds
from control.storage import store
from tests.api.client import admin_authorization

pytestmark = pytest.mark.django_db(transaction=True)


async def _get(app, path: str) -> int:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app({"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": [admin_authorization()]},
              receive, send)
    return sent[0]["status"]


def test_lifespan_starts_the_feed_and_crd_follower_before_requests_and_stops_them():
    cluster_bootstrap()

    async def scenario():
        loop = asyncio.get_running_loop()
        assert await _get(hub_app, "/api/v1/namespaces") == 200
        assert loop not in feeds._feeds and loop not in crds._following  # the hub's requests start nothing
        with pytest.raises(feeds.FeedNotStarted):
            await feeds.get_feed()

        lifespan = ServedLifespan(application)
        await lifespan.startup()
        feed, follower = feeds._feeds[loop], crds._following[loop]
        assert not follower.done() and not feed.stopped.is_set()
        assert await feeds.get_feed() is feed
        assert feed._committed in store._listeners  # the feed hears commits
        tasks = list(feed._tasks)

        assert await _get(application, "/api/v1/namespaces") == 200
        assert feeds._feeds[loop] is feed and crds._following[loop] is follower  # started once, by the lifespan

        await lifespan.shutdown()
        assert loop not in feeds._feeds and loop not in crds._following
        assert feed.stopped.is_set() and follower.cancelled() and all(t.done() for t in tasks)
        assert feed._committed not in store._listeners
        assert feed._listener is None or not feed._listener.is_alive()  # PostgreSQL's LISTEN connection closed

    asyncio.run(scenario())


def test_without_a_lifespan_the_first_request_starts_the_hub(monkeypatch):
    """Daphne's runserver sends no lifespan events: the server-facing app starts the hub itself."""
    cluster_bootstrap()
    starts: list[asyncio.AbstractEventLoop] = []
    original = hub.startup

    async def counted():
        starts.append(asyncio.get_running_loop())
        await original()

    monkeypatch.setattr(hub, "startup", counted)

    async def scenario():
        loop = asyncio.get_running_loop()
        assert [await _get(application, "/api/v1/namespaces") for _ in range(3)] == [200, 200, 200]
        assert starts == [loop] and loop in feeds._feeds and not crds._following[loop].done()
        await hub.shutdown()

    asyncio.run(scenario())


def test_a_hub_that_cannot_start_reports_startup_failed(monkeypatch):
    async def broken():
        raise RuntimeError("no database")

    monkeypatch.setattr("control.api.app.startup", broken)
    replies: list[dict] = []

    async def scenario():
        inbox = asyncio.Queue()
        await inbox.put({"type": "lifespan.startup"})

        async def send(message):
            replies.append(message)

        await application({"type": "lifespan"}, inbox.get, send)
        with pytest.raises(RuntimeError, match="the hub failed to start: no database"):
            await ServedLifespan(application).startup()

    asyncio.run(scenario())
    assert replies == [{"type": "lifespan.startup.failed", "message": "the hub failed to start: no database"}]


def test_an_app_that_ends_its_lifespan_without_answering_is_an_error():
    async def silent(scope, receive, send):
        await receive()

    async def scenario():
        with pytest.raises(RuntimeError, match="without answering lifespan.startup"):
            await ServedLifespan(silent).startup()

    asyncio.run(scenario())
