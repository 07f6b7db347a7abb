"""The DaemonSets, StatefulSets and budgets panel, "Run now" on a CronJob and "Drain" on a node, in
Debian's Chromium against a real hub (no spokes: the objects' statuses are written by the test, the
buttons' answers come from the hub), at 1280×720 and 1920×1080, with nothing past the viewport."""

from __future__ import annotations

import pytest

from tests.conftest import Hub, wait_for
from tests.dashboard.conftest import dashboard_page
from tests.dashboard.test_browser_layout import OVERFLOWING

pytestmark = pytest.mark.e2e

STAGE = """
apiVersion: v1
kind: Node
metadata: {name: node-1}
---
apiVersion: v1
kind: Node
metadata: {name: node-2}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: bread}
spec:
  selector: {matchLabels: {app: bread}}
  template:
    metadata: {labels: {app: bread}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: tables}
spec:
  serviceName: tables
  replicas: 2
  selector: {matchLabels: {app: tables}}
  template:
    metadata: {labels: {app: tables}}
    spec: {containers: [{name: c, image: nginx}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-tables-2}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pantry}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: tables-pdb}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: tables}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: daily-special}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    metadata: {annotations: {menu: today}}
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
"""


@pytest.fixture(scope="module")
def stage():
    server = Hub().start()
    server.kubectl("apply", "-f", "-", input=STAGE)
    server.kubectl("patch", "ds", "bread", "--subresource=status", "--type=merge", "-p",
                   '{"status": {"desiredNumberScheduled": 2, "currentNumberScheduled": 1, "numberReady": 1,'
                   ' "numberMisscheduled": 0}}')
    yield server
    server.stop()


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_the_sets_panel_run_now_and_drain(browser, stage, width, height):
    with dashboard_page(browser, stage.url, {"width": width, "height": height}) as page:
        page.wait_for_selector("#sets-list .set.budget")
        daemonset = "#sets-list .daemonset[data-key='default/bread']"
        assert page.locator(f"{daemonset} .slot").count() == 2, "one slot per node"
        assert "1/2" in page.inner_text(daemonset)
        # ordinals 0 and 1 (the replicas) and 2 (a claim kept from an earlier scale), in order
        ordinals = page.eval_on_selector_all("#sets-list .statefulset .ordinal", "os => os.map(o => o.dataset.ordinal)")
        assert ordinals == ["0", "1", "2"]
        assert page.locator("#sets-list .statefulset .ordinal[data-ordinal='2'] .disk.pending").count() == 1
        assert page.locator("#sets-list .claim .disk[data-claim='pantry']").count() == 1, "a claim no set owns"
        budget = page.inner_text("#sets-list .budget")
        assert "maxUnavailable 1" in budget and "disruptions allowed 0" in budget
        assert page.evaluate(OVERFLOWING) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width

        page.click("#cronjob-list .cronjob button[data-action='run-now']")
        page.wait_for_selector("#action-result .result.ok >> text=/job.batch\\/daily-special-manual-[a-z0-9]{5} created/")
        jobs = stage.kubectl("get", "jobs", "-o", "jsonpath={.items[*].metadata.annotations}").stdout
        assert '"cronjob.kubernetes.io/instantiate":"manual"' in jobs and '"menu":"today"' in jobs

        page.click(".node-card[data-node='node-1'] button[data-action='drain']")
        page.wait_for_selector("#action-result .result >> text=node/node-1 drained: 0 pods evicted")
        wait_for(lambda: "cordoned" in page.inner_text(".node-card[data-node='node-1']"), timeout=10,
                 interval=0.1, what="the drained node shown cordoned")
        assert page.evaluate("document.querySelector('header.top').getBoundingClientRect().height") < 90
        page.screenshot(path=f"/tmp/dash12-e2e-{width}.png")


BLOCKED = """
apiVersion: v1
kind: Pod
metadata: {name: tables-0, labels: {app: tables}}
spec:
  nodeName: node-2
  containers: [{name: c, image: nginx}]
"""
BUDGET_STATUS = ('{"status": {"observedGeneration": 1, "disruptionsAllowed": %d, "currentHealthy": 1,'
                 ' "desiredHealthy": 1, "expectedPods": 1}}')


def test_a_drain_a_budget_blocks_says_so_in_korean_then_goes_on_when_the_budget_allows(browser, stage):
    stage.kubectl("apply", "-f", "-", input=BLOCKED)
    # Running and Ready (no kubelet here says so): a Pending pod is evicted without asking the budget
    stage.kubectl("patch", "pod", "tables-0", "--subresource=status", "--type=merge", "-p",
                  '{"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}')
    stage.kubectl("patch", "pdb", "tables-pdb", "--subresource=status", "--type=merge", "-p", BUDGET_STATUS % 0)
    with dashboard_page(browser, stage.url, {"width": 1280, "height": 720}) as page:
        page.click("button[name=language][value=ko]")
        page.wait_for_selector("html[lang=ko]")
        page.wait_for_function("() => window.kubeKitchen.model.revision !== null")
        page.click(".node-card[data-node='node-2'] button[data-action='drain']")
        page.wait_for_selector("#action-result .result >> text=tables-0: 중단 예산 tables-pdb 때문에 막힘, 다시 시도 중")
        result = page.eval_on_selector("#action-result .result", "e => e.getBoundingClientRect().height")
        assert result < 2 * 19 * 1.05 * 1.3 + 8, "two lines at most"
        assert page.evaluate(OVERFLOWING) == []
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path="/tmp/dash12-e2e-blocked-ko.png")
        stage.kubectl("patch", "pdb", "tables-pdb", "--subresource=status", "--type=merge", "-p", BUDGET_STATUS % 1)
        # the eviction now passes; with no kubelet here the pod stays Terminating, and the drain waits for it
        page.wait_for_selector("#action-result .result >> text=1개가 떠나기를 기다리는 중", timeout=20_000)
        assert page.locator(".node-card[data-node='node-2'] .pod.terminating").count() == 1
        page.click("button[name=language][value=en]")
        page.wait_for_selector("html[lang=en]")


RC = """
apiVersion: v1
kind: ReplicationController
metadata: {name: rolls}
spec:
  replicas: 2
  selector: {app: rolls}
  template:
    metadata: {labels: {app: rolls}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def test_a_replication_controller_has_its_row_and_scales_and_the_drain_line_speaks_restaurant(browser, stage):
    stage.kubectl("apply", "-f", "-", input=RC)
    stage.kubectl("patch", "rc", "rolls", "--subresource=status", "--type=merge", "-p",
                  '{"status": {"replicas": 2, "readyReplicas": 1}}')
    with dashboard_page(browser, stage.url, {"width": 1280, "height": 720}) as page:
        row = "#workload-rows tr.replicationcontroller[data-key='default/rolls']"
        page.wait_for_selector(f"{row} >> text=ReplicationController")
        cells = page.eval_on_selector_all(f"{row} td", "tds => tds.map(td => td.textContent)")
        assert cells == ["2", "2", "1"], "desired, current, ready"
        assert "short" in page.get_attribute(f"{row} td:nth-child(4)", "class"), "fewer ready than desired"
        page.click(f"{row} button[data-delta='1']")
        page.wait_for_selector("#action-result .result.ok >> text=replicationcontroller/rolls scaled to 3")
        wait_for(lambda: page.eval_on_selector_all(f"{row} td", "tds => tds.map(td => td.textContent)")[0] == "3",
                 timeout=10, interval=0.1, what="the row following the new spec.replicas")
        assert stage.kubectl("get", "rc", "rolls", "-o", "jsonpath={.spec.replicas}").stdout == "3"
        assert page.evaluate(OVERFLOWING) == []
        page.screenshot(path="/tmp/wl12-rc-k8s.png")

        page.click("[data-mode=kitchen]")
        page.wait_for_selector(f"{row} >> text=Old-style batch")
        page.click(".node-card[data-node='node-1'] button[data-action='drain']")
        page.wait_for_selector("#action-result .result >> text=Stove node-1 cleared: 0 dishes moved off")
        assert not page.is_visible("#action-result .result >> text=node/node-1 drained"), "one wording at a time"
        page.screenshot(path="/tmp/wl12-rc-drain-kitchen.png")
        page.click("button[name=language][value=ko]")
        page.wait_for_selector("html[lang=ko]")
        page.wait_for_function("() => window.kubeKitchen.model.revision !== null")
        page.click("[data-mode=kitchen]")
        page.wait_for_selector(f"{row} >> text=옛날식 조리 묶음")
        page.click(".node-card[data-node='node-1'] button[data-action='drain']")
        page.wait_for_selector("#action-result .result >> text=화구 node-1 비움: 요리 0개 옮김")
        page.screenshot(path="/tmp/wl12-rc-drain-kitchen-ko.png")
        page.click("[data-mode=k8s]")
        page.wait_for_selector("#action-result .result >> text=node/node-1 드레인 완료: 파드 0개 축출")
        page.click("button[name=language][value=en]")
        page.wait_for_selector("html[lang=en]")
