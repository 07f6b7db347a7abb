"""The join page against the fake hub (authentication on): a name is claimed once (the first browser
gets it, the next is told it is taken and gets neither the session nor the kubeconfig), a code
still gets in, the instructor releases a claim; codes mode lists no names; wrong codes are
throttled (fake clock); the QR code and the one-liner carry the address attendees can reach."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings
from django.test import Client

from control import roster, workshop
from control.auth import tokenfile
from control.clock import FakeClock
from dashboard import attendees, join, login, reach, throttle
from tests.dashboard.fakehub import FakeHub, running

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fake(settings):
    settings.KK_AUTHENTICATION = "on"
    settings.KK_JOIN = "names"
    fake = FakeHub()
    with running(fake) as url:
        settings.KK_HUB_URL = url
        yield fake


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(throttle, "FRONT_DOOR", throttle.Failures(clock=clock))
    return clock


@pytest.fixture(autouse=True)
def no_claims():
    """The tests share one data folder: each starts with every name free, and leaves them free."""
    for name in roster.claimed(settings.DATA_DIR):
        roster.release(settings.DATA_DIR, name)
    yield
    for name in roster.claimed(settings.DATA_DIR):
        roster.release(settings.DATA_DIR, name)


@pytest.fixture
def amara():
    token = tokenfile.token_of(settings.DATA_DIR, "amara", (workshop.ATTENDEES,))
    roster.write_kubeconfig(settings.DATA_DIR, "amara", "https://127.0.0.1:8001", token, b"")
    return token, roster.join_code(settings.DATA_DIR, "amara")


def says(fake: FakeHub, user: str) -> None:
    fake.answers[("POST", login.REVIEW_PATH)] = (201, {"status": {"userInfo": {"username": user}}})


def logged_in(browser: Client) -> bool:
    return browser.get("/", HTTP_ACCEPT="text/html").status_code == 200


def test_picking_a_name_logs_in_and_shows_the_kubeconfig(fake, amara):
    token, code = amara
    says(fake, "amara")
    browser = Client()
    page = browser.get("/join/").content.decode()
    assert 'name="name" value="amara">' in page
    answer = browser.post("/join/", {"name": "amara"})
    assert answer.status_code == 302 and answer["Location"] == "/join/"
    assert fake.requests[-1].authorization == f"Bearer {token}"
    page = browser.get("/join/").content.decode()
    assert 'data-user="amara"' in page and f"/join/{code}/kubeconfig" in page and f'id="my-code" class="code">{code}' in page
    assert f"curl -fsSo kitchen-amara.kubeconfig http://testserver/join/{code}/kubeconfig" in page
    download = Client().get(f"/join/{code}/kubeconfig")
    assert download.status_code == 200 and "namespace: amara" in download.content.decode()
    assert download["Content-Disposition"] == 'attachment; filename="kitchen-amara.kubeconfig"'
    assert logged_in(browser)  # the dashboard is logged in too


def test_two_browsers_race_for_one_name_and_one_wins(fake, amara):
    says(fake, "amara")
    first, second = Client(), Client()
    assert 'value="amara">' in second.get("/join/").content.decode()  # both saw it free
    assert first.post("/join/", {"name": "amara"}).status_code == 302
    lost = second.post("/join/", {"name": "amara"})
    page = lost.content.decode()
    assert lost.status_code == 409 and "amara is taken" in page and 'id="join-error"' in page
    assert amara[1] not in page and "kubeconfig" not in page.lower()
    assert not logged_in(second)
    # the claim is kept in the data folder: a new page (and a new process) sees it taken
    assert 'value="amara" disabled' in Client().get("/join/").content.decode()
    assert roster.claimed(settings.DATA_DIR) == {"amara"}
    assert logged_in(first) and 'data-user="amara"' in first.get("/join/").content.decode()


def test_many_threads_claiming_one_name_give_it_to_exactly_one(tmp_path):
    barrier, won = threading.Barrier(8), []

    def pick():
        barrier.wait()
        won.append(roster.claim(tmp_path, "amara"))

    threads = [threading.Thread(target=pick) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False] * 7 + [True]


def test_the_code_still_gets_in_for_a_taken_name(fake, amara):
    says(fake, "amara")
    assert Client().post("/join/", {"name": "amara"}).status_code == 302
    laptop = Client()
    assert laptop.post("/join/", {"code": amara[1].lower()}).status_code == 302
    assert logged_in(laptop)


def test_a_code_entered_on_the_login_page_holds_the_name_too(fake, amara):
    """An attendee who logs in with her code at /login/ (the confirm page a `?code=` link opens), not
    on the join page, still holds her name: a stranger cannot pick it and get her session."""
    says(fake, "amara")
    laptop = Client()
    assert laptop.post("/login/", {"code": amara[1], "next": "/"}).status_code == 302
    assert logged_in(laptop)
    stranger = Client()
    taken = stranger.post("/join/", {"name": "amara"})
    assert taken.status_code == 409 and "amara is taken" in taken.content.decode()
    assert not logged_in(stranger)
    # the instructor's once-code claims no name
    instructor = Client()
    says(fake, tokenfile.ADMIN)
    assert instructor.post("/login/", {"code": roster.instructor_code(settings.DATA_DIR)}).status_code == 302
    assert roster.claimed(settings.DATA_DIR) == {"amara"}


def test_the_instructor_releases_a_claim_and_the_name_can_be_picked_again(fake, amara):
    says(fake, "amara")
    attendee = Client()
    attendee.post("/join/", {"name": "amara"})
    fake.answers[("POST", attendees.REVIEWS)] = (201, {"status": {"allowed": False}})
    refused = attendee.post("/join/release/", {"name": "amara"})
    assert refused.status_code == 403 and roster.claimed(settings.DATA_DIR) == {"amara"}
    admin = Client()
    says(fake, tokenfile.ADMIN)
    admin.post("/login/", {"token": tokenfile.admin_token(settings.DATA_DIR)})
    fake.answers[("POST", attendees.REVIEWS)] = (201, {"status": {"allowed": True}})
    board = admin.get("/", HTTP_ACCEPT="text/html").content.decode()
    assert 'hx-post="/join/release/"' in board and "<option>amara</option>" in board
    assert admin.post("/join/release/", {"name": "nobody"}).status_code == 404
    released = admin.post("/join/release/", {"name": "amara"})
    assert released.status_code == 200 and "amara is free" in released.content.decode()
    assert roster.claimed(settings.DATA_DIR) == set()
    says(fake, "amara")
    assert Client().post("/join/", {"name": "amara"}).status_code == 302


def test_codes_mode_lists_no_names_and_takes_only_a_code(fake, amara, settings):
    settings.KK_JOIN = "codes"
    says(fake, "amara")
    page = Client().get("/join/").content.decode()
    assert 'name="name"' not in page and "amara" not in page and 'name="code"' in page
    picked = Client().post("/join/", {"name": "amara"})
    assert picked.status_code == 400 and roster.claimed(settings.DATA_DIR) == set()
    assert Client().post("/join/", {"code": amara[1]}).status_code == 302
    assert roster.claimed(settings.DATA_DIR) == {"amara"}


def test_unknown_names_and_codes_are_refused_next_to_the_control(fake, amara):
    says(fake, "amara")
    assert Client().post("/join/", {"name": "mallory"}).status_code == 401
    wrong = Client().post("/join/", {"code": "ZZZZZZ"})
    assert wrong.status_code == 401 and 'id="join-error"' in wrong.content.decode()
    once = roster.instructor_code(settings.DATA_DIR)
    assert Client().post("/join/", {"code": once}).status_code == 401  # not a join code
    assert roster.peek(settings.DATA_DIR, once) is not None, "and it was not used up"
    assert Client().post("/join/", {"code": ""}).status_code == 400
    assert Client().get("/join/ZZZZZZ/kubeconfig").status_code == 404
    assert roster.claimed(settings.DATA_DIR) == set()


def test_guessing_is_answered_429_with_retry_after_until_the_minute_passes(fake, amara, clock):
    says(fake, "amara")
    for guess in range(throttle.PER_CLIENT):
        assert Client().post("/join/", {"code": f"WRONG{guess}"}).status_code == 401
    blocked = Client().post("/join/", {"code": amara[1]})  # even the right code waits
    assert blocked.status_code == 429 and blocked["Retry-After"] == "60"
    assert "try again in 60 s" in blocked.content.decode()
    download = Client().get(f"/join/{amara[1]}/kubeconfig")
    assert download.status_code == 429 and download["Retry-After"] == "60"
    assert Client().post("/login/", {"code": amara[1]}).status_code == 429
    other = Client(REMOTE_ADDR="10.0.0.7")
    assert other.post("/join/", {"code": amara[1]}).status_code == 302, "another address is not held back"
    clock.t += 61
    assert Client().post("/join/", {"code": amara[1]}).status_code == 302


def test_wrong_kubeconfig_codes_count_as_failures(fake, amara):
    for guess in range(throttle.PER_CLIENT):
        assert Client().get(f"/join/WRONG{guess}/kubeconfig").status_code == 404
    assert Client().get(f"/join/{amara[1]}/kubeconfig").status_code == 429


def test_codes_are_compared_in_constant_time_against_every_code(tmp_path, monkeypatch):
    codes = {name: roster.join_code(tmp_path, name) for name in ("amara", "bob", "carol")}
    tokenfile.token_of(tmp_path, "amara", (workshop.ATTENDEES,))
    compared = []
    real = roster.hmac.compare_digest

    def recording(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(roster.hmac, "compare_digest", recording)
    assert roster.redeem(tmp_path, codes["amara"].lower())[0] == "amara"
    assert len(compared) == 3, "every stored code compared, none skipped after a match"
    assert roster.redeem(tmp_path, "ZZZZZZ") is None and len(compared) == 6


def test_the_join_page_speaks_korean(fake, amara):
    browser = Client()
    browser.cookies["django_language"] = "ko"
    assert "워크숍" in browser.get("/join/").content.decode()
    roster.claim(settings.DATA_DIR, "amara")
    taken = browser.post("/join/", {"name": "amara"}).content.decode()
    assert "amara 이름은 이미 사용 중입니다" in taken and "(사용 중)" in taken


def test_the_instructor_sees_the_qr_code_and_an_attendee_does_not(fake, amara):
    admin = Client()
    says(fake, tokenfile.ADMIN)
    admin.post("/login/", {"token": tokenfile.admin_token(settings.DATA_DIR)})
    assert 'id="join-qr"' in admin.get("/", HTTP_ACCEPT="text/html").content.decode()
    attendee = Client()
    says(fake, "amara")
    attendee.post("/join/", {"name": "amara"})
    assert 'id="join-qr"' not in attendee.get("/", HTTP_ACCEPT="text/html").content.decode()
    svg = Client().get("/join/qr.svg")
    assert svg["Content-Type"] == "image/svg+xml" and svg.content.lstrip().startswith(b"<?xml")
    assert b"<path" in svg.content and join.qr_svg("http://a/join/") != join.qr_svg("http://b/join/")


def test_on_loopback_the_join_panel_says_attendees_cannot_reach_it(fake, amara, settings):
    settings.KK_BIND_HOST = "127.0.0.1"
    admin = Client()
    says(fake, tokenfile.ADMIN)
    admin.post("/login/", {"token": tokenfile.admin_token(settings.DATA_DIR)})
    page = admin.get("/", HTTP_ACCEPT="text/html").content.decode()
    assert 'id="join-unreachable"' in page and "--addr 0.0.0.0:8000" in page and "join/qr.svg" not in page


def test_on_every_address_the_links_carry_the_lan_address(fake, amara, settings, monkeypatch):
    settings.KK_BIND_HOST = "0.0.0.0"
    monkeypatch.setattr(reach, "lan_address", lambda: "192.168.1.20")
    admin = Client()
    says(fake, tokenfile.ADMIN)
    admin.post("/login/", {"token": tokenfile.admin_token(settings.DATA_DIR)}, HTTP_HOST="127.0.0.1:8000")
    page = admin.get("/", HTTP_ACCEPT="text/html", HTTP_HOST="127.0.0.1:8000").content.decode()
    assert '<a href="http://192.168.1.20:8000/join/">' in page
    svg = Client().get("/join/qr.svg", HTTP_HOST="127.0.0.1:8000").content
    assert svg == join.qr_svg("http://192.168.1.20:8000/join/")
    says(fake, "amara")
    attendee = Client()
    attendee.post("/join/", {"code": amara[1]}, HTTP_HOST="localhost:8000")
    assert f"http://192.168.1.20:8000/join/{amara[1]}/kubeconfig" in attendee.get(
        "/join/", HTTP_HOST="localhost:8000").content.decode()
