"""The dashboard's snapshot and change stream: list-then-watch over every kind, with actors."""

from __future__ import annotations

import asyncio
import json

import pytest

from control import errors
from control.api.extras import kitchen
from control.bootstrap import cluster_bootstrap
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)


def test_snapshot_then_changes_with_actors():
    cluster_bootstrap()
    api = ApiClient("kubectl/v1.32.4")
    try:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pasta"},
               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod)).status_code == 201
        snap = json.loads(api.get("/kubekitchen/snapshot").content)
        assert [p["metadata"]["name"] for p in snap["objects"]["pods"]] == ["pasta"]
        assert set(snap["objects"]) == set(kitchen.snapshot_keys())
        assert {"pods", "nodes", "deployments", "replicasets", "services", "endpoints"} <= set(snap["objects"])
        revision = snap["revision"]
        api.delete("/api/v1/namespaces/default/pods/pasta")

        async def read_two():
            stream = await kitchen.changes({"watch": "1", "resourceVersion": str(revision - 1), "timeoutSeconds": "2"}, "dashboard")
            lines = []
            async for chunk in stream.chunks:
                lines += [json.loads(x) for x in chunk.splitlines() if x]
                if len(lines) >= 2:
                    break
            await stream.chunks.aclose()
            return lines

        lines = api.runner.run(read_two())
        assert [(x["type"], x["resource"], x["name"], x["actor"]) for x in lines] == [
            ("ADDED", "pods", "pasta", "kubectl"), ("DELETED", "pods", "pasta", "kubectl")]
        assert lines[0]["revision"] == revision and lines[1]["object"]["metadata"]["name"] == "pasta"
    finally:
        api.close()


def test_changes_from_a_compacted_revision_end_with_410():
    from control.storage import store

    cluster_bootstrap()
    api = ApiClient()
    try:
        for i in range(6):
            api.post("/api/v1/namespaces/default/configmaps",
                     json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}}))
        through = store.log_compact(max_entries=2, max_age=10_000)

        async def read():
            from control.storage.feed import get_feed

            (await get_feed()).drop_through(through)
            stream = await kitchen.changes({"watch": "1", "resourceVersion": "1", "timeoutSeconds": "1"}, "dashboard")
            return b"".join([chunk async for chunk in stream.chunks])

        line = json.loads(api.runner.run(read()).strip())
        assert line["type"] == "ERROR" and line["object"]["code"] == 410
    finally:
        api.close()


def test_changes_is_a_watch_or_a_list_after_a_revision():
    with pytest.raises(errors.BadRequest):
        asyncio.run(kitchen.changes({}, "x"))
    with pytest.raises(errors.BadRequest):
        asyncio.run(kitchen.changes_page({}))


def test_custom_kinds_are_keyed_by_group_and_plural_and_built_ins_by_plural(monkeypatch):
    from control import kinds as registry
    from control.kinds.base import Kind

    order = [Kind(group="kitchen.kubekitchen.dev", version=version, kind="Order", plural="orders", namespaced=True,
                  definition=f"dev.kubekitchen.kitchen.{version}.Order", crd="orders.kitchen.kubekitchen.dev")
             for version in ("v1", "v1beta1")]
    monkeypatch.setattr(registry, "all_kinds", lambda: [*registry.KINDS, *order])
    keys = kitchen.snapshot_keys()
    assert keys["kitchen.kubekitchen.dev/orders"] == "kitchen.kubekitchen.dev/orders"
    assert keys["pods"] == "/pods" and keys["deployments"] == "apps/deployments"
    assert "leases" not in keys and "orders" not in keys
    assert keys["horizontalpodautoscalers"] == "autoscaling/horizontalpodautoscalers"
    assert keys["customresourcedefinitions"] == "apiextensions.k8s.io/customresourcedefinitions"


def test_the_snapshot_holds_every_custom_kind_keyed_by_group_and_plural():
    from control import kinds as registry
    from control.restaurant.manifests import ORDER_CRD, order

    cluster_bootstrap()
    api = ApiClient("kubectl/v1.32.4")
    try:
        created = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.dumps(ORDER_CRD))
        assert created.status_code == 201, created.content
        slip = api.post("/apis/kitchen.kubekitchen.dev/v1/namespaces/default/orders", json.dumps(order("dinner")))
        assert slip.status_code == 201, slip.content
        snap = json.loads(api.get("/kubekitchen/snapshot").content)
        assert [o["metadata"]["name"] for o in snap["objects"]["kitchen.kubekitchen.dev/orders"]] == ["dinner"]
        assert [c["metadata"]["name"] for c in snap["objects"]["customresourcedefinitions"]] == [
            "orders.kitchen.kubekitchen.dev"]
        assert snap["objects"]["horizontalpodautoscalers"] == []
    finally:
        api.close()
        registry.crds_loaded([], revision=0, reset=True)  # the next test's fresh store serves no custom kind


POD = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def _pod(name: str) -> str:
    return json.dumps({**POD, "metadata": {"name": name}})


def _names(snap: dict) -> list[str]:
    return [p["metadata"]["name"] for p in snap["objects"]["pods"]]


def test_the_snapshot_at_a_revision_shows_the_cluster_as_it_was_then():
    cluster_bootstrap()
    api = ApiClient("kubectl/v1.32.4")
    try:
        api.post("/api/v1/namespaces/default/pods", _pod("pasta"))
        before = json.loads(api.get("/kubekitchen/snapshot").content)["revision"]
        api.post("/api/v1/namespaces/default/pods", _pod("soup"))
        api.delete("/api/v1/namespaces/default/pods/pasta")
        now = json.loads(api.get("/kubekitchen/snapshot").content)
        assert _names(now) == ["soup"] and now["window"] == {"oldest": 0, "newest": now["revision"]}
        answer = api.get(f"/kubekitchen/snapshot?resourceVersion={before}")
        assert answer.status_code == 200, answer.content
        then = json.loads(answer.content)
        assert _names(then) == ["pasta"] and then["revision"] == before
        assert set(then["objects"]) == set(now["objects"])  # every kind, the same shape
        assert then["window"] == {"oldest": 0, "newest": now["revision"]}
        assert isinstance(then["time"], float)
        at_now = json.loads(api.get(f"/kubekitchen/snapshot?resourceVersion={now['revision']}").content)
        assert at_now["objects"] == now["objects"]
    finally:
        api.close()


def test_a_snapshot_before_the_window_is_410_naming_the_oldest_revision_kept():
    from control.storage import store

    cluster_bootstrap()
    api = ApiClient()
    try:
        for i in range(6):
            api.post("/api/v1/namespaces/default/pods", _pod(f"p{i}"))
        through = store.log_compact(max_entries=2, max_age=10_000)
        gone = api.get(f"/kubekitchen/snapshot?resourceVersion={through - 1}")
        status = json.loads(gone.content)
        assert gone.status_code == 410
        assert status["kind"] == "Status" and status["reason"] == "Expired" and status["code"] == 410
        assert status["message"] == f"too old resource version: {through - 1} ({through})"
        assert status["details"]["causes"][0]["message"] == f"the oldest retained revision is {through}"
        kept = json.loads(api.get(f"/kubekitchen/snapshot?resourceVersion={through}").content)
        assert kept["window"]["oldest"] == through and len(_names(kept)) >= 4
        page = api.get(f"/kubekitchen/changes?resourceVersion={through - 1}")
        assert page.status_code == 410 and json.loads(page.content)["reason"] == "Expired"
    finally:
        api.close()


@pytest.mark.parametrize("value", ["abc", "-1", "1.5"])
def test_a_bad_revision_is_400_and_a_future_one_504(value):
    cluster_bootstrap()
    api = ApiClient()
    try:
        bad = api.get(f"/kubekitchen/snapshot?resourceVersion={value}")
        assert bad.status_code == 400 and json.loads(bad.content)["reason"] == "BadRequest"
        assert "resourceVersion: Invalid value" in json.loads(bad.content)["message"]
        newest = json.loads(api.get("/kubekitchen/snapshot").content)["revision"]
        future = api.get(f"/kubekitchen/snapshot?resourceVersion={newest + 100}")
        assert future.status_code == 504
        assert json.loads(future.content)["message"].startswith("Too large resource version")
    finally:
        api.close()


def test_the_changes_after_a_revision_as_pages():
    cluster_bootstrap()
    api = ApiClient("kubectl/v1.32.4")
    try:
        start = json.loads(api.get("/kubekitchen/snapshot").content)["revision"]
        for i in range(5):
            api.post("/api/v1/namespaces/default/pods", _pod(f"p{i}"))
        first = json.loads(api.get(f"/kubekitchen/changes?resourceVersion={start}&limit=3").content)
        assert [x["name"] for x in first["items"]] == ["p0", "p1", "p2"] and first["more"] is True
        assert first["items"][0]["actor"] == "kubectl" and first["items"][0]["object"]["kind"] == "Pod"
        assert isinstance(first["items"][0]["time"], float)
        assert first["revision"] == first["items"][-1]["revision"] == start + 3
        rest = json.loads(api.get(f"/kubekitchen/changes?resourceVersion={first['revision']}&limit=3").content)
        assert [x["name"] for x in rest["items"]] == ["p3", "p4"] and rest["more"] is False
        assert rest["window"]["newest"] == start + 5
        empty = json.loads(api.get(f"/kubekitchen/changes?resourceVersion={start + 5}").content)
        assert empty["items"] == [] and empty["revision"] == start + 5
    finally:
        api.close()


def test_a_change_line_is_encoded_once_for_every_stream_and_is_the_same_line():
    from control.storage.store import Change

    change = Change(7, "MODIFIED", "apps/deployments", "team-a", "web", "kubectl · alice", 1.5,
                    '{"metadata":{"name":"web"}}')
    first = kitchen.change_line(change)
    assert kitchen.change_line(change) is first  # the second stream gets the same bytes, not a copy
    assert json.loads(first) == {"type": "MODIFIED", "revision": 7, "resource": "deployments", "group": "apps",
                                 "namespace": "team-a", "name": "web", "actor": "kubectl · alice",
                                 "object": {"metadata": {"name": "web"}}}
    other = Change(7, "MODIFIED", "apps/deployments", "team-a", "web", "kubectl · alice", 1.5,
                   '{"metadata":{"name":"web","labels":{"a":"b"}}}')
    assert json.loads(kitchen.change_line(other))["object"]["metadata"]["labels"] == {"a": "b"}


def test_the_shared_change_lines_stay_bounded(monkeypatch):
    from control.storage.store import Change

    monkeypatch.setattr(kitchen, "_LINES", {})
    monkeypatch.setattr(kitchen, "_LINES_MAX", 3)
    changes = [Change(i, "ADDED", "configmaps", "ns", f"c{i}", "kubectl", 0.0, "{}") for i in range(5)]
    lines = [kitchen.change_line(c) for c in changes]
    assert len(kitchen._LINES) == 3
    assert [json.loads(line)["name"] for line in lines] == ["c0", "c1", "c2", "c3", "c4"]
    assert kitchen.change_line(changes[0]) == lines[0]  # pushed out, encoded again: the same text
