"""Conflicts told truthfully, in a real browser (Debian's Chromium, 1280x720) against a real hub:
a component's 409 Conflict (the hub marks it retried) is drawn as "conflict, retried", not counted
as an error nor listed as a failed request; kubectl's stale replace (lesson 7) and kubectl's watch
from a compacted revision (lesson 8, a 410 inside an HTTP 200 stream) are listed and mark their
spoke for about two seconds. Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.conftest import Hub
from tests.dashboard.conftest import dashboard_page

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def hub():
    """A hub whose version log keeps only its newest 5 entries (compacted every 0.2 s)."""
    server = Hub(env={"KK_LOG_MAX_ENTRIES": "5", "KK_COMPACT_INTERVAL": "0.2"}).start()
    yield server
    server.stop()


def send(hub, method: str, path: str, body: dict | None = None, agent: str = "kube-controller-manager (kube-kitchen)") -> int:
    request = urllib.request.Request(hub.url + path, method=method, data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json", "User-Agent": agent})
    try:
        with hub.urlopen(request) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def stale_write(hub, name: str, agent: str) -> None:
    """Create a ConfigMap, change it, then write it again from the first read: a 409 Conflict."""
    created = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}}
    assert send(hub, "POST", CONFIGMAPS, created, agent) == 201
    with hub.urlopen(f"{CONFIGMAPS}/{name}") as answer:
        read = json.loads(answer.read())
    assert send(hub, "PUT", f"{CONFIGMAPS}/{name}", {**read, "data": {"a": "2"}}, agent) == 200
    assert send(hub, "PUT", f"{CONFIGMAPS}/{name}", {**read, "data": {"a": "3"}}, agent) == 409


def counters(page, who: str) -> dict:
    return page.evaluate(f"window.kubeKitchen.picture.counters({json.dumps(who)})")


def test_a_components_retried_conflict_is_not_an_error_and_not_a_failure(browser, hub):
    with dashboard_page(browser, hub.url, {"width": 1280, "height": 720}) as page:
        stale_write(hub, "retried-slip", "kube-controller-manager (kube-kitchen)")
        page.wait_for_function("() => (window.kubeKitchen.picture.counters('kube-controller-manager') || {}).requests >= 3")
        assert counters(page, "kube-controller-manager")["errors"] == 0
        assert page.locator("#failure-list li.failure[data-code='409']").count() == 0
        assert page.evaluate("document.querySelector('.spoke[data-who=\"kube-controller-manager\"]').classList.contains('alarm')") is False
        # Drawn in its own colour, named in the legend (a dot of that class flew, or flies, on the picture).
        expect(page.locator(".legend .verb-conflict")).to_have_count(1)
        expect(page.locator(".legend li", has=page.locator(".verb-conflict"))).to_have_text("conflict, retried (409)")
        legend = page.evaluate("getComputedStyle(document.querySelector('.legend .verb-conflict')).backgroundColor")
        error = page.evaluate("getComputedStyle(document.querySelector('.legend .verb-error')).backgroundColor")
        assert legend != error
        assert page.evaluate("""window.kubeKitchen.picture.traffic([{type: 'request', who: 'kube-scheduler',
            verb: 'update', code: 409, reason: 'Conflict', retried: true}]),
            window.kubeKitchen.picture.waiting.some((dot) => dot.cls === 'verb-conflict')""")


def test_the_lesson_conflict_and_expiry_are_listed_and_mark_their_spoke(browser, hub):
    with dashboard_page(browser, hub.url, {"width": 1280, "height": 720}) as page:
        # Lesson 7: kubectl's own stale replace is a failure, listed, and its spoke is marked ~2 s.
        stale_write(hub, "lesson-slip", "kubectl/v1.32.4 (linux/amd64) kubernetes/abc")
        page.wait_for_selector("#failure-list li.failure[data-code='409']")
        assert counters(page, "kubectl")["errors"] == 1
        marked = page.evaluate("""(() => {
            const circle = document.querySelector('.spoke[data-who="kubectl"] .spoke-node');
            return circle.getAnimations().map((a) => a.effect.getTiming().duration); })()""")
        assert marked == [2000]
        page.screenshot(path=str(ARTIFACTS / "failures-conflict-1280.png"))
        # Lesson 8: a watch from a compacted revision answers 410 inside its stream: listed too.
        requests = counters(page, "kubectl")["requests"]
        page.evaluate("""(() => { const picture = window.kubeKitchen.picture; const traffic = picture.traffic.bind(picture);
            window.heard = []; picture.traffic = (records) => { window.heard.push(...records.filter((r) => r.who === 'kubectl'));
            traffic(records); }; })()""")
        watch = hub.kubectl("get", "--raw", f"{CONFIGMAPS}?watch=1&resourceVersion=1", check=False)
        assert "Expired" in watch.stdout + watch.stderr
        page.wait_for_selector("#failure-list li.failure[data-code='410']")
        sent = page.evaluate("window.heard.filter((r) => r.type === 'request' && !r.inStream).length")
        assert page.evaluate("window.heard.filter((r) => r.inStream && r.code === 410).length") == 1
        assert counters(page, "kubectl")["requests"] == requests + sent, "the 410 is the watch's answer, not a request more"
        assert counters(page, "kubectl")["errors"] == 2
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "failures-expired-1280.png"))
