"""The page on a projector: at 1280×720 (and 1920×1080) the header stays one compact band, an
action's answer gets a readable box of its own, nothing moves when an answer appears, and the
hub-and-spoke picture starts above the fold. Measured in Debian's Chromium against a real hub
(no spokes needed: the buttons' answers come from the hub). Screenshots go to /tmp/stage-*.png."""

from __future__ import annotations

import pytest

from tests.conftest import Hub, wait_for
from tests.dashboard.conftest import dashboard_page

pytestmark = pytest.mark.e2e

NODES = "".join(f"""---
apiVersion: v1
kind: Node
metadata:
  name: node-{i}
""" for i in (1, 2))
LONG_NAME = "a-pod-whose-name-is-long-enough-to-need-more-than-one-line-" + "x" * 60
HEADER_MAX = 90  # px: one band (the title's line, the buttons' line), never a column of letters
LINE_PX = 19 * 1.05 * 1.3  # the answer's font size × line height


@pytest.fixture(scope="module")
def hub_with_nodes():
    server = Hub().start()
    server.kubectl("apply", "-f", "-", input=NODES)
    yield server
    server.stop()


def box(page, selector: str) -> dict[str, float]:
    return page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect();"
                                           " return {x: r.x, y: r.y, width: r.width, height: r.height}; }")


def answer_of(page, click) -> str:
    """Click, then wait for the answer in the header; its text."""
    before = page.inner_text("#action-result")
    click()
    wait_for(lambda: page.inner_text("#action-result") not in ("", before), timeout=10, interval=0.1,
             what="an answer in #action-result")
    return page.inner_text("#action-result")


def press_a_missing_pods_delete(page) -> None:
    """A real action button (as a pod card carries) for a pod that does not exist: the hub's 404
    message, long because the name is, is the answer."""
    page.evaluate("""name => {
        const b = document.createElement('button');
        b.dataset.action = 'delete-pod'; b.dataset.name = name; b.dataset.namespace = 'default';
        b.id = 'long-answer'; b.textContent = 'delete'; document.querySelector('#workloads').append(b);
    }""", LONG_NAME)
    page.click("#long-answer")


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_the_header_and_the_answer_keep_their_place_on_a_projector(browser, hub_with_nodes, width, height):
    with dashboard_page(browser, hub_with_nodes.url, {"width": width, "height": height}) as page:
        page.wait_for_selector(".node-card[data-node='node-1'] button[data-action=cordon]")
        header, picture = box(page, "header.top"), box(page, "#picture")
        assert header["height"] <= HEADER_MAX, header
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scrolling"

        answer = answer_of(page, lambda: page.click(".node-card[data-node='node-1'] button[data-action=cordon]"))
        assert "node-1" in answer
        result = box(page, "#action-result .result")
        assert result["width"] >= 200, f"the answer has room to be read ({result})"
        assert result["height"] <= 2.5 * LINE_PX, f"a short answer is one line ({result})"
        page.screenshot(path=f"/tmp/stage-{width}x{height}-cordon.png")

        answer = answer_of(page, lambda: press_a_missing_pods_delete(page))
        assert "not found" in answer
        result, slot = box(page, "#action-result .result"), box(page, "#action-result")
        assert slot["width"] >= 300, f"the answer's slot keeps its width ({slot})"
        assert result["height"] <= 2.5 * LINE_PX + 8, f"a long answer is at most two lines, never a column ({result})"
        page.screenshot(path=f"/tmp/stage-{width}x{height}-long-answer.png")

        assert box(page, "header.top") == header, "the header did not move or grow for an answer"
        assert box(page, "#picture") == picture, "the picture did not move for an answer"
        svg = box(page, "#hub-svg")
        assert svg["y"] >= header["height"] and svg["y"] + svg["height"] / 2 <= height, \
            f"the hub picture starts above the fold ({svg})"
        if height == 720:
            assert svg["y"] + svg["height"] <= height, f"the whole hub picture is on the first screen ({svg})"
        answer_of(page, lambda: page.click(".node-card[data-node='node-1'] button[data-action=uncordon]"))
        page.wait_for_selector(".node-card[data-node='node-1'] button[data-action=cordon]")


def test_the_korean_header_is_one_band_too(browser, hub_with_nodes):
    with dashboard_page(browser, hub_with_nodes.url, {"width": 1280, "height": 720}) as page:
        page.click("button[name=language][value=ko]")
        page.wait_for_selector("html[lang=ko] #connection[data-state=connected]")
        page.wait_for_selector(".node-card[data-node='node-2'] button[data-action=cordon]")
        header = box(page, "header.top")
        answer_of(page, lambda: page.click(".node-card[data-node='node-2'] button[data-action=cordon]"))
        assert header["height"] <= HEADER_MAX and box(page, "header.top") == header
        assert box(page, "#action-result .result")["width"] >= 200
        page.screenshot(path="/tmp/stage-1280x720-ko.png")
        answer_of(page, lambda: page.click(".node-card[data-node='node-2'] button[data-action=uncordon]"))
        page.click("button[name=language][value=en]")
        page.wait_for_selector("html[lang=en]")
