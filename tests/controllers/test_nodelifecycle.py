"""The node lifecycle controller's reconcile on fake time: Unknown after the grace, taints,
eviction after tolerationSeconds, force-deletion of pods whose kubelet is gone."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import LEASES, NODES, PODS
from control.client.timings import KUBERNETES, Timings
from control.controllers.nodelifecycle import UNREACHABLE, NodeLifecycleController
from control.kinds.meta import format_time

from .fakes import START, FakeClient, fill, informers, metadata, pod, run

TIMINGS = Timings(**KUBERNETES)  # grace 50 s, monitor 5 s, toleration 300 s


class Recorder:
    def __init__(self):
        self.events = []

    async def record(self, obj, type_, reason, message):
        self.events.append((obj["metadata"]["name"], reason, message))


def node(name="n1", *, ready="True", heartbeat=START - 100, taints=None):
    conditions = [{"type": t, "status": s, "reason": "KubeletReady", "message": "ok",
                   "lastHeartbeatTime": format_time(heartbeat), "lastTransitionTime": format_time(START - 3000)}
                  for t, s in (("Ready", ready), ("MemoryPressure", "False"))]
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata(name, namespace=None),
            "spec": {"taints": taints} if taints else {}, "status": {"conditions": conditions}}


def lease(name="n1", renewed=START - 10):
    from datetime import datetime, timezone

    micro = datetime.fromtimestamp(renewed, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata(name, namespace="kube-node-lease"),
            "spec": {"holderIdentity": name, "renewTime": micro}}


def unreachable(added=START - 100):
    return [{"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": format_time(added)},
            {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": format_time(added)}]


DEFAULT_TOLERATION = {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}


def setup(*objs):
    clock, client, shared, recorder = FakeClock(START), FakeClient(), informers(), Recorder()
    nodes, leases, pods = shared.get(NODES), shared.get(LEASES), shared.get(PODS)
    controller = NodeLifecycleController(client, nodes, leases, pods, clock=clock, timings=TIMINGS, recorder=recorder)
    for obj in objs:
        fill({"Node": nodes, "Lease": leases, "Pod": pods}[obj["kind"]], obj)
    return controller, client, clock, recorder


def test_a_node_goes_unknown_and_unreachable_once_its_lease_is_older_than_the_grace():
    running = pod("web-1", node="n1", phase="Running", ready=True)
    controller, client, clock, recorder = setup(node(), lease(renewed=START - 10), running)
    result = run(controller.reconcile("node:n1"))
    assert client.summary() == [] and (result.outcome, result.after) == ("requeue_after", 5.0)
    clock.t = START + 39
    run(controller.reconcile("node:n1"))
    assert client.summary() == [], "49 s without a renewal is still within the grace"
    clock.t = START + 41
    run(controller.reconcile("node:n1"))
    assert client.summary() == [("replace/status", "nodes", "n1"), ("replace/status", "pods", "web-1"),
                                ("replace", "nodes", "n1")]
    conditions = client.actions[0].body["status"]["conditions"]
    assert {c["type"]: c["status"] for c in conditions} == {"Ready": "Unknown", "MemoryPressure": "Unknown",
                                                            "DiskPressure": "Unknown", "PIDPressure": "Unknown"}
    ready = conditions[0]
    assert (ready["reason"], ready["message"]) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert ready["lastHeartbeatTime"] == format_time(START - 100), "the last heartbeat is kept"
    pod_ready = client.actions[1].body["status"]["conditions"][0]
    assert (pod_ready["type"], pod_ready["status"]) == ("Ready", "False")
    assert client.actions[2].body["spec"]["taints"] == unreachable(added=START + 41)
    assert recorder.events == [("n1", "NodeNotReady", "Node n1 status is now: NodeNotReady")]


def test_the_taints_go_when_the_kubelet_is_back_and_ready():
    other = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    controller, client, _, _ = setup(node(taints=[other, *unreachable()], heartbeat=START - 1), lease(renewed=START - 1))
    run(controller.reconcile("node:n1"))
    assert client.summary() == [("replace", "nodes", "n1")]
    assert client.actions[0].body["spec"]["taints"] == [other]


def test_pods_are_evicted_at_once_without_a_toleration_and_after_toleration_seconds_with_one():
    dead = node(ready="Unknown", heartbeat=START - 500, taints=unreachable(added=START - 100))
    tolerant = pod("tolerant", node="n1", tolerations=[DEFAULT_TOLERATION])
    intolerant = pod("intolerant", node="n1", tolerations=[])
    forever = pod("forever", node="n1", tolerations=[{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}])
    controller, client, clock, recorder = setup(dead, tolerant, intolerant, forever)
    run(controller.reconcile("pod:default/intolerant"))
    assert client.summary() == [("delete", "pods", "intolerant")]
    assert client.actions[0].options == {"grace_period": None, "propagation": None,
                                         "preconditions": {"uid": "uid-intolerant"}}
    assert recorder.events == [("intolerant", "TaintManagerEviction", "Marking for deletion Pod default/intolerant")]
    client.actions.clear()
    result = run(controller.reconcile("pod:default/tolerant"))
    assert client.summary() == [] and (result.outcome, result.after) == ("requeue_after", 200.0)
    assert run(controller.reconcile("pod:default/forever")).outcome == "done"
    clock.t = START + 200
    run(controller.reconcile("pod:default/tolerant"))
    assert client.summary() == [("delete", "pods", "tolerant")]


def test_a_pod_still_terminating_on_a_dead_node_is_force_deleted_after_its_grace():
    dead = node(ready="Unknown", heartbeat=START - 500, taints=unreachable())
    going = pod("going", node="n1", deleting=format_time(START + 10))
    controller, client, clock, _ = setup(dead, going)
    result = run(controller.reconcile("pod:default/going"))
    assert client.summary() == [] and result.outcome == "requeue_after" and 10 <= result.after <= 11
    clock.t = START + 11
    run(controller.reconcile("pod:default/going"))
    assert client.summary() == [("delete", "pods", "going")]
    assert client.actions[0].options["grace_period"] == 0


def test_pods_bound_to_a_node_that_no_longer_exists_are_force_deleted():
    stranded = pod("stranded", node="gone", phase="Running")
    controller, client, _, _ = setup(stranded)
    run(controller.reconcile("pod:default/stranded"))
    assert [(a.verb, a.plural, a.name) for a in client.actions] == [("get", "nodes", "gone"), ("delete", "pods", "stranded")]
    assert client.actions[1].options["grace_period"] == 0


def test_a_node_event_enqueues_the_pods_on_it_when_its_taints_change():
    controller, _, _, _ = setup(node(), pod("a", node="n1"), pod("b", node="n2"))
    controller.nodes.apply({"type": "MODIFIED", "object": node(taints=unreachable())})
    assert set(controller.queue._queue) == {"node:n1", "pod:default/a"}


def test_a_new_node_without_status_is_left_alone_until_its_grace_runs_out():
    fresh = node()
    fresh["status"] = {}
    fresh["metadata"]["creationTimestamp"] = format_time(START - 1)
    controller, client, clock, _ = setup(fresh)
    run(controller.reconcile("node:n1"))
    assert client.summary() == [], "no Ready condition yet, but within the grace: no taints"
    clock.t = START + 60
    run(controller.reconcile("node:n1"))
    conditions = client.actions[0].body["status"]["conditions"]
    assert {c["reason"] for c in conditions} == {"NodeStatusNeverUpdated"}
    assert client.summary()[-1] == ("replace", "nodes", "n1")


def test_lease_renewals_between_two_looks_do_not_multiply_the_timers():
    controller, client, clock, _ = setup(node(), lease())
    assert run(controller.reconcile("node:n1")).outcome == "requeue_after"
    clock.t = START + 1
    assert run(controller.reconcile("node:n1")).outcome == "done", "a look is already due at +5 s"
    clock.t = START + 5
    assert run(controller.reconcile("node:n1")).outcome == "requeue_after", "the timer's own pass arms the next one"
