"""The browser the dashboard's end-to-end tests drive: Debian's Chromium through Playwright
(never a downloaded browser), and a page on the dashboard that fails the test on any JavaScript error."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import pytest

from tests.conftest import login_url

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# Every traffic batch a page receives, kept on the page (`window.trafficSeen`) for the test to read.
RECORD_TRAFFIC = """
const Original = window.WebSocket;
window.trafficSeen = [];
window.WebSocket = class extends Original {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (event) => {
      if (typeof event.data !== "string") return;
      try {
        const message = JSON.parse(event.data);
        if (message.t === "traffic") window.trafficSeen.push(...message.records);
      } catch (error) { /* not JSON: not ours */ }
    });
  }
};
"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def watch_policy(page, errors: list[str]) -> None:
    """Every Content-Security-Policy refusal the page meets goes to `errors` (Chromium reports them
    on the console, not as page errors)."""
    page.on("console", lambda message: errors.append(message.text)
            if "Content Security Policy" in message.text else None)


@contextmanager
def dashboard_page(browser, url: str, viewport: dict[str, int]) -> Iterator:
    """The dashboard at `url`, connected and with its snapshot in; no page error while it is open."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    watch_policy(page, errors)
    page.goto(login_url(url))  # logged in as the cluster admin (authentication is on)
    page.wait_for_selector("#connection[data-state=connected]")
    page.wait_for_function("() => window.kubeKitchen.model.revision !== null")  # the snapshot is in
    yield page
    context.close()
    assert errors == [], errors


@pytest.fixture(autouse=True)
def fake_hub_needs_no_login(settings):
    """The unit tests here drive the dashboard against a fake hub that checks no token: they run
    with authentication off; `test_login` turns it on to test the login itself."""
    settings.KK_AUTHENTICATION = "off"


@pytest.fixture
def fake(settings):
    """A fake hub on loopback, and the dashboard pointed at it (a module may override this)."""
    from tests.dashboard.fakehub import FakeHub, running

    fake = FakeHub()
    with running(fake) as url:
        settings.KK_HUB_URL = url
        yield fake
