"""A shell in the browser: Debian's Chromium (Playwright) opens the dashboard of a real hub with a
kubelet, clicks the shell button of a running pod, types into xterm.js over the hub's exec
websocket (as kubectl speaks it) and sees the shell answer, then `exit` ends the session.
Screenshots at 1280x720 and 1920x1080 go to test-artifacts/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Hub, Spoke, login_url, wait_for
from tests.dashboard.conftest import dashboard_page, watch_policy

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
NODE = "node-1"
SHELL_BUTTON = ".pod[data-name='box'] button.pod-shell"


@pytest.fixture(scope="module")
def cluster():
    hub = Hub(env={"KK_PACE": "workshop"}).start()
    kubelet = Spoke(hub, "kubelet", node=NODE, env={"KK_PACE": "workshop", "KK_START_DELAY": "0.1"}).start()
    try:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
               "spec": {"nodeName": NODE, "containers": [
                   {"name": "app", "image": "busybox:1.36", "env": [{"name": "COLOR", "value": "blue"}]}]}}
        hub.kubectl("apply", "-f", "-", input=json.dumps(pod))
        wait_for(lambda: " Running " in hub.kubectl("get", "pod", "box").stdout, timeout=20, what="box Running")
        yield hub
    finally:
        kubelet.stop()
        hub.stop()


def screen_text(page) -> str:
    return page.inner_text("#shell-dialog .xterm-rows")


def open_shell(page):
    page.click(SHELL_BUTTON)
    page.wait_for_selector("#shell-dialog[data-state=open]", timeout=15_000)
    page.wait_for_function("() => document.querySelector('#shell-dialog .xterm-rows').innerText.includes('/ #')",
                           timeout=15_000)


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 720}, {"width": 1920, "height": 1080}],
                         ids=["1280x720", "1920x1080"])
def test_a_shell_on_a_running_pod(browser, cluster, viewport):
    with dashboard_page(browser, cluster.url, viewport) as page:
        page.wait_for_selector(SHELL_BUTTON, timeout=15_000)
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator("#nodes").screenshot(path=str(ARTIFACTS / f"browser-shell-chip-{viewport['width']}.png"))
        open_shell(page)
        page.keyboard.type("echo hi")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => document.querySelector('#shell-dialog .xterm-rows').innerText.split('\\n')"
            ".some((line) => line.trim() === 'hi')", timeout=10_000)
        page.keyboard.press("Escape")  # the terminal's key while the session runs: the dialog stays
        assert page.get_attribute("#shell-dialog", "data-state") == "open" and page.is_visible("#shell-dialog")
        page.keyboard.press("Backspace")  # ESC's pair (Alt-Backspace), as a shell's line editor takes it
        page.keyboard.type("echo $COLOR $HOSTNAME")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelector('#shell-dialog .xterm-rows').innerText.includes('blue box')",
                               timeout=10_000)
        # the terminal's size went to the container on the resize channel, as kubectl sends it
        size = page.evaluate("`${window.kubeKitchenShell.term.rows} ${window.kubeKitchenShell.term.cols}`")
        page.keyboard.type("stty size")
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => document.querySelector('#shell-dialog .xterm-rows').innerText.includes({size!r})",
                               timeout=10_000)
        assert int(size.split()[1]) > 80, "the terminal fills the dialog"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"browser-shell-{viewport['width']}x{viewport['height']}.png"))
        page.keyboard.type("exit")
        page.keyboard.press("Enter")
        page.wait_for_selector("#shell-dialog[data-state=ended]", timeout=10_000)
        assert page.inner_text("#shell-dialog .shell-state") == "session ended (exit code 0)"
        assert "[session ended (exit code 0)]" in screen_text(page)
        page.click("#shell-dialog .shell-close")
        page.wait_for_selector("#shell-dialog", state="hidden")
        # the shell's request was the dashboard's: its spoke is on the picture
        assert page.locator("#spokes .spoke[data-who='dashboard/kubernetes-admin']").count() == 1


def test_an_exit_code_and_korean_words(browser, cluster):
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="ko-KR")
    context.add_cookies([{"name": "django_language", "value": "ko", "url": cluster.url}])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    watch_policy(page, errors)  # xterm under the Content-Security-Policy
    try:
        page.goto(login_url(cluster.url))
        page.wait_for_selector(SHELL_BUTTON, timeout=15_000)
        assert page.get_attribute(SHELL_BUTTON, "title") == "이 파드에서 셸 열기"
        open_shell(page)
        page.keyboard.type("exit 3")
        page.keyboard.press("Enter")
        page.wait_for_selector("#shell-dialog[data-state=ended]", timeout=10_000)
        assert page.inner_text("#shell-dialog .shell-state") == "세션 종료 (종료 코드 3)"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "browser-shell-ko.png"))
    finally:
        context.close()
    assert errors == [], errors
