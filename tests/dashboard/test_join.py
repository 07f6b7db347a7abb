"""The join page against the fake hub (authentication on): an attendee picks their name or types
their code, is logged in as themselves and gets their kubeconfig (download and one-liner); the
instructor's page shows the QR code of the join page; unknown names and codes are refused."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from control import workshop
from control.auth import tokenfile
from dashboard import join, login
from tests.dashboard.fakehub import FakeHub, running

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fake(settings):
    settings.KK_AUTHENTICATION = "on"
    fake = FakeHub()
    with running(fake) as url:
        settings.KK_HUB_URL = url
        yield fake


@pytest.fixture
def alice():
    token = tokenfile.token_of(settings.DATA_DIR, "alice", (workshop.ATTENDEES,))
    workshop.write_kubeconfig(settings.DATA_DIR, "alice", "https://127.0.0.1:8001", token, b"")
    return token, workshop.join_code(settings.DATA_DIR, "alice")


def says(fake: FakeHub, user: str) -> None:
    fake.answers[("POST", login.REVIEW_PATH)] = (201, {"status": {"userInfo": {"username": user}}})


def test_picking_a_name_logs_in_and_shows_the_kubeconfig(fake, alice):
    token, code = alice
    says(fake, "alice")
    browser = Client()
    page = browser.get("/join/").content.decode()
    assert 'name="name" value="alice"' in page
    answer = browser.post("/join/", {"name": "alice"})
    assert answer.status_code == 302 and answer["Location"] == "/join/"
    assert fake.requests[-1].authorization == f"Bearer {token}"
    page = browser.get("/join/").content.decode()
    assert 'data-user="alice"' in page and f"/join/{code}/kubeconfig" in page
    assert f"curl -fsSo kitchen-alice.kubeconfig http://testserver/join/{code}/kubeconfig" in page
    download = Client().get(f"/join/{code}/kubeconfig")
    assert download.status_code == 200 and "namespace: alice" in download.content.decode()
    assert download["Content-Disposition"] == 'attachment; filename="kitchen-alice.kubeconfig"'
    assert browser.get("/", HTTP_ACCEPT="text/html").status_code == 200  # the dashboard is logged in too


def test_a_typed_code_joins_too_and_unknown_ones_are_refused(fake, alice):
    says(fake, "alice")
    assert Client().post("/join/", {"code": alice[1].lower()}).status_code == 302
    assert Client().post("/join/", {"name": "mallory"}).status_code == 401
    assert Client().post("/join/", {"code": "ZZZZZZ"}).status_code == 401
    once = workshop.instructor_code(settings.DATA_DIR)
    assert Client().post("/join/", {"code": once}).status_code == 401  # not a join code
    assert Client().get("/join/ZZZZZZ/kubeconfig").status_code == 404


def test_the_join_page_speaks_korean(fake, alice):
    browser = Client()
    browser.cookies["django_language"] = "ko"
    assert "워크숍" in browser.get("/join/").content.decode()


def test_the_instructor_sees_the_qr_code_and_an_attendee_does_not(fake, alice):
    admin = Client()
    says(fake, tokenfile.ADMIN)
    admin.post("/login/", {"token": tokenfile.admin_token(settings.DATA_DIR)})
    assert 'id="join-qr"' in admin.get("/", HTTP_ACCEPT="text/html").content.decode()
    attendee = Client()
    says(fake, "alice")
    attendee.post("/join/", {"name": "alice"})
    assert 'id="join-qr"' not in attendee.get("/", HTTP_ACCEPT="text/html").content.decode()
    svg = Client().get("/join/qr.svg")
    assert svg["Content-Type"] == "image/svg+xml" and svg.content.lstrip().startswith(b"<?xml")
    assert b"<path" in svg.content and join.qr_svg("http://a/join/") != join.qr_svg("http://b/join/")
