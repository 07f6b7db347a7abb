"""NetworkPolicy defaults, validation and printing as upstream's (messages compared whole)."""

from control.kinds.networkpolicies import (
    NETWORKPOLICY, networkpolicy_cells, networkpolicy_defaults, validate_networkpolicy, validate_networkpolicy_update,
)


def _policy(spec, name="test-network-policy"):
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


EXAMPLE = {  # kubernetes.io's service/networking/networkpolicy.yaml
    "podSelector": {"matchLabels": {"role": "db"}},
    "policyTypes": ["Ingress", "Egress"],
    "ingress": [{"from": [{"ipBlock": {"cidr": "172.17.0.0/16", "except": ["172.17.1.0/24"]}},
                          {"namespaceSelector": {"matchLabels": {"project": "myproject"}}},
                          {"podSelector": {"matchLabels": {"role": "frontend"}}}],
                 "ports": [{"protocol": "TCP", "port": 6379}]}],
    "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}], "ports": [{"protocol": "TCP", "port": 5978}]}],
}


def test_the_documented_examples_are_valid():
    assert validate_networkpolicy(_policy(EXAMPLE)) == []
    assert validate_networkpolicy(_policy({"podSelector": {}, "policyTypes": ["Ingress"]})) == []
    assert validate_networkpolicy(_policy({"podSelector": {}, "egress": [{"ports": [
        {"port": 32000, "endPort": 32768}, {"port": "dns", "protocol": "UDP"}]}]})) == []


def test_defaults_fill_protocol_and_policy_types():
    ingress_only = _policy({"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]})
    networkpolicy_defaults(ingress_only)
    assert ingress_only["spec"]["policyTypes"] == ["Ingress"]
    assert ingress_only["spec"]["ingress"][0]["ports"][0]["protocol"] == "TCP"
    both = _policy({"podSelector": {}, "egress": [{}]})
    networkpolicy_defaults(both)
    assert both["spec"]["policyTypes"] == ["Ingress", "Egress"]
    kept = _policy({"podSelector": {}, "policyTypes": ["Egress"]})
    networkpolicy_defaults(kept)
    assert kept["spec"]["policyTypes"] == ["Egress"]


def test_ports_are_checked_as_upstream():
    def port(**fields):
        return _messages(validate_networkpolicy(_policy({"podSelector": {}, "ingress": [{"ports": [fields]}]})))
    assert port(port=70000) == ["spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, "
                                "inclusive"]
    assert port(port=0) == ["spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"]
    assert port(port=8080, endPort=80) == ["spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater "
                                           "than or equal to `port`"]
    assert port(port="http", endPort=90) == ["spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be "
                                             "specified when `port` is non-numeric"]
    assert port(endPort=90) == ["spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when "
                                "`port` is not specified"]
    assert port(port=80, endPort=70000) == ["spec.ingress[0].ports[0].endPort: Invalid value: 70000: must be "
                                            "between 1 and 65535, inclusive"]
    assert port(port=80, protocol="ICMP") == ['spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": '
                                              'supported values: "TCP", "UDP", "SCTP"']
    assert port(port="Not--Valid") == [
        'spec.ingress[0].ports[0].port: Invalid value: "Not--Valid": must contain only alpha-numeric characters '
        '(a-z, 0-9), and hyphens (-)',
        'spec.ingress[0].ports[0].port: Invalid value: "Not--Valid": must not contain consecutive hyphens']


def test_ip_blocks_and_peers_are_checked_as_upstream():
    def peer(**fields):
        return _messages(validate_networkpolicy(_policy({"podSelector": {}, "egress": [{"to": [fields]}]})))
    assert peer(ipBlock={"cidr": "10.0.0.0/33"}) == [
        'spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, '
        '(e.g. 10.9.8.0/24 or 2001:db8::/64)']
    assert peer(ipBlock={"cidr": "kitchen"}) == [
        'spec.egress[0].to[0].ipBlock.cidr: Invalid value: "kitchen": must be a valid CIDR value, '
        '(e.g. 10.9.8.0/24 or 2001:db8::/64)']
    assert peer(ipBlock={}) == ["spec.egress[0].to[0].ipBlock.cidr: Required value"]
    assert peer(ipBlock={"cidr": "172.17.0.0/16", "except": ["10.0.0.0/24", "172.17.0.0/16", "nope"]}) == [
        'spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "10.0.0.0/24": must be a strict subset of `cidr`',
        'spec.egress[0].to[0].ipBlock.except[1]: Invalid value: "172.17.0.0/16": must be a strict subset of `cidr`',
        'spec.egress[0].to[0].ipBlock.except[2]: Invalid value: "nope": must be a valid CIDR value, '
        '(e.g. 10.9.8.0/24 or 2001:db8::/64)']
    assert peer() == ["spec.egress[0].to[0]: Required value: must specify a peer"]
    assert peer(ipBlock={"cidr": "10.0.0.0/8"}, podSelector={}) == [
        "spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer"]
    assert peer(podSelector={"matchExpressions": [{"key": "role", "operator": "In"}]}) == [
        "spec.egress[0].to[0].podSelector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'"]


def test_policy_types_are_checked_as_upstream():
    assert _messages(validate_networkpolicy(_policy({"podSelector": {}, "policyTypes": ["Ingress", "Sideways"]}))) \
        == ['spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"']
    assert _messages(validate_networkpolicy(_policy({"podSelector": {}, "policyTypes": ["Ingress", "Egress",
                                                                                      "Ingress"]}))) == [
        'spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify '
        'more than two policyTypes']
    assert _messages(validate_networkpolicy(_policy({"podSelector": {"matchLabels": {"a b": "c"}}})))[0].startswith(
        'spec.podSelector.matchLabels: Invalid value: "a b"')


def test_an_update_keeps_the_cidrs_already_stored():
    old = _policy({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "legacy"}}]}]})
    new = _policy({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "legacy"}}]}, {"ports": [{"port": 80}]}]})
    assert validate_networkpolicy_update(new, old) == []
    worse = _policy({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "newer"}}]}]})
    assert _messages(validate_networkpolicy_update(worse, old))[0].startswith(
        'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "newer"')


def test_kubectl_get_shows_the_pod_selector():
    assert [c.name for c in NETWORKPOLICY.columns] == ["Name", "Pod-Selector", "Age"]
    policy = _policy(EXAMPLE)
    policy["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    assert networkpolicy_cells(policy, 0)[:2] == ["test-network-policy", "role=db"]
    assert networkpolicy_cells(_policy({"podSelector": {}}), 0)[:2] == ["test-network-policy", "<none>"]
    assert NETWORKPOLICY.short_names == ("netpol",)
