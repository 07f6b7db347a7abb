"""The disruption controller's reconcile against a fake hub: healthy counts, desired counts from
minAvailable/maxUnavailable and the controllers' scale, disruptedPods, the condition, fail-safe."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import DEPLOYMENTS, PODDISRUPTIONBUDGETS, PODS, REPLICASETS
from control.controllers.disruption import DELETION_TIMEOUT, DisruptionController, scaled_value
from control.kinds.meta import format_time

from .fakes import START, FakeClient, fill, informers, metadata, observe, pod, replicaset, run

KEY = "default/web-pdb"


def pdb(*, min_available=None, max_unavailable=None, selector=None, generation=1, status=None):
    spec = {"selector": selector if selector is not None else {"matchLabels": {"app": "web"}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": metadata("web-pdb", generation=generation), "spec": spec, "status": status or {}}


def deployment(name="web", replicas=3):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata(name, generation=1),
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}}}


class Recorder:
    def __init__(self):
        self.events = []

    async def record(self, obj, type_, reason, message):
        self.events.append((obj["metadata"]["name"], type_, reason, message))


def setup(*objs, clock=None):
    clock = clock or FakeClock(START)
    client, shared, recorder = FakeClient(), informers(clock), Recorder()
    by_kind = {"PodDisruptionBudget": shared.get(PODDISRUPTIONBUDGETS), "Pod": shared.get(PODS),
               "ReplicaSet": shared.get(REPLICASETS), "Deployment": shared.get(DEPLOYMENTS)}
    controller = DisruptionController(client, by_kind["PodDisruptionBudget"], by_kind["Pod"], by_kind["ReplicaSet"],
                                      by_kind["Deployment"], clock=clock, recorder=recorder)
    for obj in objs:
        fill(by_kind[obj["kind"]], obj)
    return controller, client, recorder


def written(client):
    writes = client.of("replace/status", "poddisruptionbudgets")
    return writes[-1].body["status"] if writes else None


def ready_pods(count, owners=None, ready=True):
    return [pod(f"web-{i}", owners=owners, phase="Running", ready=ready) for i in range(count)]


def test_min_available_as_a_number_counts_the_selected_pods():
    controller, client, _ = setup(pdb(min_available=2), *ready_pods(3), pod("other", labels={"app": "db"},
                                                                            phase="Running", ready=True))
    run(controller.reconcile(KEY))
    status = written(client)
    assert {k: status[k] for k in ("currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed",
                                   "observedGeneration")} == \
        {"currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3, "disruptionsAllowed": 1, "observedGeneration": 1}
    condition = status["conditions"][0]
    assert condition == {"type": "DisruptionAllowed", "status": "True", "observedGeneration": 1,
                         "lastTransitionTime": format_time(START), "reason": "SufficientPods", "message": ""}


def test_a_budget_at_its_minimum_allows_nothing_and_says_insufficient_pods():
    controller, client, _ = setup(pdb(min_available=2), *ready_pods(2))
    run(controller.reconcile(KEY))
    status = written(client)
    assert status["disruptionsAllowed"] == 0
    assert (status["conditions"][0]["status"], status["conditions"][0]["reason"]) == ("False", "InsufficientPods")


def test_unready_and_terminating_pods_are_not_healthy():
    pods = ready_pods(2) + [pod("web-x", phase="Running", ready=False),
                            pod("web-y", phase="Running", ready=True, deleting=format_time(START))]
    controller, client, _ = setup(pdb(min_available=1), *pods)
    run(controller.reconcile(KEY))
    assert written(client)["currentHealthy"] == 2 and written(client)["expectedPods"] == 4


def test_max_unavailable_uses_the_deployments_replicas_through_its_replicaset():
    deploy = deployment(replicas=4)
    rs = replicaset("web-abc", 4, owners=[deploy])
    controller, client, _ = setup(pdb(max_unavailable=1), deploy, rs, *ready_pods(3, owners=[rs]))
    run(controller.reconcile(KEY))
    status = written(client)
    assert (status["expectedPods"], status["desiredHealthy"], status["currentHealthy"], status["disruptionsAllowed"]) \
        == (4, 3, 3, 0)


def test_a_percentage_rounds_up_against_the_replicasets_scale():
    rs = replicaset("web", 3)
    controller, client, _ = setup(pdb(min_available="50%"), rs, *ready_pods(3, owners=[rs]))
    run(controller.reconcile(KEY))
    status = written(client)
    assert (status["expectedPods"], status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 2, 1)
    assert scaled_value("50%", 3) == 2 and scaled_value("10%", 0) == 0 and scaled_value(2, 10) == 2


def test_another_controller_is_asked_for_its_scale_subresource():
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata("batch")}
    controller, client, _ = setup(pdb(max_unavailable="50%"), *ready_pods(2, owners=[job]))
    client.responses[("GET", "/apis/batch/v1/namespaces/default/jobs/batch/scale")] = {
        "metadata": {"name": "batch", "uid": "uid-batch"}, "spec": {"replicas": 4}}
    run(controller.reconcile(KEY))
    status = written(client)
    assert (status["expectedPods"], status["desiredHealthy"]) == (4, 2)


def test_a_replication_controllers_pods_count_against_its_scale():
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": metadata("nginx")}
    controller, client, _ = setup(pdb(min_available="50%"), *ready_pods(3, owners=[rc]))
    client.responses[("GET", "/api/v1/namespaces/default/replicationcontrollers/nginx/scale")] = {
        "metadata": {"name": "nginx", "uid": "uid-nginx"}, "spec": {"replicas": 3}}
    run(controller.reconcile(KEY))
    status = written(client)
    assert (status["expectedPods"], status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 2, 1)

def test_pods_without_a_controller_fail_safe_for_a_percentage():
    controller, client, recorder = setup(pdb(max_unavailable=1), *ready_pods(2, owners=[replicaset("gone", 2)]))
    run(controller.reconcile(KEY))  # its ReplicaSet is not in the cache, and the scale GET answers nothing
    status = written(client)
    assert status["disruptionsAllowed"] == 0
    condition = status["conditions"][0]
    assert (condition["status"], condition["reason"], condition["message"]) == \
        ("False", "SyncFailed", 'found no controllers for pod "web-0"')
    assert ("web-pdb", "Warning", "CalculateExpectedPodCountFailed",
            'Failed to calculate the number of expected pods: found no controllers for pod "web-0"') in recorder.events


def test_unmanaged_pods_are_counted_for_an_integer_and_reported_for_a_percentage():
    controller, client, recorder = setup(pdb(min_available="50%"), *ready_pods(2))
    run(controller.reconcile(KEY))
    assert written(client)["expectedPods"] == 0 and written(client)["disruptionsAllowed"] == 0
    assert any(e[2] == "UnmanagedPods" for e in recorder.events)


def test_no_pods_means_no_disruptions_and_an_event():
    controller, client, recorder = setup(pdb(min_available=0))
    run(controller.reconcile(KEY))
    assert written(client)["disruptionsAllowed"] == 0
    assert ("web-pdb", "Normal", "NoPods", "No matching pods found") in recorder.events


def test_a_recently_evicted_pod_does_not_count_until_it_goes_or_the_timeout_passes():
    clock = FakeClock(START)
    status = {"disruptedPods": {"web-0": format_time(START - 10), "gone": format_time(START - 10)}}
    controller, client, recorder = setup(pdb(min_available=1, status=status), *ready_pods(3), clock=clock)
    result = run(controller.reconcile(KEY))
    first = written(client)
    assert first["currentHealthy"] == 2 and first["disruptedPods"] == {"web-0": format_time(START - 10)}
    assert result.outcome == "requeue_after" and abs(result.after - (DELETION_TIMEOUT - 10 + 0.5)) < 1e-6
    run(clock.advance(DELETION_TIMEOUT))
    run(controller.reconcile(KEY))
    assert written(client)["currentHealthy"] == 3 and "disruptedPods" not in written(client)
    assert any(e[0] == "web-0" and e[2] == "NotDeleted" for e in recorder.events)


def test_an_unchanged_status_is_not_written_again_and_the_transition_time_holds():
    controller, client, _ = setup(pdb(min_available=1), *ready_pods(2))
    run(controller.reconcile(KEY))
    stored = pdb(min_available=1, status=written(client))
    fill(controller.pdbs, stored)
    run(controller.reconcile(KEY))
    assert len(client.of("replace/status", "poddisruptionbudgets")) == 1


def test_pod_events_wake_every_budget_that_selects_the_pod():
    controller, _, _ = setup(pdb(min_available=1))
    observe(controller.pods, pod("web-0"), pod("db-0", labels={"app": "db"}))
    assert len(controller.queue) == 1  # web-0 wakes the budget; db-0 wakes nothing
    assert [p["metadata"]["name"] for p in controller.budgets_of(pod("web-9"))] == ["web-pdb"]
    assert controller.budgets_of(pod("db-9", labels={"app": "db"})) == []


def test_a_null_selector_selects_nothing_and_an_empty_one_everything():
    controller, client, _ = setup(pdb(min_available=1, selector={}), *ready_pods(2),
                                  pod("db-0", labels={"app": "db"}, phase="Running", ready=True))
    run(controller.reconcile(KEY))
    assert written(client)["expectedPods"] == 3
    nothing = pdb(min_available=1)
    nothing["spec"]["selector"] = None
    controller, client, _ = setup(nothing, *ready_pods(2))
    run(controller.reconcile(KEY))
    assert written(client)["expectedPods"] == 0
