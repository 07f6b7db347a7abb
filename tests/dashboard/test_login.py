"""Dashboard login, through Django's test client and Channels' communicator against the fake hub:
with authentication on, nothing works before login (pages redirect, fragments 401, websockets are
refused); a token or a code the hub accepts logs the browser in, and from then on every request to
the hub carries that user's token and a User-Agent naming them; logging out ends it."""

from __future__ import annotations

import asyncio

import pytest
from channels.sessions import SessionMiddlewareStack
from channels.testing import WebsocketCommunicator
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from control import workshop
from control.auth import tokenfile
from dashboard import login
from dashboard.consumers import LiveConsumer
from tests.dashboard.fakehub import FakeHub, running, status

pytestmark = pytest.mark.django_db(transaction=True)
REVIEW = ("POST", login.REVIEW_PATH)


@pytest.fixture
def fake(settings):
    settings.KK_AUTHENTICATION = "on"
    fake = FakeHub(objects={"pods": [], "nodes": [], "deployments": [], "replicasets": [], "services": [],
                            "endpoints": []})
    fake.answers[REVIEW] = (201, {"status": {"userInfo": {"username": "alice"}}})
    fake.answers[("PATCH", "/api/v1/nodes/node-1")] = (200, {"metadata": {"name": "node-1"}})
    with running(fake) as url:
        settings.KK_HUB_URL = url
        yield fake


@pytest.fixture
def browser():
    return Client()


def test_before_login_pages_redirect_and_fragments_are_401(fake, browser):
    page = browser.get("/", HTTP_ACCEPT="text/html")
    assert page.status_code == 302 and page["Location"] == "/login/?next=%2F"
    assert browser.post("/actions/cordon/", {"name": "node-1"}).status_code == 401
    assert browser.get("/lessons/", HTTP_HX_REQUEST="true").status_code == 401
    assert browser.get("/timeline/at/?revision=1").status_code == 401
    assert fake.requests == []  # nothing reached the hub


def test_a_token_the_hub_accepts_logs_in_and_every_request_acts_as_that_user(fake, browser):
    assert browser.get("/login/").status_code == 200
    answer = browser.post("/login/", {"token": "tok-alice", "next": "/"})
    assert answer.status_code == 302 and answer["Location"] == "/"
    review = fake.requests[-1]
    assert (review.path, review.authorization) == (login.REVIEW_PATH, "Bearer tok-alice")
    assert "tok-alice" not in str(browser.cookies)  # the cookie holds the session key only
    page = browser.get("/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200 and 'data-user="alice"' in page.content.decode()
    assert browser.post("/actions/cordon/", {"name": "node-1"}).status_code == 200
    # (the same token was checked at login under another name: the action still travels as alice's)
    patch = fake.requests[-1]
    assert (patch.method, patch.path, patch.authorization) == ("PATCH", "/api/v1/nodes/node-1", "Bearer tok-alice")
    assert patch.agent.startswith("dashboard/alice ")


def test_a_refused_token_shows_the_hubs_reason_and_stores_nothing(fake, browser):
    fake.answers[REVIEW] = (401, status(401, "Unauthorized", "Unauthorized"))
    answer = browser.post("/login/", {"token": "not-a-token"})
    assert answer.status_code == 401 and "401 Unauthorized" in answer.content.decode()
    assert browser.get("/", HTTP_ACCEPT="text/html").status_code == 302


def test_an_open_redirect_is_not_followed(fake, browser):
    answer = browser.post("/login/", {"token": "tok-alice", "next": "https://evil.example/"})
    assert answer["Location"] == "/"


def test_join_codes_and_the_instructors_one_time_code_log_in(fake, browser):
    alice_token = tokenfile.token_of(settings.DATA_DIR, "alice")
    code = workshop.join_code(settings.DATA_DIR, "alice")
    assert browser.post("/login/", {"code": code.lower()}).status_code == 302
    assert fake.requests[-1].authorization == f"Bearer {alice_token}"
    once = workshop.instructor_code(settings.DATA_DIR)
    fresh = Client()
    assert fresh.get(f"/login/?code={once}").status_code == 302  # the link printed at start
    assert fake.requests[-1].authorization == f"Bearer {tokenfile.admin_token(settings.DATA_DIR)}"
    again = Client().get(f"/login/?code={once}")
    assert again.status_code == 401 and "Unknown or used code" in again.content.decode()


def test_logout_ends_the_session(fake, browser):
    browser.post("/login/", {"token": "tok-alice"})
    assert browser.post("/logout/").status_code == 302
    assert browser.get("/", HTTP_ACCEPT="text/html").status_code == 302


def test_with_authentication_off_the_dashboard_needs_no_login(fake, browser, settings):
    settings.KK_AUTHENTICATION = "off"
    assert browser.get("/", HTTP_ACCEPT="text/html").status_code == 200


async def _session_cookie(user: str, token: str) -> str:
    store = SessionStore()
    await store.aset(login.SESSION_USER, user)
    await store.aset(login.SESSION_TOKEN, token)
    await store.asave()
    return f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


def test_the_live_websocket_needs_a_login_and_lists_as_the_user(fake):
    app = SessionMiddlewareStack(LiveConsumer.as_asgi())

    async def scenario():
        anonymous = WebsocketCommunicator(app, "/ws/live/")
        ok, _ = await anonymous.connect()
        assert not ok
        cookie = await _session_cookie("alice", "tok-alice")
        mine = WebsocketCommunicator(app, "/ws/live/", headers=[(b"cookie", cookie.encode())])
        ok, _ = await mine.connect()
        assert ok
        await mine.send_json_to({"op": "watch", "revision": None})
        assert (await mine.receive_json_from(timeout=5))["t"] == "snapshot"
        await mine.disconnect()
        # The session was read on asgiref's worker thread: close its connection there, or a later
        # test without the database would find it open (Channels closes old connections per message).
        await sync_to_async(connections.close_all)()

    asyncio.run(asyncio.wait_for(scenario(), timeout=10))
    snapshot = next(r for r in fake.requests if r.path == "/kubekitchen/snapshot")
    assert snapshot.authorization == "Bearer tok-alice" and snapshot.agent.startswith("dashboard/alice ")
