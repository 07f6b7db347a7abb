"""Where a node's servers listen: own 127.0.1.N addresses, or all on 127.0.0.1 (macOS, or asked)."""

import asyncio

import pytest

from control.kubelet import addresses
from control.kubelet.config import KubeletConfig
from control.kubelet.kubelet import Kubelet
from control.kubelet.node import internal_ip
from tests.kubelet.test_pods import Node


def test_the_setting_is_checked_and_defaults_to_auto():
    assert addresses.setting({}) == "auto"
    assert addresses.setting({"KK_NODE_ADDRESSES": " Loopback "}) == "loopback"
    assert KubeletConfig.from_env({"KK_NODE_ADDRESSES": "own"}).node_addresses == "own"
    with pytest.raises(ValueError, match="KK_NODE_ADDRESSES must be one of auto, own, loopback"):
        KubeletConfig.from_env({"KK_NODE_ADDRESSES": "127.0.0.1"})


def test_auto_is_own_only_when_every_address_binds():
    nodes = [internal_ip(f"node-{i}") for i in (1, 2, 3)]
    assert addresses.decide("auto", nodes, bindable=lambda a: True) == "own"
    macos = lambda address: address == "127.0.0.1"  # noqa: E731  (only the one loopback address)
    assert addresses.decide("auto", nodes, bindable=macos) == "loopback"
    assert addresses.decide("auto", nodes, bindable=lambda a: a != nodes[2]) == "loopback", "one node that cannot"
    assert addresses.decide("own", nodes, bindable=macos) == "own", "asked for: kept (each kubelet falls back)"
    assert addresses.decide("loopback", nodes, bindable=lambda a: True) == "loopback"
    with pytest.raises(ValueError):
        addresses.decide("everywhere", nodes)


def test_can_bind_tells_a_loopback_address_from_one_this_machine_lacks():
    assert addresses.can_bind("127.0.0.1")
    assert not addresses.can_bind("192.0.2.1"), "TEST-NET-1 is on no interface"


def test_the_plan_a_kubelet_follows():
    assert addresses.listen_plan("loopback", "127.0.1.2", 10250) == [("127.0.0.1", 0)]
    own = [("127.0.1.2", 10250), ("127.0.1.2", 0), ("127.0.0.1", 0)]
    assert addresses.listen_plan("own", "127.0.1.2", 10250) == own
    assert addresses.listen_plan("auto", "127.0.1.2", 10250) == own


def test_a_kubelet_in_loopback_mode_listens_on_a_port_of_its_own_of_127_0_0_1():
    async def scenario():
        kubelets = [Kubelet(Node().hub, f"node-{i}", config=KubeletConfig(node_addresses="loopback")) for i in (1, 2)]
        try:
            ports = [await k.start_log_server() for k in kubelets]
            assert [k.address for k in kubelets] == ["127.0.0.1", "127.0.0.1"]
            assert len(set(ports)) == 2 and 10250 not in ports
        finally:
            for k in kubelets:
                await k.server.close()

    asyncio.run(scenario())
