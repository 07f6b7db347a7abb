"""The dashboard in a real browser (Debian's Chromium driven by Playwright) against a real cluster:
hub, controller-manager, scheduler and three kubelets, each its own process. It plays the
workshop: submit a Deployment through the form, see its pods appear on the nodes, drop a pod with
its button and see the replacement, read it all in the version log, then the same picture in the
restaurant story and in Korean. Screenshots go to test-artifacts/ (and, with KK_UPDATE_README_SHOT=1,
one to docs/dashboard.png)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from control import config
from tests.conftest import Cluster, login_url, wait_for
from tests.dashboard.conftest import dashboard_page

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
README_SHOT = ROOT / "docs" / "dashboard.png"
READY_PODS = ".node-card:not([data-node='']) .pod.phase-ready:not(.terminating)"


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=3).start()
    try:  # a cluster that never gets ready is stopped too, not left behind
        # Generous: on a loaded machine six processes take a while to start; the wait ends as soon
        # as they are Ready (how fast is bench/'s to measure).
        wait_for(lambda: len(running.ready_nodes()) == 3, timeout=120, what="3 Ready nodes")
        yield running
    finally:
        running.stop()


@pytest.fixture
def page(browser, cluster):
    with dashboard_page(browser, cluster.url, {"width": 1920, "height": 1080}) as page:
        yield page


def shoot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def log_text(page) -> str:
    return page.inner_text("#log-list")


def apply_in_form(page, manifest: str | None = None) -> str:
    if manifest is not None:
        page.fill("#manifest-text", manifest)
    page.click("#manifest-form button[type=submit]")
    page.wait_for_selector("#apply-result .outcome, #apply-result .result")
    return page.inner_text("#apply-result")


def test_the_workshop_in_the_browser(page, cluster):
    # An order: the Deployment example, submitted through the form (htmx), applied by the dashboard.
    page.click("[data-example=deployment]")
    assert "deployment.apps/pasta\ncreated" in apply_in_form(page).replace(" created", "\ncreated")
    page.wait_for_function(f"() => document.querySelectorAll({READY_PODS!r}).length === 3", timeout=30_000)
    expect(page.locator("#workload-rows tr.deployment[data-key='default/pasta'] td.num")).to_have_text(["3", "3", "3"])
    # The picture: the hub, the store, and the spokes as the hub's traffic names them (the dashboard
    # as the user logged in). This cluster has no supervisor to name its spokes beforehand, and an
    # idle cluster is quiet (a Node's status is written on change or every few minutes): the spokes
    # are drawn once the Deployment has made each of them talk.
    for who in ("kube-controller-manager", "kube-scheduler", "node/node-1", "node/node-2", "node/node-3",
                "dashboard/kubernetes-admin"):
        page.wait_for_selector(f"#spokes .spoke[data-who='{who}']", timeout=15_000)
    assert page.text_content("#hub .hub-name").startswith("API server")
    page.uncheck("#log-quiet")
    text = log_text(page)
    assert re.search(r"ADDED\s+Deployment/pasta\s+dashboard", text), text
    assert re.search(r"ADDED\s+Pod/pasta-\S+\s+controller-manager", text), text
    assert re.search(r"MODIFIED\s+Pod/pasta-\S+\s+scheduler", text), text
    page.check("#log-quiet")
    page.evaluate("window.scrollTo(0, 0)")  # (un)checking scrolled the log into view
    shoot(page, "01-deployment-running")
    if config.given("KK_UPDATE_README_SHOT") == "1":  # the README's picture is refreshed on request only
        README_SHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(README_SHOT))

    # Drop the pasta: delete one pod with its button; the ReplicaSet cooks another.
    victim = page.locator(READY_PODS).first
    name = victim.get_attribute("data-name")
    victim.locator("button[data-action=delete-pod]").click()
    page.wait_for_selector("#action-result .result.ok")
    page.wait_for_selector(f".pod[data-name='{name}'].terminating, #log-list .entry.deleted", timeout=15_000)
    shoot(page, "02-pod-dropped")
    page.wait_for_selector(f".pod[data-name='{name}']", state="detached", timeout=30_000)
    page.wait_for_function(f"() => document.querySelectorAll({READY_PODS!r}).length === 3", timeout=30_000)
    names = [el.get_attribute("data-name") for el in page.locator(READY_PODS).all()]
    assert name not in names and len(set(names)) == 3
    assert re.search(rf"DELETED\s+Pod/{re.escape(name)}\s", log_text(page))
    shoot(page, "03-pod-replaced")

    # The version log can be paused for reading: it stands still while the ring keeps filling.
    page.click("#log-pause")
    cluster.kubectl("create", "configmap", "written-while-paused")
    page.wait_for_function("() => document.querySelector('#log-waiting').textContent.includes('+')")
    assert "written-while-paused" not in log_text(page)
    page.click("#log-pause")
    page.wait_for_function("() => document.querySelector('#log-list').innerText.includes('written-while-paused')")

    # The dashboard is a client like any other: its requests (as the user logged in) are counted on
    # that user's own spoke.
    requests = page.text_content("#spokes .spoke[data-who='dashboard/kubernetes-admin'] .spoke-count .count-req")
    assert int(requests) >= 3

    # The restaurant story: the same live picture, relabelled.
    page.click("[data-mode=kitchen]")
    assert page.text_content("#hub .hub-name").startswith("Waiter")
    assert "Notepad" in page.text_content("#store-spoke .spoke-name")
    # The picture's labels change at once; the cards are drawn again on the next frame.
    expect(page.locator(f"{READY_PODS} .pod-status").first).to_have_text("Garnished")
    shoot(page, "04-restaurant")

    # Korean (Django i18n): the page reloads in Korean, in the story view it was left in.
    page.click("button[name=language][value=ko]")
    page.wait_for_selector("html[lang=ko]")
    page.wait_for_selector("#connection[data-state=connected]")
    # After a reload the spokes come back at once: the version log's history names its clients.
    page.wait_for_selector("#spokes .spoke[data-who='node/node-3']", timeout=5_000)
    page.wait_for_function(f"() => document.querySelectorAll({READY_PODS!r}).length === 3", timeout=15_000)
    assert page.text_content("#hub .hub-name").startswith("웨이터")
    assert "메모장" in page.text_content("#store-spoke .spoke-name")
    shoot(page, "05-restaurant-korean")
    page.click("[data-mode=k8s]")
    assert page.text_content("#hub .hub-name").startswith("API 서버")
    assert page.inner_text("#nodes h2") == "노드와 파드"
    shoot(page, "06-kubernetes-korean")
    page.click("button[name=language][value=en]")
    page.wait_for_selector("html[lang=en]")


def test_buttons_crash_cordon_and_scale(page, cluster):
    cluster.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(name="soup", replicas=2))
    page.wait_for_function("() => document.querySelectorAll(\".pod[data-name^='soup-'].phase-ready\").length === 2",
                           timeout=30_000)
    # Crash a container: the kubelet restarts it, the restart count shows on the pod.
    pod = page.locator(".pod[data-name^='soup-']").first
    name = pod.get_attribute("data-name")
    pod.locator("button[data-action=crash]").click()
    page.wait_for_selector(f".pod[data-name='{name}'] .restarts", timeout=30_000)
    # Cordon a node, and uncordon it.
    page.click(".node-card[data-node='node-1'] button[data-action=cordon]")
    page.wait_for_selector(".node-card[data-node='node-1'].cordoned")
    assert json.loads(cluster.kubectl("get", "node", "node-1", "-o", "json").stdout)["spec"]["unschedulable"] is True
    page.click(".node-card[data-node='node-1'] button[data-action=uncordon]")
    page.wait_for_selector(".node-card[data-node='node-1']:not(.cordoned)")
    # Scale up by one from the table.
    page.click("#workload-rows tr.deployment[data-key='default/soup'] button[data-delta='1']")
    page.wait_for_function("() => document.querySelectorAll(\".pod[data-name^='soup-']:not(.terminating)\").length === 3",
                           timeout=30_000)
    # Stop the scheduler: the desired state goes into the supervisor's ConfigMap.
    page.click("#control-plane button[data-spoke=scheduler]")
    page.wait_for_selector("#control-plane .spoke-control.stopped")
    data = json.loads(cluster.kubectl("get", "configmap", "-n", "kube-system", "kubekitchen-spokes", "-o", "json").stdout)
    assert data["data"]["scheduler"] == "stopped"
    page.wait_for_selector("#spokes .spoke[data-who='kube-scheduler'].stopped .count-stopped")
    page.click("#control-plane button[data-spoke=scheduler]")
    page.wait_for_selector("#control-plane .spoke-control.stopped", state="detached")
    page.wait_for_selector("#spokes .spoke[data-who='kube-scheduler'] .count-stopped", state="detached")
    shoot(page, "07-buttons")


def test_the_wire_shows_chunked_transfer(page, cluster):
    page.click("#wire-toggle")
    page.wait_for_selector("#wire-out .wire-size", timeout=15_000)
    head = page.inner_text("#wire-out")
    assert "HTTP/1.1 200 OK" in head and re.search(r"(?i)transfer-encoding: chunked", head)
    size_line = page.locator("#wire-out .wire-size").first.inner_text()
    assert re.match(r"^[0-9a-f]+ = \d+ bytes$", size_line), size_line
    hex_size, decimal = re.match(r"^([0-9a-f]+) = (\d+)", size_line).groups()
    assert int(hex_size, 16) == int(decimal)
    assert '"type":"ADDED"' in page.inner_text("#wire-out .wire-data >> nth=0").replace(" ", "")
    # beside it, the same watch over HTTP/2 on the hub's HTTPS port: HEADERS, then DATA frames, no sizes
    page.wait_for_selector("#wire-h2-out .wire-data", timeout=15_000)
    frames = page.locator("#wire-h2-out .wire-frame").all_inner_texts()
    kinds = [frame.split(" ")[0] for frame in frames]
    assert "HEADERS" in kinds and "DATA" in kinds and kinds.index("HEADERS") < kinds.index("DATA"), frames
    data = next(frame for frame in frames if frame.startswith("DATA"))
    assert re.match(r"^DATA · \d+ bytes · stream 1 · flags —$", data), data
    assert ":status: 200" in page.inner_text("#wire-h2-out")
    assert '"type":"ADDED"' in page.inner_text("#wire-h2-out .wire-data >> nth=0").replace(" ", "")
    assert page.locator("#wire-h2-out .wire-size").count() == 0
    page.click("#wire-toggle")
    shoot(page, "08-wire")


def test_a_dropped_connection_resumes_without_missing_or_repeating_a_change(page, cluster):
    page.uncheck("#log-quiet")
    before = page.evaluate("window.kubeKitchen.model.revision")
    page.evaluate("window.kubeKitchen.live.drop()")
    cluster.kubectl("create", "configmap", "written-while-away", "--from-literal=a=1")
    page.wait_for_selector("#connection[data-state=connected]")
    page.wait_for_function("() => document.querySelector('#log-list').innerText.includes('ConfigMap/written-while-away')",
                           timeout=15_000)
    revisions = page.evaluate("window.kubeKitchen.versionLog.ring.newest(5000).map(i => i.rv)")
    seen = sorted(revisions)
    assert len(seen) == len(set(seen)), "a change was shown twice"
    assert seen == list(range(seen[0], seen[-1] + 1)), "a change is missing"
    assert seen[-1] > before


def test_the_traffic_travels_through_redis_too(browser):
    """The scale-out shape's channel layer: the hub publishes traffic to Redis, the page's consumer
    reads it from there."""
    import socket

    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        pytest.skip("no Redis server on 127.0.0.1:6379")
    running = Cluster(nodes=1, env={"REDIS_URL": "redis://127.0.0.1:6379/0"}).start()
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = context.new_page()
        page.goto(login_url(running.url))
        page.wait_for_selector("#connection[data-state=connected]")
        running.kubectl("create", "configmap", "through-redis")
        page.wait_for_selector("#spokes .spoke[data-who='kubectl']", timeout=15_000)
        page.wait_for_function("() => Number(document.querySelector(\"#spokes .spoke[data-who='kubectl'] .count-req\")"
                               "?.textContent) >= 1", timeout=15_000)
        page.wait_for_selector("#spokes .spoke[data-who='node/node-1']", timeout=15_000)
    finally:
        context.close()
        running.stop()


def test_stopping_a_kubelet_from_its_node_card(browser):
    """With `runcluster`, the supervisor follows the desired states the dashboard writes: the
    kubelet's process stops, its node turns NotReady; started again, the node is Ready again."""
    import signal
    import tempfile

    from pathlib import Path

    from tests.conftest import DATA_DIRS, start_runcluster

    data = tempfile.mkdtemp(prefix="kk-dashboard-")
    port, process = start_runcluster(["--nodes", "2", "--data", data, "--pace", "workshop"],
                                     Path(data, "runcluster.log"))
    url = f"http://127.0.0.1:{port}"
    DATA_DIRS[url] = Path(data)
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = context.new_page()
        page.goto(login_url(url))
        node = ".node-card[data-node='node-2']"
        page.wait_for_selector(f"{node}:not(.not-ready) button[data-state=stopped]", timeout=30_000)
        page.click(f"{node} button[data-state=stopped]")
        page.wait_for_selector(f"{node} button[data-state=running]")
        page.wait_for_selector("#spokes .spoke[data-who='node/node-2'].stopped")
        page.wait_for_selector(f"{node}.not-ready", timeout=30_000)  # its Lease is no longer renewed
        shoot(page, "10-kubelet-stopped")
        page.click(f"{node} button[data-state=running]")
        page.wait_for_selector(f"{node}:not(.not-ready)", timeout=30_000)
    finally:
        context.close()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{{name: {name}, image: nginx}}]
"""


# 1,000 pods and 200 changes a second, for 5 seconds of the page's own clock: what the page keeps
# stays bounded whatever the machine's speed. How fast it draws them (event→paint, memory over 30
# minutes) is bench/page.py's to measure, never a test's.
LOAD = """async ({pods, seconds, perSecond}) => {
  const kk = window.kubeKitchen;
  const base = 1e9;  // far above the hub's revisions: the real feed's changes are ignored meanwhile
  const vm = (i, rv) => ({key: `load/p-${i}`, ns: "load", name: `p-${i}`, node: `node-${(i % 3) + 1}`,
    phase: "Running", status: "Running", ready: rv % 2 === 0, restarts: rv % 5, terminating: false, ip: "",
    owner: "", crashing: false});
  const objects = {pods: [], nodes: [1, 2, 3].map((n) => ({key: `node-${n}`, ns: "", name: `node-${n}`,
    ready: true, unschedulable: false})), deployments: [], replicasets: [], services: [], endpoints: []};
  for (let i = 0; i < pods; i += 1) objects.pods.push(vm(i, 0));
  kk.receive({t: "snapshot", revision: base, objects, spokes: {}});
  let rv = base;
  const perBatch = perSecond / 20;
  for (let batch = 0; batch < seconds * 20; batch += 1) {
    const items = [];
    for (let j = 0; j < perBatch; j += 1) {
      rv += 1;
      const i = (rv * 7919) % pods;
      items.push({rv, type: "MODIFIED", resource: "pods", kind: "Pod", ns: "load", name: `p-${i}`,
                  actor: "kubelet/node-1", vm: vm(i, rv)});
    }
    kk.receive({t: "changes", items, revision: rv});
    kk.receive({t: "traffic", records: items.map((item) => ({type: "request", who: "kubelet/node-1",
      verb: "update", resource: "pods", code: 200, latency_ms: 1, ts: 0, seq: item.rv}))});
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));  // drawn
  return {chips: document.querySelectorAll(".pod").length, logRows: document.querySelectorAll("#log-list li").length,
          ring: kk.versionLog.ring.length, dots: document.querySelectorAll("#dots circle").length,
          revision: kk.model.revision, newest: rv};
}"""


def test_a_thousand_pods_and_two_hundred_changes_a_second_stay_bounded(page):
    page.uncheck("#log-quiet")
    result = page.evaluate(LOAD, {"pods": 1000, "seconds": 5, "perSecond": 200})
    shoot(page, "09-thousand-pods")
    assert result["chips"] == 1000, result
    assert result["revision"] == result["newest"], result  # every change applied
    # 1,000 changes went by: the log lists its newest 250 rows only, its ring keeps them all (up to
    # its 5,000), the dots in flight are capped.
    assert result["logRows"] == 250 and 1000 <= result["ring"] <= 5000, result
    assert result["dots"] <= 260, result


BROTH = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: broth}
spec:
  replicas: 9
  selector: {matchLabels: {app: broth}}
  template:
    metadata: {labels: {app: broth}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def test_a_long_delete_story_keeps_its_cause_and_newest_steps_at_1280(browser, cluster):
    # kubectl deletes a Deployment of 9: the garbage collector deletes its ReplicaSet and its pods,
    # each kubelet removes its own. At 1280 wide the story is longer than the line's two lines.
    # An earlier test's crash-looping pod (soup) would go on telling BackOff stories, and one would
    # become the newest line while this test reads the delete's: it goes first.
    cluster.kubectl("delete", "deployment", "soup", "--ignore-not-found", "--wait=false")
    wait_for(lambda: not json.loads(cluster.kubectl("get", "pods", "-l", "app=soup", "-o", "json").stdout)["items"],
             timeout=60, what="soup's pods gone")
    with dashboard_page(browser, cluster.url, {"width": 1280, "height": 720}) as page:
        cluster.kubectl("apply", "-f", "-", input=BROTH)
        page.wait_for_function("() => document.querySelectorAll(\".pod[data-name^='broth-'].phase-ready:not(.terminating)\")"
                               ".length === 9", timeout=60_000)
        row = page.eval_on_selector(".narration-row", "e => JSON.stringify(e.getBoundingClientRect())")
        cluster.kubectl("delete", "deployment", "broth", "--wait=false")
        seen: dict = {}

        def told() -> bool:
            seen.update(page.evaluate("""() => ({
                story: document.querySelector('#narration .narr-line.newest')?.title ?? null,
                said: document.querySelector('#narration').innerText,
                pods: document.querySelectorAll(".pod[data-name^='broth-']").length })"""))
            return bool(seen["story"] and "kubectl deleted Deployment broth" in seen["story"]
                        and "removed" in seen["story"] and seen["pods"] == 0)

        try:
            wait_for(told, timeout=90, what="the delete's story, every pod gone")
        except AssertionError as error:
            raise AssertionError(f"{error}: {seen}") from None
        page.wait_for_timeout(500)  # the last removals told (a frame or two)
        line = page.locator("#narration .narr-line.newest")
        text, story = line.inner_text(), line.get_attribute("title")
        page.screenshot(path=str(ARTIFACTS / "10-long-delete-story-1280.png"))
        # The cause (the delete; the create before it counted in front), the steps after it
        # shortened to a count, the newest step last; the whole story in the tooltip.
        assert re.match(r"(… \d+ more … → )?kubectl deleted Deployment broth → ", text), text
        assert re.search(r"broth → .*… \d+ more … → ", text), text
        assert text.endswith(story.rsplit(" → ", 1)[1]), (text, story)
        assert re.search(r"deleted ReplicaSet broth-\S+ → ", story), story
        assert len(text) < len(story)
        assert page.eval_on_selector("#narration", "e => e.scrollHeight <= e.clientHeight + 1"), "two lines"
        assert page.eval_on_selector(".narration-row", "e => JSON.stringify(e.getBoundingClientRect())") == row


CELLAR = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cellar}
spec:
  serviceName: cellar
  replicas: 1
  selector: {matchLabels: {app: cellar}}
  template:
    metadata: {labels: {app: cellar}}
    spec: {containers: [{name: c, image: nginx, volumeMounts: [{name: data, mountPath: /data}]}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_a_warning_from_before_a_pod_became_ready_is_not_drawn_on_it(page, cluster):
    # The set's claim is bound a moment after its pod is created: the scheduler says
    # FailedScheduling (unbound immediate claim) once, then places it. Ready, it shows no warning.
    cluster.kubectl("apply", "-f", "-", input=CELLAR)
    page.wait_for_selector(".pod[data-name='cellar-0'].phase-ready:not(.terminating)", timeout=60_000)
    events = json.loads(cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=cellar-0",
                                        "-o", "json").stdout)["items"]
    if any(e["reason"] == "FailedScheduling" for e in events):  # the claim may also be bound first
        assert page.locator("#event-list .event.type-warning >> text=FailedScheduling").count() >= 1
    assert page.locator(".pod[data-name='cellar-0'] .warning").count() == 0
    cluster.kubectl("delete", "statefulset", "cellar", "--wait=false")
