"""The rbac kinds' validation (upstream's messages) and tables, and the aggregation computation."""

from __future__ import annotations

from control.kinds.rbac import (
    CLUSTERROLE, CLUSTERROLEBINDING, ROLE, ROLEBINDING, aggregated_rules, binding_defaults, selects,
)

REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}


def messages(causes):
    return [(c["field"], c["message"]) for c in causes]


def test_a_rule_needs_verbs_groups_and_resources():
    assert messages(ROLE.validate({"rules": [{"resources": ["pods"]}]})) == [
        ("rules[0].verbs", "Required value: verbs must contain at least one value"),
        ("rules[0].apiGroups", "Required value: resource rules must supply at least one api group")]
    assert ROLE.validate({"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}) == []


def test_non_resource_urls_only_in_cluster_roles_and_never_with_resources():
    rule = {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}
    assert CLUSTERROLE.validate({"rules": [rule]}) == []
    assert messages(ROLE.validate({"rules": [rule]})) == [
        ("rules[0].nonResourceURLs", 'Invalid value: []string{"/healthz"}: namespaced rules cannot apply to '
                                     "non-resource URLs")]
    mixed = {**rule, "resources": ["pods"]}
    assert "both regular resources and non-resource URLs" in CLUSTERROLE.validate({"rules": [mixed]})[0]["message"]


def test_bindings_name_a_role_of_the_right_kind_and_keep_it():
    binding = {"roleRef": {**REF, "kind": "Role"}, "subjects": [{"kind": "User", "name": "alice"}]}
    binding_defaults(binding)
    assert binding["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
    assert ROLEBINDING.validate(binding) == []
    assert messages(CLUSTERROLEBINDING.validate(binding)) == [
        ("roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"')]
    robot = {"roleRef": REF, "subjects": [{"kind": "ServiceAccount", "name": "robot"}]}
    assert messages(CLUSTERROLEBINDING.validate(robot)) == [("subjects[0].namespace", "Required value")]
    assert ROLEBINDING.validate(robot) == []
    assert messages(ROLEBINDING.validate({"subjects": []})) == [("roleRef", "Required value")]
    changed = {"roleRef": {**REF, "name": "edit"}}
    assert messages(ROLEBINDING.validate_update(changed, {"roleRef": REF}))[0][1].endswith("cannot change roleRef")
    assert ROLEBINDING.validate_update({"roleRef": REF}, {"roleRef": REF}) == []


def test_the_tables_read_like_kubectls():
    binding = {"metadata": {"name": "b", "creationTimestamp": "2026-01-01T00:00:00Z"}, "roleRef": REF}
    assert ROLEBINDING.cells(binding, 0)[:2] == ["b", "ClusterRole/view"]
    assert [c.name for c in ROLE.columns] == ["Name", "Created At"]


def test_selectors_and_aggregation():
    assert selects({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"})
    assert not selects({"matchLabels": {"a": "1"}}, {"a": "2"})
    assert selects({}, {"a": "1"})  # empty: every role, as upstream's LabelSelectorAsSelector
    assert selects({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["2"]}]}, {"a": "1"})
    assert not selects({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {})
    roles = [{"metadata": {"name": "x", "labels": {"a": "1"}}, "rules": [{"verbs": ["get"]}]},
             {"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "1"}}]}}]
    assert aggregated_rules(roles[1], roles) == [{"verbs": ["get"]}]


def test_an_aggregated_role_may_hold_the_rules_its_controller_wrote():
    from control.kinds.rbac import validate_cluster_role

    selected = {"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "1"}}]}}
    written = {**selected, "rules": [{"apiGroups": ["gateway.networking.k8s.io"], "resources": ["gateways"],
                                      "verbs": ["get"]}]}
    assert validate_cluster_role(written) == []  # the clusterrole-aggregation controller's PUT
    [empty] = validate_cluster_role({"aggregationRule": {"clusterRoleSelectors": []}})
    assert empty["field"] == "aggregationRule.clusterRoleSelectors" and "at least one clusterRoleSelector" in empty["message"]
