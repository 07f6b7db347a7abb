"""RBAC evaluation with upstream's rule semantics (the cases of rbac_test.go and
validation/rule_test.go, in spirit) and the apiserver's Forbidden wording."""

from __future__ import annotations

import pytest

from control.auth.rbac import (
    Attributes, Policy, User, compact, covers, escalation_message, forbidden_message, missing_rules, rule_allows,
)

ALICE = User("alice", "", ("dev", "system:authenticated"))


def res(verb: str, resource: str, *, group: str = "", ns: str = "", name: str = "", sub: str = "") -> Attributes:
    return Attributes(verb, True, group, resource, sub, ns, name)


def url(verb: str, path: str) -> Attributes:
    return Attributes(verb, False, path=path)


@pytest.mark.parametrize("rule, attrs, allowed", [
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, res("get", "pods"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, res("list", "pods"), False),
    ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, res("deletecollection", "jobs", group="batch"), True),
    ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}, res("get", "pods"), False),
    ({"verbs": ["get"], "apiGroups": [], "resources": ["pods"]}, res("get", "pods"), False),
    # subresources are their own resources: pods does not grant pods/log, nor the other way round
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, res("get", "pods", sub="log"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}, res("get", "pods", sub="log"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}, res("get", "pods"), False),
    ({"verbs": ["update"], "apiGroups": ["apps"], "resources": ["*/scale"]},
     res("update", "deployments", group="apps", sub="scale"), True),
    ({"verbs": ["update"], "apiGroups": ["apps"], "resources": ["*/scale"]},
     res("update", "deployments", group="apps"), False),
    ({"verbs": ["create"], "apiGroups": [""], "resources": ["pods/exec"]}, res("create", "pods", sub="exec"), True),
    # resourceNames: only those names (and never a list, which has no name)
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]},
     res("get", "configmaps", name="a"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]},
     res("get", "configmaps", name="b"), False),
    ({"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]},
     res("list", "configmaps"), False),
    # non-resource URLs: exact, prefix with a trailing *, and never for a resource request
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("get", "/healthz"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("get", "/healthz/etcd"), False),
    ({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}, url("get", "/apis/apps/v1"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, url("get", "/anything"), True),
    ({"verbs": ["get"], "nonResourceURLs": ["*"]}, res("get", "pods"), False),
    ({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]}, url("get", "/healthz"), False),
])
def test_rule_allows(rule, attrs, allowed):
    assert rule_allows(attrs, rule) is allowed


def _role(kind: str, name: str, rules: list, ns: str = "") -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"kind": kind, "metadata": meta, "rules": rules}


def _binding(kind: str, name: str, role_kind: str, role: str, subjects: list, ns: str = "") -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"kind": kind, "metadata": meta, "roleRef": {"kind": role_kind, "name": role,
                                                       "apiGroup": "rbac.authorization.k8s.io"}, "subjects": subjects}


READ_PODS = [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]}]


@pytest.fixture
def policy() -> Policy:
    return Policy.of(
        [_role("ClusterRole", "pod-reader", READ_PODS)],
        [_role("Role", "cm-writer", [{"verbs": ["create"], "apiGroups": [""], "resources": ["configmaps"]}], "alice")],
        [_binding("ClusterRoleBinding", "readers", "ClusterRole", "pod-reader", [{"kind": "Group", "name": "auditors"}])],
        [_binding("RoleBinding", "a1", "ClusterRole", "pod-reader", [{"kind": "User", "name": "alice"}], "alice"),
         _binding("RoleBinding", "a2", "Role", "cm-writer", [{"kind": "User", "name": "alice"}], "alice"),
         _binding("RoleBinding", "sa", "ClusterRole", "pod-reader", [{"kind": "ServiceAccount", "name": "robot"}],
                  "alice"),
         _binding("RoleBinding", "gone", "ClusterRole", "no-such-role", [{"kind": "User", "name": "alice"}], "alice")],
    )


def test_a_role_binding_grants_in_its_namespace_only(policy):
    assert policy.allowed(ALICE, res("list", "pods", ns="alice"))
    assert not policy.allowed(ALICE, res("list", "pods", ns="bob"))
    assert not policy.allowed(ALICE, res("list", "pods"))  # a cluster-wide list needs cluster-wide permission
    assert policy.allowed(ALICE, res("create", "configmaps", ns="alice"))
    assert not policy.allowed(ALICE, res("delete", "configmaps", ns="alice"))


def test_subjects_match_users_groups_and_service_accounts(policy):
    auditor = User("carol", "", ("auditors",))
    assert policy.allowed(auditor, res("watch", "pods"))
    assert policy.allowed(auditor, res("get", "pods", ns="bob", name="x"))
    robot = User("system:serviceaccount:alice:robot", "", ("system:serviceaccounts",))
    assert policy.allowed(robot, res("get", "pods", ns="alice", name="x"))
    other = User("system:serviceaccount:bob:robot")
    assert not policy.allowed(other, res("get", "pods", ns="alice", name="x"))
    assert not policy.allowed(User("alicia"), res("list", "pods", ns="alice"))


def test_system_masters_may_do_anything():
    assert Policy().allowed(User("root", "", ("system:masters",)), res("escalate", "clusterroles",
                                                                     group="rbac.authorization.k8s.io"))


def test_forbidden_messages_are_the_apiservers():
    assert forbidden_message(User("alice"), res("list", "pods", ns="bob")) == \
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "bob"'
    assert forbidden_message(User("alice"), res("watch", "deployments", group="apps")) == \
        ('deployments.apps is forbidden: User "alice" cannot watch resource "deployments" in API group "apps" '
         "at the cluster scope")
    assert forbidden_message(User("alice"), res("get", "pods", ns="bob", name="web", sub="log")) == \
        'pods "web" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "bob"'
    assert forbidden_message(User("system:anonymous"), url("get", "/api")) == \
        'forbidden: User "system:anonymous" cannot get path "/api"'


def test_covers_breaks_rules_down_as_upstream():
    owner = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]},
             {"verbs": ["*"], "apiGroups": ["apps"], "resources": ["*/scale"]},
             {"verbs": ["get"], "nonResourceURLs": ["/api/*"]}]
    assert covers(owner, [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["x"]}])
    assert covers(owner, [{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["deployments/scale"]}])
    assert covers(owner, [{"verbs": ["get"], "nonResourceURLs": ["/api/v1"]}])
    missing = missing_rules(owner, [{"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods"]}])
    assert missing == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]}]
    named = [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}]
    assert not covers(named, [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}])


def test_the_escalation_message_is_upstreams():
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]}
    assert compact(rule) == '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}'
    assert escalation_message(User("alice", "", ("dev", "system:authenticated")), [rule]) == (
        'user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not '
        'currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}')
