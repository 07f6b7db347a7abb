""""What just happened" and the first screen, in Debian's Chromium against a real hub (no spokes:
kubectl's own changes are the story): with nothing deployed the line names the first lesson; a
change is told with the client that made it; paused, nothing is told until Step hands a change on,
and the line says "paused"; the timeline's past is labelled a replay; nothing moves when the line
speaks, and its button hides it. Screenshots go to /tmp/narration-*.png."""

from __future__ import annotations

import pytest

from tests.conftest import Hub, wait_for
from tests.dashboard.conftest import dashboard_page

pytestmark = pytest.mark.e2e

POD = """
apiVersion: v1
kind: Pod
metadata: {name: solo}
spec: {containers: [{name: c, image: nginx}]}
"""


@pytest.fixture(scope="module")
def hub():
    server = Hub().start()
    yield server
    server.stop()


def box(page, selector: str) -> tuple[float, float, float, float]:
    return tuple(page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }"))


def said(page) -> str:
    return page.inner_text("#narration")


def test_the_line_tells_each_change_follows_the_stage_bar_and_never_moves_the_page(browser, hub):
    with dashboard_page(browser, hub.url, {"width": 1280, "height": 720}) as page:
        page.wait_for_selector("#lesson .lesson-pick", state="attached")  # in the closed lesson menu
        page.wait_for_selector("#narration .first button[data-first-lesson]")
        first_lesson = page.text_content("#lesson .lesson-pick >> nth=0").strip()
        assert f"“{first_lesson}”" in said(page), said(page)
        assert page.locator(".legend .legend-say").count() == 3
        page.screenshot(path="/tmp/narration-first.png")
        row, picture = box(page, ".narration-row"), box(page, "#picture")
        line_px = page.eval_on_selector("#narration", "e => parseFloat(getComputedStyle(e).lineHeight)")

        hub.kubectl("apply", "-f", "-", input=POD)
        wait_for(lambda: "kubectl created solo" in said(page), timeout=10, what="the create told")
        assert box(page, ".narration-row") == row and box(page, "#picture") == picture, "nothing moved"
        assert page.eval_on_selector("#narration", "e => e.scrollHeight") <= 2 * line_px + 2

        page.click("#tl-pause")
        before = said(page)
        hub.kubectl("delete", "pod", "solo", "--wait=false")
        wait_for(lambda: page.inner_text("#tl-waiting") != "", timeout=10, what="the delete held")
        assert said(page) == before, "paused: nothing told"
        for _ in range(30):  # Step hands on one change at a time (Lease heartbeats tell nothing)
            if said(page) != before:
                break
            page.click("#tl-step")
            page.wait_for_timeout(100)
        assert "kubectl created solo → kubectl " in said(page), said(page)  # deleted it, or removed it
        assert page.inner_text("#narration .narr-label") == page.inner_text("#tl-badge")  # "paused"
        page.screenshot(path="/tmp/narration-step.png")
        page.click("#tl-pause")

        created = page.evaluate("""() => [...window.kubeKitchen.versionLog.ring.newest(500)]
            .find((item) => item.name === 'solo' && item.type === 'ADDED').rv""")
        page.evaluate(f"window.kubeKitchen.timeline.goTo({created - 1})")
        page.wait_for_selector("#narration .narr-label")
        assert page.inner_text("#narration .narr-label") == page.inner_text("#tl-badge")  # "replay"
        page.click("#tl-play")
        wait_for(lambda: "kubectl created solo" in said(page), timeout=10, what="the replay told")
        assert page.inner_text("#narration .narr-label") == page.inner_text("#tl-badge")
        page.screenshot(path="/tmp/narration-replay.png")
        page.click("#tl-back")
        wait_for(lambda: page.locator("#narration .narr-label").count() == 0, timeout=5, what="live again, unlabelled")

        page.click("#narration-toggle")
        assert page.eval_on_selector("#narration", "e => e.hidden")
        assert box(page, "#picture") == picture, "hiding the line moves nothing either"
        page.click("#narration-toggle")
        assert not page.eval_on_selector("#narration", "e => e.hidden")
