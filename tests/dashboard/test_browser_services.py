"""The dashboard's Services, traffic, autoscaling and restaurant panels in a real browser (Debian's
Chromium driven by Playwright) against a real cluster: hub, controller-manager, scheduler, two
kubelets, a kube-proxy per node and the restaurant's two cooks, each its own process. The page is
a projector's 1600×1000. Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
import re

import pytest

from control import config
from tests.conftest import Cluster, wait_for
from tests.dashboard.conftest import dashboard_page
from tests.dashboard.test_browser import ROOT, shoot

pytestmark = pytest.mark.e2e

NODES = 2
VIEWPORT = {"width": 1600, "height": 1000}

PASTA = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: pasta}
spec:
  replicas: 3
  selector: {matchLabels: {app: pasta}}
  template:
    metadata: {labels: {app: pasta}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: pasta, image: nginx, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Service
metadata: {name: pasta}
spec:
  type: NodePort
  selector: {app: pasta}
  ports: [{port: 80}]
"""

BUSY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: soup}
spec:
  replicas: 1
  selector: {matchLabels: {app: soup}}
  template:
    metadata:
      labels: {app: soup}
      annotations: {kubekitchen.dev/cpu: "150m"}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: soup, image: nginx, resources: {requests: {cpu: 100m}}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: soup}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: soup}
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
"""


@pytest.fixture(scope="module")
def cluster():
    from control.restaurant.install import install_crds

    running = Cluster(nodes=NODES).start()
    try:
        for i in range(1, NODES + 1):
            running.start_spoke("kube-proxy", node=f"node-{i}")
        running.start_spoke("line-cook")
        running.start_spoke("garnish-cook")
        wait_for(lambda: len(running.ready_nodes()) == NODES, what=f"{NODES} Ready nodes")
        install_crds(running.url, token=running.token)
        yield running
    finally:
        running.stop()


@pytest.fixture
def page(browser, cluster):
    with dashboard_page(browser, cluster.url, VIEWPORT) as page:
        yield page


def ready_pods(page, prefix: str) -> list[str]:
    return page.eval_on_selector_all(f".pod.phase-ready:not(.terminating)[data-name^='{prefix}-']",
                                     "els => els.map(e => e.dataset.name)")


def tally(page) -> dict[str, int]:
    """Requests answered per pod, as the traffic panel's bars show them."""
    return page.eval_on_selector_all(
        "#traffic-tally .tally-row[data-service='default/pasta'] .bar[data-pod]",
        "bars => Object.fromEntries(bars.map(b => [b.dataset.pod.split('/')[1], Number(b.querySelector('.count').textContent)]))")


def send(page, count: int, target: str = "pasta") -> str:
    page.fill("#traffic-form [name=target]", target)
    page.select_option("#traffic-node", "node-1")
    page.fill("#traffic-form [name=count]", str(count))
    page.click("#traffic-form button[type=submit]")
    page.wait_for_selector("#traffic-result .result", timeout=30_000)
    text = page.inner_text("#traffic-result")
    page.evaluate("document.getElementById('traffic-result').replaceChildren()")
    return text


def test_traffic_from_the_form_shows_the_pods_that_answered(page, cluster):
    cluster.kubectl("apply", "-f", "-", input=PASTA)
    page.wait_for_function("() => document.querySelectorAll(\".pod.phase-ready[data-name^='pasta-']\").length === 3",
                           timeout=30_000)
    # The Services panel: type, ClusterIP, the node port, three ready endpoints.
    service = page.locator("#service-list .service[data-key='default/pasta']")
    page.wait_for_function("() => document.querySelectorAll(\"#service-list .service[data-key='default/pasta'] .addresses .ready\").length === 3",
                           timeout=15_000)
    meta = service.locator(".service-meta").inner_text()
    assert "NodePort" in service.inner_text() and re.search(r"80:3\d{4}/TCP", meta), meta
    assert re.search(r"10\.96\.\d+\.\d+", meta), meta

    # kube-proxy's table of node-1, as iptables rules: one DNAT per ready endpoint.
    # node-1's spoke draws its kube-proxy too (its hover text names both agents)
    page.wait_for_function("() => document.querySelector(\"#spokes .spoke[data-who='node/node-1'] title\")"
                           "?.textContent.includes('kube-proxy')", timeout=15_000)
    page.click(".node-card[data-node='node-1'] details.proxy-rules summary")
    page.wait_for_function("() => document.querySelectorAll(\".node-card[data-node='node-1'] .rule-dnat\").length >= 3",
                           timeout=15_000)

    result = send(page, 12)
    assert "12 sent, 0 failed" in result, result
    pods = ready_pods(page, "pasta")
    wait_for(lambda: sum(tally(page).values()) == 12, timeout=10, what="12 answers in the tally")
    answered = tally(page)
    assert set(answered) == set(pods) and all(n > 0 for n in answered.values()), answered
    for pod in pods:  # each pod chip counts what it answered
        badge = page.locator(f".pod[data-name='{pod}'] .answered").inner_text()
        assert badge == f"⇢{answered[pod]}", (pod, badge)
    shoot(page, "11-traffic-answered")

    # Drop one pod: its endpoint leaves the table (the rules follow by themselves), and the next
    # requests are answered by the others only.
    victim = pods[0]
    rules = ".node-card[data-node='node-1'] .rules-box"
    before = page.inner_text(rules)
    page.locator(f".pod[data-name='{victim}'] button[data-action=delete-pod]").click()
    page.wait_for_function(f"() => document.querySelector(\"{rules}\").innerText !== {json.dumps(before)}", timeout=15_000)
    page.evaluate("window.kubeKitchen.traffic.reset()")
    result = send(page, 8)
    assert "8 sent, 0 failed" in result, result
    wait_for(lambda: sum(tally(page).values()) == 8, timeout=10, what="8 answers in the tally")
    assert victim not in tally(page), tally(page)
    page.wait_for_function("() => document.querySelectorAll(\".node-card[data-node='node-1'] .rule-dnat\").length >= 3",
                           timeout=30_000)  # the replacement is ready and in the table again
    shoot(page, "12-traffic-moved")

    # A name no Service answers to: every request fails, and is shown failed, in red.
    result = send(page, 3, target="tiramisu")
    assert "3 sent, 3 failed" in result, result
    failed = "#traffic-tally .tally-row[data-service='tiramisu'] .bar.failed"
    page.wait_for_selector(failed)  # drawn at the first failure; the records of the others may come later
    wait_for(lambda: page.inner_text(f"{failed} .count") == "3", timeout=10, what="3 failures in the tally")
    assert page.locator("#traffic-recent li.failed").count() >= 3
    if config.given("KK_UPDATE_README_SHOT") == "1":  # the README's picture is refreshed on request only
        page.screenshot(path=str(ROOT / "docs" / "dashboard-traffic.png"))


def test_the_hpa_panel_follows_the_autoscaler(page, cluster):
    cluster.kubectl("apply", "-f", "-", input=BUSY)
    block = "#hpa-list .hpa[data-key='default/soup']"
    page.wait_for_selector(block, timeout=15_000)
    text = page.inner_text(block)
    assert "soup → Deployment/soup" in text and "/ 50%" in text and "min 1 · max 4" in text, text
    # 150m of 100m requested is 150 %: the autoscaler measures it and asks for more replicas.
    page.wait_for_function(f"() => /\\d+%/.test(document.querySelector(\"{block} .hpa-cpu .now\").textContent)",
                           timeout=60_000)
    page.wait_for_function(f"() => Number(document.querySelector(\"{block} .hpa-replicas .desired\").textContent) > 1",
                           timeout=60_000)
    page.wait_for_function(f"() => Number(document.querySelector(\"{block} .hpa-replicas .current\").textContent) > 1",
                           timeout=60_000)
    assert page.locator(f"{block} svg.hpa-chart path.cpu").count() == 1
    assert page.locator(f"{block} svg.hpa-chart path.replicas").count() == 1
    assert page.evaluate("window.kubeKitchen.model.hpaSamples('default/soup').length") >= 2
    page.locator("#hpa").scroll_into_view_if_needed()
    shoot(page, "13-hpa")


def test_the_restaurant_view_cooks_an_order_and_recooks_a_dropped_dish(page, cluster):
    page.click("[data-mode=kitchen]")
    page.wait_for_selector("#order-form:not([hidden])", timeout=15_000)
    page.select_option("#order-menu", "risotto")
    page.fill("#order-form [name=count]", "3")
    page.click("#order-form button[type=submit]")
    page.wait_for_selector("#action-result .result.ok")
    order = re.search(r"orders\.kitchen\.kubekitchen\.dev/(\S+) created", page.inner_text("#action-result")).group(1)
    slip = f"#kitchen-board .order-slip[data-key='default/{order}']"
    page.wait_for_function(f"() => document.querySelectorAll(\"{slip} .dish.garnished\").length === 3", timeout=30_000)
    assert "risotto" in page.inner_text(f"{slip} .order-what")
    assert page.locator("#kitchen-board .cook.working").count() == 2
    page.locator("#custom").scroll_into_view_if_needed()
    shoot(page, "14-restaurant-order")

    dropped = page.locator(f"{slip} .dish").first.get_attribute("data-name")
    page.click(f"{slip} .dish[data-name='{dropped}'] button.drop-dish")
    page.wait_for_selector("#action-result .result.ok")
    page.wait_for_selector(f"{slip} .dish[data-name='{dropped}']", state="detached", timeout=15_000)
    page.wait_for_function(f"() => document.querySelectorAll(\"{slip} .dish.garnished\").length === 3", timeout=30_000)
    names = page.eval_on_selector_all(f"{slip} .dish", "els => els.map(e => e.dataset.name)")
    assert dropped not in names and len(names) == 3
    shoot(page, "15-restaurant-recooked")

    # The same in Korean: the slip, the dishes and the drop button speak the seeds' words.
    page.click("button[name=language][value=ko]")
    page.wait_for_selector("html[lang=ko]")
    page.wait_for_function(f"() => document.querySelectorAll(\"{slip} .dish.garnished\").length === 3", timeout=15_000)
    text = page.inner_text("#custom")
    assert "주문서" in text and "가니싱 완료" in text and "요리사" in text, text
    assert page.locator(f"{slip} button.drop-dish").first.get_attribute("title") == "요리를 바닥에 쏟기"
    page.locator("#custom").scroll_into_view_if_needed()
    shoot(page, "16-restaurant-korean")
    page.click("button[name=language][value=en]")
    page.wait_for_selector("html[lang=en]")
