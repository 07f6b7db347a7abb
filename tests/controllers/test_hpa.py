"""The horizontal pod autoscaling controller's reconcile against a fake hub: scale reads, metrics,
rescale writes, status, conditions and events."""

from __future__ import annotations

import copy
from typing import Any

from control import errors
from control.clock import FakeClock
from control.client.resources import PODS
from control.kinds.meta import format_time
from control.controllers.hpa import HPAS, HorizontalController, samples_from
from control.kinds.autoscaling import hpa_defaults
from tests.controllers.fakes import START, FakeClient, fill, informers, observe, pod, run

SCALE_PATH = "/apis/apps/v1/namespaces/default/deployments/web/scale"
METRICS_PATH = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    async def record(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


class ScaleClient(FakeClient):
    """The fake hub, plus the Deployment's /scale and the metrics API."""

    def __init__(self, replicas: int, usage: dict[str, str]):
        super().__init__()
        self.replicas = replicas
        self.usage = usage  # pod name -> CPU quantity
        self.metrics_error: Exception | None = None

    async def request(self, method: str, path: str, *, params: Any = None, body: Any = None, **_: Any) -> Any:
        self._record(method.lower(), path.rsplit("/", 1)[-1], "default", path, body, params=params)
        if path == SCALE_PATH and method == "GET":
            return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                    "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7"},
                    "spec": {"replicas": self.replicas}, "status": {"replicas": self.replicas, "selector": "app=web"}}
        if path == SCALE_PATH and method == "PUT":
            self.replicas = body["spec"]["replicas"]
            return body
        if path == METRICS_PATH:
            if self.metrics_error:
                raise self.metrics_error
            return {"kind": "PodMetricsList", "items": [
                {"metadata": {"name": name, "namespace": "default"}, "timestamp": format_time(START - 1), "window": "3s",
                 "containers": [{"name": "app", "usage": {"cpu": cpu, "memory": "16Mi"}}]}
                for name, cpu in self.usage.items()]}
        raise errors.NotFound(f"no fake answer for {method} {path}")


def hpa(*, target: int = 50, minimum: int = 1, maximum: int = 10, behavior: dict | None = None, status=None) -> dict:
    obj = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web", "namespace": "default", "uid": "uid-hpa", "generation": 1,
                        "resourceVersion": "5"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": minimum, "maxReplicas": maximum,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": target}}}]}}
    if behavior is not None:
        obj["spec"]["behavior"] = behavior
    hpa_defaults(obj)
    if status is not None:
        obj["status"] = status
    return obj


def running(name: str) -> dict:
    p = pod(name, phase="Running", ready=True, node="node-1", ip="10.0.0.1", ready_since=START - 3600)
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    p["status"]["startTime"] = format_time(START - 3600)
    return p


def setup(replicas: int, usage: dict[str, str], obj: dict | None = None):
    clock = FakeClock(START)
    shared = informers(clock)
    client = ScaleClient(replicas, usage)
    hpas, pods = shared.get(HPAS), shared.get(PODS)
    recorder = Recorder()
    controller = HorizontalController(client, hpas, pods, clock=clock, sync_period=15, recorder=recorder)
    fill(hpas, obj or hpa())
    fill(pods, *(running(name) for name in usage))
    return controller, client, recorder, clock


def written_status(client: FakeClient) -> dict:
    return client.of("replace/status", "horizontalpodautoscalers")[-1].body["status"]


def conditions(status: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


def test_high_cpu_scales_up_through_the_scale_subresource_with_an_event():
    controller, client, recorder, _ = setup(2, {"web-a": "90m", "web-b": "90m"})
    result = run(controller.reconcile("default/web"))
    puts = client.of("put")
    assert len(puts) == 1 and puts[0].name == SCALE_PATH and puts[0].body["spec"]["replicas"] == 4
    assert puts[0].body["metadata"]["resourceVersion"] == "7"  # optimistic concurrency on the scale
    assert recorder.events == [("Normal", "SuccessfulRescale", "New size: 4; reason: cpu resource utilization "
                                "(percentage of request) above target")]
    status = written_status(client)
    assert status["desiredReplicas"] == 4 and status["currentReplicas"] == 2 and status["observedGeneration"] == 1
    assert status["lastScaleTime"] == format_time(START)
    assert status["currentMetrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageUtilization": 90, "averageValue": "90m"}}}]
    assert conditions(status) == {"AbleToScale": ("True", "SucceededRescale"),
                                  "ScalingActive": ("True", "ValidMetricFound"),
                                  "ScalingLimited": ("False", "DesiredWithinRange")}
    assert (result.outcome, result.after) == ("requeue_after", 15)
    assert client.of("get", "pods")[0].options["params"] == {"labelSelector": "app=web"}


def test_on_target_nothing_is_written_to_the_scale():
    controller, client, recorder, _ = setup(2, {"web-a": "50m", "web-b": "52m"})
    run(controller.reconcile("default/web"))
    assert client.of("put") == [] and recorder.events == []
    status = written_status(client)
    assert status["desiredReplicas"] == 2 and conditions(status)["AbleToScale"] == ("True", "ReadyForNewScale")


def test_low_cpu_scales_down_only_after_the_window():
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 30}}
    controller, client, _, clock = setup(4, {f"web-{i}": "10m" for i in "abcd"},
                                         hpa(behavior=behavior, status={"currentReplicas": 4, "desiredReplicas": 4}))
    run(controller.reconcile("default/web"))
    assert client.of("put") == []
    assert conditions(written_status(client))["AbleToScale"] == ("True", "ScaleDownStabilized")
    run(clock.advance(31))
    run(controller.reconcile("default/web"))
    assert [a.body["spec"]["replicas"] for a in client.of("put")] == [1]


def test_unchanged_status_is_not_written_twice():
    controller, client, _, _ = setup(2, {"web-a": "50m", "web-b": "50m"})
    run(controller.reconcile("default/web"))
    first = client.of("replace/status")[-1].body
    fill(controller.hpas, first)
    run(controller.reconcile("default/web"))
    assert len(client.of("replace/status")) == 1


def test_metrics_failure_keeps_the_size_and_says_why():
    controller, client, recorder, _ = setup(3, {"web-a": "90m"})
    client.metrics_error = errors.ServiceUnavailable("the metrics API is down")
    run(controller.reconcile("default/web"))
    assert client.of("put") == []
    status = written_status(client)
    assert status["desiredReplicas"] == 3
    active = next(c for c in status["conditions"] if c["type"] == "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "FailedGetResourceMetric")
    assert "unable to get metrics for resource cpu" in active["message"]
    assert recorder.events[0][:2] == ("Warning", "FailedGetResourceMetric")


def test_target_at_zero_disables_scaling():
    controller, client, _, _ = setup(0, {})
    run(controller.reconcile("default/web"))
    assert client.of("put") == []
    assert conditions(written_status(client))["ScalingActive"] == ("False", "ScalingDisabled")


def test_out_of_bounds_target_is_brought_back():
    controller, client, recorder, _ = setup(12, {"web-a": "50m"}, hpa(maximum=5))
    run(controller.reconcile("default/web"))
    assert [a.body["spec"]["replicas"] for a in client.of("put")] == [5]
    assert recorder.events[0][2] == "New size: 5; reason: Current number of replicas above Spec.MaxReplicas"


def test_unknown_target_kind_cannot_get_scale():
    obj = hpa()
    obj["spec"]["scaleTargetRef"] = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "web"}
    controller, client, recorder, _ = setup(2, {}, obj)
    run(controller.reconcile("default/web"))
    assert conditions(written_status(client))["AbleToScale"] == ("False", "FailedGetScale")
    assert recorder.events[0][:2] == ("Warning", "FailedGetScale")


def test_a_conflicting_scale_write_is_retried_and_reported():
    controller, client, recorder, _ = setup(2, {"web-a": "90m", "web-b": "90m"})
    original = client.request

    async def conflicting(method, path, **kw):
        if method == "PUT":
            raise errors.conflict("apps/deployments", "web")
        return await original(method, path, **kw)

    client.request = conflicting
    try:
        run(controller.reconcile("default/web"))
    except errors.Conflict:
        pass
    else:
        raise AssertionError("a conflict must reach the runner, which retries")
    assert conditions(written_status(client))["AbleToScale"] == ("False", "FailedUpdateScale")
    assert recorder.events[-1][:2] == ("Warning", "FailedRescale")


def test_handlers_look_on_add_and_spec_change_not_on_own_status_writes():
    controller, _, _, _ = setup(2, {})
    controller.hpas.cache.items.clear()
    observe(controller.hpas, hpa())
    assert len(controller.queue) == 1
    run(controller.queue.get())
    controller.queue.done("default/web")
    later = copy.deepcopy(hpa())
    later["status"] = {"currentReplicas": 2, "desiredReplicas": 2}
    later["metadata"]["resourceVersion"] = "6"
    observe(controller.hpas, later)
    assert len(controller.queue) == 0
    changed = copy.deepcopy(later)
    changed["metadata"].update(generation=2, resourceVersion="7")
    observe(controller.hpas, changed)
    assert len(controller.queue) == 1


def test_deleted_hpa_forgets_its_history():
    controller, client, _, _ = setup(2, {"web-a": "90m", "web-b": "90m"})
    run(controller.reconcile("default/web"))
    assert "default/web" in controller.behaviours
    controller.hpas.cache.items.clear()
    run(controller.reconcile("default/web"))
    assert "default/web" not in controller.behaviours


def test_samples_sum_containers_and_skip_incomplete_pods():
    items = [{"metadata": {"name": "a"}, "timestamp": "2027-01-15T08:00:00Z", "window": "10.5s",
              "containers": [{"name": "x", "usage": {"cpu": "250000000n"}}, {"name": "y", "usage": {"cpu": "50m"}}]},
             {"metadata": {"name": "b"}, "containers": [{"name": "x", "usage": {"memory": "1Mi"}}]}]
    got = samples_from(items, "cpu")
    assert list(got) == ["a"] and got["a"].value == 300 and got["a"].window == 10.5


def test_an_unsupported_metric_keeps_its_place_and_the_others_still_scale():
    obj = hpa()
    obj["spec"]["metrics"].insert(0, {"type": "Pods", "pods": {"metric": {"name": "queue"}, "target": {
        "type": "AverageValue", "averageValue": "1"}}})
    controller, client, _, _ = setup(2, {"web-a": "90m", "web-b": "90m"}, obj)
    run(controller.reconcile("default/web"))
    assert [a.body["spec"]["replicas"] for a in client.of("put")] == [4]
    metrics = written_status(client)["currentMetrics"]
    assert metrics[0] == {"type": ""} and metrics[1]["resource"]["current"]["averageUtilization"] == 90
