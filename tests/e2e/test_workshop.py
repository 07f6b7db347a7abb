"""A workshop end to end, on a real hub with the real kubectl and Debian's Chromium: two attendees
provisioned; alice's kubeconfig works in her namespace, gets Kubernetes' 403 in bob's, and
`kubectl auth whoami` names her; the instructor may act as her (`kubectl --as`), she may not act
as anyone; on /join she picks her name and the dashboard, logged in as her, holds only her
namespace's pods and receives no traffic record of bob's requests, while the instructor's does."""

from __future__ import annotations

import json
import subprocess

import pytest

from control import roster, workshop
from tests.conftest import KUBECTL, Hub, login_url, wait_for
from tests.dashboard.conftest import CHROMIUM, CHROMIUM_ARGS, RECORD_TRAFFIC

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
            page.wait_for_function("() => window.kubeKitchen && window.kubeKitchen.model.revision !== null", timeout=30_000)
            pods = page.evaluate("[...window.kubeKitchen.model.objects.pods.keys()]")
            assert pods == ["alice/web"]
            assert page.get_attribute("body", "data-spoke") == "dashboard/alice"
        finally:
            browser.close()


def test_the_instructor_may_act_as_an_attendee_and_an_attendee_may_not(hub):
    whoami = hub.kubectl("auth", "whoami", "--as", "alice", "-o", "json")
    info = json.loads(whoami.stdout)["status"]["userInfo"]
    assert (info["username"], info["groups"]) == ("alice", ["system:authenticated"])
    # acting as alice, the instructor has alice's rights and no more
    assert hub.kubectl("get", "pods", "-n", "alice", "--as", "alice").returncode == 0
    refused = hub.kubectl("get", "pods", "-n", "bob", "--as", "alice", check=False)
    assert refused.stderr.strip() == ('Error from server (Forbidden): pods is forbidden: User "alice" cannot list '
                                      'resource "pods" in API group "" in the namespace "bob"')
    grouped = hub.kubectl("auth", "whoami", "--as", "carol", "--as-group", "kubekitchen:attendees", "-o", "json")
    assert json.loads(grouped.stdout)["status"]["userInfo"]["groups"] == ["kubekitchen:attendees",
                                                                         "system:authenticated"]
    # kubectl reads discovery first, with the same headers: refused there, it can only say "Forbidden:
    # unknown" (client-go reads a discovery error's body as text), as against kube-apiserver; so warm
    # alice's discovery cache without impersonating, and the refusal is the request's own
    assert kubectl(hub, "alice", "get", "pods").returncode == 0
    attempt = kubectl(hub, "alice", "get", "pods", "--as", "bob")
    assert attempt.returncode == 1
    assert attempt.stderr.strip() == ('Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot '
                                      'impersonate resource "users" in API group "" at the cluster scope')




def test_an_attendees_page_receives_no_record_of_anothers_requests(hub):
    from playwright.sync_api import sync_playwright

    seen = "window.trafficSeen.map((r) => [r.user || '', (r.scope || {}).namespace || '', r.name || '', r.who])"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            pages = {}
            for who in ("alice", "instructor"):
                context = browser.new_context(viewport={"width": 1280, "height": 720})
                context.add_init_script(RECORD_TRAFFIC)
                page = pages[who] = context.new_page()
                if who == "alice":  # her name is claimed (the test before): she comes back with her code
                    page.goto(f"{hub.url}/join/")
                    page.fill("#code", roster.attendee_codes(hub.dir)["alice"])
                    page.click("main.join button.primary")
                    page.wait_for_selector("#joined[data-user=alice]")
                    page.goto(f"{hub.url}/")
                else:
                    page.goto(login_url(hub.url))
                page.wait_for_function("() => window.kubeKitchen && window.kubeKitchen.model.revision !== null",
                                       timeout=30_000)
            kubectl(hub, "bob", "get", "configmap", "bobs-secret-plan")  # a 404 that names the object
            kubectl(hub, "bob", "get", "pods")
            pages["instructor"].wait_for_function(
                "() => window.trafficSeen.some((r) => r.user === 'bob' && r.name === 'bobs-secret-plan')", timeout=30_000)
            # alice's own request comes after bob's: once her page has it, bob's had their turn
            kubectl(hub, "alice", "get", "configmap", "alices-marker")
            pages["alice"].wait_for_function(
                "() => window.trafficSeen.some((r) => r.user === 'alice' && r.name === 'alices-marker')", timeout=30_000)
            hers = pages["alice"].evaluate(seen)
            assert not [r for r in hers if r[0] == "bob" or r[1] == "bob" or "bob" in r[3]], hers
            assert any(r[3] == "kubectl · alice" for r in hers)  # her kubectl is her own spoke
            everyone = pages["instructor"].evaluate(seen)
            assert any(r[3] == "kubectl · bob" and r[1] == "bob" for r in everyone)
            assert any(r[3] == "kubectl · alice" for r in everyone)
            for who, page in pages.items():
                page.screenshot(path=f"/tmp/imp13-{who}.png")
        finally:
            browser.close()
