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


def test_changes_is_a_watch_only():
    with pytest.raises(errors.BadRequest):
        asyncio.run(kitchen.changes({}, "x"))


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
