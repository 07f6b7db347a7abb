"""The pods behind a backend: the Service port by number or name, the slice port of the same
name, ready endpoints only, round robin."""

from control.frontdoor.endpoints import PodEndpoint, RoundRobin, endpoints_for, why_none

SERVICE = {"spec": {"ports": [{"name": "web", "port": 80, "targetPort": 5678}, {"name": "admin", "port": 81}]}}


def slice_(*endpoints, port_name="web", port=5678) -> dict:
    return {"addressType": "IPv4", "ports": [{"name": port_name, "port": port}],
            "endpoints": [{"addresses": [ip], "conditions": {"ready": ready}, "nodeName": "node-1",
                           "targetRef": {"kind": "Pod", "name": pod}} for ip, pod, ready in endpoints]}


def test_by_number_or_name_ready_only_in_ip_order():
    slices = [slice_(("10.0.0.9", "b", True), ("10.0.0.10", "c", False)), slice_(("10.0.0.2", "a", True))]
    wanted = [PodEndpoint("10.0.0.2", 5678, "a", "node-1"), PodEndpoint("10.0.0.9", 5678, "b", "node-1")]
    assert endpoints_for(SERVICE, slices, 80) == wanted
    assert endpoints_for(SERVICE, slices, "web") == wanted
    assert endpoints_for(SERVICE, slices, "admin") == []  # no slice port of that name


def test_why_none():
    assert why_none(None, 80) == "no such Service"
    assert why_none(SERVICE, 99) == "the Service has no port 99"
    assert why_none(SERVICE, 80) == "no ready endpoints"
    assert why_none({"spec": {"type": "ExternalName"}}, 80).startswith("an ExternalName")


def test_round_robin_per_key():
    a, b = PodEndpoint("1", 1, "a", "n"), PodEndpoint("2", 1, "b", "n")
    balancer = RoundRobin()
    assert [balancer.choose("k", [a, b]).pod for _ in range(3)] == ["a", "b", "a"]
    assert balancer.choose("other", [a, b]).pod == "a"
    assert balancer.choose("k", []) is None
