"""NetworkPolicy on the dashboard in a real browser (Debian's Chromium driven by Playwright) against
a real cluster (hub, controller-manager, scheduler, two kubelets and a kube-proxy per node, each its
own process): a connection a policy dropped, sent by `kubectl exec` from a pod's shell, is drawn as a
curve that stops at a wall naming the policy; the waiter's allowed one as a green curve naming the
policy that let it in; the policies are listed with their counts. The page is a projector's
1280×720. Screenshots go to test-artifacts/."""

from __future__ import annotations

import pytest

from tests.conftest import Cluster, wait_for
from tests.dashboard.conftest import dashboard_page
from tests.dashboard.test_browser import ROOT, shoot

pytestmark = pytest.mark.e2e

NODES = 2
VIEWPORT = {"width": 1280, "height": 720}
MANIFESTS = ROOT / "lessons" / "manifests"
WGET = ("--", "wget", "-qO-", "-T", "2", "http://kitchen")


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=NODES).start()
    try:
        for i in range(1, NODES + 1):
            running.start_spoke("kube-proxy", node=f"node-{i}")
        wait_for(lambda: len(running.ready_nodes()) == NODES, what=f"{NODES} Ready nodes")
        yield running
    finally:
        running.stop()


@pytest.fixture
def page(browser, cluster):
    with dashboard_page(browser, cluster.url, VIEWPORT) as page:
        yield page


def exec_wget(cluster, pod: str) -> int:
    return cluster.kubectl("exec", pod, *WGET, check=False).returncode


def test_a_blocked_connection_stops_at_a_wall_and_an_allowed_one_names_its_policy(page, cluster):
    cluster.kubectl("apply", "-f", str(MANIFESTS / "staff-only.yaml"))
    page.select_option("#ns-filter", "default")  # the lesson's pods, not the control plane's
    page.wait_for_function("() => ['guest', 'head-waiter'].every(n => document.querySelector("
                           "`.pod.phase-ready[data-name='${n}']`)) && document.querySelector(\".pod.phase-ready[data-name^='kitchen-']\")",
                           timeout=60_000)
    wait_for(lambda: exec_wget(cluster, "guest") == 0, timeout=30, what="the guest reaching the kitchen")
    assert page.locator("#traffic-dots .np-group").count() == 0  # nobody isolated: no policy drew anything

    cluster.kubectl("apply", "-f", str(MANIFESTS / "kitchen-staff-only.yaml"))
    page.wait_for_selector("#policies:not(.none) .policy[data-key='default/kitchen-staff-only']", timeout=15_000)
    wait_for(lambda: exec_wget(cluster, "guest") == 1, timeout=30, what="the guest's request dropped")
    page.wait_for_selector("#traffic-dots .np-group.blocked .np-wall", timeout=10_000)
    label = page.inner_text("#traffic-dots .np-label.blocked")
    assert "blocked by default/kitchen-staff-only" in label and label.count("guest → kitchen-") == 1, label
    assert "ingress (in) 80/TCP" in label, label
    box = page.locator("#traffic-dots .np-label.blocked").bounding_box()  # readable and on the screen
    assert box and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= 1280 and box["y"] + box["height"] <= 720
    assert "blocked by default/kitchen-staff-only" in page.inner_text("#traffic-recent li.blocked")
    shoot(page, "31-networkpolicy-blocked")

    cluster.kubectl("apply", "-f", str(MANIFESTS / "waiters-may-order.yaml"))
    wait_for(lambda: exec_wget(cluster, "head-waiter") == 0, timeout=30, what="the waiter allowed")
    page.wait_for_selector("#traffic-dots .np-group.allowed .np-head", timeout=10_000)
    label = page.inner_text("#traffic-dots .np-label.allowed")
    assert "allowed by default/waiters-may-order" in label and "head-waiter → kitchen-" in label, label
    counts = page.inner_text("#policies .policy[data-key='default/waiters-may-order'] .policy-title")
    assert "allowed" in counts, counts
    rules = page.inner_text("#policies .policy[data-key='default/waiters-may-order'] .policy-rules")
    assert "Ingress ← pods role=waiter · 80/TCP" in rules, rules
    shoot(page, "32-networkpolicy-allowed")
