"""A workshop end to end, on a real hub with the real kubectl and Debian's Chromium: two attendees
provisioned; alice's kubeconfig works in her namespace, gets Kubernetes' 403 in bob's, and
`kubectl auth whoami` names her; on /join she picks her name and the dashboard, logged in as her,
holds only her namespace's pods."""

from __future__ import annotations

import json
import subprocess

import pytest

from control import workshop
from tests.conftest import KUBECTL, Hub, wait_for
from tests.dashboard.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.e2e
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@pytest.fixture(scope="module")
def hub():
    server = Hub().start()
    workshop.provision(server.url, server.dir, ["alice", "bob"])
    yield server
    server.stop()


def kubectl(hub: Hub, who: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    config = hub.dir / "workshop" / f"{who}.kubeconfig"
    return subprocess.run([KUBECTL, "--kubeconfig", str(config), "--cache-dir", str(hub.dir / f"cache-{who}"), *args],
                          input=stdin, capture_output=True, text=True, timeout=60)


def test_an_attendees_kubeconfig_works_in_their_namespace_only(hub):
    assert kubectl(hub, "alice", "apply", "-f", "-", stdin=json.dumps(POD)).returncode == 0
    mine = kubectl(hub, "alice", "get", "pods", "-o", "name")
    assert mine.returncode == 0 and mine.stdout.strip() == "pod/web"
    theirs = kubectl(hub, "alice", "get", "pods", "-n", "bob")
    assert theirs.returncode == 1
    assert theirs.stderr.strip() == ('Error from server (Forbidden): pods is forbidden: User "alice" cannot list '
                                     'resource "pods" in API group "" in the namespace "bob"')
    whoami = kubectl(hub, "alice", "auth", "whoami", "-o", "json")
    assert json.loads(whoami.stdout)["status"]["userInfo"]["username"] == "alice"
    assert kubectl(hub, "alice", "get", "nodes").returncode == 0  # the nodes view


def test_joining_in_the_browser_shows_only_the_attendees_namespace(hub):
    from playwright.sync_api import sync_playwright

    assert kubectl(hub, "bob", "apply", "-f", "-", stdin=json.dumps({**POD, "metadata": {"name": "bobs"}})).returncode == 0
    wait_for(lambda: kubectl(hub, "alice", "get", "pod", "web").returncode == 0, what="alice's pod")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{hub.url}/join/")
            page.click("button[name=name][value=alice]")
            page.wait_for_selector("#joined[data-user=alice]")
            assert "/join/" in page.inner_text("#one-liner") and "kubeconfig" in page.inner_text("#one-liner")
            page.goto(f"{hub.url}/")
            page.wait_for_function("window.kubeKitchen && window.kubeKitchen.model.revision !== null", timeout=30_000)
            pods = page.evaluate("[...window.kubeKitchen.model.objects.pods.keys()]")
            assert pods == ["alice/web"]
            assert page.get_attribute("body", "data-spoke") == "dashboard/alice"
        finally:
            browser.close()
