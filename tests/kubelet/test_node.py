"""The node's identity and heartbeats: addresses, pod IPs, the Node object, the Lease, and the
NodeAgent's register / renew / report against a fake hub on a FakeClock."""

from __future__ import annotations

import asyncio
import copy
import re

import pytest

from control import errors
from control.clock import FakeClock
from control.client.resources import LEASES, NODES
from control.client.timings import Timings
from control.kubelet.config import BackoffPolicy, KubeletConfig
from control.kinds.meta import format_micro_time, format_time, is_node_ready
from control.kubelet.heartbeat import NodeAgent
from control.kubelet.node import (
    IpPool, internal_ip, lease_object, node_number, node_status, pod_cidr, registered_node,
)
from tests.kubelet.fakes import FakeHub

T0 = 1_800_000_000.0
TIMINGS = Timings.from_env({"KK_PACE": "workshop"})


def test_node_numbers_addresses_and_cidrs():
    assert (node_number("node-3"), internal_ip("node-3"), pod_cidr("node-3")) == (3, "127.0.1.3", "10.244.3.0/24")
    assert pod_cidr("node-3", pods=11000) == "10.203.0.0/16"
    assert node_number("worker") == node_number("worker") and 1 <= node_number("worker") <= 254
    assert 1 <= node_number("node-0") <= 254 and 1 <= node_number("node-999") <= 254


def test_ip_pool_hands_each_ip_to_one_pod_and_walks_forward():
    pool = IpPool("10.244.3.0/24")
    a, b = pool.allocate("a"), pool.allocate("b")
    assert (a, b) == ("10.244.3.2", "10.244.3.3") and pool.allocate("a") == a
    pool.release("a")
    assert pool.allocate("c") == "10.244.3.4", "a freed IP is not reused at once"
    assert pool.claim("d", "10.244.3.2") == "10.244.3.2"
    assert pool.claim("e", "10.244.3.2") != "10.244.3.2", "taken: another one"
    assert pool.claim("f", "192.168.0.1").startswith("10.244.3.")
    small = IpPool("10.0.0.0/29")  # .2 .. .6
    for uid in "vwxyz":
        small.allocate(uid)
    with pytest.raises(RuntimeError):
        small.allocate("full")


def test_node_status_keeps_transition_times_and_turns_unknown_into_ready():
    config = KubeletConfig()
    first = node_status(None, node="node-1", ip="127.0.1.1", port=10250, config=config, now=T0)
    ready = next(c for c in first["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
    assert [c["type"] for c in first["conditions"]] == ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
    assert first["capacity"] == {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    assert first["addresses"] == [{"type": "InternalIP", "address": "127.0.1.1"}, {"type": "Hostname", "address": "node-1"}]
    assert first["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    info = first["nodeInfo"]
    assert (info["kubeletVersion"], info["containerRuntimeVersion"]) == ("v1.32.0-kube-kitchen", "kitchen://1.0")
    later = node_status(first, node="node-1", ip="127.0.1.1", port=10250, config=config, now=T0 + 60)
    ready_later = next(c for c in later["conditions"] if c["type"] == "Ready")
    assert ready_later["lastTransitionTime"] == ready["lastTransitionTime"]
    assert ready_later["lastHeartbeatTime"] != ready["lastHeartbeatTime"]
    unknown = {**later, "conditions": [{**c, "status": "Unknown", "reason": "NodeStatusUnknown"} for c in later["conditions"]]}
    back = node_status(unknown, node="node-1", ip="127.0.1.1", port=10250, config=config, now=T0 + 120)
    assert is_node_ready({"status": back})
    assert next(c for c in back["conditions"] if c["type"] == "Ready")["lastTransitionTime"] == "2027-01-15T08:02:00Z"


def test_capacity_from_the_environment():
    config = KubeletConfig.from_env({"KK_NODE_CPU": "2", "KK_NODE_MEMORY": "4Gi", "KK_NODE_PODS": "20"})
    assert (config.cpu, config.memory, config.pods) == ("2", "4Gi", "20")


def test_registration_takes_over_an_existing_node_and_keeps_its_spec():
    existing = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"zone": "a"}},
                "spec": {"taints": [{"key": "x", "effect": "NoSchedule"}], "podCIDR": "10.244.9.0/24"}}
    node = registered_node(existing, "node-1")
    assert node["metadata"]["labels"]["zone"] == "a"
    assert node["metadata"]["labels"]["node-role.kubernetes.io/worker"] == ""
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "node-1"
    assert node["spec"]["taints"] == existing["spec"]["taints"] and node["spec"]["podCIDR"] == "10.244.9.0/24"
    assert registered_node(None, "node-4")["spec"]["podCIDR"] == "10.244.4.0/24"


def test_lease_body_and_micro_time():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", format_micro_time(T0 + 0.25))
    assert format_micro_time(T0 + 0.25).endswith(".250000Z")
    lease = lease_object(None, node="node-1", node_uid="u1", duration=40, now=T0)
    assert lease["metadata"] == {"name": "node-1", "namespace": "kube-node-lease",
                                 "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "u1"}]}
    assert lease["spec"] == {"holderIdentity": "node-1", "leaseDurationSeconds": 40, "renewTime": format_micro_time(T0)}


def test_config_from_env():
    assert KubeletConfig.from_env({}).backoff == BackoffPolicy(10, 300, 600)
    assert KubeletConfig.from_env({"KK_PACE": "workshop"}).backoff == BackoffPolicy(2, 60, 600)
    assert KubeletConfig.from_env({"KK_CRASH_BACKOFF": "1:5"}).backoff == BackoffPolicy(1, 5, 600)
    assert KubeletConfig.from_env({"KK_START_DELAY": "0"}).start_delay == (0.0, 0.0)
    assert KubeletConfig.from_env({"KK_START_DELAY": "0.1-0.3"}).start_delay == (0.1, 0.3)
    with pytest.raises(ValueError):
        KubeletConfig.from_env({"KK_CRASH_BACKOFF": "5:1"})


def agent(hub: FakeHub, clock: FakeClock) -> NodeAgent:
    return NodeAgent(hub, "node-1", ip="127.0.1.1", port=4321, clock=clock, timings=TIMINGS, config=KubeletConfig())


def test_register_creates_the_node_then_renews_the_lease_with_one_put_each_time():
    hub, clock = FakeHub(), FakeClock(T0)

    async def scenario():
        a = agent(hub, clock)
        node = await a.register()
        assert hub.verbs() == ["get", "create", "replace_status"]
        assert is_node_ready(node) and a.node_uid == node["metadata"]["uid"] and a.pod_cidr == "10.244.1.0/24"
        await a.renew_lease()
        await clock.advance(1)
        await a.renew_lease()
        assert hub.verbs("leases") == ["get", "create", "replace"]
        lease = hub.stored(LEASES, "node-1", "kube-node-lease")
        assert lease["spec"]["renewTime"] == format_micro_time(T0 + 1) and lease["spec"]["leaseDurationSeconds"] == 12

    asyncio.run(scenario())


def test_a_lease_conflict_makes_the_next_renewal_start_from_a_fresh_get():
    hub, clock = FakeHub(), FakeClock(T0)

    async def scenario():
        a = agent(hub, clock)
        await a.register()
        await a.renew_lease()
        hub.put(LEASES, hub.stored(LEASES, "node-1", "kube-node-lease"))  # someone else wrote it
        with pytest.raises(errors.Conflict):
            await a.renew_lease()
        await a.renew_lease()
        assert hub.verbs("leases")[-3:] == ["replace", "get", "replace"]

    asyncio.run(scenario())


def test_a_node_marked_unknown_is_ready_again_when_its_kubelet_returns():
    hub, clock = FakeHub(), FakeClock(T0)
    hub.put(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"zone": "a"}},
                    "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]},
                    "status": {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]}})

    async def scenario():
        a = agent(hub, clock)
        await a.register()
        node = hub.stored(NODES, "node-1")
        assert is_node_ready(node) and node["metadata"]["labels"]["zone"] == "a"
        assert node["spec"]["taints"][0]["key"] == "node.kubernetes.io/unreachable", "taints are the controller's"
        assert hub.verbs() == ["get", "replace", "replace_status"]

    asyncio.run(scenario())


def test_the_status_loop_writes_only_on_change_or_at_the_report_interval():
    hub, clock = FakeHub(), FakeClock(T0)

    async def scenario():
        a = agent(hub, clock)
        await a.register()
        assert hub.verbs().count("replace_status") == 1
        loop = asyncio.ensure_future(a.status_loop())
        await clock.advance(0)
        for _ in range(int(TIMINGS.status_report / TIMINGS.status_check) - 1):
            await clock.advance(TIMINGS.status_check)  # unchanged: nothing written, nothing read
        assert hub.verbs().count("replace_status") == 1
        await clock.advance(TIMINGS.status_check)  # the report interval is up
        assert hub.verbs().count("replace_status") == 2
        ready = [c for c in hub.stored(NODES, "node-1")["status"]["conditions"] if c["type"] == "Ready"][0]
        assert ready["lastHeartbeatTime"] == format_time(T0 + TIMINGS.status_report)
        writes = hub.verbs().count("replace_status")
        await clock.advance(TIMINGS.status_check)
        assert hub.verbs().count("replace_status") == writes, "written just now: not again"
        loop.cancel()

    asyncio.run(scenario())


def test_a_changed_status_is_written_at_the_next_check():
    hub, clock = FakeHub(), FakeClock(T0)

    async def scenario():
        a = agent(hub, clock)
        await a.register()
        loop = asyncio.ensure_future(a.status_loop())
        await clock.advance(0)
        a.ip = "127.0.1.9"  # the node's address moved: the status differs beyond its heartbeats
        await clock.advance(TIMINGS.status_check)
        assert hub.verbs().count("replace_status") == 2
        addresses = hub.stored(NODES, "node-1")["status"]["addresses"]
        assert {"type": "InternalIP", "address": "127.0.1.9"} in addresses
        loop.cancel()

    asyncio.run(scenario())


def test_the_status_loop_answers_a_node_seen_not_ready_or_deleted_at_once():
    hub, clock = FakeHub(), FakeClock(T0)

    async def scenario():
        a = agent(hub, clock)
        await a.register()
        loop = asyncio.ensure_future(a.status_loop())
        await clock.advance(0)
        assert hub.verbs().count("replace_status") == 1
        unknown = copy.deepcopy(hub.stored(NODES, "node-1"))
        for condition in unknown["status"]["conditions"]:
            condition["status"] = "Unknown"
        hub.put(NODES, unknown)  # the lifecycle controller's write, as the informer then shows it
        a.on_node_seen(hub.stored(NODES, "node-1"))
        await clock.advance(0)
        assert hub.verbs().count("replace_status") == 2 and is_node_ready(hub.stored(NODES, "node-1"))
        del hub.objects[("nodes", "", "node-1")]
        a.on_node_deleted()
        await clock.advance(0)
        assert hub.stored(NODES, "node-1") is not None, "a deleted Node is registered again"
        loop.cancel()

    asyncio.run(scenario())


def test_a_stale_copy_of_the_node_makes_the_next_look_read_it_fresh():
    hub, clock = FakeHub(), FakeClock(T0)

    async def scenario():
        a = agent(hub, clock)
        await a.register()
        hub.put(NODES, copy.deepcopy(hub.stored(NODES, "node-1")))  # someone else wrote it since
        await clock.advance(TIMINGS.status_report)
        with pytest.raises(errors.Conflict):
            await a.sync_status()
        gets = hub.verbs("nodes").count("get")
        assert await a.sync_status() is not None
        assert hub.verbs("nodes").count("get") == gets + 1

    asyncio.run(scenario())
