"""The instructor's board of attendees in Debian's Chromium against a real hub with a provisioned
workshop: after two attendees' own requests (with their own tokens) it shows each one's pods
(running, pending, failing by kubectl's STATUS), their last request and their errors with the
hub's message; an attendee's page has no board; on a projector (1280×720, 1920×1080) the toggle
keeps the header one band and the picture in view, and the open sheet fits the screen.
Screenshots go to /tmp/board-*.png."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from control import roster, workshop
from control.auth import tokenfile
from tests.conftest import Hub, login_url, wait_for
from tests.dashboard.conftest import dashboard_page

pytestmark = pytest.mark.e2e

HEADER_MAX = 90  # px, as test_browser_layout


@pytest.fixture(scope="module")
def room():
    server = Hub().start()
    try:
        workshop.provision(server.url, server.dir, ["alice", "bob"])
        yield server
    finally:
        server.stop()


def call(hub: Hub, user: str, method: str, path: str, body: dict | None = None,
         content_type: str = "application/json") -> int:
    """One request to the hub as `user` (their own token from the workshop); its status code."""
    token = hub.token if user == tokenfile.ADMIN else tokenfile.token_of(hub.dir, user, (workshop.ATTENDEES,))
    request = urllib.request.Request(hub.url + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": content_type,
                                              "User-Agent": "kubectl/v1.32.4 (linux/amd64) kubernetes/abc"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}


def set_status(hub: Hub, namespace: str, name: str, waiting: str | None) -> None:
    """What a kubelet would report (none runs here): Running, or stuck with a waiting reason."""
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
    status = {"phase": "Running", "containerStatuses": [{"name": "web", "image": "nginx", "imageID": "", "ready": not waiting,
                                                         "restartCount": 3 if waiting else 0, "state": state}]}
    code = call(hub, tokenfile.ADMIN, "PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/status", {"status": status},
                "application/merge-patch+json")
    assert code == 200, code


def rows(page) -> dict[str, dict[str, str]]:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#attendee-rows tr')].map(tr =>
        [tr.dataset.attendee, Object.fromEntries([...tr.cells].map(td => [td.className.replace('num ', '').split(' ')[0] || 'x', td.innerText]))]))""")


def box(page, selector: str) -> dict[str, float]:
    return page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect();"
                                           " return {x: r.x, y: r.y, right: r.right, bottom: r.bottom, height: r.height}; }")


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_the_board_shows_each_attendees_pods_requests_and_errors(browser, room, width, height):
    tag = f"{width}"
    with dashboard_page(browser, room.url, {"width": width, "height": height}) as page:
        assert box(page, "header.top")["height"] <= HEADER_MAX, "the toggle keeps the header one band"
        picture, svg = box(page, "#picture"), box(page, "#hub-svg")
        assert svg["y"] + svg["height"] / 2 <= height, f"the hub picture starts above the fold ({svg})"
        page.screenshot(path=f"/tmp/board-{width}x{height}-closed.png")
        page.click("#attendee-board summary")
        wait_for(lambda: len(rows(page)) == 2, timeout=10, interval=0.1, what="a row per attendee")
        assert list(rows(page)) == ["alice", "bob"]
        before = {name: {k: int(v) for k, v in row.items() if k in ("running", "pending", "failing")}
                  for name, row in rows(page).items()}  # pods of the other screen size's run, if any

        # their own requests, with their own tokens
        for name in (f"a1-{tag}", f"a2-{tag}"):
            assert call(room, "alice", "POST", "/api/v1/namespaces/alice/pods", pod(name)) == 201
        assert call(room, "bob", "POST", "/api/v1/namespaces/bob/pods", pod(f"b1-{tag}")) == 201
        assert call(room, "bob", "GET", "/api/v1/namespaces/alice/pods") == 403
        set_status(room, "alice", f"a1-{tag}", None)
        set_status(room, "alice", f"a2-{tag}", "CrashLoopBackOff")

        def shown() -> bool:
            seen = rows(page)
            return all(int(seen[name][k]) == before[name][k] + more for name, counts in {
                "alice": {"running": 1, "pending": 0, "failing": 1}, "bob": {"running": 0, "pending": 1, "failing": 0},
            }.items() for k, more in counts.items()) and seen["bob"]["errors"] == "1"
        wait_for(shown, timeout=15, interval=0.2, what="the attendees' pods and errors on the board")
        alice, bob = rows(page)["alice"], rows(page)["bob"]
        assert alice["errors"] == "0"
        assert "s ago" in alice["last"] and "s ago" in bob["last"]
        assert "403" in bob["last-error"] and 'cannot list resource "pods"' in bob["last-error"]
        assert alice["last-error"] == ""
        assert page.inner_text("#attendee-alert") == "⚠ 2"  # both have something to look at

        sheet = box(page, ".attendee-sheet")
        assert sheet["x"] >= 0 and sheet["right"] <= width and sheet["bottom"] <= height, f"the sheet fits ({sheet})"
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scrolling"
        page.screenshot(path=f"/tmp/board-{width}x{height}.png")

        page.click("#attendee-rows tr[data-attendee=bob] td.name button")  # bob's namespace only
        assert page.eval_on_selector("#ns-filter", "s => s.value") == "bob"
        page.click("#attendee-board summary")  # closed again: the page as it was
        assert box(page, "#picture")["y"] == picture["y"]


def test_an_attendees_page_has_no_board(browser, room):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto(f"{room.url}/login/?code={roster.join_code(room.dir, 'alice')}&next=/")
        page.click("main.login button.primary")  # an attendee's code logs in on the confirm's POST only
        page.wait_for_selector("#connection[data-state=connected]")
        assert page.inner_text("#whoami") == "alice"
        assert page.query_selector("#attendee-board") is None and page.query_selector("#kk-attendees") is None
    finally:
        context.close()


def test_the_board_speaks_korean(browser, room):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        context.add_cookies([{"name": "django_language", "value": "ko", "url": room.url}])
        page = context.new_page()
        page.goto(login_url(room.url))
        page.wait_for_selector("#connection[data-state=connected]")
        page.click("#attendee-board summary")
        page.wait_for_selector("#attendee-rows tr[data-attendee=alice]")
        assert page.inner_text("#attendee-board summary").startswith("참가자")
        headers = page.eval_on_selector_all("table.attendees th", "cells => cells.map(c => c.innerText)")
        assert headers == ["참가자", "수업", "실행 중", "대기 중", "실패 중", "마지막 요청", "오류 (5분)", "마지막 오류"]
        page.screenshot(path="/tmp/board-1280x720-ko.png")
    finally:
        context.close()
