"""The DaemonSet controller's reconcile against a fake hub: one pod per eligible node (selector,
affinity, taints with the daemon tolerations), pods leaving ineligible and removed nodes, the
revision history, rolling updates with maxUnavailable and maxSurge, OnDelete, and the status."""

from __future__ import annotations

import copy

from control.clock import FakeClock
from control.client.resources import CONTROLLERREVISIONS, DAEMONSETS, NODES, PODS
from control.controllers.daemonset import DaemonSetController
from control.controllers.daemonsetpods import (
    DAEMON_TOLERATIONS, REVISION_HASH_LABEL, new_revision, revision_data, should_run, target_node,
)
from control.kinds.hashing import template_hash
from control.kinds.daemonsets import TEMPLATE_GENERATION

from .fakes import START, FakeClient, fill, informers, metadata, observe, pod, quota_refusal, run, template, terminating_refusal

LABELS = {"app": "agent"}


def node(name, labels=None, taints=None):
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata(name, namespace=None, labels=labels or {}),
            "spec": {"taints": taints} if taints else {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def daemonset(name="agent", *, generation=1, template_generation=1, strategy=None, node_selector=None,
              image="busybox", status=None, history=10, tolerations=None):
    tmpl = template(LABELS, image)
    if node_selector:
        tmpl["spec"]["nodeSelector"] = dict(node_selector)
    if tolerations:
        tmpl["spec"]["tolerations"] = tolerations
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": metadata(name, labels=LABELS, generation=generation,
                                 annotations={TEMPLATE_GENERATION: str(template_generation)}),
            "spec": {"selector": {"matchLabels": dict(LABELS)}, "template": tmpl, "revisionHistoryLimit": history,
                     "updateStrategy": strategy or {"type": "RollingUpdate",
                                                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}},
            "status": status or {}}


def hash_of(ds):
    return template_hash(ds["spec"]["template"])


def daemon_pod(name, ds, on, *, hash_=None, ready=True, phase="Running", created=START - 600):
    out = pod(name, labels={**LABELS, REVISION_HASH_LABEL: hash_ or hash_of(ds), "pod-template-generation": "1"},
              owners=[ds], node=on, ready=ready, phase=phase, created=created)
    return out


class Recorder:
    def __init__(self):
        self.events = []

    async def record(self, obj, type_, reason, message):
        self.events.append((type_, reason, message))


def setup(*objs, clock=None):
    clock = clock or FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    caches = {kind: shared.get(res) for kind, res in
              (("DaemonSet", DAEMONSETS), ("Pod", PODS), ("Node", NODES), ("ControllerRevision", CONTROLLERREVISIONS))}
    controller = DaemonSetController(client, caches["DaemonSet"], caches["Pod"], caches["Node"],
                                     caches["ControllerRevision"], clock=clock, recorder=Recorder())
    for obj in objs:
        fill(caches[obj["kind"]], obj)
        if obj["kind"] == "DaemonSet":
            client.store(DAEMONSETS, obj)
    return controller, client


def revision_for(ds, number=1):
    rev = new_revision(ds, hash_of(ds), number)
    rev["metadata"].update(uid=f"uid-rev-{number}", resourceVersion="1")
    return rev


def created_nodes(client):
    return [target_node(a.body) for a in client.of("create", "pods")]


def deleted(client):
    return sorted(a.name for a in client.of("delete", "pods"))


def status_of(client):
    return client.of("replace/status", "daemonsets")[-1].body["status"]


def test_every_node_gets_one_pinned_pod_with_the_daemon_tolerations_and_a_revision():
    ds = daemonset()
    controller, client = setup(ds, node("n1"), node("n2"), node("n3"), daemon_pod("agent-x", ds, "n2"))
    run(controller.reconcile("default/agent"))
    assert sorted(created_nodes(client)) == ["n1", "n3"]
    body = client.of("create", "pods")[0].body
    assert body["metadata"]["generateName"] == "agent-"
    assert body["metadata"]["labels"] == {**LABELS, REVISION_HASH_LABEL: hash_of(ds), "pod-template-generation": "1"}
    assert body["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    assert body["metadata"]["ownerReferences"][0]["controller"] is True
    assert "nodeName" not in body["spec"], "the default scheduler binds it"
    assert body["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    assert [t for t in body["spec"]["tolerations"]] == list(DAEMON_TOLERATIONS)
    rev = client.of("create", "controllerrevisions")[0].body
    assert rev["metadata"]["name"] == f"agent-{hash_of(ds)}" and rev["revision"] == 1
    assert rev["data"] == revision_data(ds) and rev["data"]["spec"]["template"]["$patch"] == "replace"
    status = status_of(client)
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"],
            status["updatedNumberScheduled"], status["numberAvailable"], status["observedGeneration"]) == (3, 1, 1, 1,
                                                                                                          1, 1)
    assert status["numberUnavailable"] == 2 and status["numberMisscheduled"] == 0


def test_a_lagging_cache_never_makes_it_create_twice_and_a_new_node_gets_its_pod():
    ds = daemonset()
    controller, client = setup(ds, node("n1"), revision_for(ds))
    run(controller.reconcile("default/agent"))
    run(controller.reconcile("default/agent"))
    assert created_nodes(client) == ["n1"]
    observe(controller.pods, daemon_pod("agent-a", ds, "n1"))
    queued = len(controller.queue)
    observe(controller.nodes, node("n2"))
    assert len(controller.queue) >= queued and len(controller.queue) == 1, "a node event queues the DaemonSet"
    run(controller.reconcile("default/agent"))
    assert created_nodes(client) == ["n1", "n2"]


def test_selector_affinity_and_taints_decide_the_eligible_nodes():
    ds = daemonset(node_selector={"disk": "ssd"})
    ssd, hdd = node("ssd", {"disk": "ssd"}), node("hdd", {"disk": "hdd"})
    tainted = node("gpu", {"disk": "ssd"}, taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}])
    cordoned = node("cordoned", {"disk": "ssd"}, taints=[{"key": "node.kubernetes.io/unschedulable",
                                                          "effect": "NoSchedule"}])
    controller, client = setup(ds, ssd, hdd, tainted, cordoned, revision_for(ds),
                               daemon_pod("agent-h", ds, "hdd"), daemon_pod("agent-g", ds, "gpu"))
    run(controller.reconcile("default/agent"))
    assert sorted(created_nodes(client)) == ["cordoned", "ssd"], "the daemon tolerations include unschedulable"
    assert deleted(client) == ["agent-h"], "a NoSchedule taint lets the running pod stay; a label mismatch does not"
    status = status_of(client)
    assert status["desiredNumberScheduled"] == 2 and status["numberMisscheduled"] == 2
    evicting = node("gpu", {"disk": "ssd"}, taints=[{"key": "gpu", "effect": "NoExecute"}])
    assert should_run(ds, evicting) == (False, False)
    tolerant = daemonset(node_selector={"disk": "ssd"}, tolerations=[{"key": "gpu", "operator": "Exists"}])
    assert should_run(tolerant, evicting) == (True, True)
    affinity = daemonset()
    affinity["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuring"
                                                                         "Execution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["hdd"]}]}]}}}
    assert should_run(affinity, ssd) == (True, True) and should_run(affinity, hdd) == (False, False)


def test_pods_of_a_removed_node_and_extra_pods_are_deleted_the_oldest_kept():
    ds = daemonset()
    controller, client = setup(ds, node("n1"), revision_for(ds),
                               daemon_pod("old", ds, "n1", created=START - 900), daemon_pod("young", ds, "n1"),
                               daemon_pod("orphaned", ds, "gone"))
    run(controller.reconcile("default/agent"))
    assert deleted(client) == ["orphaned", "young"]
    assert created_nodes(client) == []


def test_a_failed_pod_is_deleted_with_a_back_off_and_replaced_when_gone():
    clock = FakeClock(START)
    ds = daemonset()
    failed = daemon_pod("agent-f", ds, "n1", phase="Failed", ready=False)
    controller, client = setup(ds, node("n1"), revision_for(ds), failed, clock=clock)
    run(controller.reconcile("default/agent"))
    assert deleted(client) == ["agent-f"]
    assert controller.recorder.events == [
        ("Warning", "FailedDaemonPod", "Found failed daemon pod default/agent-f on node n1, will try to kill it"),
        ("Normal", "SuccessfulDelete", "Deleted pod: agent-f")]
    controller.expectations.deleted("default/agent", "uid-agent-f")
    result = run(controller.reconcile("default/agent"))  # the kubelet rejected it again at once
    assert deleted(client) == ["agent-f"] and result.outcome == "requeue_after", "backing off"
    controller.pods.cache.pop("default/agent-f")
    run(controller.reconcile("default/agent"))
    assert created_nodes(client) == ["n1"]


def test_rolling_update_deletes_at_most_max_unavailable_old_pods():
    old_ds = daemonset()
    ds = daemonset(image="busybox:2", generation=2, template_generation=2)
    nodes = [node(f"n{i}") for i in range(4)]
    pods = [daemon_pod(f"p{i}", old_ds, f"n{i}") for i in range(4)]
    controller, client = setup(ds, *nodes, *pods, revision_for(old_ds), revision_for(ds, 2))
    run(controller.reconcile("default/agent"))
    assert deleted(client) == ["p0"], "maxUnavailable 1"
    assert status_of(client)["updatedNumberScheduled"] == 0
    # one new pod not yet ready: nothing more goes
    controller2, client2 = setup(ds, *nodes, daemon_pod("new0", ds, "n0", ready=False), *pods[1:],
                                 revision_for(old_ds), revision_for(ds, 2))
    run(controller2.reconcile("default/agent"))
    assert deleted(client2) == []
    # an unavailable old pod is replaced at once, beside the budgeted one
    unready = daemon_pod("p1", old_ds, "n1", ready=False)
    controller3, client3 = setup(ds, *nodes, pods[0], unready, *pods[2:], revision_for(old_ds), revision_for(ds, 2))
    run(controller3.reconcile("default/agent"))
    assert deleted(client3) == ["p0", "p1"]


def test_rolling_update_with_surge_starts_new_pods_first_and_removes_old_ones_when_available():
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    old_ds = daemonset(strategy=strategy)
    ds = daemonset(image="busybox:2", generation=2, template_generation=2, strategy=strategy)
    nodes = [node("n0"), node("n1")]
    pods = [daemon_pod("p0", old_ds, "n0"), daemon_pod("p1", old_ds, "n1")]
    controller, client = setup(ds, *nodes, *pods, revision_for(old_ds), revision_for(ds, 2))
    run(controller.reconcile("default/agent"))
    assert created_nodes(client) == ["n0"] and deleted(client) == []
    controller2, client2 = setup(ds, *nodes, *pods, daemon_pod("new0", ds, "n0"), revision_for(old_ds),
                                 revision_for(ds, 2))
    run(controller2.reconcile("default/agent"))
    assert deleted(client2) == ["p0"], "the new pod is available: the old one goes"


def test_on_delete_leaves_old_pods_alone():
    old_ds = daemonset(strategy={"type": "OnDelete"})
    ds = daemonset(image="busybox:2", generation=2, template_generation=2, strategy={"type": "OnDelete"})
    controller, client = setup(ds, node("n0"), daemon_pod("p0", old_ds, "n0"), revision_for(old_ds),
                               revision_for(ds, 2))
    run(controller.reconcile("default/agent"))
    assert deleted(client) == [] and created_nodes(client) == []
    assert status_of(client)["updatedNumberScheduled"] == 0


def test_a_rollback_renumbers_the_matching_revision_and_old_history_is_trimmed():
    first, second = daemonset(), daemonset(image="busybox:2")
    third = daemonset(image="busybox:3")
    revs = [revision_for(first, 1), revision_for(second, 2), revision_for(third, 3)]
    controller, client = setup(copy.deepcopy(first) | {"spec": {**first["spec"], "revisionHistoryLimit": 1}},
                               node("n0"), daemon_pod("p0", third, "n0", hash_=hash_of(third)), *revs)
    run(controller.reconcile("default/agent"))
    patch = client.of("patch", "controllerrevisions")
    assert [(a.name, a.body) for a in patch] == [(f"agent-{hash_of(first)}", {"revision": 4})]
    assert client.of("create", "controllerrevisions") == []
    assert [a.name for a in client.of("delete", "controllerrevisions")] == [f"agent-{hash_of(second)}"], \
        "revision 3 is still used by a pod"


def test_a_refused_create_is_a_failed_create_event_and_a_retry():
    ds = daemonset()
    controller, client = setup(ds, node("n1"), node("n2"), node("n3"), revision_for(ds))
    refusal = quota_refusal("agent-x")
    client.fail("create", "pods", refusal)
    assert run(controller.reconcile("default/agent")).outcome == "retry"
    assert created_nodes(client) == ["n1"], "slow start: nothing more after the first refusal"
    assert ("Warning", "FailedCreate", f"Error creating: {refusal.message}") in controller.recorder.events
    assert controller.expectations.satisfied("default/agent")
    assert status_of(client)["desiredNumberScheduled"] == 3, "status is written on a failed pass too"
    assert run(controller.reconcile("default/agent")).outcome == "done"
    assert sorted(created_nodes(client)) == ["n1", "n1", "n2", "n3"], "the next pass tries again"


def test_a_terminating_namespace_is_neither_reported_nor_retried():
    ds = daemonset()
    controller, client = setup(ds, node("n1"), node("n2"), revision_for(ds))
    client.fail("create", "pods", terminating_refusal())
    assert run(controller.reconcile("default/agent")).outcome == "done"
    assert not [e for e in controller.recorder.events if e[1] == "FailedCreate"]
