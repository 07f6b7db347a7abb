"""The namespace controller's reconcile: empty a terminating namespace, then finalize it."""

from __future__ import annotations

from control import errors
from control.clock import FakeClock
from control.client.resources import NAMESPACES, PODS
from control.controllers.namespace import NamespaceController
from control.kinds.meta import format_time

from .fakes import START, FakeClient, fill, informers, metadata, pod, run

DISCOVERY = {
    ("GET", "/api/v1"): {"groupVersion": "v1", "resources": [
        {"name": "pods", "namespaced": True, "kind": "Pod", "verbs": ["delete", "deletecollection", "list"]},
        {"name": "pods/status", "namespaced": True, "kind": "Pod", "verbs": ["get", "update"]},
        {"name": "nodes", "namespaced": False, "kind": "Node", "verbs": ["delete", "list"]}]},
    ("GET", "/apis"): {"groups": [{"name": "apps", "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}]},
    ("GET", "/apis/apps/v1"): {"groupVersion": "apps/v1", "resources": [
        {"name": "deployments", "namespaced": True, "kind": "Deployment", "verbs": ["delete", "list"]}]},
}


def namespace(name="team", terminating=True):
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata(name, namespace=None),
          "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Terminating" if terminating else "Active"}}
    if terminating:
        ns["metadata"].update({"deletionTimestamp": format_time(START), "deletionGracePeriodSeconds": 0})
    return ns


def setup(ns):
    client, shared = FakeClient(), informers()
    client.responses.update(DISCOVERY)
    controller = NamespaceController(client, shared.get(NAMESPACES), clock=FakeClock(START))
    fill(controller.namespaces, ns)
    return controller, client


def test_everything_namespaced_is_deleted_then_the_namespace_is_finalized():
    ns = namespace()
    controller, client = setup(ns)
    leftover = pod("still-terminating")
    leftover["metadata"]["namespace"] = "team"
    client.store(PODS, leftover)
    result = run(controller.reconcile("team"))
    collections = [(a.verb, a.name) for a in client.of("deletecollection")]
    assert collections == [("deletecollection", "/api/v1/namespaces/team/pods"),
                           ("deletecollection", "/apis/apps/v1/namespaces/team/deployments")]
    assert client.of("deletecollection")[0].body["propagationPolicy"] == "Background"
    assert result.outcome == "requeue_after", "a pod is still there: look again later"
    assert client.of("replace/finalize") == []
    client.objects.clear()
    client.actions.clear()
    run(controller.reconcile("team"))
    [finalize] = client.of("replace/finalize")
    assert finalize.body["spec"]["finalizers"] == []
    assert finalize.body["metadata"]["resourceVersion"] == ns["metadata"]["resourceVersion"]


def test_an_active_namespace_is_left_alone_and_a_finalized_one_too():
    controller, client = setup(namespace(terminating=False))
    run(controller.reconcile("team"))
    assert client.actions == []
    done = namespace()
    done["spec"]["finalizers"] = []
    controller, client = setup(done)
    run(controller.reconcile("team"))
    assert client.actions == []


def test_without_discovery_the_built_in_resources_are_used():
    controller, client = setup(namespace())
    client.fail("discover", "", errors.ServiceUnavailable("discovery is down"))
    run(controller.reconcile("team"))
    deleted = {a.plural for a in client.of("deletecollection")}
    assert {"pods", "services", "endpoints", "configmaps", "events", "leases", "deployments", "replicasets"} <= deleted
