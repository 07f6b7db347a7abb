"""Dashboard login, through Django's test client and Channels' communicator against the fake hub:
with authentication on, nothing works before login (pages redirect, fragments 401, websockets are
refused); a token or a code the hub accepts logs the browser in, and from then on every request to
the hub carries that user's token and a User-Agent naming them; logging out ends it."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest
from channels.sessions import SessionMiddlewareStack
from channels.testing import WebsocketCommunicator
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from control import roster
from control.auth import tokenfile
from control.clock import FakeClock
from dashboard import login, throttle
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


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(throttle, "FRONT_DOOR", throttle.Failures(clock=clock))
    return clock


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


def test_a_code_logs_in_by_post_and_a_get_only_shows_the_confirm_button(fake, browser):
    alice_token = tokenfile.token_of(settings.DATA_DIR, "alice")
    code = roster.join_code(settings.DATA_DIR, "alice")
    shown = browser.get(f"/login/?code={code}&next=/lessons/")
    page = shown.content.decode()
    assert shown.status_code == 200 and 'id="login-confirm"' in page and f'value="{code}"' in page
    assert fake.requests == [] and browser.get("/", HTTP_ACCEPT="text/html").status_code == 302, \
        "a link another site makes a visitor open logs nobody in (login CSRF)"
    answer = browser.post("/login/", {"code": code.lower(), "next": "/lessons/"})
    assert answer.status_code == 302 and answer["Location"] == "/lessons/"
    assert fake.requests[-1].authorization == f"Bearer {alice_token}"


def test_the_login_post_is_csrf_checked():
    strict = Client(enforce_csrf_checks=True)
    code = roster.join_code(settings.DATA_DIR, "alice")
    assert strict.post("/login/", {"code": code}).status_code == 403


def test_the_start_address_logs_the_instructor_in_once(fake, browser):
    fake.answers[REVIEW] = (201, {"status": {"userInfo": {"username": tokenfile.ADMIN}}})
    once = roster.instructor_code(settings.DATA_DIR)
    landed = browser.get(f"/?code={once}", HTTP_ACCEPT="text/html")
    assert landed.status_code == 302 and landed["Location"] == "/"  # the code leaves the address bar
    assert fake.requests[-1].authorization == f"Bearer {tokenfile.admin_token(settings.DATA_DIR)}"
    assert browser.get("/", HTTP_ACCEPT="text/html").status_code == 200
    again = Client().get(f"/?code={once}", HTTP_ACCEPT="text/html")
    assert again.status_code == 302 and again["Location"].startswith("/login/?code=")
    used = Client().post("/login/", {"code": once})
    assert used.status_code == 401 and "Unknown or used code" in used.content.decode()


def test_an_attendee_code_in_the_start_address_only_fills_the_form(fake):
    code = roster.join_code(settings.DATA_DIR, "alice")
    visitor = Client()
    landed = visitor.get(f"/?code={code}", HTTP_ACCEPT="text/html")
    assert landed.status_code == 302 and landed["Location"].startswith(f"/login/?code={code}")
    assert fake.requests == [] and visitor.get("/", HTTP_ACCEPT="text/html").status_code == 302


def test_with_authentication_off_the_start_address_changes_nothing(fake, settings):
    settings.KK_AUTHENTICATION = "off"
    once = roster.instructor_code(settings.DATA_DIR)
    assert Client().get(f"/?code={once}", HTTP_ACCEPT="text/html").status_code == 200
    assert roster.peek(settings.DATA_DIR, once) is not None, "the code was not used"


def test_wrong_tokens_and_codes_are_throttled(fake, browser, clock):
    fake.answers[REVIEW] = (401, status(401, "Unauthorized", "Unauthorized"))
    for _ in range(throttle.PER_CLIENT):
        assert browser.post("/login/", {"token": "guess"}).status_code == 401
    held = browser.post("/login/", {"token": "tok-alice"})
    assert held.status_code == 429 and held["Retry-After"] == "60" and 'id="login-error"' in held.content.decode()
    clock.t += 60
    fake.answers[REVIEW] = (201, {"status": {"userInfo": {"username": "alice"}}})
    assert browser.post("/login/", {"token": "tok-alice"}).status_code == 302


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


def test_another_users_drain_progress_is_not_readable(fake, monkeypatch):
    from dashboard import drain, views

    drains = drain.Drains()
    monkeypatch.setattr(views, "DRAINS", drains)
    drains.progress[("alice", "node-1")] = drain.Progress("node-1", state="evicting", pods=["default/web-0"])
    alice, bob = Client(), Client()
    alice.post("/login/", {"token": "tok-alice"})
    fake.answers[REVIEW] = (201, {"status": {"userInfo": {"username": "bob"}}})
    bob.post("/login/", {"token": "tok-bob"})
    assert alice.get("/drain/node-1/").status_code == 200
    assert bob.get("/drain/node-1/").status_code == 404


def test_an_attendees_traffic_form_sends_to_a_service_of_her_namespace(fake, browser):
    """The form has no namespace field: an attendee's short name is one of her namespace (the hub
    lets her send only there, as the Service's proxy); anyone else's stays in default."""
    line = {"seq": 0, "code": 200, "pod": "pasta-a", "service": "alice/pasta"}
    fake.raw[("POST", "/kubekitchen/traffic")] = (200, (json.dumps(line) + "\n").encode(), "application/x-ndjson")
    code = roster.join_code(settings.DATA_DIR, "alice")
    assert browser.post("/login/", {"code": code, "next": "/"}).status_code == 302
    assert browser.post("/traffic/", {"target": "pasta", "node": "node-1", "count": "2"}).status_code == 200
    assert fake.requests[-1].query == {"node": "node-1", "target": "pasta", "namespace": "alice", "count": "2"}
    fake.answers[REVIEW] = (201, {"status": {"userInfo": {"username": "carol"}}})  # no attendee
    other = Client()
    assert other.post("/login/", {"token": "tok-carol", "next": "/"}).status_code == 302
    assert other.post("/traffic/", {"target": "pasta", "node": "node-1", "count": "2"}).status_code == 200
    assert fake.requests[-1].query["namespace"] == "default"


def test_reading_a_stored_sessions_identity_makes_no_reference_cycle():
    """Django's `aget` would read the session inside an `except AttributeError` block that
    `sync_to_async` carries into its thread: a cycle holding the request, on every page."""
    async def scenario():
        cookie = await _session_cookie("alice", "tok-alice")
        stored = SessionStore(session_key=cookie.partition("=")[2])  # as the middleware makes it: not read yet
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            identity = await login.identity_of(stored)
            gc.collect()
            left = [o for o in gc.garbage if isinstance(o, AttributeError)]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
        await sync_to_async(connections.close_all)()
        return identity, left

    identity, left = asyncio.run(scenario())
    assert identity is not None and identity.user == "alice" and identity.token == "tok-alice"
    assert left == []
