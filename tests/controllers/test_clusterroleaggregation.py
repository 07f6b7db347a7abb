"""The clusterrole-aggregation controller's reconcile against a fake hub."""

from __future__ import annotations

from control.clock import FakeClock
from control.controllers.clusterroleaggregation import CLUSTERROLES, ClusterRoleAggregationController

from .fakes import START, FakeClient, fill, informers, metadata, observe, run

AGG = "rbac.authorization.k8s.io/aggregate-to-mine"


def role(name: str, rules: list, labels: dict | None = None, selects: str | None = None) -> dict:
    obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": metadata(name, None, labels=labels), "rules": rules}
    if selects:
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {selects: "true"}}]}
    return obj


def setup(*objs):
    client, shared = FakeClient(), informers(FakeClock(START))
    roles = shared.get(CLUSTERROLES)
    controller = ClusterRoleAggregationController(client, roles, clock=FakeClock(START))
    fill(roles, *objs)
    return controller, client


GET = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
LIST = {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}


def test_the_selected_roles_rules_are_written_once():
    controller, client = setup(role("mine", [], selects=AGG), role("b", [LIST], {AGG: "true"}),
                               role("a", [GET], {AGG: "true"}), role("other", [{"verbs": ["*"]}]))
    run(controller.reconcile("mine"))
    [written] = client.of("replace", "clusterroles")
    assert written.body["rules"] == [GET, LIST]  # by role name, the unselected one left out
    fill(controller.roles, written.body)
    run(controller.reconcile("mine"))
    assert len(client.of("replace", "clusterroles")) == 1  # level-triggered: nothing more to do


def test_a_label_change_queues_the_aggregated_roles_and_plain_roles_are_left_alone():
    controller, client = setup(role("mine", [], selects=AGG), role("a", [GET]))
    observe(controller.roles, role("a", [GET], {AGG: "true"}))
    assert len(controller.queue) == 1
    run(controller.reconcile("a"))
    run(controller.reconcile("gone"))
    assert client.summary() == []
