"""The Content-Security-Policy on every page the dashboard serves, templates without inline script,
and cookies the page's scripts cannot read (HttpOnly) nor another site send (SameSite)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from dashboard import login, security
from tests.dashboard.fakehub import FakeHub, running

pytestmark = pytest.mark.django_db(transaction=True)
TEMPLATES = Path(settings.BASE_DIR) / "templates"


@pytest.fixture
def fake(settings):
    fake = FakeHub(objects={"pods": [], "nodes": []})
    fake.answers[("POST", login.REVIEW_PATH)] = (201, {"status": {"userInfo": {"username": "alice"}}})
    with running(fake) as url:
        settings.KK_HUB_URL = url
        yield fake


@pytest.mark.parametrize("path", ["/", "/login/", "/join/", "/join/qr.svg", "/lessons/", "/static/dashboard/app.js"])
def test_every_page_carries_the_policy(fake, path):
    answer = Client().get(path, HTTP_ACCEPT="text/html")
    policy = answer["Content-Security-Policy"]
    assert policy == security.POLICY
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'" and directives["connect-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"


def test_refusals_carry_it_too(fake):
    assert Client().post("/join/", {"code": "ZZZZZZ"})["Content-Security-Policy"] == security.POLICY


def test_no_template_has_an_inline_script_or_an_event_handler_attribute():
    for template in TEMPLATES.rglob("*.html"):
        text = template.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag, f"{template.name}: inline script {tag}"
        assert not re.search(r"\son[a-z]+\s*=", text), f"{template.name}: an inline event handler"
        assert "<style>" not in text, f"{template.name}: a <style> block (put it in static/)"


def test_the_session_and_csrf_cookies_are_httponly_and_samesite(fake):
    browser = Client()
    browser.get("/login/")
    csrf = browser.cookies[settings.CSRF_COOKIE_NAME]
    assert csrf["httponly"] and csrf["samesite"] == "Strict"
    browser.post("/login/", {"token": "tok-alice"})
    session = browser.cookies[settings.SESSION_COOKIE_NAME]
    assert session["httponly"] and session["samesite"] == "Lax"
