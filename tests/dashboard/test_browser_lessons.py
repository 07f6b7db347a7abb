"""Lessons that follow the viewer, in Debian's Chromium at 1280×720 against a real cluster with a
provisioned workshop: attendee alice walks lesson 2 to green in her own namespace (the manifests,
the button and the check all land there; the command shown needs no `-n`, her kubeconfig names
it) while the instructor's board shows her lesson, step and green check; none of her requests is
answered 403 (so none counts as her error); a step that needs cluster rights shows her "watch the
instructor do it" without a button; the cluster controls (Cordon, Drain, Stop kubelet, Stop
scheduler) are absent from her page and present on the instructor's. Screenshots go to
/tmp/lessons-*.png."""

from __future__ import annotations

import json

import pytest

from control import roster, workshop
from tests.conftest import Cluster, login_url, wait_for
from tests.dashboard.conftest import CHROMIUM, CHROMIUM_ARGS, RECORD_TRAFFIC

pytestmark = pytest.mark.e2e
VIEWPORT = {"width": 1280, "height": 720}
CLUSTER_CONTROLS = ("button[data-action=cordon], button[data-action=uncordon], button[data-action=drain], "
                    "button[data-action=spoke]")


@pytest.fixture(scope="module")
def room():
    cluster = Cluster(nodes=2).start()
    try:
        # a shared, loaded machine starts eight Python processes slowly: more than ready_cluster's 30 s
        wait_for(lambda: len(cluster.ready_nodes()) == 2, timeout=180, interval=1, what="2 Ready nodes")
        workshop.provision(cluster.url, cluster.dir, ["alice", "bob"])
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def open_page(chromium, url: str, errors: list[str], confirm: bool = False):
    context = chromium.new_context(viewport=VIEWPORT)
    context.add_init_script(RECORD_TRAFFIC)
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    if confirm:  # an attendee's code logs in on the confirm's POST only
        page.click("main.login button.primary")
    page.wait_for_selector("#connection[data-state=connected]")
    page.wait_for_function("() => window.kubeKitchen.model.revision !== null && window.kubeKitchen.model.objects.nodes.size > 0")
    return page


def do_step(page, lesson: str, number: int) -> None:
    page.wait_for_selector(f".lesson-step[data-lesson='{lesson}'][data-step='{number}']")
    page.click(".lesson-act")
    page.wait_for_selector("#lesson-result .result", timeout=20_000)
    page.wait_for_selector(".lesson-check.done", timeout=60_000)


def test_an_attendee_walks_lesson_2_in_her_namespace_while_the_board_shows_her_step(chromium, room):
    errors: list[str] = []
    instructor = open_page(chromium, login_url(room.url), errors)
    alice = open_page(chromium, f"{room.url}/login/?code={roster.join_code(room.dir, 'alice')}&next=/", errors, confirm=True)
    assert alice.inner_text("#whoami") == "alice"

    # the cluster controls: drawn for the instructor only
    instructor.wait_for_selector("#node-list button[data-action=drain]")
    assert instructor.query_selector("#control-plane button[data-action=spoke]") is not None
    alice.wait_for_selector("#node-list .node-card[data-node=node-1]")
    assert alice.query_selector_all(CLUSTER_CONTROLS) == []
    assert "scheduler" in alice.inner_text("#control-plane")  # its state still shows, without a button

    alice.click("#lesson summary.lesson-label")  # the lesson menu
    alice.click(".lesson-pick[data-lesson='02-self-healing']")
    alice.wait_for_selector(".lesson-step[data-lesson='02-self-healing'][data-step='1'][data-namespace=alice]")
    assert alice.inner_text(".lesson-kubectl") == "kubectl apply -f lessons/manifests/pasta.yaml"  # her kubeconfig's namespace
    do_step(alice, "02-self-healing", 1)
    alice.screenshot(path="/tmp/lessons-alice-02-1.png")
    alice.click(".lesson-next")
    alice.wait_for_selector(".lesson-step[data-lesson='02-self-healing'][data-step='2']")
    before = set(room.kubectl("get", "pods", "-n", "alice", "-l", "app=pasta", "-o", "name").stdout.split())
    do_step(alice, "02-self-healing", 2)
    assert "deleted" in alice.inner_text("#lesson-result")
    wait_for(lambda: len(set(room.kubectl("get", "pods", "-n", "alice", "-l", "app=pasta", "-o", "name").stdout.split())
                         - before) >= 1, what="a new pasta pod in alice's namespace")
    alice.wait_for_selector(".lesson-check.done", timeout=60_000)
    alice.screenshot(path="/tmp/lessons-alice-02-2.png")
    assert room.kubectl("get", "deployments", "-n", "default", "-o", "name").stdout.strip() == ""  # nothing in default

    # the instructor's board: her lesson, her step, green
    instructor.click("#attendee-board summary")
    cell = "#attendee-rows tr[data-attendee=alice] td.lesson[data-lesson='02-self-healing'][data-step='2'][data-check=green]"
    instructor.wait_for_selector(cell, timeout=15_000)
    assert instructor.inner_text("#attendee-rows tr[data-attendee=bob] td.lesson") == "no lesson open"
    instructor.screenshot(path="/tmp/lessons-board-02.png")

    # a step that needs cluster rights: she watches; its check (nodes) is still hers to see
    alice.click(".lesson-back")  # the menu again, open
    alice.click(".lesson-pick[data-lesson='09-scheduler-stopped']")
    alice.wait_for_selector(".lesson-step[data-lesson='09-scheduler-stopped'][data-step='1']")
    alice.click(".lesson-next")  # past the set-up, to stopping the scheduler
    alice.wait_for_selector(".lesson-step[data-lesson='09-scheduler-stopped'][data-step='2'] .lesson-watch")
    assert alice.query_selector(".lesson-act") is None
    alice.screenshot(path="/tmp/lessons-alice-09-2.png")
    instructor.wait_for_selector("#attendee-rows tr[data-attendee=alice] td.lesson[data-check=watching]", timeout=15_000)

    # none of her requests was refused, so the board counts no error of hers
    records = instructor.evaluate("window.trafficSeen.filter((r) => r.type === 'request' && r.user === 'alice')"
                                  ".map((r) => [r.code, r.verb, r.path || r.resource || ''])")
    assert records, "her requests reach the instructor's page"
    assert [r for r in records if r[0] == 403] == [], records
    assert instructor.inner_text("#attendee-rows tr[data-attendee=alice] td.errors") == "0"
    assert errors == [], errors
