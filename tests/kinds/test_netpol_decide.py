"""The NetworkPolicy decision engine against the upstream netpol e2e's truth tables: namespaces
x, y, z with pods a, b, c each (label pod=<name>, namespace label ns=<name>), serving TCP 80
(named serve-80-tcp) and 81, and UDP 53."""

import pytest

from control.kinds.netpol_decide import Peer, PolicyIndex, Verdict, decide, pod_peer

NAMESPACES = ("x", "y", "z")
PODS = ("a", "b", "c")
PORTS = (("serve-80-tcp", 80, "TCP"), ("serve-81-tcp", 81, "TCP"), ("dns", 53, "UDP"))


def _pod(ns, name):
    index = NAMESPACES.index(ns) * 3 + PODS.index(name)
    return Peer(f"10.244.{index}.5", ns, name, {"pod": name}, PORTS)


ALL = [_pod(ns, p) for ns in NAMESPACES for p in PODS]


def _labels(ns):
    return {"ns": ns, "kubernetes.io/metadata.name": ns} if ns in NAMESPACES else None


def _policy(name, pod_selector=None, ns="x", **spec):
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"podSelector": pod_selector if pod_selector is not None else {}, **spec}}


def _table(index, port=80, protocol="TCP"):
    """{(from, to): allowed} for every pair of pods, as the e2e's reachability matrix."""
    return {(s.shown, d.shown): decide(index, s, d, port, protocol, namespace_labels=_labels).allowed
            for s in ALL for d in ALL}


def test_no_policy_allows_everything():
    assert all(_table(PolicyIndex()).values())
    assert decide(PolicyIndex(), ALL[0], ALL[1], 80, namespace_labels=_labels) == Verdict(True, "", ())


def test_default_deny_ingress_isolates_only_its_namespace():
    index = PolicyIndex([_policy("deny-all", policyTypes=["Ingress"])])
    table = _table(index)
    for (src, dst), allowed in table.items():
        assert allowed == (not dst.startswith("x/")), (src, dst)
    verdict = decide(index, _pod("y", "a"), _pod("x", "a"), 80, namespace_labels=_labels)
    assert verdict == Verdict(False, "ingress", ("x/deny-all",))


def test_default_deny_egress_and_its_dns_exception():
    deny = _policy("deny-egress", policyTypes=["Egress"])
    index = PolicyIndex([deny])
    assert decide(index, _pod("x", "a"), _pod("y", "a"), 80, namespace_labels=_labels) == \
        Verdict(False, "egress", ("x/deny-egress",))
    assert decide(index, _pod("y", "a"), _pod("x", "a"), 80, namespace_labels=_labels).allowed  # ingress open
    index.put(_policy("allow-dns", policyTypes=["Egress"], egress=[{"ports": [{"port": 53, "protocol": "UDP"}]}]))
    assert decide(index, _pod("x", "a"), _pod("z", "c"), 53, "UDP", namespace_labels=_labels) == \
        Verdict(True, "", ("x/allow-dns",))
    assert not decide(index, _pod("x", "a"), _pod("z", "c"), 53, "TCP", namespace_labels=_labels).allowed
    index.remove(deny)
    index.remove(_policy("allow-dns"))
    assert len(index) == 0 and decide(index, _pod("x", "a"), _pod("y", "a"), 80, namespace_labels=_labels).allowed


def test_allows_are_additive_and_name_who_allowed():
    index = PolicyIndex([_policy("deny-all", policyTypes=["Ingress"]),
                         _policy("allow-b", {"matchLabels": {"pod": "a"}},
                                 ingress=[{"from": [{"podSelector": {"matchLabels": {"pod": "b"}}}]}])])
    table = _table(index)
    assert table[("x/b", "x/a")] and not table[("x/c", "x/a")] and not table[("y/b", "x/a")]
    assert decide(index, _pod("x", "b"), _pod("x", "a"), 80, namespace_labels=_labels).policies == ("x/allow-b",)
    assert not table[("x/b", "x/c")]  # x/c is isolated by deny-all only


def test_pod_and_namespace_selectors_in_one_peer_are_anded_in_two_peers_ored():
    anded = _policy("and", {"matchLabels": {"pod": "a"}}, ingress=[{"from": [
        {"namespaceSelector": {"matchLabels": {"ns": "y"}}, "podSelector": {"matchLabels": {"pod": "b"}}}]}])
    ored = _policy("or", {"matchLabels": {"pod": "a"}}, ingress=[{"from": [
        {"namespaceSelector": {"matchLabels": {"ns": "y"}}}, {"podSelector": {"matchLabels": {"pod": "b"}}}]}])
    t_and, t_or = _table(PolicyIndex([anded])), _table(PolicyIndex([ored]))
    into = [s.shown for s in ALL]
    assert [s for s in into if t_and[(s, "x/a")]] == ["y/b"]
    assert [s for s in into if t_or[(s, "x/a")]] == ["x/b", "y/a", "y/b", "y/c"]
    everywhere = _policy("ns-all", {"matchLabels": {"pod": "a"}}, ingress=[{"from": [{"namespaceSelector": {}}]}])
    assert all(_table(PolicyIndex([everywhere]))[(s, "x/a")] for s in into)


def test_ip_blocks_with_except_match_pod_and_outside_addresses():
    block = _policy("block", {"matchLabels": {"pod": "a"}}, ingress=[{"from": [
        {"ipBlock": {"cidr": "10.244.0.0/16", "except": ["10.244.3.0/24"]}}]}])
    index = PolicyIndex([block])
    assert decide(index, _pod("x", "b"), _pod("x", "a"), 80, namespace_labels=_labels).allowed  # 10.244.1.5
    assert not decide(index, _pod("y", "a"), _pod("x", "a"), 80, namespace_labels=_labels).allowed  # 10.244.3.5
    host = Peer("192.168.0.2")
    assert not decide(index, host, _pod("x", "a"), 80, namespace_labels=_labels).allowed
    assert decide(index, Peer("10.244.200.1"), _pod("x", "a"), 80, namespace_labels=_labels).allowed
    # the host is matched by nothing but an ipBlock: a pod selector peer never lets it in
    pods_only = PolicyIndex([_policy("pods", ingress=[{"from": [{"podSelector": {}}]}])])
    assert not decide(pods_only, host, _pod("x", "a"), 80, namespace_labels=_labels).allowed
    assert decide(pods_only, _pod("x", "c"), _pod("x", "a"), 80, namespace_labels=_labels).allowed
    # egress to an outside address
    out = PolicyIndex([_policy("out", policyTypes=["Egress"], egress=[{"to": [{"ipBlock": {"cidr": "8.8.8.0/24"}}]}])])
    assert decide(out, _pod("x", "a"), Peer("8.8.8.8"), 53, "UDP", namespace_labels=_labels).allowed
    assert not decide(out, _pod("x", "a"), Peer("1.1.1.1"), 53, "UDP", namespace_labels=_labels).allowed


@pytest.mark.parametrize("ports,allowed_80,allowed_81", [
    ([{"port": 80}], True, False),
    ([{"port": "serve-81-tcp"}], False, True),
    ([{"port": 79, "endPort": 81}], True, True),
    ([{"port": 81, "endPort": 90}], False, True),
    ([{"protocol": "TCP"}], True, True),
    ([{"port": 80, "protocol": "UDP"}], False, False),
    ([{"port": "serve-80-udp"}], False, False),
])
def test_ports_numbers_ranges_names_and_protocols(ports, allowed_80, allowed_81):
    index = PolicyIndex([_policy("ports", ingress=[{"ports": ports}])])
    src, dst = _pod("y", "a"), _pod("x", "a")
    assert decide(index, src, dst, 80, namespace_labels=_labels).allowed is allowed_80
    assert decide(index, src, dst, 81, namespace_labels=_labels).allowed is allowed_81


def test_named_egress_ports_resolve_at_the_destination():
    index = PolicyIndex([_policy("named-out", policyTypes=["Egress"], egress=[{"ports": [{"port": "serve-81-tcp"}]}])])
    assert decide(index, _pod("x", "a"), _pod("y", "a"), 81, namespace_labels=_labels).allowed
    assert not decide(index, _pod("x", "a"), _pod("y", "a"), 80, namespace_labels=_labels).allowed
    assert not decide(index, _pod("x", "a"), Peer("8.8.8.8"), 81, namespace_labels=_labels).allowed


def test_egress_drops_first_and_both_directions_must_allow():
    index = PolicyIndex([_policy("deny-out", ns="x", policyTypes=["Egress"]), _policy("deny-in", ns="y")])
    assert decide(index, _pod("x", "a"), _pod("y", "a"), 80, namespace_labels=_labels) == \
        Verdict(False, "egress", ("x/deny-out",))
    index.put(_policy("deny-out", ns="x", policyTypes=["Egress"], egress=[{}]))  # now allows everything out
    assert decide(index, _pod("x", "a"), _pod("y", "a"), 80, namespace_labels=_labels) == \
        Verdict(False, "ingress", ("y/deny-in",))
    index.put(_policy("allow-x", ns="y", ingress=[{"from": [{"namespaceSelector": {"matchLabels": {"ns": "x"}}}]}]))
    assert decide(index, _pod("x", "a"), _pod("y", "a"), 80, namespace_labels=_labels) == \
        Verdict(True, "", ("x/deny-out", "y/allow-x"))


def test_an_unknown_namespace_matches_no_namespace_selector():
    index = PolicyIndex([_policy("any-ns", ingress=[{"from": [{"namespaceSelector": {}}]}])])
    stranger = Peer("10.244.99.9", "gone", "p", {})
    assert not decide(index, stranger, _pod("x", "a"), 80, namespace_labels=_labels).allowed


def test_pod_peer_reads_a_pod_object():
    peer = pod_peer({"metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
                     "spec": {"containers": [{"ports": [{"name": "http", "containerPort": 8080}]}]},
                     "status": {"podIP": "10.244.1.7"}})
    assert peer == Peer("10.244.1.7", "default", "web", {"app": "web"}, (("http", 8080, "TCP"),))
    assert peer.shown == "default/web" and Peer("1.2.3.4").shown == "1.2.3.4"
