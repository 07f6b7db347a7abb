"""What a lesson step needs of RBAC: an apply's objects (created where they go, a cluster-scoped
kind at the cluster), a delete's list and delete, each button by its request, a kubectl-only
cluster command (drain, cordon); a kind the hub does not serve asks nothing."""

from __future__ import annotations

import asyncio

from control.client.resources import Resource
from dashboard import lessons
from dashboard.access import PATCH_NODES, SET_SPOKES, Right
from dashboard.lesson_rights import action_rights, command_rights
from dashboard.lesson_scope import Scope, scoped_action
from dashboard.lessons import Action

ATTENDEE = Scope(namespace="alice", own_namespaces=False, kubeconfig_namespace="alice")
SERVED = {("v1", "Namespace"): Resource("", "v1", "namespaces", "Namespace", namespaced=False),
          ("v1", "ResourceQuota"): Resource("", "v1", "resourcequotas", "ResourceQuota"),
          ("v1", "Pod"): Resource("", "v1", "pods", "Pod"),
          ("apps/v1", "Deployment"): Resource("apps", "v1", "deployments", "Deployment")}


async def resolve(client, api_version: str, kind: str) -> Resource | None:
    return SERVED.get((api_version, kind))


def rights(action: Action, scope: Scope = ATTENDEE) -> list[Right]:
    return asyncio.run(action_rights(None, scoped_action(action, scope), scope, resolve))


def test_an_apply_needs_to_create_each_object_where_it_goes():
    assert rights(Action(apply="pasta.yaml")) == [Right("create", "deployments", "apps", "alice")]
    assert rights(Action(apply="diner-quota.yaml")) == [Right("create", "resourcequotas", "", "alice")]
    assert rights(Action(apply="diner-quota.yaml"), Scope()) == [Right("create", "namespaces"),
                                                                  Right("create", "resourcequotas", "", "diner")]
    assert rights(Action(apply="trainee.yaml")) == []  # ServiceAccount: not served by this fake hub


def test_a_delete_and_the_buttons_need_what_their_requests_do():
    assert rights(Action(delete=("Pod", "v1", "app=pasta"), namespace="default")) == [
        Right("list", "pods", "", "alice"), Right("delete", "pods", "", "alice")]
    assert rights(Action(do="spoke", form=(("spoke", "scheduler"), ("state", "stopped")))) == [SET_SPOKES]
    assert rights(Action(do="uncordon", form=(("name", "node-1"),))) == [PATCH_NODES]
    scale = Action(do="scale", form=(("delta", "2"), ("name", "pasta"), ("namespace", "default")))
    assert rights(scale) == [Right("patch", "deployments", "apps", "alice", subresource="scale")]


def test_a_cluster_command_needs_the_nodes_and_a_namespaced_one_nothing():
    assert command_rights("kubectl drain node-1 --ignore-daemonsets --delete-emptydir-data") == [PATCH_NODES]
    assert command_rights("kubectl uncordon node-1") == [PATCH_NODES]
    assert command_rights("kubectl get nodes -w") == [] and command_rights("") == []
    assert command_rights("kubectl get pods -l app=drain") == []


def test_every_shipped_step_with_a_stop_or_a_cordon_needs_cluster_rights():
    for lesson in lessons.load_all().lessons:
        for step in lesson.steps:
            if step.action is not None and step.action.do in ("spoke", "cordon", "uncordon"):
                assert rights(step.action) and all(r.namespace in ("", "kube-system") for r in rights(step.action))


def test_lesson_10s_traffic_needs_the_proxy_of_the_service_it_names_in_the_viewers_namespace():
    """As the hub authorizes a person's run (create services/proxy); an attendee's admin holds it."""
    steps = [step.action for step in lessons.load_all().get("10-service").steps
             if step.action is not None and step.action.do == "traffic"]
    assert [rights(action) for action in steps] == [[Right("create", "services", "", "alice", "pasta", "proxy")]] * 2
    assert rights(steps[1], Scope()) == [Right("create", "services", "", "default", "pasta", "proxy")]
    address = Action(do="traffic", form=(("namespace", "default"), ("node", "node-1"), ("target", "10.96.0.12")))
    assert rights(address) == []  # the node's own path: the hub answers it
