"""The kitchen's feed is filtered by RBAC: a user sees the objects (and changes) of the namespaces
they may list/watch, a cluster admin everything, an anonymous caller nothing (403)."""

from __future__ import annotations

import asyncio
import json

import pytest
from django.conf import settings

from control.api.extras import kitchen
from control.auth import policystore, tokenfile
from control.auth.rbac import User
from control.auth.visibility import Visibility
from control.bootstrap import cluster_bootstrap
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)
RBAC = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture(autouse=True)
def authentication_on(settings):
    settings.KK_AUTHENTICATION = "on"


def pod(name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}})


@pytest.fixture
def hub():
    policystore.forget()
    cluster_bootstrap()
    admin = ApiClient()
    alice = ApiClient(token=tokenfile.token_of(settings.DATA_DIR, "alice"))
    anonymous = ApiClient(token="")
    for ns in ("alice", "bob"):
        assert admin.post("/api/v1/namespaces", json.dumps({"metadata": {"name": ns}})).status_code == 201
        assert admin.post(f"/api/v1/namespaces/{ns}/pods", pod(f"{ns}-pod")).status_code == 201
    binding = {"metadata": {"name": "alice-admin"}, "subjects": [{"kind": "User", "name": "alice"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"}}
    assert admin.post(f"{RBAC}/namespaces/alice/rolebindings", json.dumps(binding)).status_code == 201
    yield {"admin": admin, "alice": alice, "anonymous": anonymous}
    for client in (admin, alice, anonymous):
        client.close()


def names(snapshot: dict, plural: str) -> set[str]:
    return {o["metadata"]["name"] for o in snapshot["objects"][plural]}


def test_a_namespace_admin_sees_only_their_namespace_in_the_snapshot(hub):
    answer = hub["alice"].get("/kubekitchen/snapshot")
    assert answer.status_code == 200
    mine = json.loads(answer.content)
    assert names(mine, "pods") == {"alice-pod"}
    assert mine["objects"]["nodes"] == []  # cluster-scoped: needs a cluster-wide list
    everything = json.loads(hub["admin"].get("/kubekitchen/snapshot").content)
    assert names(everything, "pods") == {"alice-pod", "bob-pod"}


def test_the_snapshot_at_a_revision_and_the_change_pages_are_filtered_too(hub):
    snap = json.loads(hub["admin"].get("/kubekitchen/snapshot").content)
    at = json.loads(hub["alice"].get("/kubekitchen/snapshot", QUERY_STRING=f"resourceVersion={snap['revision']}").content)
    assert names(at, "pods") == {"alice-pod"}
    page = json.loads(hub["alice"].get("/kubekitchen/changes", QUERY_STRING="resourceVersion=0&limit=10000").content)
    namespaces = {item["namespace"] for item in page["items"]}
    assert namespaces == {"alice"}
    assert {"alice", "bob"} <= {item["namespace"] for item in json.loads(
        hub["admin"].get("/kubekitchen/changes", QUERY_STRING="resourceVersion=0&limit=10000").content)["items"]}


def test_the_change_stream_delivers_only_what_the_user_may_watch(hub):
    snap = json.loads(hub["admin"].get("/kubekitchen/snapshot").content)
    for ns in ("bob", "alice"):
        hub["admin"].delete(f"/api/v1/namespaces/{ns}/pods/{ns}-pod")

    async def read_one():
        policy = await policystore.cache().current()
        seen = Visibility(policy, User("alice", "alice", ("system:authenticated",)), "watch")
        stream = await kitchen.changes({"watch": "1", "resourceVersion": str(snap["revision"]),
                                        "timeoutSeconds": "2"}, "dashboard", seen)
        lines = []
        async for chunk in stream.chunks:
            lines += [json.loads(x) for x in chunk.splitlines() if x]
            if lines:
                break
        await stream.chunks.aclose()
        return lines

    lines = hub["admin"].runner.run(read_one())
    assert [(x["namespace"], x["name"]) for x in lines] == [("alice", "alice-pod")]


def test_an_anonymous_caller_gets_no_feed(hub):
    assert hub["anonymous"].get("/kubekitchen/snapshot").status_code == 403


def test_a_cluster_admin_is_not_filtered_at_all():
    assert Visibility(None, None, "list").sees_everything


def test_a_caught_up_change_stream_is_handed_only_what_the_user_may_watch(hub):
    """Once at the head, a page's stream is a watcher of every resource in the feed's index with the
    user's visibility: others' writes do not reach it at all, its own namespace's do."""
    from control.storage.feed import get_feed

    alice = hub["alice"]
    head = json.loads(hub["admin"].get("/kubekitchen/snapshot").content)["revision"]

    async def open_stream():
        policy = await policystore.cache().current()
        seen = Visibility(policy, User("alice", "alice", ("system:authenticated",)), "watch")
        stream = await kitchen.changes({"watch": "1", "resourceVersion": str(head), "timeoutSeconds": "30"},
                                       "dashboard", seen)
        assert await stream.chunks.__anext__() == b""  # the headers
        reading = asyncio.ensure_future(stream.chunks.__anext__())
        await asyncio.sleep(0.05)
        return stream, reading, (await get_feed()).watchers

    stream, reading, index = alice.runner.run(open_stream())
    pages = list(index.everywhere.everyone)
    assert len(pages) == 1 and pages[0].admits is not None
    for n in range(3):
        hub["admin"].post("/api/v1/namespaces/bob/configmaps", json.dumps({"metadata": {"name": f"b{n}"}}))

    async def settle():
        await asyncio.sleep(0.05)
        return reading.done(), list(pages[0].pending)
    assert alice.runner.run(settle()) == (False, [])  # bob's writes were handed to no one on alice's page
    hub["admin"].post("/api/v1/namespaces/alice/configmaps", json.dumps({"metadata": {"name": "a0"}}))

    async def read():
        chunk = await asyncio.wait_for(reading, 5)
        await stream.chunks.aclose()
        return [json.loads(x) for x in chunk.splitlines() if x]
    assert [(x["namespace"], x["name"]) for x in alice.runner.run(read())] == [("alice", "a0")]
    assert not index.everywhere.everyone  # the stream left the index when it ended
