"""Django's handler for the dashboard's pages: each request's sync work on one of a few long-lived
threads (no thread, no database connection per request), with Django's own answers."""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest
from asgiref.sync import sync_to_async
from django.core.exceptions import RequestAborted

from control.serving import asgi
from control.serving.django_handler import PooledASGIHandler


def _get(app, path: str, disconnect: bool = False) -> tuple[int, bytes]:
    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": [(b"host", b"localhost")],
             "server": ("localhost", 80), "client": ("127.0.0.1", 5000), "scheme": "http", "asgi": {"version": "3.0"}}
    sent: list[dict] = []
    messages = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        if messages:
            return messages.pop()
        while not disconnect or not sent or sent[-1].get("more_body"):
            await asyncio.sleep(0 if disconnect else 3600)  # the client stays while the page is answered
        return {"type": "http.disconnect"}  # as Daphne says once the answer is written

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_the_served_pages_go_through_the_pooled_handler():
    assert isinstance(asgi.django_app, PooledASGIHandler)


def test_requests_sync_work_runs_on_the_pool_threads_in_turn(monkeypatch):
    handler = PooledASGIHandler(threads=2)
    seen: list[tuple[int, str]] = []

    async def handle(scope, receive, send):
        # Two thread-sensitive calls of one request: the same thread, one of the pool's.
        first = await sync_to_async(threading.get_ident)()
        second = await sync_to_async(lambda: (threading.get_ident(), threading.current_thread().name))()
        assert first == second[0]
        seen.append(second)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    monkeypatch.setattr(handler, "handle", handle)
    before = threading.active_count()
    for _ in range(6):
        assert _get(handler, "/")[0] == 200
    names = [name for _, name in seen]
    assert names == ["dashboard-0_0", "dashboard-1_0"] * 3, "each executor in turn, its one thread kept"
    assert len({ident for ident, _ in seen}) == 2
    assert threading.active_count() <= before + 2, "no thread per request"


@pytest.mark.django_db
def test_a_page_answers_as_django_does():
    status, body = _get(asgi.django_app, "/login/")
    assert status == 200 and b"<form" in body


@pytest.mark.django_db
def test_a_request_the_client_then_leaves_makes_no_reference_cycle():
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        status, body = _get(asgi.django_app, "/login/", disconnect=True)
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, RequestAborted)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert status == 200 and b"<form" in body
    assert left == []


def test_it_serves_http_only():
    with pytest.raises(ValueError):
        asyncio.run(PooledASGIHandler(threads=1)({"type": "websocket"}, None, None))

