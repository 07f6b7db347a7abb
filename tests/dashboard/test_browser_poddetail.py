"""The pod detail and the ConfigMaps and Secrets panel in Debian's Chromium (Playwright), on a real
hub with a kubelet: a pod using a ConfigMap (volume) and a Secret (env secretKeyRef), and a pod
whose Secret is missing (CreateContainerConfigError on its chip). The page never holds the
Secret's value (not in its HTML, not in its model); clicking a chip opens the detail (env names,
mounts, events, shell button) without moving anything on the page. Screenshots at 1280x720 and
1920x1080 go to test-artifacts/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Hub, Spoke, wait_for
from tests.dashboard.conftest import dashboard_page

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
NODE = "node-1"
SECRET_VALUE = "s3cr3t-never-on-the-page"
OBJECTS = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"app.conf": "mode=fast", "greeting": "hi"}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "stringData": {"password": SECRET_VALUE}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {
        "nodeName": NODE, "volumes": [{"name": "cfg", "configMap": {"name": "settings"}}],
        "containers": [{"name": "app", "image": "busybox:1.36",
                        "env": [{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}],
                        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"}]}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "broken"}, "spec": {
        "nodeName": NODE, "containers": [{"name": "app", "image": "busybox:1.36",
                                          "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "absent", "key": "t"}}}]}]}},
]


@pytest.fixture(scope="module")
def cluster():
    hub = Hub(env={"KK_PACE": "workshop"}).start()
    kubelet = Spoke(hub, "kubelet", node=NODE, env={"KK_PACE": "workshop", "KK_START_DELAY": "0.1"}).start()
    try:
        hub.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": OBJECTS}))
        wait_for(lambda: " Running " in hub.kubectl("get", "pod", "web").stdout, timeout=20, what="web Running")
        wait_for(lambda: "CreateContainerConfigError" in hub.kubectl("get", "pod", "broken").stdout, timeout=20,
                 what="broken CreateContainerConfigError")
        yield hub
    finally:
        kubelet.stop()
        hub.stop()


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 720}, {"width": 1920, "height": 1080}],
                         ids=["1280x720", "1920x1080"])
def test_pod_detail_and_configs(browser, cluster, viewport):
    with dashboard_page(browser, cluster.url, viewport) as page:
        page.wait_for_selector(".pod[data-name='broken'][data-status='CreateContainerConfigError']", timeout=15_000)
        page.wait_for_selector("#config-list .config.secret[data-key='Secret|default/db'] .config-user", timeout=15_000)
        secret_row = page.inner_text("#config-list .config.secret[data-key='Secret|default/db']")
        assert "password" in secret_row and "web" in secret_row
        config_row = page.inner_text("#config-list .config.configmap[data-key='ConfigMap|default/settings']")
        assert "app.conf" in config_row and "greeting" in config_row and "web" in config_row
        held = page.evaluate("JSON.stringify([...window.kubeKitchen.model.objects.secrets.values()])")
        assert "password" in held and SECRET_VALUE not in held and SECRET_VALUE not in page.content()

        board = page.locator("main.board").bounding_box()
        page.click(".pod[data-name='web'] .pod-name")
        page.wait_for_selector("#pod-detail .pd-container[data-container='app']", timeout=15_000)
        detail = page.inner_text("#pod-detail")
        assert "DB_PASSWORD" in detail and "Secret db/password" in detail and SECRET_VALUE not in detail
        assert "/etc/app" in detail and "settings" in detail and "busybox:1.36" in detail
        assert page.locator("#pod-detail button.pd-shell[data-shell-name='web']").count() == 1
        assert page.locator("main.board").bounding_box() == board  # the detail floats: nothing moved
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"browser-poddetail-{viewport['width']}.png"))
        page.locator("#configs").screenshot(path=str(ARTIFACTS / f"browser-configs-{viewport['width']}.png"))

        page.click(".pod[data-name='broken'] .pod-name")
        page.wait_for_function("() => document.querySelector('#pod-detail').innerText.includes('CreateContainerConfigError')",
                               timeout=15_000)
        page.keyboard.press("Escape")
        assert page.locator("#pod-detail").is_hidden()
