"""The page's websockets, driven with Channels' WebsocketCommunicator against a fake hub: traffic
is forwarded as it is published, list-then-watch resumes exactly from the revision the browser
holds, a compacted revision is relisted by the feed itself, and the wire view passes raw bytes on untouched."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from control import protocol
from control.client.reflector import Backoff
from dashboard import live
from dashboard.consumers import LiveConsumer, WireConsumer
from tests.dashboard.fakehub import FakeHub, pod, running


@pytest.fixture
def fake(settings):
    fake = FakeHub(revision=10, objects={"pods": [pod("pasta-1")], "nodes": [], "deployments": [],
                                         "replicasets": [], "services": [], "endpoints": []})
    fake.change("pods", pod("pasta-2", phase="Pending", ready=False), 11, actor="kube-controller-manager")
    fake.change("pods", pod("pasta-2"), 12, type_="MODIFIED", actor="kubelet/node-1")
    with running(fake) as url:
        settings.KK_HUB_URL = url
        yield fake


def run(scenario, timeout=10):
    return asyncio.run(asyncio.wait_for(scenario(), timeout=timeout))


async def connected(consumer=LiveConsumer, path="/ws/live/", timeout=1) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(consumer.as_asgi(), path)
    ok, _ = await communicator.connect(timeout=timeout)
    assert ok
    return communicator


async def changes_until(communicator: WebsocketCommunicator, revision: int) -> list[dict]:
    """Every change item received until the batch that reaches `revision`."""
    items = []
    while True:
        message = await communicator.receive_json_from(timeout=5)
        assert message["t"] == "changes", message
        items += message["items"]
        if message["revision"] >= revision:
            return items


def test_traffic_batches_are_forwarded_as_published(fake):
    record = {"type": "request", "who": "kubectl", "verb": "create", "resource": "pods", "namespace": "default",
              "name": "x", "code": 201, "latency_ms": 1.2, "ts": 1.0, "seq": 7}

    async def scenario():
        communicator = await connected()
        await get_channel_layer().group_send(protocol.TRAFFIC_GROUP, {"type": protocol.TRAFFIC_BATCH, "records": [record]})
        assert await communicator.receive_json_from(timeout=5) == {"t": "traffic", "records": [record]}
        await communicator.disconnect()

    run(scenario)


def test_only_the_handshake_and_the_close_close_stale_database_connections(fake, monkeypatch):
    import channels.consumer

    closed = []

    async def counting() -> None:
        closed.append(1)

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counting)
    record = {"type": "request", "who": "kubectl", "verb": "get", "resource": "pods", "code": 200, "ts": 1.0, "seq": 1}

    async def scenario():
        communicator = await connected()
        assert len(closed) == 1, "the handshake reads the session: stale connections closed first"
        for _ in range(3):
            await get_channel_layer().group_send(protocol.TRAFFIC_GROUP, {"type": protocol.TRAFFIC_BATCH, "records": [record]})
            assert (await communicator.receive_json_from(timeout=5))["t"] == "traffic"
        await communicator.send_json_to({"op": "watch", "revision": None})
        assert (await communicator.receive_json_from(timeout=5))["t"] == "snapshot"
        assert len(closed) == 1, "traffic batches and page messages touch no database"
        await communicator.disconnect()
        assert len(closed) == 2

    run(scenario)


def test_without_a_revision_the_snapshot_comes_first_then_the_changes_after_it(fake):
    async def scenario():
        communicator = await connected()
        await communicator.send_json_to({"op": "watch", "revision": None})
        snapshot = await communicator.receive_json_from(timeout=5)
        assert snapshot["t"] == "snapshot" and snapshot["revision"] == 10 and snapshot["spokes"] == {}
        assert [p["name"] for p in snapshot["objects"]["pods"]] == ["pasta-1"]
        items = await changes_until(communicator, 12)
        assert [(i["rv"], i["type"], i["name"], i["actor"]) for i in items] == [
            (11, "ADDED", "pasta-2", "kube-controller-manager"), (12, "MODIFIED", "pasta-2", "kubelet/node-1")]
        assert items[1]["vm"]["ready"] is True and items[0]["vm"]["phase"] == "Pending"
        await communicator.disconnect()

    run(scenario)
    watches = [r for r in fake.requests if r.path == "/kubekitchen/changes"]
    assert [r.query["resourceVersion"] for r in watches] == ["0"]  # with up to 200 changes of history
    assert all(r.agent.startswith("dashboard") for r in fake.requests)


def test_the_snapshot_and_the_changes_carry_jobs_cronjobs_and_the_newest_events(fake):
    def event(i: int) -> dict:
        return {"apiVersion": "v1", "kind": "Event", "type": "Warning" if i % 2 else "Normal", "reason": f"R{i}",
                "metadata": {"name": f"e{i}", "namespace": "default", "resourceVersion": str(i)},
                "involvedObject": {"kind": "Pod", "name": "pasta-1", "namespace": "default"}, "count": i}

    fake.objects["events"] = [event(i) for i in range(1, 131)]
    fake.objects["jobs"] = [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bake", "namespace": "default"},
                             "spec": {"completions": 2}, "status": {"succeeded": 1, "failed": 2}}]
    fake.objects["cronjobs"] = [{"apiVersion": "batch/v1", "kind": "CronJob",
                                 "metadata": {"name": "nightly", "namespace": "default"}, "spec": {"schedule": "@daily"}}]
    fake.change("events", {**event(131), "count": 5}, 13, type_="MODIFIED", actor="kubelet/node-1")

    async def scenario():
        communicator = await connected()
        await communicator.send_json_to({"op": "watch", "revision": None})
        snapshot = await communicator.receive_json_from(timeout=5)
        events = snapshot["objects"]["events"]
        assert len(events) == 100 and events[0]["reason"] == "R130" and events[-1]["reason"] == "R31"
        assert events[0]["object"] == {"kind": "Pod", "name": "pasta-1", "ns": "default"}
        [job] = snapshot["objects"]["jobs"]
        assert (job["succeeded"], job["failed"], job["completions"]) == (1, 2, 2)
        assert snapshot["objects"]["cronjobs"][0]["schedule"] == "@daily"
        items = await changes_until(communicator, 13)
        assert items[-1]["kind"] == "Event" and items[-1]["vm"]["count"] == 5 and items[-1]["vm"]["type"] == "Warning"
        await communicator.disconnect()

    run(scenario)


def test_after_a_snapshot_the_changes_before_it_come_as_history_for_the_log(fake):
    fake.log.insert(0, {**fake.log[0], "revision": 9, "name": "pasta-1", "object": pod("pasta-1")})

    async def scenario():
        communicator = await connected()
        await communicator.send_json_to({"op": "watch", "revision": None})
        assert (await communicator.receive_json_from(timeout=5))["t"] == "snapshot"
        history = await communicator.receive_json_from(timeout=5)
        assert history["t"] == "history" and [i["rv"] for i in history["items"]] == [9]
        assert [i["rv"] for i in await changes_until(communicator, 12)] == [11, 12]
        await communicator.disconnect()

    run(scenario)


def test_history_that_was_compacted_is_skipped_not_an_error(fake):
    fake.compacted_through = 5

    async def scenario():
        communicator = await connected()
        await communicator.send_json_to({"op": "watch", "revision": None})
        assert (await communicator.receive_json_from(timeout=5))["t"] == "snapshot"
        assert [i["rv"] for i in await changes_until(communicator, 12)] == [11, 12]
        await communicator.disconnect()

    run(scenario)
    assert [r.query["resourceVersion"] for r in fake.requests if r.path == "/kubekitchen/changes"] == ["0", "10"]


def test_a_reconnect_resumes_from_the_revision_held_with_nothing_missed_or_repeated(fake):
    async def scenario():
        communicator = await connected()
        await communicator.send_json_to({"op": "watch", "revision": 11})
        items = await changes_until(communicator, 12)
        assert [i["rv"] for i in items] == [12]
        await communicator.disconnect()

    run(scenario)
    assert not [r for r in fake.requests if r.path == "/kubekitchen/snapshot"]
    assert [r.query["resourceVersion"] for r in fake.requests if r.path == "/kubekitchen/changes"] == ["11"]


def test_a_compacted_revision_is_relisted_by_the_feed_itself(fake, monkeypatch):
    fake.compacted_through = 8
    # the relist waits one back-off (tests/dashboard/test_live.py times it on a fake clock); kept short here
    monkeypatch.setattr(live, "Backoff", lambda: Backoff(initial=0.01, jitter=0.0))

    async def scenario():
        communicator = await connected()
        await communicator.send_json_to({"op": "watch", "revision": 3})
        messages = [await communicator.receive_json_from(timeout=5)]
        while messages[-1]["t"] != "snapshot":
            messages.append(await communicator.receive_json_from(timeout=5))
        gone = [m for m in messages if m["t"] == "gone"]
        assert gone == [{"t": "gone", "code": 410, "reason": "Expired", "revision": 3,
                         "message": "too old resource version: 3 (8)"}], "the hub's answer, for the page to show"
        assert all(m["t"] == "changes" and not m["items"] for m in messages[:-1] if m["t"] != "gone"), \
            "no expired for the page: the feed relists itself"
        assert messages[-1]["revision"] == 10
        assert [i["rv"] for i in await changes_until(communicator, 12)] == [11, 12]
        await communicator.disconnect()

    run(scenario)
    assert [r.query["resourceVersion"] for r in fake.requests if r.path == "/kubekitchen/changes"][:1] == ["3"]


def test_spoke_states_come_with_the_snapshot(fake):
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "kubekitchen-spokes", "namespace": "kube-system"},
                 "data": {"scheduler": "stopped", "kubelet.node-1": "running"}}
    fake.answers[("GET", "/api/v1/namespaces/kube-system/configmaps/kubekitchen-spokes")] = (200, configmap)

    async def scenario():
        communicator = await connected()
        await communicator.send_json_to({"op": "watch", "revision": None})
        snapshot = await communicator.receive_json_from(timeout=5)
        assert snapshot["spokes"] == {"scheduler": "stopped", "kubelet/node-1": "running"}
        await communicator.disconnect()

    run(scenario)


LINE = b'{"type":"ADDED","object":{}}\n'
CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
           + f"{len(LINE):x}\r\n".encode() + LINE + b"\r\n")


def test_the_wire_view_forwards_the_raw_bytes_of_one_watch(settings):
    heard = []

    async def scenario():
        async def fake_hub(reader, writer):
            heard.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(CHUNKED[:40])
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.write(CHUNKED[40:])
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(fake_hub, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        settings.KK_HUB_URL = f"http://127.0.0.1:{port}"
        communicator = await connected(WireConsumer, "/ws/wire/")
        received = b""
        while len(received) < len(CHUNKED):
            message = await communicator.receive_output(timeout=5)
            assert message["type"] == "websocket.send"
            received += message["bytes"]
        assert received == CHUNKED
        await communicator.disconnect()
        server.close()

    run(scenario)
    request = heard[0].decode()
    assert request.startswith("GET /api/v1/namespaces/default/pods?watch=1 HTTP/1.1\r\n")
    assert "User-Agent: dashboard/wire" in request and "Host: 127.0.0.1:" in request


def _redis_up() -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _redis_up(), reason="no Redis server on 127.0.0.1:6379")
def test_traffic_is_forwarded_through_the_redis_channel_layer_too(fake, settings):
    from channels.layers import channel_layers

    from control.settings import redis_channel_layer

    settings.CHANNEL_LAYERS = {"default": redis_channel_layer("redis://127.0.0.1:6379/0", prefix=f"kk-test-{id(fake)}")}
    channel_layers.backends.clear()
    record = {"type": "watch", "who": "kubelet/node-1", "resource": "pods", "group": "", "count": 3,
              "revision": 12, "ts": 1.0, "seq": 8}

    async def scenario():
        # joining the group is the first round trip to a real Redis (its connection is made then): on a
        # loaded machine (the suite's other worker) the connect took over the communicator's 1 s
        communicator = await connected(timeout=20)
        await get_channel_layer().group_send(protocol.TRAFFIC_GROUP, {"type": protocol.TRAFFIC_BATCH, "records": [record]})
        assert await communicator.receive_json_from(timeout=20) == {"t": "traffic", "records": [record]}
        await communicator.disconnect()

    try:
        run(scenario, timeout=60)
    finally:
        channel_layers.backends.clear()


def test_custom_objects_and_autoscalers_reach_the_page_as_view_models(fake):
    from tests.dashboard.test_presenters import HPA, ORDER_CRD

    order = {"apiVersion": "kitchen.kubekitchen.dev/v1", "kind": "Order",
             "metadata": {"name": "dinner", "namespace": "default"}, "spec": {"menu": "soup", "count": 2}}
    fake.objects.update({"horizontalpodautoscalers": [HPA], "customresourcedefinitions": [ORDER_CRD],
                         "kitchen.kubekitchen.dev/orders": [order]})
    fake.log.append({"type": "MODIFIED", "revision": 13, "resource": "orders", "group": "kitchen.kubekitchen.dev",
                     "namespace": "default", "name": "dinner", "actor": "line-cook",
                     "object": {**order, "status": {"cooked": 1, "phase": "Cooking"}}})

    async def scenario():
        communicator = await connected()
        await communicator.send_json_to({"op": "watch", "revision": None})
        snapshot = await communicator.receive_json_from(timeout=5)
        objects = snapshot["objects"]
        assert objects["horizontalpodautoscalers"][0]["currentCPU"] == 83
        assert objects["customresourcedefinitions"][0]["resource"] == "kitchen.kubekitchen.dev/orders"
        assert objects["kitchen.kubekitchen.dev/orders"][0]["spec"] == {"menu": "soup", "count": 2}
        items = await changes_until(communicator, 13)
        [cooked] = [i for i in items if i["rv"] == 13]
        assert cooked["resource"] == "kitchen.kubekitchen.dev/orders" and cooked["vm"]["status"]["cooked"] == 1
        await communicator.disconnect()

    run(scenario)


def test_a_service_request_record_is_forwarded_untouched(fake):
    record = {"type": "service.request", "who": "dashboard", "from": "node-1", "node": "node-1", "target": "pasta",
              "service": "default/pasta", "endpoint": "10.244.2.3:80", "pod": "pasta-b", "podNode": "node-2",
              "code": 200, "index": 0, "run": "abc", "ts": 2.0, "seq": 9}

    async def scenario():
        communicator = await connected()
        await get_channel_layer().group_send(protocol.TRAFFIC_GROUP, {"type": protocol.TRAFFIC_BATCH, "records": [record]})
        assert await communicator.receive_json_from(timeout=5) == {"t": "traffic", "records": [record]}
        await communicator.disconnect()

    run(scenario)


@pytest.mark.django_db(transaction=True)
def test_a_logged_in_user_receives_only_the_traffic_records_they_may_see(fake, settings):
    """alice may list nodes only (the fake hub's rules review): bob's pod requests never reach her
    page, her own and the nodes' do; the rules are asked of the hub as alice."""
    from asgiref.sync import sync_to_async
    from channels.sessions import SessionMiddlewareStack
    from django.contrib.sessions.backends.db import SessionStore
    from django.db import connections

    from dashboard import audience, login

    settings.KK_AUTHENTICATION = "on"
    fake.answers[("POST", audience.RULES_REVIEW)] = (201, {"status": {"resourceRules": [
        {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["nodes"]}]}})

    def record(user: str, namespace: str, resource: str, seq: int) -> dict:
        return {"type": "request", "who": f"kubectl · {user}", "verb": "list", "resource": resource, "code": 200,
                "user": user, "seq": seq, "scope": {"namespace": namespace, "group": "", "resource": resource}}

    bobs, hers = record("bob", "bob", "pods", 1), record("alice", "alice", "pods", 2)
    nodes = record("bob", "", "nodes", 3)

    async def scenario():
        store = SessionStore()
        await store.aset(login.SESSION_USER, "alice")
        await store.aset(login.SESSION_TOKEN, "tok-alice")
        await store.asave()
        cookie = f"{settings.SESSION_COOKIE_NAME}={store.session_key}".encode()
        communicator = WebsocketCommunicator(SessionMiddlewareStack(LiveConsumer.as_asgi()), "/ws/live/",
                                             headers=[(b"cookie", cookie)])
        ok, _ = await communicator.connect()
        assert ok
        send = get_channel_layer().group_send
        await send(protocol.TRAFFIC_GROUP, {"type": protocol.TRAFFIC_BATCH, "records": [bobs]})
        await send(protocol.TRAFFIC_GROUP, {"type": protocol.TRAFFIC_BATCH, "records": [bobs, hers, nodes]})
        # the batch of bob's request alone was not sent at all: the first message is the second batch
        assert await communicator.receive_json_from(timeout=5) == {"t": "traffic", "records": [hers, nodes]}
        await communicator.disconnect()
        await sync_to_async(connections.close_all)()

    run(scenario)
    reviews = [r for r in fake.requests if r.path == audience.RULES_REVIEW]
    assert reviews and all(r.authorization == "Bearer tok-alice" for r in reviews)
    assert len(reviews) == 2  # the cluster scope and bob's namespace, asked once each


def test_a_batch_is_encoded_once_for_every_page_and_reads_as_send_json_writes_it(monkeypatch):
    from control import jsontext
    from dashboard import consumers

    monkeypatch.setattr(consumers, "_ENCODED", {})
    batch = [{"type": "request", "who": f"kubectl · u{i}", "verb": "get", "resource": "pods", "code": 200, "seq": i}
             for i in range(3)]
    send_json = asyncio.run(consumers.LiveConsumer.encode_json({"t": "traffic", "records": batch}))
    encoded, dumps = [], jsontext.dumps
    monkeypatch.setattr(consumers.jsontext, "dumps", lambda value: encoded.append(value) or dumps(value))
    everything = consumers.traffic_text(batch, batch)  # an admin's page
    own = consumers.traffic_text(batch, [batch[2], batch[0]])  # an attendee's page: some of them
    assert len(encoded) == 3, "each record once, whatever the pages"
    assert everything == send_json == dumps({"t": "traffic", "records": batch})
    assert own == dumps({"t": "traffic", "records": [batch[2], batch[0]]})
    copy = [dict(r) for r in batch]  # another batch (a Redis layer's copy): encoded for itself
    assert consumers.traffic_text(copy, copy[:1]) == dumps({"t": "traffic", "records": copy[:1]})
    assert len(encoded) == 4


def test_the_redis_layer_reads_longer_than_channels_redis_waits():
    """An idle page's BZPOPMIN (brpop_timeout) must end on Redis's answer, not on redis-py's socket
    timeout (5 s by default in redis-py 8, equal to the wait: the consumer died under load)."""
    from channels_redis.core import RedisChannelLayer
    from redis.asyncio import ConnectionPool

    from control.settings import redis_channel_layer

    layer = RedisChannelLayer(**redis_channel_layer("redis://127.0.0.1:6379/0")["CONFIG"])
    pool = layer.create_pool(0)
    assert isinstance(pool, ConnectionPool)
    assert pool.connection_kwargs["socket_timeout"] > RedisChannelLayer.brpop_timeout + 5
