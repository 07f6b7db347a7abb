"""The manifest form finds every kind through the hub's discovery, as `kubectl apply --server-side`
does: an HPA, a Job, a Secret and a custom Order go to their own paths (namespaced or not, as
discovery says); a kind the hub does not serve gets kubectl's "no matches for kind" and nothing is
stored; a kind served since the last look (a new CRD) is found by reading discovery again; and a
known kind costs no discovery request."""

from __future__ import annotations

import asyncio

import pytest
from django.test import Client

from control.client.resources import Resource
from dashboard import manifests
from tests.dashboard.fakehub import FakeHub

ORDERS = Resource("kitchen.kubekitchen.dev", "v1", "orders", "Order")
MENUS = Resource("kitchen.kubekitchen.dev", "v1", "menus", "Menu", namespaced=False)

FOUR_KINDS = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: pasta}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: pasta}
  minReplicas: 1
  maxReplicas: 5
---
apiVersion: batch/v1
kind: Job
metadata: {name: bake, namespace: oven}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: bake, image: busybox}]}
---
apiVersion: v1
kind: Secret
metadata: {name: recipe}
stringData: {salt: a pinch}
---
apiVersion: kitchen.kubekitchen.dev/v1
kind: Order
metadata: {name: dinner}
spec: {menu: pasta, count: 3}
"""
PATHS = ["/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/pasta",
         "/apis/batch/v1/namespaces/oven/jobs/bake",
         "/api/v1/namespaces/default/secrets/recipe",
         "/apis/kitchen.kubekitchen.dev/v1/namespaces/default/orders/dinner"]


@pytest.fixture
def client():
    return Client()


def patches(fake: FakeHub) -> list[tuple[str, str | None]]:
    return [(r.path, r.query.get("dryRun")) for r in fake.requests if r.method == "PATCH"]


def discovery_gets(fake: FakeHub) -> list[str]:
    """The discovery documents asked for (/api, /api/v1, /apis, /apis/<group>/<version>)."""
    return [r.path for r in fake.requests if r.method == "GET" and r.path.startswith("/api") and r.path.count("/") <= 3]


def test_an_hpa_a_job_a_secret_and_a_custom_order_are_applied_where_discovery_says(fake, client):
    fake.served.append(ORDERS)
    for path in PATHS:
        fake.answers[("PATCH", path)] = (201, {"metadata": {"name": path.rsplit("/", 1)[1], "resourceVersion": "7"}})
    response = client.post("/apply/", {"manifest": FOUR_KINDS})
    text = response.content.decode()
    assert response.status_code == 200, text
    for ref in ("horizontalpodautoscaler.autoscaling/pasta", "job.batch/bake", "secret/recipe",
                "order.kitchen.kubekitchen.dev/dinner"):
        assert f"<code>{ref}</code>" in text, ref
    assert text.count('class="verdict">created<') == 4
    dry, real = patches(fake)[:4], patches(fake)[4:]
    assert sorted(dry) == sorted((p, "All") for p in PATHS)  # together: in any order
    assert real == [(p, None) for p in PATHS]  # for real: one after another, in the stream's order


def test_a_cluster_scoped_custom_kind_gets_no_namespace(fake, client):
    fake.served.append(MENUS)
    path = "/apis/kitchen.kubekitchen.dev/v1/menus/italian"
    fake.answers[("PATCH", path)] = (200, {"metadata": {"name": "italian", "resourceVersion": "3"}})
    manifest = "apiVersion: kitchen.kubekitchen.dev/v1\nkind: Menu\nmetadata: {name: italian, namespace: x}\n"
    assert client.post("/apply/", {"manifest": manifest}).status_code == 200
    assert patches(fake) == [(path, "All"), (path, None)]


@pytest.mark.parametrize("api_version, kind", [
    ("kitchen.kubekitchen.dev/v1", "Order"),  # a group the hub does not serve (no CRD)
    ("v1", "Recipe"),  # a served version, an unknown kind
    ("batch/v2", "Job"),  # a known kind in a version the hub does not serve
])
def test_an_unknown_kind_is_refused_as_kubectl_does_and_nothing_is_stored(fake, client, api_version, kind):
    manifest = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: fine}}\n---\napiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n"
    fake.answers[("PATCH", "/api/v1/namespaces/default/configmaps/fine")] = (200, {"metadata": {"name": "fine"}})
    response = client.post("/apply/", {"manifest": manifest})
    assert response.status_code == 404
    text = response.content.decode()
    assert f'no matches for kind &quot;{kind}&quot; in version &quot;{api_version}&quot;' in text
    assert "Nothing was stored" in text
    assert fake.writes() == []
    # discovery is asked only for what it lists: no 404 on the hub for a group-version it does not serve
    assert f"/apis/{api_version}" not in [r.path for r in fake.requests]


def test_a_kind_served_later_is_found_by_reading_discovery_again(fake, client):
    manifest = "apiVersion: kitchen.kubekitchen.dev/v1\nkind: Order\nmetadata: {name: dinner}\nspec: {menu: pasta}\n"
    assert client.post("/apply/", {"manifest": manifest}).status_code == 404
    fake.served.append(ORDERS)  # the CRD is created
    path = PATHS[3]
    fake.answers[("PATCH", path)] = (200, {"metadata": {"name": "dinner", "resourceVersion": "9"}})
    assert client.post("/apply/", {"manifest": manifest}).status_code == 200
    assert patches(fake)[-1] == (path, None)


def test_a_known_kind_costs_no_discovery_request(fake, client):
    path = "/api/v1/namespaces/default/configmaps/fine"
    fake.answers[("PATCH", path)] = (200, {"metadata": {"name": "fine", "resourceVersion": "2"}})
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n"
    assert client.post("/apply/", {"manifest": manifest}).status_code == 200
    first = discovery_gets(fake)
    assert first == ["/api", "/api/v1"]
    assert client.post("/apply/", {"manifest": manifest}).status_code == 200
    assert discovery_gets(fake) == first


def test_a_lesson_manifest_is_read_once_and_each_caller_gets_its_own_objects(monkeypatch):
    from control import safeyaml
    from dashboard import manifests

    monkeypatch.setattr(manifests, "_PARSED", {})
    reads = []
    real = safeyaml.read_stream
    monkeypatch.setattr(manifests.safeyaml, "read_stream", lambda *a: reads.append(a[0]) or real(*a))
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: menu}\ndata: {a: '1'}\n"
    first = manifests.parse(text)
    first[0]["metadata"]["namespace"] = "attendee-1"  # a caller scopes its copy
    second = manifests.parse(text)
    assert second == [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "menu"}, "data": {"a": "1"}}]
    assert len(reads) == 1
    broken = "kind: ConfigMap\n"
    for _ in range(2):
        with pytest.raises(manifests.ManifestError) as refused:
            manifests.parse(broken)
        assert refused.value.code == 400 and "apiVersion" in str(refused.value)
    assert len(reads) == 2


def test_the_dry_runs_go_out_together_and_tell_what_is_stored(fake, client, monkeypatch):
    """One round trip's wait for the checks of a whole stream, not one per object (a lesson's
    three-object manifest was nine requests in a row); each dry run also says what its object is
    now, so no object is read before its apply; the real applies stay one at a time."""
    fake.served.append(ORDERS)
    for path in PATHS:
        fake.answers[("PATCH", path)] = (201, {"metadata": {"name": path.rsplit("/", 1)[1], "resourceVersion": "7"}})
    answer, flight = fake.answer, {"now": 0, "most": 0, "most_writing": 0}

    async def slowly(request, exchange):
        writing = request.method == "PATCH" and "dryRun" not in request.target
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        if writing:
            flight["most_writing"] = max(flight["most_writing"], flight["now"])
        try:
            await asyncio.sleep(0.1)
            return await answer(request, exchange)
        finally:
            flight["now"] -= 1

    monkeypatch.setattr(fake, "answer", slowly)
    assert client.post("/apply/", {"manifest": FOUR_KINDS}).status_code == 200
    assert 2 <= flight["most"] <= manifests.IN_FLIGHT  # 4 dry runs: together, four at most
    assert flight["most_writing"] == 1
    assert [r.path for r in fake.requests if r.method == "GET" and r.path in PATHS] == []  # no object read
    assert [(path, dry) for path, dry in patches(fake) if path in PATHS] == [
        *((path, "All") for path in PATHS), *((path, None) for path in PATHS)]


def test_an_object_named_twice_is_read_again_before_its_second_apply(fake, client):
    path = "/api/v1/namespaces/default/configmaps/twice"
    fake.answers[("PATCH", path)] = (200, {"metadata": {"name": "twice", "resourceVersion": "3"}})
    manifest = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: twice}\ndata: {a: '1'}\n---\n"
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: twice}\ndata: {a: '2'}\n")
    assert client.post("/apply/", {"manifest": manifest}).status_code == 200
    kinds = [(r.method, r.query.get("dryRun")) for r in fake.requests if r.path == path]
    assert kinds.count(("GET", None)) == 1  # its first dry run told what it was; read again before the second
    assert kinds[-3:] == [("PATCH", None), ("GET", None), ("PATCH", None)]
