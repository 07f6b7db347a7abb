"""409 and 410 on stage, pods' owners and images, and the namespace filter, in Debian's Chromium
against a real hub (no spokes needed: the objects are applied as they are; the 409 and the 410 are
the hub's own answers). The 410 is played on a hub that keeps two seconds of log, the "no 410" case
on one that keeps everything. Screenshots go to /tmp/stage-*.png."""

from __future__ import annotations

import re

import pytest

from tests.conftest import Hub, wait_for
from tests.dashboard.conftest import dashboard_page

pytestmark = pytest.mark.e2e

VIEWPORT = {"width": 1280, "height": 720}
OWNED = """
apiVersion: v1
kind: Node
metadata: {name: node-1}
---
apiVersion: v1
kind: Namespace
metadata: {name: bakery}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: pasta}
spec:
  replicas: 1
  selector: {matchLabels: {app: pasta}}
  template:
    metadata: {labels: {app: pasta}}
    spec: {containers: [{name: pasta, image: nginx:1.27}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: pasta-6d4
  annotations: {deployment.kubernetes.io/revision: "2"}
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: pasta, uid: d-1, controller: true}]
spec:
  replicas: 1
  selector: {matchLabels: {app: pasta}}
  template:
    metadata: {labels: {app: pasta}}
    spec: {containers: [{name: pasta, image: nginx:1.27}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: pasta-6d4-x7k
  labels: {app: pasta}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: pasta-6d4, uid: rs-1, controller: true}]
spec:
  nodeName: node-1
  containers: [{name: pasta, image: docker.io/library/nginx:1.27}]
---
apiVersion: v1
kind: Pod
metadata:
  name: bake-q2w
  namespace: bakery
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: bake, uid: j-1, controller: true}]
spec:
  nodeName: node-1
  restartPolicy: Never
  containers: [{name: bake, image: busybox:1.36}, {name: timer, image: busybox:1.36}]
"""
# the page's own spoke: the dashboard as the user logged in ("dashboard/kubernetes-admin")
DASHBOARD_ERRORS = "(window.kubeKitchen.picture.counters(document.body.dataset.spoke) || {errors: 0}).errors"


@pytest.fixture(scope="module")
def forgetful_hub():
    """A hub whose log keeps two seconds: revision 1 is compacted away soon after the start."""
    server = Hub(env={"KK_LOG_MAX_AGE": "2", "KK_COMPACT_INTERVAL": "0.2", "KK_BOOKMARK_INTERVAL": "0.5"}).start()
    server.kubectl("apply", "-f", "-", input=OWNED)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def keeping_hub():
    server = Hub().start()
    server.kubectl("apply", "-f", "-", input=OWNED)
    yield server
    server.stop()


def test_a_stale_write_shows_the_hubs_409_with_both_revisions_and_a_red_dot(browser, keeping_hub):
    with dashboard_page(browser, keeping_hub.url, VIEWPORT) as page:
        button = "#workload-rows tr.deployment button[data-action=stale-write][data-name=pasta]"
        page.wait_for_selector(button)
        errors_before = page.evaluate(DASHBOARD_ERRORS)
        page.click(button)
        result = page.locator("#action-result .result.error[data-action=stale-write]")
        result.wait_for()
        text = result.inner_text()
        old, new = map(int, re.search(r"resourceVersion (\d+) \(the store holds (\d+)\)", text).groups())
        assert old < new, text
        assert "409 Conflict" in text and 'Operation cannot be fulfilled on deployments.apps "pasta"' in text
        # the refused PUT is a real request: counted red on the dashboard's spoke and listed with its client
        wait_for(lambda: page.evaluate(DASHBOARD_ERRORS) == errors_before + 1, timeout=10, what="the red count")
        refused = page.locator("#failure-list .failure[data-code='409']", has_text="dashboard").first
        refused.wait_for()
        assert "Conflict" in refused.inner_text() and "update" in refused.inner_text()
        # the other writer was a client of its own: its spoke, its PATCH
        page.wait_for_selector("#spokes .spoke[data-who='dashboard/second-writer']")
        assert page.evaluate("window.kubeKitchen.picture.counters('dashboard/second-writer').requests") >= 1
        page.screenshot(path="/tmp/stage-1280x720-409.png")
    annotations = keeping_hub.kubectl("get", "deployment", "pasta", "-o", "jsonpath={.metadata.annotations}").stdout
    assert f"changed after resourceVersion {old}" in annotations, "the second writer's change is stored, the PUT is not"


def test_force_relist_shows_the_410_then_the_relist(browser, forgetful_hub):
    with dashboard_page(browser, forgetful_hub.url, VIEWPORT) as page:
        forgetful_hub.kubectl("annotate", "deployment", "pasta", "moved=on", "--overwrite")
        page.wait_for_timeout(2500)  # revision 1 leaves the two-second window
        errors_before = page.evaluate(DASHBOARD_ERRORS)
        page.click("#force-relist")
        gone = page.locator("#relist-result .result[data-state=error]")
        gone.wait_for(timeout=10_000)
        assert re.search(r"ERROR 410 Expired: too old resource version: 1 \(\d+\)", gone.inner_text()), gone.inner_text()
        page.screenshot(path="/tmp/stage-1280x720-410.png")
        page.wait_for_function("() => document.querySelector('#relist-result').textContent.includes('relisted')",
                               timeout=15_000)
        snapshot = int(re.search(r"snapshot at revision (\d+)", page.inner_text("#relist-result")).group(1))
        assert page.evaluate("window.kubeKitchen.model.revision") >= snapshot > 1
        assert page.evaluate(DASHBOARD_ERRORS) >= errors_before + 1, "the ERROR event, red on the dashboard's spoke"
        # the page follows on after the relist
        forgetful_hub.kubectl("annotate", "deployment", "pasta", "after=relist", "--overwrite")
        page.wait_for_function(f"() => window.kubeKitchen.model.revision > {snapshot}", timeout=10_000)
        page.wait_for_selector("#connection[data-state=connected]")


def test_force_relist_on_a_hub_that_still_holds_revision_1_says_there_is_no_410(browser, keeping_hub):
    with dashboard_page(browser, keeping_hub.url, VIEWPORT) as page:
        revision = page.evaluate("window.kubeKitchen.model.revision")
        page.click("#force-relist")
        kept = page.locator("#relist-result .result[data-state=ok]")
        kept.wait_for(timeout=10_000)
        assert "no 410" in kept.inner_text()
        assert page.evaluate("window.kubeKitchen.model.revision") >= revision, "nothing applied twice, nothing lost"


def test_pods_show_their_owner_and_image_and_the_namespace_filter_hides_the_others(browser, keeping_hub):
    with dashboard_page(browser, keeping_hub.url, VIEWPORT) as page:
        chip = page.locator(".pod[data-key='default/pasta-6d4-x7k']")
        chip.wait_for()
        assert chip.locator(".pod-owner").inner_text() == "pasta #2", "a Deployment's ReplicaSet, by revision"
        assert chip.locator(".pod-image").inner_text() == "nginx:1.27"
        assert chip.locator(".ns-tag").count() == 0, "default is not named"
        swatch = page.locator("#workload-rows tr.replicaset[data-key='default/pasta-6d4'] .owner-swatch")
        colour = "e => getComputedStyle(e).backgroundColor"
        assert swatch.evaluate(colour) == chip.locator(".pod-owner").evaluate(colour), "the row's colour on its pods"
        baker = page.locator(".pod[data-key='bakery/bake-q2w']")
        assert baker.locator(".pod-owner").inner_text() == "job/bake"
        assert baker.locator(".pod-image").inner_text() == "busybox:1.36 +1"
        assert baker.locator(".ns-tag").inner_text() == "bakery"

        page.wait_for_function("() => document.querySelectorAll('#ns-filter option').length === 3")
        assert page.eval_on_selector_all("#ns-filter option", "os => os.map(o => o.value)") == ["", "default", "bakery"]
        page.select_option("#ns-filter", "bakery")
        assert not chip.is_visible() and baker.is_visible()
        assert not page.locator("#workload-rows tr.deployment[data-key='default/pasta']").is_visible()
        page.screenshot(path="/tmp/stage-1280x720-namespace.png")
        page.select_option("#ns-filter", "")
        assert chip.is_visible() and baker.is_visible()
