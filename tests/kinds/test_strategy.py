"""Each kind's write strategy, asked directly: the hooks control/api calls instead of knowing kinds."""

from __future__ import annotations

from control import kinds
from control.kinds.strategy import IMMEDIATE

POD = kinds.by_kind("v1", "Pod")
SERVICE = kinds.by_kind("v1", "Service")
NAMESPACE = kinds.by_kind("v1", "Namespace")


def bound_pod(**spec) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"nodeName": "n1", **spec}, "status": {"phase": "Running"}}


def test_pods_are_deleted_gracefully_unless_never_scheduled_or_finished():
    grace = POD.deletion.grace_period
    assert grace(bound_pod(), None) == 30
    assert grace(bound_pod(terminationGracePeriodSeconds=5), None) == 5
    assert grace(bound_pod(terminationGracePeriodSeconds=5), 0) == 0, "the request's gracePeriodSeconds wins"
    assert grace(bound_pod(), -1) == 1, "a negative grace period counts as 1"
    assert grace({"metadata": {"name": "p"}, "spec": {}}, None) == 0, "never scheduled: gone at once"
    done = bound_pod()
    done["status"]["phase"] = "Succeeded"
    assert grace(done, None) == 0
    assert POD.deletion.returns_object and SERVICE.deletion.returns_object and NAMESPACE.deletion.returns_object


def test_ordinary_kinds_go_at_once_and_answer_a_status():
    for kind in (kinds.by_kind("v1", "ConfigMap"), kinds.by_kind("apps/v1", "Deployment"), kinds.by_kind("v1", "Node"),
                 kinds.by_kind("v1", "Secret")):
        assert kind.deletion is IMMEDIATE and not kind.deletion.returns_object, kind.kind


def test_a_namespace_is_held_by_its_spec_finalizers_and_marked_terminating():
    ns = {"metadata": {"name": "team"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    assert NAMESPACE.deletion.held(ns)
    NAMESPACE.deletion.on_hold(ns)
    assert ns["status"]["phase"] == "Terminating"
    ns["spec"]["finalizers"] = []
    assert not NAMESPACE.deletion.held(ns)


def test_binding_assigns_once_and_says_why_not():
    pod = {"metadata": {"name": "p"}, "spec": {}, "status": {"conditions": [{"type": "PodScheduled", "status": "False"}]}}
    assert POD.bind(pod, "n1", "2026-01-01T00:00:00Z") == ""
    assert pod["spec"]["nodeName"] == "n1"
    assert pod["status"]["conditions"] == [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                            "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    assert POD.bind(pod, "n2", "x") == 'pod p is already assigned to node "n1"'
    leaving = {"metadata": {"name": "q", "deletionTimestamp": "2026-01-01T00:00:00Z"}, "spec": {}}
    assert POD.bind(leaving, "n1", "x") == "pod is being deleted, cannot be assigned to a host"
    assert SERVICE.bind is None


def test_status_is_reset_on_create_as_each_kind_says():
    pod = {"metadata": {}, "status": {"phase": "Running", "podIP": "1.2.3.4"}}
    POD.prepare_for_create(pod)
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    deploy = {"metadata": {}, "status": {"replicas": 9}}
    kinds.by_kind("apps/v1", "Deployment").prepare_for_create(deploy)
    assert deploy["status"] == {}
    node = {"metadata": {}, "status": {"capacity": {"cpu": "2"}}}
    kinds.by_kind("v1", "Node").prepare_for_create(node)
    assert node["status"] == {"capacity": {"cpu": "2"}}, "a node registers its own status"


def test_name_rules():
    assert SERVICE.name_rule("web") == [] and SERVICE.name_rule("1web") != [], "DNS-1035: starts with a letter"
    assert NAMESPACE.name_rule("1team") == [] and NAMESPACE.name_rule("a.b") != [], "DNS-1123 label"
    assert kinds.by_kind("v1", "ConfigMap").name_rule("a.b") == [], "DNS-1123 subdomain"
    assert POD.name_rule("")[0]["message"] == "Required value: name or generateName is required"


def test_create_on_update_and_allocators():
    assert {k.kind for k in kinds.KINDS if k.allow_create_on_update} == {"Endpoints", "Event", "ConfigMap", "Lease"}
    assert [k.kind for k in kinds.KINDS if k.allocator is not None] == ["Service"]
    assert SERVICE.allocator.scans == SERVICE.resource


def test_generation_counts_spec_changes():
    deploy = kinds.by_kind("apps/v1", "Deployment")
    assert deploy.generation_changed({"spec": {"replicas": 2}}, {"spec": {"replicas": 1}})
    assert not deploy.generation_changed({"spec": {}, "metadata": {"labels": {"a": "b"}}}, {"spec": {}, "metadata": {}})


def test_label_and_subdomain_messages_as_kube_apiserver_words_them():
    assert NAMESPACE.name_rule("Team")[0]["message"] == (
        "Invalid value: \"Team\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
        "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
        "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
    assert POD.name_rule("Web")[0]["message"].startswith(
        "Invalid value: \"Web\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com'")
