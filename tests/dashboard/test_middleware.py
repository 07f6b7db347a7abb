"""Django's security, session, CSRF and clickjacking middleware run on the event loop
(`dashboard.middleware`): in an async stack the same answers, cookies and refusals as Django's own,
with a thread hop only where the session is saved or a big form is parsed."""

from __future__ import annotations

import asyncio
import re

import pytest
from django.conf import settings
from django.test import AsyncClient

from dashboard import login, middleware
from tests.dashboard.fakehub import FakeHub, running

pytestmark = pytest.mark.django_db(transaction=True)
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture(autouse=True)
def _close_thread_connections():
    """The session hops leave a connection open on asgiref's shared sync thread; closed here, while
    this test may still use the database, so later tests without database access find none there."""
    yield
    from asgiref.sync import sync_to_async
    from django.db import connections

    asyncio.run(sync_to_async(connections.close_all)())


@pytest.fixture
def fake(settings):
    fake = FakeHub(objects={"pods": [], "nodes": []})
    fake.answers[("POST", login.REVIEW_PATH)] = (201, {"status": {"userInfo": {"username": "alice"}}})
    with running(fake) as url:
        settings.KK_HUB_URL = url
        yield fake


@pytest.fixture
def hops(monkeypatch):
    """The hooks sent to the thread (by name), as dashboard.middleware sends them."""
    sent = []
    real = middleware.sync_to_async

    def counting(fn, **kwargs):
        sent.append(getattr(fn, "__qualname__", getattr(getattr(fn, "func", None), "__qualname__", "?")))
        return real(fn, **kwargs)

    monkeypatch.setattr(middleware, "sync_to_async", counting)
    return sent


def test_a_page_gets_django_s_headers_and_csrf_cookie_without_a_hop(fake, hops):
    answer = asyncio.run(AsyncClient().get("/login/", headers={"accept": "text/html"}))
    assert answer.status_code == 200
    assert answer["X-Frame-Options"] == "DENY" and answer["X-Content-Type-Options"] == "nosniff"
    assert answer["Referrer-Policy"] == "same-origin" and "Content-Security-Policy" in answer
    assert settings.CSRF_COOKIE_NAME in answer.cookies
    assert hops == [], "nothing to save, a small request: every hook on the loop"


def test_a_post_without_the_csrf_token_is_refused_and_with_it_logs_in_saving_the_session_on_the_thread(fake, hops):
    async def scenario():
        browser = AsyncClient(enforce_csrf_checks=True)
        refused = await browser.post("/login/", {"token": "tok-alice"})
        form = await browser.get("/login/")
        token = CSRF_FIELD.search(form.content.decode()).group(1)
        accepted = await browser.post("/login/", {"token": "tok-alice", "csrfmiddlewaretoken": token, "next": "/"})
        return refused, accepted, browser

    refused, accepted, browser = asyncio.run(scenario())
    assert refused.status_code == 403
    assert accepted.status_code == 302 and settings.SESSION_COOKIE_NAME in accepted.cookies
    assert any("SessionMiddleware.process_response" in hop for hop in hops), hops


def test_a_big_form_is_checked_for_csrf_on_the_thread(fake, hops):
    big = "x" * (middleware.FORM_ON_LOOP_BYTES + 1)
    answer = asyncio.run(AsyncClient(enforce_csrf_checks=True).post("/login/", {"token": big}))
    assert answer.status_code == 403
    assert any("process_view" in hop for hop in hops), hops
