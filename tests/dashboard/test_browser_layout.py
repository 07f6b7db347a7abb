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


# --- the stage at 1280: every kind's panel, the failed requests, the events ---------------------------

STAGE = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: a-deployment-with-a-rather-long-name}
spec:
  replicas: 2
  selector: {matchLabels: {app: long}}
  template:
    metadata: {labels: {app: long}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: bake}
spec:
  completions: 3
  template:
    spec: {restartPolicy: Never, containers: [{name: bake, image: busybox}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "*/5 * * * *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Event
metadata: {name: bake.burnt}
involvedObject: {kind: Job, name: bake, namespace: default, apiVersion: batch/v1}
type: Warning
reason: BackoffLimitExceeded
message: Job has reached the specified backoff limit
count: 3
source: {component: job-controller}
"""
BAKE_STATUS = '{"status": {"startTime": "2026-01-01T10:00:00Z", "succeeded": 2, "failed": 1, "active": 1}}'
MANY_SPOKES = ["kube-controller-manager", "kube-scheduler", "kubectl", "supervisor", "python-client", "line-cook",
               "garnish-cook", *(f"{c}/node-{i}" for i in (1, 2, 3) for c in ("kubelet", "kube-proxy"))]

# Elements whose right edge is past the viewport, or buttons cut by a clipping ancestor (overflow
# other than visible): each named by id, class and text.
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  const name = (e) => `${e.tagName}#${e.id}.${e.className} ${(e.textContent || '').slice(0, 30)}`;
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.width && r.right > width + 0.5) out.push(`past the viewport: ${name(e)} (${r.right})`);
  }
  for (const b of document.querySelectorAll('main button')) {
    const r = b.getBoundingClientRect();
    if (!r.width) continue;
    for (let a = b.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX === 'visible' && style.overflow === 'visible') continue;
      const c = a.getBoundingClientRect();
      if (r.left < c.left - 0.5 || r.right > c.right + 0.5) out.push(`cut: ${name(b)} in ${name(a)}`);
    }
  }
  return out;
}"""
def page_box(page, selector: str) -> dict[str, float]:
    """Where an element is on the page (not the viewport: filling the form scrolls)."""
    return page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect();"
                                           " return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height}; }")


LABELS_OVER_THE_STORE = """() => {
  const boxes = (sel) => [...document.querySelectorAll(sel)].map((e) => e.getBoundingClientRect()).filter((r) => r.width);
  const store = boxes('#store-spoke text');
  const labels = boxes('#spokes text');
  const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  return labels.filter((l) => store.some((s) => hit(l, s))).length;
}"""


@pytest.fixture(scope="module")
def stage_hub(hub_with_nodes):
    hub_with_nodes.kubectl("apply", "-f", "-", input=STAGE)
    hub_with_nodes.kubectl("patch", "job", "bake", "--subresource=status", "--type=merge", "-p", BAKE_STATUS)
    return hub_with_nodes


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_every_panel_fits_and_every_button_is_whole(browser, stage_hub, width, height):
    with dashboard_page(browser, stage_hub.url, {"width": width, "height": height}) as page:
        page.wait_for_selector("#workload-rows tr.deployment button[data-delta='1']")
        page.wait_for_selector("#job-list .job[data-key='default/bake'] .slot.done")
        page.evaluate("names => window.kubeKitchen.picture.know(new Set(names))", MANY_SPOKES)
        page.evaluate("window.kubeKitchen.receive({t: 'traffic', records: []})")
        assert page.evaluate(OVERFLOWING) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width

        # the Job as slots: 2 done, 1 running, 1 failed; the CronJob suspended; the Warning next to the Job
        job = "#job-list .job[data-key='default/bake']"
        assert [page.locator(f"{job} .slot.{s}").count() for s in ("done", "active", "todo", "failed")] == [2, 1, 0, 1]
        assert page.inner_text(f"{job} .completions") == "2/3"
        assert "BackoffLimitExceeded" in page.inner_text(f"{job} .warning")
        assert page.inner_text("#cronjob-list .cronjob[data-key='default/nightly'] .schedule") == "*/5 * * * *"
        assert page.locator("#cronjob-list .cronjob.suspended").count() == 1
        event = page.locator("#event-list .event.type-warning").first
        assert "BackoffLimitExceeded" in event.inner_text() and "job/bake" in event.inner_text()
        assert page.evaluate("getComputedStyle(document.querySelector('#event-list .event.type-warning .type')).color") \
            == "rgb(215, 20, 26)", "a Warning is red"

        # a failed request and an apply's answer appear without moving anything
        boxes = {sel: page_box(page, sel) for sel in ("#picture", "#events", "#failures", "#jobs", "#workloads", "#log")}
        stage_hub.kubectl("get", "configmap", f"not-there-{width}", check=False)
        page.wait_for_selector(f"#failure-list .failure[data-code='404'] >> text=not-there-{width}")
        page.fill("#manifest-text", f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: shown-{width}}}\n")
        page.click("#manifest-form button[type=submit]")
        page.wait_for_selector("#apply-result .outcome.created")
        page.click("#traffic-form button[type=submit]")  # to a Service that does not exist: the hub's answer
        page.wait_for_selector("#traffic-result .result")
        assert {sel: page_box(page, sel) for sel in boxes} == boxes
        assert page.evaluate(OVERFLOWING) == []
        assert page.evaluate(LABELS_OVER_THE_STORE) == 0
        page.screenshot(path=f"/tmp/stage-{width}x{height}-panels.png", full_page=True)


def test_failed_requests_are_named_and_a_lookup_before_create_is_expected(browser, stage_hub):
    with dashboard_page(browser, stage_hub.url, {"width": 1280, "height": 720}) as page:
        page.wait_for_selector("#failure-list")
        # kubectl's client-side apply asks first (GET → 404), then creates (POST)
        stage_hub.kubectl("apply", "-f", "-", input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: asked-first}\n")
        expected = page.locator("#failure-list .failure[data-label='before-create']", has_text="asked-first")
        expected.wait_for()
        text = expected.inner_text()
        assert "404" in text and "NotFound" in text and "get" in text and "kubectl" in text
        assert "/api/v1/namespaces/default/configmaps/asked-first" in text
        assert "expected (not found before create)" in text
        # a real refusal: named with its reason, red, and counted on kubectl's spoke
        errors_before = page.evaluate("(window.kubeKitchen.picture.counters('kubectl') || {errors: 0}).errors")
        stage_hub.kubectl("create", "configmap", "asked-first", check=False)  # exists: 409 AlreadyExists
        refused = page.locator("#failure-list .failure[data-code='409']").first
        refused.wait_for()
        assert "AlreadyExists" in refused.inner_text() and "create" in refused.inner_text()
        assert page.locator("#failure-list .failure[data-code='409'].expected").count() == 0
        assert page.evaluate("window.kubeKitchen.picture.counters('kubectl').errors") == errors_before + 1
        rows = page.locator("#failure-list .failure")
        assert rows.first.get_attribute("data-code") == "409", "newest first"


def test_the_korean_stage_names_the_new_panels_and_keeps_labels_apart(browser, stage_hub):
    with dashboard_page(browser, stage_hub.url, {"width": 1280, "height": 720}) as page:
        page.click("button[name=language][value=ko]")
        page.wait_for_selector("html[lang=ko] #connection[data-state=connected]")
        page.wait_for_selector("#job-list .job[data-key='default/bake']")
        assert page.inner_text("#jobs h2") == "잡과 크론잡"
        assert page.inner_text("#events h2") == "이벤트"
        assert page.inner_text("#failures h2") == "실패한 요청"
        page.evaluate("names => window.kubeKitchen.picture.know(new Set(names))", MANY_SPOKES)
        page.evaluate("window.kubeKitchen.receive({t: 'traffic', records: []})")
        page.wait_for_timeout(100)
        assert page.evaluate(LABELS_OVER_THE_STORE) == 0
        assert page.evaluate(OVERFLOWING) == []
        page.screenshot(path="/tmp/stage-1280x720-ko-panels.png", full_page=True)
        page.click("button[name=language][value=en]")
        page.wait_for_selector("html[lang=en]")


# --- the ring with 10 nodes: one spoke per node, no two labels on each other --------------------------

TEN_NODES_AND_TEN_MORE = ["kube-controller-manager", "kube-scheduler", "kubectl", "supervisor", "python-client",
                          "line-cook", "garnish-cook", "dashboard/kubernetes-admin", "dashboard/wire", "dashboard/second-writer",
                          *(f"{c}/node-{i}" for i in range(1, 11) for c in ("kubelet", "kube-proxy"))]

# Every spoke's circle and label, the hub and the store, as the browser draws them: what overlaps.
OVERLAPS = """() => {
  const rect = (e) => { const r = e.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
  const hit = (a, b) => a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5;
  const svg = rect(document.querySelector('#hub-svg'));
  const inside = (x) => x.l >= svg.l - 0.5 && x.r <= svg.r + 0.5 && x.t >= svg.t - 0.5 && x.b <= svg.b + 0.5;
  const spokes = [...document.querySelectorAll('#spokes .spoke')].map((g) => ({
    who: g.dataset.who, circle: rect(g.querySelector('.spoke-node')), label: rect(g.querySelector('.spoke-label')) }));
  const fixed = [['hub', rect(document.querySelector('#hub circle'))],
    ...[...document.querySelectorAll('#store-spoke text, #store-spoke .cyl')].map((e) => ['store', rect(e)])];
  const out = [];
  spokes.forEach((a, i) => {
    if (!inside(a.label)) out.push(`${a.who}: label outside the picture`);
    for (const [name, box] of fixed) if (hit(a.label, box) || hit(a.circle, box)) out.push(`${a.who} over the ${name}`);
    spokes.forEach((b, j) => {
      if (j > i && hit(a.label, b.label)) out.push(`labels ${a.who} / ${b.who}`);
      if (j > i && hit(a.circle, b.circle)) out.push(`circles ${a.who} / ${b.who}`);
      if (i !== j && hit(a.label, b.circle)) out.push(`label ${a.who} over the circle of ${b.who}`);
    });
  });
  return {spokes: spokes.map((s) => s.who), overlaps: out};
}"""
BUSY = """() => { const p = window.kubeKitchen.picture;
  for (const s of p.spokes.values()) { s.requests = 12345; s.watches = 67890; s.errors = 123; p.dirtyCounters.add(s); }
  window.kubeKitchen.receive({t: 'traffic', records: []}); }"""


@pytest.mark.parametrize("width,height,language", [(1280, 720, "en"), (1280, 720, "ko"), (1920, 1080, "en")])
def test_ten_nodes_and_ten_more_clients_make_a_ring_whose_labels_never_overlap(browser, hub_with_nodes, width,
                                                                                height, language):
    with dashboard_page(browser, hub_with_nodes.url, {"width": width, "height": height}) as page:
        if language == "ko":
            page.click("button[name=language][value=ko]")
            page.wait_for_selector("html[lang=ko] #connection[data-state=connected]")
        page.evaluate("names => window.kubeKitchen.picture.know(new Set(names))", TEN_NODES_AND_TEN_MORE)
        page.evaluate(BUSY)  # long counters: the widest labels a busy cluster draws
        page.wait_for_timeout(100)
        for mode in ("k8s", "kitchen"):
            page.click(f"button[data-mode={mode}]")
            page.wait_for_timeout(100)
            drawn = page.evaluate(OVERLAPS)
            # a node's kubelet and kube-proxy share its spoke: 10 node spokes, not 20
            assert len(drawn["spokes"]) == 20 and "node/node-10" in drawn["spokes"], drawn["spokes"]
            assert drawn["overlaps"] == [], drawn["overlaps"]
            page.locator("#picture").screenshot(path=f"/tmp/stage-ring-10-nodes-{width}-{language}-{mode}.png")
        counters = page.evaluate("window.kubeKitchen.picture.counters('kube-proxy/node-3')")
        assert counters == page.evaluate("window.kubeKitchen.picture.counters('kubelet/node-3')")
        assert "12k" in page.text_content("#spokes .spoke[data-who='node/node-3'] .spoke-count")
        hint = page.text_content("#spokes .spoke[data-who='node/node-3'] title")
        assert "node-3" in hint and "12345" in hint, "the exact counts and both agents on hovering"
        page.click("button[data-mode=k8s]")
        if language == "ko":
            page.click("button[name=language][value=en]")
            page.wait_for_selector("html[lang=en]")


def test_a_node_spoke_adds_up_its_kubelet_and_its_kube_proxy(browser, hub_with_nodes):
    with dashboard_page(browser, hub_with_nodes.url, {"width": 1280, "height": 720}) as page:
        page.evaluate("""() => window.kubeKitchen.receive({t: 'traffic', records: [
            {type: 'request', who: 'kubelet/node-7', verb: 'get', code: 200, resource: 'pods'},
            {type: 'request', who: 'kube-proxy/node-7', verb: 'list', code: 200, resource: 'services'},
            {type: 'watch', who: 'kube-proxy/node-7', count: 3, resource: 'endpoints'}]})""")
        page.wait_for_selector("#spokes .spoke[data-who='node/node-7']")
        assert page.locator("#spokes .spoke[data-who^='kubelet/'], #spokes .spoke[data-who^='kube-proxy/']").count() == 0
        assert page.evaluate("window.kubeKitchen.picture.counters('kubelet/node-7')") == \
            {"requests": 2, "watches": 3, "errors": 0}
        assert page.text_content("#spokes .spoke[data-who='node/node-7'] .spoke-initial") == "7"
