"""runcluster decides once where its nodes listen, and says so at start."""

from control.kubelet import addresses
from control.management.commands import runcluster


def test_auto_becomes_loopback_where_127_0_1_n_cannot_be_bound(monkeypatch):
    monkeypatch.setattr(addresses, "can_bind", lambda address: address == "127.0.0.1")
    assert runcluster.node_address_mode("auto", 3) == "loopback"
    assert runcluster.node_address_mode("own", 3) == "own"


def test_auto_is_own_where_every_node_address_binds(monkeypatch):
    asked = []
    monkeypatch.setattr(addresses, "can_bind", lambda address: asked.append(address) or True)
    assert runcluster.node_address_mode("auto", 3) == "own"
    assert asked == ["127.0.1.1", "127.0.1.2", "127.0.1.3"]


def test_the_start_line_names_the_addresses():
    assert "3 on 127.0.0.1, each kubelet and kube-proxy on a port of its own" in runcluster.node_address_line("loopback", 3)
    assert "127.0.1.1..127.0.1.3 (kubelet 10250" in runcluster.node_address_line("own", 3)
