"""The manifest form and the buttons against a real hub process: what the dashboard stores is what
`kubectl apply --server-side` would store, the hub's own message comes back for a refused object,
and a refused stream stores nothing."""

from __future__ import annotations

import json
import time

import pytest
from django.test import Client

pytestmark = pytest.mark.e2e

MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {{name: soup}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: soup}}}}
  template:
    metadata: {{labels: {{app: soup}}}}
    spec: {{containers: [{{name: soup, image: nginx}}]}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: soup-recipe}}
data: {{salt: "a pinch"}}
"""
BROKEN = """
apiVersion: v1
kind: ConfigMap
metadata: {name: fine-before-the-broken-one}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: broken}
spec:
  selector: {matchLabels: {app: one}}
  template:
    metadata: {labels: {app: another}}
    spec: {containers: [{name: c, image: nginx}]}
"""


@pytest.fixture
def client(hub, settings):
    settings.KK_HUB_URL = hub.url
    settings.KK_HUB_TOKEN = hub.token
    return Client()


def get(hub, *args: str) -> dict:
    result = hub.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else {}


def test_apply_creates_then_configures(hub, client):
    first = client.post("/apply/", {"manifest": MANIFEST.format(replicas=2)}).content.decode()
    assert "deployment.apps/soup</code>" in first and "configmap/soup-recipe</code>" in first
    assert first.count('class="verdict">created<') == 2
    assert get(hub, "deployment", "soup")["spec"]["replicas"] == 2
    changed = client.post("/apply/", {"manifest": MANIFEST.format(replicas=4)}).content.decode()
    assert '<li class="outcome configured"><code>deployment.apps/soup</code>' in changed
    deployment = get(hub, "deployment", "soup", "--show-managed-fields")
    assert deployment["spec"]["replicas"] == 4
    assert any(m["manager"] == "dashboard" and m["operation"] == "Apply" for m in deployment["metadata"]["managedFields"])


def test_applying_the_same_manifest_again_later_changes_nothing(hub, client):
    manifest = MANIFEST.replace("soup", "stew").format(replicas=1)
    assert client.post("/apply/", {"manifest": manifest}).status_code == 200
    time.sleep(1.1)  # into the next second, as a person reapplying would be
    again = client.post("/apply/", {"manifest": manifest}).content.decode()
    assert again.count('class="verdict">unchanged<') == 2, again


def test_a_refused_object_shows_the_hubs_message_and_stores_nothing(hub, client):
    response = client.post("/apply/", {"manifest": BROKEN})
    assert response.status_code == 422
    text = response.content.decode()
    assert "selector" in text and "does not match template" in text  # the hub's own words
    assert "Nothing was stored" in text
    assert get(hub, "configmap", "fine-before-the-broken-one") == {}
    assert get(hub, "deployment", "broken") == {}


def test_buttons_change_the_objects_on_the_hub(hub, client):
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: omelette}\n"
           "spec: {containers: [{name: egg, image: nginx}]}\n")
    assert client.post("/apply/", {"manifest": pod}).status_code == 200
    assert client.post("/actions/crash/", {"namespace": "default", "name": "omelette"}).status_code == 200
    annotations = get(hub, "pod", "omelette")["metadata"]["annotations"]
    assert annotations["kubekitchen.dev/crash-after"] == "1"
    assert client.post("/actions/spoke/", {"spoke": "scheduler", "state": "stopped"}).status_code == 200
    assert get(hub, "configmap", "-n", "kube-system", "kubekitchen-spokes")["data"] == {"scheduler": "stopped"}
    assert client.post("/actions/delete-pod/", {"namespace": "default", "name": "omelette"}).status_code == 200
    pod_now = get(hub, "pod", "omelette")
    assert pod_now == {} or pod_now["metadata"].get("deletionTimestamp")


def test_kinds_beyond_the_client_list_are_applied_through_discovery(hub, client):
    manifest = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: soup}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: soup}
  maxReplicas: 3
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
---
apiVersion: v1
kind: Secret
metadata: {name: soup-secret}
stringData: {salt: a pinch}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: soup-cook}
"""
    response = client.post("/apply/", {"manifest": manifest})
    assert response.status_code == 200, response.content.decode()
    assert get(hub, "hpa", "soup")["spec"]["maxReplicas"] == 3
    assert get(hub, "secret", "soup-secret")["data"]["salt"]
    assert get(hub, "serviceaccount", "soup-cook")["metadata"]["name"] == "soup-cook"
    unknown = client.post("/apply/", {"manifest": "apiVersion: v1\nkind: Recipe\nmetadata: {name: r}\n"})
    assert unknown.status_code == 404
    assert 'no matches for kind &quot;Recipe&quot; in version &quot;v1&quot;' in unknown.content.decode()


def test_a_custom_kind_is_applied_once_its_crd_is_served(hub, client):
    from control.restaurant.install import install_crds

    order = "apiVersion: kitchen.kubekitchen.dev/v1\nkind: Order\nmetadata: {name: supper}\nspec: {menu: pasta, count: 2}\n"
    before = client.post("/apply/", {"manifest": order})
    assert before.status_code == 404
    assert 'no matches for kind &quot;Order&quot; in version &quot;kitchen.kubekitchen.dev/v1&quot;' in before.content.decode()
    install_crds(hub.url, token=hub.token)  # the kitchen's CRDs: a kind the dashboard was never told about
    after = client.post("/apply/", {"manifest": order})
    assert after.status_code == 200, after.content.decode()
    assert "order.kitchen.kubekitchen.dev/supper</code>" in after.content.decode()
    assert get(hub, "orders.kitchen.kubekitchen.dev", "supper")["spec"] == {"menu": "pasta", "count": 2}


def test_a_stream_that_creates_its_namespace_applies_the_objects_inside_it(hub, client):
    manifest = ("apiVersion: v1\nkind: Namespace\nmetadata: {name: bistro}\n---\n"
                "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: tables, namespace: bistro}\n"
                "spec: {hard: {pods: '10'}}\n")
    response = client.post("/apply/", {"manifest": manifest})
    text = response.content.decode()
    assert response.status_code == 200, text
    assert text.count('class="verdict">created<') == 2, text
    assert get(hub, "resourcequota", "-n", "bistro", "tables")["spec"]["hard"] == {"pods": "10"}


def test_an_object_refused_inside_a_new_namespace_stores_nothing_but_the_namespace(hub, client):
    manifest = ("apiVersion: v1\nkind: Namespace\nmetadata: {name: cafe}\n---\n"
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine, namespace: default}\n---\n"
                + BROKEN.split("---")[1].replace("{name: broken}", "{name: broken, namespace: cafe}"))
    response = client.post("/apply/", {"manifest": manifest})
    assert response.status_code == 422, response.content.decode()
    assert "does not match template" in response.content.decode()
    assert get(hub, "namespace", "cafe")["metadata"]["name"] == "cafe"  # created first, as kubectl apply would
    assert get(hub, "configmap", "fine") == {} and get(hub, "deployment", "-n", "cafe", "broken") == {}
