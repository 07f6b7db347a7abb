"""control.kinds.core's printing helpers: a Service port as kubectl prints it (makePortString),
shared by the table the hub serves and the dashboard."""

from __future__ import annotations

from control.kinds.core import _service_ports, service_port_text


def test_a_port_prints_its_node_port_and_protocol():
    assert service_port_text({"port": 80}) == "80/TCP"
    assert service_port_text({"port": 53, "protocol": "UDP"}) == "53/UDP"
    assert service_port_text({"port": 80, "nodePort": 31234, "protocol": "TCP"}) == "80:31234/TCP"


def test_the_ports_column_joins_them_or_says_none():
    svc = {"spec": {"ports": [{"port": 80, "nodePort": 30080}, {"port": 443, "protocol": "TCP"}, "junk"]}}
    assert _service_ports(svc) == "80:30080/TCP,443/TCP"
    assert _service_ports({"spec": {}}) == "<none>"
