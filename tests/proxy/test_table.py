"""kube-proxy's table as values: which endpoints a Service gets, how versions move, the iptables
lines, and the balancer's choice."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from control.proxy.table import Balancer, Endpoint, Table, chain_hash, iptables_lines, iptables_save, service_rule


def service(name="web", ip="10.96.0.12", ports=None, **spec):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
            "spec": {"type": "ClusterIP", "clusterIP": ip,
                     "ports": ports or [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}], **spec}}


def endpoint(ip, pod, node="node-1", ready=True):
    return {"addresses": [ip], "conditions": {"ready": ready, "serving": ready, "terminating": False},
            "nodeName": node, "targetRef": {"kind": "Pod", "namespace": "default", "name": pod}}


def endpoints(rv="7", ready=(("10.244.1.2", "web-a"), ("10.244.2.2", "web-b")), not_ready=(), ports=None, name="web"):
    """The EndpointSlice the endpointslice controller keeps for Service `name`."""
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
            "metadata": {"name": f"{name}-abcde", "namespace": "default", "resourceVersion": rv,
                         "labels": {"kubernetes.io/service-name": name}},
            "endpoints": [endpoint(ip, pod) for ip, pod in ready] + [endpoint(ip, pod, ready=False)
                                                                    for ip, pod in not_ready],
            "ports": ports or [{"name": "http", "port": 8080, "protocol": "TCP"}]}


def test_a_rule_holds_only_ready_addresses_and_the_endpoints_version():
    rule = service_rule(service(), [endpoints(not_ready=[("10.244.3.2", "web-c")])])
    assert [e.address for e in rule.endpoints] == ["10.244.1.2:8080", "10.244.2.2:8080"]
    assert rule.endpoints_rv == "7" and rule.key == "default/web" and rule.cluster_ip == "10.96.0.12"
    assert rule.to_dict()["endpoints"][0] == {"ip": "10.244.1.2", "port": 8080, "pod": "web-a", "node": "node-1"}
    assert rule.to_dict()["ports"] == [{"name": "http", "port": 80, "protocol": "TCP", "nodePort": None, "targetPort": 8080}]
    assert service_rule(service(), []).endpoints == () and service_rule(service(), []).endpoints_rv == ""


def test_multi_port_services_match_endpoint_ports_by_name():
    ports = [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "admin", "port": 9000, "targetPort": 9090}]
    eps = endpoints(ports=[{"name": "http", "port": 8080}, {"name": "admin", "port": 9090}])
    rule = service_rule(service(ports=ports), [eps])
    assert {e.port for e in rule.endpoints_for(rule.port(9000))} == {9090}
    assert {e.port for e in rule.endpoints_for(rule.port(None))} == {8080}, "no port asked: the first one"
    assert rule.port(1234) is None


def test_external_ips_load_balancer_ingress_and_external_name():
    lb = service(type="LoadBalancer", externalIPs=["192.0.2.9"])
    lb["status"] = {"loadBalancer": {"ingress": [{"ip": "172.18.255.1"}]}}
    assert service_rule(lb, [endpoints()]).external_ips == ("192.0.2.9", "172.18.255.1")
    external = service_rule(service(ip=None, type="ExternalName", externalName="example.com"), [endpoints()])
    assert external.endpoints == () and external.cluster_ip == ""
    assert iptables_lines([external], round_robin=True) == ["-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS"]


def test_the_table_bumps_its_version_only_on_change_and_never_changes_in_place():
    empty = Table()
    one = empty.with_rule("default/web", service_rule(service(), [endpoints()]))
    assert (empty.version, one.version, empty.rules) == (0, 1, {})
    assert one.with_rule("default/web", service_rule(service(), [endpoints()])) is one, "same rule, same table"
    two = one.with_rule("default/web", service_rule(service(), [endpoints(rv="8", ready=[("10.244.1.2", "web-a")])]))
    assert two.version == 2 and len(one.rules["default/web"].endpoints) == 2, "the old table is untouched"
    assert two.rule_for_ip("10.96.0.12").endpoints_rv == "8" and one.rule_for_ip("10.96.0.12").endpoints_rv == "7"
    gone = two.with_rule("default/web", None)
    assert gone.version == 3 and gone.rules == {} and gone.rule_for_ip("10.96.0.12") is None
    assert gone.with_rule("default/nothing", None) is gone


def test_iptables_lines_look_like_kube_proxy_in_iptables_mode():
    svc = service(type="NodePort", ports=[{"name": "http", "port": 80, "targetPort": 8080, "nodePort": 30080}])
    rule = service_rule(svc, [endpoints()])
    svc_chain = f"KUBE-SVC-{chain_hash('default/web:http', 'TCP')}"
    lines = iptables_lines([rule], round_robin=False)
    assert lines[0] == f"-A KUBE-SERVICES -d 10.96.0.12/32 -p tcp -m tcp --dport 80 -j {svc_chain}"
    assert f"-A KUBE-NODEPORTS -p tcp -m tcp --dport 30080 -j {svc_chain}" in lines
    assert f"-A {svc_chain} -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-" in "\n".join(lines)
    assert any(line.endswith("-j DNAT --to-destination 10.244.2.2:8080") for line in lines)
    robin = iptables_lines([rule], round_robin=True)
    assert any("-m statistic --mode nth --every 2 --packet 0" in line for line in robin)
    assert len(svc_chain) == len("KUBE-SVC-") + 16
    empty = iptables_lines([service_rule(service(), [])], round_robin=False)
    assert empty[-1] == "-A KUBE-SERVICES -d 10.96.0.12/32 -p tcp -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable"
    text = iptables_save(lines + empty)
    assert text.startswith("*filter\n") and "\n*nat\n" in text and f":{svc_chain} - [0:0]" in text and text.endswith("COMMIT\n")


def test_rules_as_json():
    table = Table().with_rule("default/web", service_rule(service(), [endpoints()]))
    shown = table.to_dict(node="node-1", balance="random")
    assert (shown["node"], shown["balance"], shown["version"]) == ("node-1", "random", 1)
    assert shown["services"][0]["service"] == "default/web" and shown["services"][0]["endpointsResourceVersion"] == "7"
    assert table.to_dict(node="n", balance="random", service="default/other")["services"] == []


def test_round_robin_takes_turns_and_random_spreads():
    eps = [Endpoint(f"10.244.1.{i}", 80, f"p{i}", "node-1") for i in range(3)]
    robin = Balancer("round-robin")
    assert [robin.choose("svc", eps).pod for _ in range(7)] == ["p0", "p1", "p2", "p0", "p1", "p2", "p0"]
    assert robin.choose("svc", eps[:1]).pod == "p0" and robin.choose("svc", []) is None
    spread = Balancer("random", random.Random(3))
    counts = Counter(spread.choose("svc", eps).pod for _ in range(3000))
    assert set(counts) == {"p0", "p1", "p2"} and min(counts.values()) > 800
    with pytest.raises(ValueError):
        Balancer("least-connections")


def test_rules_are_grouped_by_chain_and_every_chain_is_declared():
    node_port = [{"name": "http", "port": 80, "targetPort": 8080, "nodePort": 30080}]
    rules = [service_rule(service(name=n, ip=ip, type="NodePort", ports=node_port), [endpoints(name=n)])
             for n, ip in (("web", "10.96.0.12"), ("api", "10.96.0.13"))]
    lines = iptables_lines(rules, round_robin=False)
    chains = [line.split(" ")[1] for line in lines]
    assert chains == sorted(chains, key=chains.index), "each chain's rules are together"
    text = iptables_save(lines)
    for chain in {c for line in lines for c in line.split() if c.startswith("KUBE-")}:
        assert f":{chain} - [0:0]" in text, chain


def test_slices_join_skip_not_ready_and_terminating_and_fqdn_and_show_the_newest_version():
    first = endpoints(rv="9", ready=[("10.244.2.2", "web-b")], not_ready=[("10.244.3.2", "web-c")])
    second = endpoints(rv="10", ready=[("10.244.1.2", "web-a"), ("10.244.2.2", "web-b")])
    second["metadata"]["name"] = "web-fghij"
    unset = endpoints(rv="8", ready=[("10.244.4.2", "web-d")])
    del unset["endpoints"][0]["conditions"]["ready"]  # unset ready counts as ready, as kube-proxy reads it
    fqdn = {**endpoints(rv="11"), "addressType": "FQDN"}
    rule = service_rule(service(), [first, second, unset, fqdn])
    assert [e.pod for e in rule.endpoints] == ["web-a", "web-b", "web-d"]
    assert rule.endpoints_rv == "11"
