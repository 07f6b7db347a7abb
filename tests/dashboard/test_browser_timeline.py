"""The stage bar in a real browser (Debian's Chromium through Playwright) against a real hub: pause
holds the live changes (the page says how many wait) and step hands them on one at a time; the
timeline scrubbed back to before a pod was deleted shows that pod again, labelled as a replay,
while the live socket keeps receiving; a position before the window says the history is gone and
offers the oldest revision; "Live" brings back the live state with everything that came meanwhile;
a recording from another version is refused with a clear message. Screenshots at 1280x720 and
1920x1080 go to test-artifacts/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.conftest import Hub, wait_for
from tests.dashboard.conftest import dashboard_page

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def pod(name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}})


@pytest.fixture(scope="module")
def hub():
    server = Hub().start()
    yield server
    server.stop()


def shown(page, name: str) -> bool:
    return page.locator(f".pod[data-name='{name}']").count() == 1


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 720}, {"width": 1920, "height": 1080}],
                         ids=["1280", "1920"])
def test_pause_step_scrub_back_and_return_live(browser, hub, viewport):
    size = viewport["width"]
    for name in (f"soup-{size}", f"pasta-{size}"):
        hub.kubectl("create", "-f", "-", input=pod(name))
    with dashboard_page(browser, hub.url, viewport) as page:
        page.wait_for_function(f"() => document.querySelectorAll(\".pod[data-name='pasta-{size}']\").length === 1")
        before = page.evaluate("window.kubeKitchen.model.revision")

        # Pause: the deletion and a new pod are held, counted, not drawn.
        page.click("#tl-pause")
        expect(page.locator("#tl-badge")).to_have_text("paused")
        hub.kubectl("delete", "pod", f"pasta-{size}", "--wait=false")
        hub.kubectl("create", "-f", "-", input=pod(f"salad-{size}"))
        page.wait_for_function("() => window.kubeKitchen.timeline.live.waiting >= 2")
        expect(page.locator("#tl-waiting")).to_contain_text("waiting")
        assert shown(page, f"pasta-{size}") and not shown(page, f"salad-{size}")
        assert page.evaluate("window.kubeKitchen.model.revision") == before
        shoot(page, f"timeline-paused-{size}")

        # Step: one change at a time, in order (a heartbeat held before it goes with it).
        waiting = page.evaluate("window.kubeKitchen.timeline.live.waiting")
        page.click("#tl-step")
        assert page.evaluate("window.kubeKitchen.timeline.live.waiting") <= waiting - 1
        assert page.evaluate("window.kubeKitchen.model.revision") > before
        while page.evaluate("window.kubeKitchen.timeline.live.waiting"):
            page.click("#tl-step")
        page.wait_for_function(f"() => document.querySelectorAll(\".pod[data-name='salad-{size}']\").length === 1")
        assert not shown(page, f"pasta-{size}") or page.locator(f".pod[data-name='pasta-{size}'].terminating").count()

        # Scrub back to before the deletion: the pod is there again, labelled as a replay.
        page.click("#tl-pause")  # resume live
        page.wait_for_function("() => window.kubeKitchen.timeline.live.state() === 'live'")
        page.evaluate(f"window.kubeKitchen.timeline.goTo({before})")
        page.wait_for_function(f"() => document.querySelectorAll(\".pod[data-name='pasta-{size}']\").length === 1")
        assert not shown(page, f"salad-{size}")
        expect(page.locator("#tl-badge")).to_have_text("replay")
        expect(page.locator("#tl-label")).to_have_text(re.compile(rf"^at revision {before}, \d\d:\d\d:\d\d — replay$"))
        assert page.get_attribute("body", "data-playback") == "replay"
        shoot(page, f"timeline-replay-{size}")

        # The live socket keeps receiving meanwhile, held.
        hub.kubectl("create", "-f", "-", input=pod(f"bread-{size}"))
        page.wait_for_function("() => window.kubeKitchen.timeline.live.waiting >= 1")
        assert not shown(page, f"bread-{size}")

        # Play from here: the changes after it replay (at x1/2), and the deletion shows.
        page.select_option("#tl-speed", "0.5")
        page.click("#tl-play")
        page.wait_for_function(f"() => document.querySelectorAll(\".pod[data-name='salad-{size}']\").length === 1")
        page.select_option("#tl-speed", "1")

        # Back to live: the live state, with what came meanwhile.
        page.click("#tl-back")
        page.wait_for_function(f"() => document.querySelectorAll(\".pod[data-name='bread-{size}']\").length === 1")
        expect(page.locator("#tl-badge")).to_have_text("live")
        expect(page.locator("#tl-label")).to_have_text("")
        assert shown(page, f"salad-{size}")
        assert page.evaluate("window.kubeKitchen.model.revision") == page.evaluate(
            "window.kubeKitchen.timeline.liveRevision()")
        shoot(page, f"timeline-live-{size}")


@pytest.fixture(scope="module")
def short_hub():
    """A hub whose version log keeps only its newest 5 entries (compacted every 0.2 s)."""
    server = Hub(env={"KK_LOG_MAX_ENTRIES": "5", "KK_COMPACT_INTERVAL": "0.2"}).start()
    yield server
    server.stop()


def window(hub) -> dict[str, int]:
    with hub.urlopen("/kubekitchen/snapshot") as answer:
        return json.loads(answer.read())["window"]


def test_a_position_before_the_window_and_a_foreign_recording_are_refused_clearly(browser, short_hub, tmp_path):
    for i in range(8):
        short_hub.kubectl("create", "-f", "-", input=pod(f"old-{i}"))
    compacted = wait_for(lambda: window(short_hub)["oldest"], what="a compacted log")
    with dashboard_page(browser, short_hub.url, {"width": 1280, "height": 720}) as page:
        live_revision = page.evaluate("window.kubeKitchen.model.revision")
        page.evaluate(f"window.kubeKitchen.timeline.goTo({compacted - 1})")
        offer = page.wait_for_selector("#tl-message button[data-oldest]")
        oldest = int(offer.get_attribute("data-oldest"))
        assert oldest >= compacted
        assert f"before revision {oldest} is gone" in page.inner_text("#tl-message")
        expect(page.locator("#tl-badge")).to_have_text("live")  # the live view is unaffected
        assert page.evaluate("window.kubeKitchen.model.revision") == live_revision
        shoot(page, "timeline-gone-1280")
        offer.click()
        page.wait_for_function("() => window.kubeKitchen.timeline.position !== null")
        assert page.evaluate("window.kubeKitchen.model.revision") == oldest
        expect(page.locator("#tl-badge")).to_have_text("replay")
        page.click("#tl-back")

        other = tmp_path / "other.json"
        other.write_text(json.dumps({"version": "kube-kitchen-recording/0", "snapshot": {}, "changes": []}))
        page.set_input_files("#tl-load", str(other))
        page.wait_for_selector("#tl-message:has-text('another version')")
        assert "kube-kitchen-recording/0" in page.inner_text("#tl-message")
        expect(page.locator("#tl-badge")).to_have_text("live")


def test_slow_motion_holds_changes_and_plays_them_later(browser, hub):
    with dashboard_page(browser, hub.url, {"width": 1280, "height": 720}) as page:
        page.select_option("#tl-speed", "0.1")
        expect(page.locator("#tl-badge")).to_have_text("slow motion ×1/10")
        for name in ("slow-a", "slow-b"):
            hub.kubectl("create", "-f", "-", input=pod(name))
        # Held first (the badge says slow motion), then drawn at a tenth of the pace they came at.
        page.wait_for_function("() => window.kubeKitchen.timeline.live.held.length >= 1")
        page.wait_for_function("() => document.querySelectorAll(\".pod[data-name='slow-b']\").length === 1", timeout=20_000)
        page.select_option("#tl-speed", "1")
        page.wait_for_function("() => window.kubeKitchen.timeline.live.state() === 'live'")


def header_says_live(page) -> bool:
    return page.get_attribute("#connection", "data-live") == "true"


def test_slow_motion_then_x1_is_live_again_within_two_seconds(browser, hub):
    with dashboard_page(browser, hub.url, {"width": 1280, "height": 720}) as page:
        page.select_option("#tl-speed", "0.1")
        for index in range(6):
            hub.kubectl("create", "-f", "-", input=pod(f"tenth-{index}"))
        page.wait_for_function("() => window.kubeKitchen.timeline.live.waiting >= 3")
        # Not live: the header does not say so, and "Live" is offered.
        assert not header_says_live(page)
        expect(page.locator("#tl-back")).to_be_enabled()
        page.select_option("#tl-speed", "1")
        page.wait_for_function("() => window.kubeKitchen.timeline.live.state() === 'live'", timeout=2_000)
        page.wait_for_function("() => document.querySelectorAll(\".pod[data-name='tenth-5']\").length === 1", timeout=2_000)
        expect(page.locator("#tl-badge")).to_have_text("live")
        assert header_says_live(page)
        expect(page.locator("#tl-back")).to_be_disabled()


def test_pause_then_resume_is_live_again_and_live_button_jumps(browser, hub):
    with dashboard_page(browser, hub.url, {"width": 1280, "height": 720}) as page:
        page.click("#tl-pause")
        for index in range(3):
            hub.kubectl("create", "-f", "-", input=pod(f"held-{index}"))
        page.wait_for_function("() => window.kubeKitchen.timeline.live.waiting >= 3")
        expect(page.locator("#tl-back")).to_be_enabled()
        page.click("#tl-pause")  # Resume
        page.wait_for_function("() => window.kubeKitchen.timeline.live.state() === 'live'", timeout=2_000)
        assert page.evaluate("window.kubeKitchen.model.revision") == page.evaluate(
            "window.kubeKitchen.timeline.liveRevision()")
        assert header_says_live(page)
        # Paused and slowed, "Live" goes back at once.
        page.select_option("#tl-speed", "0.25")
        page.click("#tl-pause")
        hub.kubectl("create", "-f", "-", input=pod("held-last"))
        page.wait_for_function("() => window.kubeKitchen.timeline.live.waiting >= 1")
        page.click("#tl-back")
        expect(page.locator("#tl-badge")).to_have_text("live")
        assert page.input_value("#tl-speed") == "1"
        assert shown(page, "held-last")


def test_a_recording_exported_from_the_page_plays_back_in_it(browser, hub, tmp_path):
    hub.kubectl("create", "-f", "-", input=pod("recorded"))
    hub.kubectl("delete", "pod", "recorded", "--wait=false")
    with dashboard_page(browser, hub.url, {"width": 1280, "height": 720}) as page:
        with page.expect_download() as download:
            page.click("#tl-export")
        path = tmp_path / "recording.json"
        download.value.save_as(str(path))
        recording = json.loads(path.read_text())
        assert recording["version"] == "kube-kitchen-recording/1"
        assert [x["type"] for x in recording["changes"] if x["name"] == "recorded"] == ["ADDED", "DELETED"]
        added = next(x["rv"] for x in recording["changes"] if x["name"] == "recorded")

        page.set_input_files("#tl-load", str(path))
        page.wait_for_function("() => window.kubeKitchen.timeline.position !== null")
        expect(page.locator("#tl-badge")).to_have_text("replay")
        expect(page.locator("#tl-label")).to_have_text(re.compile(r"^recording\.json · at revision \d+, "))
        # Scrubbed inside the recording: the pod exists at the revision it was added, not after.
        page.evaluate(f"window.kubeKitchen.timeline.goTo({added})")
        page.wait_for_function("() => document.querySelectorAll(\".pod[data-name='recorded']\").length === 1")
        page.evaluate(f"window.kubeKitchen.timeline.goTo({recording['window']['newest']})")
        page.wait_for_function("() => document.querySelectorAll(\".pod[data-name='recorded']\").length === 0")
        page.click("#tl-back")
        expect(page.locator("#tl-badge")).to_have_text("live")
