"""NetworkPolicies as the Services panel draws them (dashboard.policies): selectors as kubectl
writes them, upstream's default policy types, every kind of peer and port, nothing raised on a
partial object."""

from __future__ import annotations

from dashboard import policies, presenters

DENY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "kitchen-staff-only", "namespace": "default"},
        "spec": {"podSelector": {"matchLabels": {"app": "kitchen"}}, "policyTypes": ["Ingress"]}}

ALLOW = {"metadata": {"name": "waiters", "namespace": "shop"},
         "spec": {"podSelector": {"matchLabels": {"app": "kitchen"},
                                  "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                                                       {"key": "legacy", "operator": "DoesNotExist"},
                                                       {"key": "team", "operator": "Exists"}]},
                  "ingress": [{"from": [{"podSelector": {"matchLabels": {"role": "waiter"}}},
                                        {"namespaceSelector": {}, "podSelector": {"matchLabels": {"x": "y"}}},
                                        {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                               "ports": [{"port": 80}, {"protocol": "UDP", "port": 53, "endPort": 60},
                                         {"port": "http"}, {"protocol": "SCTP"}]},
                              {}],
                  "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"team": "ops"}}}]}]}}


def test_a_default_deny_names_its_pods_and_its_one_type():
    assert policies.networkpolicy_vm(DENY) == {"key": "default/kitchen-staff-only", "ns": "default",
                                               "name": "kitchen-staff-only", "podSelector": "app=kitchen",
                                               "types": ["Ingress"], "ingress": [], "egress": []}


def test_rules_peers_and_ports_as_kubectl_describes_them():
    vm = policies.networkpolicy_vm(ALLOW)
    assert vm["podSelector"] == "app=kitchen,tier in (a,b),!legacy,team"
    assert vm["types"] == ["Ingress", "Egress"]  # upstream's default: egress rules make it an Egress policy too
    first, anyone = vm["ingress"]
    assert first["peers"] == [{"pods": "role=waiter", "namespaces": None}, {"pods": "x=y", "namespaces": ""},
                              {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}]
    assert first["ports"] == ["80/TCP", "53-60/UDP", "http/TCP", "all/SCTP"]
    assert anyone == {"peers": [], "ports": []}
    assert vm["egress"] == [{"peers": [{"pods": None, "namespaces": "team=ops"}], "ports": []}]


def test_types_default_to_ingress_and_a_broken_object_is_drawn_empty():
    assert policies.policy_types({}) == ["Ingress"]
    vm = policies.networkpolicy_vm({"metadata": {"name": "x", "namespace": "n"}, "spec": {"ingress": "junk",
                                                                                          "podSelector": []}})
    assert vm["podSelector"] == "" and vm["ingress"] == [] and vm["types"] == ["Ingress"]


def test_the_page_gets_networkpolicies_in_its_snapshot_and_changes():
    assert presenters.present("networkpolicies", DENY)["podSelector"] == "app=kitchen"
    assert presenters.snapshot({"revision": 3, "objects": {}})["objects"]["networkpolicies"] == []  # kind not served yet
    item = presenters.change_item({"revision": 9, "type": "ADDED", "resource": "networkpolicies",
                                   "group": "networking.k8s.io", "namespace": "default", "name": "kitchen-staff-only",
                                   "object": DENY})
    assert item["resource"] == "networkpolicies" and item["kind"] == "NetworkPolicy" and item["vm"]["types"] == ["Ingress"]
