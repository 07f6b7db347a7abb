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


# --- the stage on a projector: 10 nodes × 30 pods, a lesson step, its result and its panel -----------

TEN_NODES = "".join(f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{i}}}\n" for i in range(1, 11))
THIRTY_PODS = "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: plate-{i}, labels: {{app: plate}}}}
spec:
  nodeName: node-{i % 10 + 1}
  containers: [{{name: c, image: nginx}}]
""" for i in range(30))
STAGE_CLIENTS = ["kube-controller-manager", "kube-scheduler", "kubectl", "supervisor", "python-client", "line-cook",
                 "garnish-cook", "dashboard/kubernetes-admin", "dashboard/wire", "dashboard/second-writer",
                 *(f"{c}/node-{i}" for i in range(1, 11) for c in ("kubelet", "kube-proxy"))]
BUSY_COUNTERS = """() => { const p = window.kubeKitchen.picture;
  for (const s of p.spokes.values()) { s.requests = 12345; s.watches = 67890; s.errors = 123; p.dirtyCounters.add(s); }
  window.kubeKitchen.receive({t: 'traffic', records: []}); }"""
# On screen, in CSS pixels: the picture as drawn (its viewBox at the scale it has), the smallest
# spoke name and count (font size × every scale above it), and any two labels, circles, the hub,
# the store or the picture's buttons on top of each other.
MEASURE_PICTURE = """() => {
  const svg = document.querySelector('#hub-svg'), m = svg.getScreenCTM();
  const px = (sel) => Math.min(...[...document.querySelectorAll(sel)].map((e) => parseFloat(getComputedStyle(e).fontSize) * e.getScreenCTM().a));
  const rect = (e) => { const r = e.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
  const hit = (a, b) => a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5;
  const labels = [...document.querySelectorAll('#spokes .spoke')].map((g) => [g.dataset.who, rect(g.querySelector('.spoke-label'))]);
  const others = [['hub', rect(document.querySelector('#hub circle'))], ['buttons', rect(document.querySelector('.picture-controls'))],
    ...[...document.querySelectorAll('#store-spoke text, #store-spoke .cyl')].map((e) => ['store', rect(e)]),
    ...[...document.querySelectorAll('#spokes .spoke')].map((g) => [`circle ${g.dataset.who}`, rect(g.querySelector('.spoke-node'))])];
  const out = [];
  labels.forEach(([who, box], i) => {
    for (const [name, other] of others) if (hit(box, other)) out.push(`${who} over ${name}`);
    labels.forEach(([other, second], j) => { if (j > i && hit(box, second)) out.push(`${who} / ${other}`); });
  });
  return {drawnHeight: svg.viewBox.baseVal.height * m.a, top: rect(svg).t, name: px('#spokes .spoke-name'),
          count: px('#spokes .spoke-count'), spokes: labels.length, overlaps: out};
}"""
INSIDE = """(sel) => [...document.querySelectorAll(sel)].map((e) => { const r = e.getBoundingClientRect();
  return r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight; })"""


@pytest.fixture(scope="module")
def crowded_hub():
    server = Hub().start()
    server.kubectl("apply", "-f", "-", input=TEN_NODES + THIRTY_PODS)
    yield server
    server.stop()


def crowd_the_picture(page) -> dict:
    """Twenty spokes with the widest counts a busy cluster draws, once the page has settled (its
    lesson bar in, its fonts loaded): what the picture shows then."""
    page.wait_for_selector("#lesson .lesson-menu, #lesson .lesson-step", state="attached")
    page.wait_for_function("document.fonts.status === 'loaded'")
    page.evaluate("names => window.kubeKitchen.picture.know(new Set(names))", STAGE_CLIENTS)
    page.evaluate(BUSY_COUNTERS)
    page.wait_for_timeout(300)
    return page.evaluate(MEASURE_PICTURE)


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_a_lesson_step_its_result_and_the_cluster_are_on_one_screen(browser, crowded_hub, width, height):
    with dashboard_page(browser, crowded_hub.url, {"width": width, "height": height}) as page:
        page.wait_for_function("document.querySelectorAll('.node-card .pod').length === 30")
        # every lesson in the menu, all of them on the screen at once
        page.click("#lesson .lesson-menu summary")
        assert page.locator("#lesson .lesson-pick").count() >= 18
        assert all(page.evaluate(INSIDE, "#lesson .lesson-pick")), "a lesson of the menu is off the screen"
        page.click("#lesson .lesson-pick[data-lesson='01-declarative']")
        page.click("#lesson .lesson-act")
        result = page.locator("#lesson-result .result")
        result.wait_for()
        assert "pasta" in result.inner_text()
        button, answer = box_of(page, "#lesson .lesson-act"), box_of(page, "#lesson-result .result")
        assert answer["x"] >= button["x"] + button["width"] and answer["y"] < button["y"] + button["height"], \
            f"the answer follows its button on its line ({button}, {answer})"
        assert all(page.evaluate(INSIDE, "#lesson .lesson-step-title, #lesson .lesson-act, #lesson-result .result"))
        # the cluster beside it: the picture at least half the screen tall, legible, every node in name order
        drawn = crowd_the_picture(page)
        page.screenshot(path=f"/tmp/stage-{width}x{height}-lesson.png")
        assert drawn["drawnHeight"] >= height / 2 and drawn["top"] + drawn["drawnHeight"] <= height, drawn
        assert drawn["name"] >= 14 and drawn["count"] >= 12, drawn
        assert drawn["spokes"] == 20 and drawn["overlaps"] == [], drawn
        names = page.eval_on_selector_all("#node-list .node-card", "cards => cards.map((c) => c.dataset.node)")
        assert names == [f"node-{i}" for i in range(1, 11)], "natural order: node-2 before node-10"
        assert all(page.evaluate(INSIDE, "#node-list .node-card")), "every node's card is on the screen"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # a step that names a panel brings it onto the stage; the next without one brings the workloads back
        page.click("#lesson .lesson-back")
        page.click("#lesson .lesson-pick[data-lesson='03-crash-loop']")
        page.click("#lesson .lesson-next")
        page.wait_for_selector("#events.in-focus")
        assert all(page.evaluate(INSIDE, "#events h2, #picture, #node-list .node-card")), "events beside the cluster"
        page.screenshot(path=f"/tmp/stage-{width}x{height}-events.png")
        page.click("#lesson .lesson-back")
        page.wait_for_selector("#workloads.in-focus")
        page.click("#force-relist")  # its answer under it, on the picture, on the screen
        page.wait_for_selector("#relist-result .result")
        assert all(page.evaluate(INSIDE, "#force-relist, #relist-result, #workloads h2"))
        assert crowd_the_picture(page)["overlaps"] == [], "the labels made room for the 410's line"


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_no_label_covers_another_in_either_language_and_word_set_after_a_reload(browser, crowded_hub, width, height):
    with dashboard_page(browser, crowded_hub.url, {"width": width, "height": height}) as page:
        for language in ("en", "ko"):
            page.click(f"button[name=language][value={language}]")
            page.wait_for_selector(f"html[lang={language}] #connection[data-state=connected]")
            for mode in ("k8s", "kitchen"):
                page.click(f"button[data-mode={mode}]")
                page.reload()
                page.wait_for_selector("#connection[data-state=connected]")
                drawn = crowd_the_picture(page)
                page.locator("#picture").screenshot(path=f"/tmp/stage-labels-{width}-{language}-{mode}.png")
                assert drawn["overlaps"] == [], (language, mode, drawn["overlaps"])
                assert drawn["name"] >= 14 and drawn["count"] >= 12, (language, mode, drawn)
        page.click("button[data-mode=k8s]")
        page.click("button[name=language][value=en]")
        page.wait_for_selector("html[lang=en]")


def box_of(page, selector: str) -> dict[str, float]:
    return page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect();"
                                           " return {x: r.x, y: r.y, width: r.width, height: r.height}; }")


THREE_NODES_NINE_PODS = "".join(f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: node-{i}}}\n" for i in (1, 2, 3)) + \
    "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: plate-{n}, labels: {{app: plate}}}}
spec: {{nodeName: node-{n % 3 + 1}, containers: [{{name: plate, image: nginx:1.27}}]}}
""" for n in range(9))
CARDS = """() => [...document.querySelectorAll('#node-list .node-card')].map((card) => {
  const r = card.getBoundingClientRect();
  const buttons = [...card.querySelectorAll('.node-buttons button')].map((b) => b.getBoundingClientRect());
  return {node: card.dataset.node, bottom: r.bottom, buttonsInside: buttons.every((b) => b.left >= r.left && b.right <= r.right),
          podNames: [...card.querySelectorAll('.pod-name')].filter((n) => n.offsetWidth > 0).length};
})"""


def test_the_default_three_nodes_each_with_their_pods_named_fit_the_stage_at_1280(browser):
    """`make run` starts three nodes: at 1280×720 all three cards are on the first screen, their
    buttons inside them, their pods still named (the one-line squares are for four nodes and more)."""
    server = Hub().start()
    try:
        server.kubectl("apply", "-f", "-", input=THREE_NODES_NINE_PODS)
        with dashboard_page(browser, server.url, VIEWPORT) as page:
            page.wait_for_selector(".pod[data-key='default/plate-8']")
            cards = page.evaluate(CARDS)
            page.screenshot(path="/tmp/stage-1280x720-three-nodes.png")
    finally:
        server.stop()
    assert [c["node"] for c in cards] == ["node-1", "node-2", "node-3"]
    assert all(c["bottom"] <= VIEWPORT["height"] for c in cards), cards
    assert all(c["buttonsInside"] for c in cards), cards
    assert [c["podNames"] for c in cards] == [3, 3, 3], cards
