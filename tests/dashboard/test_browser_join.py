"""The join page in Debian's Chromium against a real hub with a provisioned workshop, under the
Content-Security-Policy: two browsers race for one name, the first gets it (its kubeconfig and
the dashboard), the second is told it is taken next to the names; on a 1280×720 projector the page
fits without scrolling. Screenshots go to /tmp/join-*.png."""

from __future__ import annotations

import pytest

from control import roster, workshop
from tests.conftest import Hub
from tests.dashboard.conftest import watch_policy

pytestmark = pytest.mark.e2e
PROJECTOR = {"width": 1280, "height": 720}


@pytest.fixture(scope="module")
def room():
    server = Hub().start()
    try:
        workshop.provision(server.url, server.dir, ["alice", "bob", "carol"])
        yield server
    finally:
        server.stop()


def test_two_browsers_race_for_one_name_and_the_second_is_told_it_is_taken(browser, room):
    errors: list[str] = []
    first, second = browser.new_context(viewport=PROJECTOR), browser.new_context(viewport=PROJECTOR)
    try:
        pages = [first.new_page(), second.new_page()]
        for page in pages:
            page.on("pageerror", lambda error: errors.append(str(error)))
            watch_policy(page, errors)
            page.goto(f"{room.url}/join/")
        pages[0].screenshot(path="/tmp/join-names.png")
        for page in pages:  # both saw alice free; both click
            assert page.is_enabled("button[name=name][value=alice]")
        pages[0].click("button[name=name][value=alice]")
        pages[1].click("button[name=name][value=alice]")
        pages[0].wait_for_selector("#joined[data-user=alice]")
        code = roster.attendee_codes(room.dir)["alice"]
        assert pages[0].inner_text("#my-code") == code and code in pages[0].inner_text("#one-liner")
        pages[0].screenshot(path="/tmp/join-joined.png")
        assert "alice is taken" in pages[1].inner_text("#join-error")
        assert pages[1].is_disabled("button[name=name][value=alice]")
        assert code not in pages[1].content()
        pages[1].screenshot(path="/tmp/join-taken.png")
        fits = pages[1].evaluate("document.documentElement.scrollHeight <= window.innerHeight")
        assert fits, "the join page fits a 1280x720 projector"
        pages[0].click("#to-dashboard")
        pages[0].wait_for_selector("#connection[data-state=connected]")
        assert pages[0].inner_text("#whoami") == "alice"
    finally:
        first.close()
        second.close()
        roster.release(room.dir, "alice")
    assert errors == [], errors
