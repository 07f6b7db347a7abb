"""The bootstrap policy: upstream's default roles, aggregation, and what each identity may do."""

from __future__ import annotations

from control.auth import policy
from control.auth.rbac import Attributes, Policy, User

AUTH = "system:authenticated"


def bootstrap() -> Policy:
    return Policy.of(policy.cluster_roles(), policy.namespace_roles(), policy.cluster_role_bindings(),
                     policy.namespace_role_bindings())


def res(verb, resource, group="", ns="", name="", sub=""):
    return Attributes(verb, True, group, resource, sub, ns, name)


def test_the_default_roles_exist_with_aggregation_labels():
    roles = {r["metadata"]["name"]: r for r in policy.cluster_roles()}
    for name in ("cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
                 "system:public-info-viewer", "system:kube-controller-manager", "system:kube-scheduler",
                 "system:node", "system:node-proxier"):
        assert name in roles
    assert roles["view"]["metadata"]["labels"][policy.AGGREGATE + "edit"] == "true"
    assert roles["edit"]["metadata"]["labels"][policy.AGGREGATE + "admin"] == "true"
    assert roles["admin"]["aggregationRule"]["clusterRoleSelectors"] == [
        {"matchLabels": {policy.AGGREGATE + "admin": "true"}}]


def test_aggregation_chains_view_into_edit_into_admin():
    roles = {r["metadata"]["name"]: r for r in policy.cluster_roles()}
    view_rule = roles["system:aggregate-to-view"]["rules"][0]
    assert view_rule in roles["view"]["rules"] and view_rule in roles["edit"]["rules"]
    assert view_rule in roles["admin"]["rules"]
    assert roles["system:aggregate-to-admin"]["rules"][1] in roles["admin"]["rules"]
    assert roles["system:aggregate-to-admin"]["rules"][1] not in roles["edit"]["rules"]


def test_aggregated_rules_follow_the_selector():
    a = {"metadata": {"name": "a", "labels": {"x": "1"}}, "rules": [{"verbs": ["get"]}]}
    b = {"metadata": {"name": "b", "labels": {"x": "2"}}, "rules": [{"verbs": ["list"]}]}
    agg = {"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [
        {"matchExpressions": [{"key": "x", "operator": "In", "values": ["1"]}]}]}, "rules": []}
    assert policy.aggregated_rules(agg, [a, b, agg]) == [{"verbs": ["get"]}]


def test_anonymous_sees_only_public_info():
    anonymous = User("system:anonymous", "", ("system:unauthenticated",))
    p = bootstrap()
    for path in ("/healthz", "/livez", "/readyz", "/version"):
        assert p.allowed(anonymous, Attributes("get", False, path=path))
    assert not p.allowed(anonymous, Attributes("get", False, path="/api"))
    assert not p.allowed(anonymous, res("list", "pods"))


def test_authenticated_users_discover_and_ask_about_themselves():
    alice = User("alice", "", (AUTH,))
    p = bootstrap()
    assert p.allowed(alice, Attributes("get", False, path="/apis/apps/v1"))
    assert p.allowed(alice, res("create", "selfsubjectaccessreviews", "authorization.k8s.io"))
    assert p.allowed(alice, res("create", "selfsubjectreviews", "authentication.k8s.io"))
    assert not p.allowed(alice, res("list", "pods", ns="default"))


def test_spokes_may_do_what_their_counterparts_do_and_no_more():
    p = bootstrap()
    scheduler = User("system:kube-scheduler", "", (AUTH,))
    assert p.allowed(scheduler, res("create", "pods", sub="binding", ns="a", name="p"))
    assert not p.allowed(scheduler, res("delete", "nodes", name="n"))
    node = User("system:node:n1", "", ("system:nodes", AUTH))
    assert p.allowed(node, res("update", "pods", sub="status", ns="a", name="p"))
    assert not p.allowed(node, res("update", "deployments", "apps", ns="a", name="d"))
    proxy = User("system:kube-proxy", "", (AUTH,))
    assert p.allowed(proxy, res("watch", "endpoints")) and not p.allowed(proxy, res("create", "pods", ns="a"))
    manager = User("system:kube-controller-manager", "", (AUTH,))
    assert p.allowed(manager, res("create", "pods", ns="a"))
    assert not p.allowed(manager, res("impersonate", "users", name="x"))


def test_every_logged_in_user_may_read_which_spokes_run_and_nothing_else_in_kube_system():
    """The dashboard draws the spokes for every page from `kube-system/kubekitchen-spokes`."""
    alice, rules = User("alice", "", (AUTH,)), bootstrap()
    for verb in ("get", "list", "watch"):
        assert rules.allowed(alice, res(verb, "configmaps", ns="kube-system", name="kubekitchen-spokes"))
    assert not rules.allowed(alice, res("list", "configmaps", ns="kube-system"))  # no name: every ConfigMap
    assert not rules.allowed(alice, res("get", "configmaps", ns="kube-system", name="coredns"))
    assert not rules.allowed(alice, res("get", "configmaps", ns="alice-2", name="kubekitchen-spokes"))
    assert not rules.allowed(alice, res("patch", "configmaps", ns="kube-system", name="kubekitchen-spokes"))
    anonymous = User("system:anonymous", "", ("system:unauthenticated",))
    assert not rules.allowed(anonymous, res("get", "configmaps", ns="kube-system", name="kubekitchen-spokes"))


def test_a_shell_in_a_pod_reaches_dns_and_traffic_as_its_kubelet_and_no_one_else_does():
    p = bootstrap()
    node = User("system:node:n1", "", ("system:nodes", AUTH))
    alice = User("alice", "", (AUTH,))
    assert p.allowed(node, Attributes("get", False, path="/kubekitchen/resolve"))
    assert p.allowed(node, Attributes("post", False, path="/kubekitchen/traffic"))
    assert not p.allowed(node, Attributes("get", False, path="/kubekitchen/proxyrules"))
    assert not p.allowed(alice, Attributes("post", False, path="/kubekitchen/traffic"))
