"""The resourcequota controller's reconcile against a fake hub and a fake clock."""

from __future__ import annotations

from control.client.resources import CONFIGMAPS, PODS
from control.clock import FakeClock
from control.controllers.resourcequota import RESOURCEQUOTAS, ResourceQuotaController

from .fakes import START, FakeClient, fill, informers, metadata, observe, pod, run, vanish


def quota(name: str = "q", namespace: str = "default", status: dict | None = None, **hard: str) -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": metadata(name, namespace),
            "spec": {"hard": hard}, "status": status or {}}


def with_resources(obj: dict, cpu: str, memory: str) -> dict:
    obj["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": memory},
                                                 "limits": {"cpu": cpu, "memory": memory}}
    return obj


def setup(*quotas, pods=()):
    clock = FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    controller = ResourceQuotaController(client, shared.get(RESOURCEQUOTAS), shared.get(PODS), clock=clock, resync=30)
    fill(controller.quotas, *quotas)
    fill(controller.pods, *pods)
    return controller, client


def test_status_reports_hard_and_what_the_namespace_uses():
    controller, client = setup(
        quota(pods="10", **{"requests.cpu": "2", "limits.memory": "1Gi", "count/configmaps": "5"}),
        pods=[with_resources(pod("a"), "500m", "256Mi"), with_resources(pod("b"), "250m", "256Mi"),
              pod("done", phase="Succeeded")])
    client.store(CONFIGMAPS, {"metadata": metadata("cm")})
    client.store(CONFIGMAPS, {"metadata": metadata("elsewhere", "other")})
    result = run(controller.reconcile("default/q"))
    [written] = client.of("replace/status", "resourcequotas")
    assert written.body["status"] == {
        "hard": {"pods": "10", "requests.cpu": "2", "limits.memory": "1Gi", "count/configmaps": "5"},
        "used": {"pods": "2", "requests.cpu": "750m", "limits.memory": "512Mi", "count/configmaps": "1"}}
    assert (result.outcome, result.after) == ("requeue_after", 30)  # recounted periodically: other kinds are not watched


def test_nothing_is_written_when_the_status_is_already_true():
    controller, client = setup(quota(pods="3", status={"hard": {"pods": "3"}, "used": {"pods": "1"}}), pods=[pod("a")])
    run(controller.reconcile("default/q"))
    assert client.summary() == []
    run(controller.reconcile("default/gone"))
    assert client.summary() == []


def test_a_pod_change_queues_the_quotas_of_its_namespace_only():
    controller, client = setup(quota("q"), quota("other", "elsewhere"))
    observe(controller.pods, pod("a"))
    assert len(controller.queue) == 1
    vanish(controller.pods, pod("a"))
    assert len(controller.queue) == 1  # the same key, queued once


def test_scoped_quotas_count_only_the_pods_they_select():
    controller, client = setup(quota("be", pods="5") | {"spec": {"hard": {"pods": "5"}, "scopes": ["BestEffort"]}},
                               pods=[pod("plain"), with_resources(pod("sized"), "1", "1Gi")])
    run(controller.reconcile("default/be"))
    [written] = client.of("replace/status", "resourcequotas")
    assert written.body["status"]["used"] == {"pods": "1"}


def setup_cached(*quotas, pods=(), **objects):
    """As the controller-manager builds it: services, secrets, configmaps and claims counted from caches."""
    from control.controllers.resourcequota import CACHED

    clock = FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    caches = {resource: shared.get(resource) for resource in CACHED}
    controller = ResourceQuotaController(client, shared.get(RESOURCEQUOTAS), shared.get(PODS), clock=clock,
                                         resync=30, caches=caches)
    fill(controller.quotas, *quotas)
    fill(controller.pods, *pods)
    for plural, objs in objects.items():
        fill(next(i for r, i in caches.items() if r.plural == plural), *objs)
    return controller, client, caches


def test_cached_kinds_are_counted_without_asking_the_hub():
    from control.client.resources import SECRETS, SERVICES

    controller, client, _ = setup_cached(
        quota(pods="10", services="2", secrets="4", **{"count/configmaps": "5", "count/deployments.apps": "1"}),
        pods=[pod("a")],
        configmaps=[{"metadata": metadata("cm")}, {"metadata": metadata("elsewhere", "other")}],
        secrets=[{"metadata": metadata("s1")}, {"metadata": metadata("s2")}],
        services=[{"metadata": metadata("web"), "spec": {"type": "ClusterIP"}}])
    client.store(SECRETS, {"metadata": metadata("only-on-the-hub")})  # never listed: the cache is the truth
    client.store(SERVICES, {"metadata": metadata("only-on-the-hub")})
    run(controller.reconcile("default/q"))
    [written] = client.of("replace/status", "resourcequotas")
    assert written.body["status"]["used"] == {"pods": "1", "services": "1", "secrets": "2", "count/configmaps": "1",
                                              "count/deployments.apps": "0"}
    # only the kind no cache holds is listed from the hub
    assert [(a.plural, a.namespace) for a in client.of("list")] == [("deployments", "default")]


def test_a_change_of_a_cached_kind_queues_the_quotas_of_its_namespace():
    from control.client.resources import CONFIGMAPS

    controller, _, caches = setup_cached(quota("q"), quota("other", "elsewhere"))
    observe(caches[CONFIGMAPS], {"metadata": metadata("cm")})
    assert list(controller.queue._queue) == ["default/q"]
    vanish(caches[CONFIGMAPS], {"metadata": metadata("cm")})
    assert list(controller.queue._queue) == ["default/q"]


def test_a_charge_written_by_admission_is_not_recounted_before_its_object_arrives():
    # Admission charges pods=1 in the quota's status; that update reaches the controller before the
    # pod it charged for reaches the pod cache. Recounting then would write pods=0, and pods=1 again
    # once the pod arrives (upstream's updateQuota ignores status-only updates for this reason).
    controller, client = setup(quota(pods="3", status={"hard": {"pods": "3"}, "used": {"pods": "0"}}))
    observe(controller.quotas, quota(pods="3", status={"hard": {"pods": "3"}, "used": {"pods": "1"}}))
    assert len(controller.queue) == 0
    observe(controller.pods, pod("a"))  # the pod arrives: its namespace's quotas are recounted
    assert list(controller.queue._queue) == ["default/q"]
    run(controller.reconcile("default/q"))
    assert client.summary() == []  # the charge was right: nothing to write


def test_a_new_hard_limit_queues_the_quota():
    controller, _ = setup(quota(pods="3"))
    observe(controller.quotas, quota(pods="5"))
    assert list(controller.queue._queue) == ["default/q"]
