"""control.kinds.spokes: the supervisor's ConfigMap's name, and spoke names as its keys."""

from __future__ import annotations

import pytest

from control.kinds.spokes import NAME, NAMESPACE, spoke_key, spoke_name


@pytest.mark.parametrize(("spoke", "key"), [
    ("kubelet/node-1", "kubelet.node-1"), ("kube-proxy/node-2", "kube-proxy.node-2"),
    ("kubelet/node.example.org", "kubelet.node.example.org"), ("scheduler", "scheduler"),
    ("controller-manager", "controller-manager"), ("line-cook", "line-cook"),
])
def test_spoke_names_map_to_configmap_keys_and_back(spoke, key):
    assert spoke_key(spoke) == key and "/" not in key
    assert spoke_name(key) == spoke


def test_the_configmap_lives_in_kube_system():
    assert (NAMESPACE, NAME) == ("kube-system", "kubekitchen-spokes")
