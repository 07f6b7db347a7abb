"""autoscaling/v1 <-> v2 HorizontalPodAutoscaler conversion (control.kinds.autoscaling_v1), as
upstream's pkg/apis/autoscaling/v1/conversion.go, and the v1 version the HPA kind serves."""

from __future__ import annotations

import copy
import json

from control import kinds as registry
from control.kinds.autoscaling import HORIZONTALPODAUTOSCALER
from control.kinds.autoscaling_v1 import (BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION, CURRENT_METRICS_ANNOTATION,
                                          METRICS_ANNOTATION, v1_to_v2, v2_to_v1)


def cpu(percent: int) -> dict:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": percent}}}


V1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "pre"},
      "spec": {"maxReplicas": 5, "minReplicas": 2, "targetCPUUtilizationPercentage": 80,
               "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "pre"}},
      "status": {"currentReplicas": 0, "desiredReplicas": 0}}
OTHERS = [
    {"type": "Pods", "pods": {"metric": {"name": "rps", "selector": {"matchLabels": {"a": "b"}}},
                              "target": {"type": "AverageValue", "averageValue": "10"}}},
    {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "hits"},
                                  "target": {"type": "Value", "value": "5"}}},
    {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "x"}}},
                                      "target": {"type": "AverageValue", "averageValue": "3"}}},
    {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}},
    {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app", "target": {
        "type": "Utilization", "averageUtilization": 70}}},
]


def test_what_v1_can_say_round_trips_without_annotations():
    v2 = v1_to_v2(V1)
    assert v2["apiVersion"] == "autoscaling/v2" and v2["spec"]["metrics"] == [cpu(80)]
    assert "targetCPUUtilizationPercentage" not in v2["spec"]
    assert v2_to_v1(v2) == V1


def test_v2_only_metrics_behavior_and_status_travel_in_upstreams_annotations():
    stored = v1_to_v2(V1)
    stored["spec"]["metrics"] = [cpu(60), *OTHERS]
    stored["spec"]["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": 5}}
    stored["status"] = {"currentReplicas": 2, "desiredReplicas": 3, "conditions": [{"type": "AbleToScale", "status": "True"}],
                        "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {
                            "averageUtilization": 91, "averageValue": "200m"}}}]}
    v1 = v2_to_v1(stored)
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 60 and "metrics" not in v1["spec"]
    assert v1["status"] == {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 91}
    annotations = v1["metadata"]["annotations"]
    assert set(annotations) == {METRICS_ANNOTATION, CURRENT_METRICS_ANNOTATION, BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION}
    assert json.loads(annotations[METRICS_ANNOTATION])[:3] == [
        {"type": "Pods", "pods": {"metricName": "rps", "selector": {"matchLabels": {"a": "b"}}, "targetAverageValue": "10"}},
        {"type": "Object", "object": {"metricName": "hits", "target": {"kind": "Service", "name": "s"}, "targetValue": "5"}},
        {"type": "External", "external": {"metricName": "queue", "metricSelector": {"matchLabels": {"q": "x"}},
                                          "targetAverageValue": "3"}}]
    back = v1_to_v2(v1)
    assert back["spec"]["metrics"] == [*OTHERS, cpu(60)]  # upstream puts the CPU target after the others
    assert back["spec"]["behavior"] == stored["spec"]["behavior"]
    assert back["status"] == stored["status"] and "annotations" not in back["metadata"]


def test_a_v1_object_without_a_target_gets_the_cpu_default_and_keeps_other_annotations():
    bare = copy.deepcopy(V1)
    del bare["spec"]["targetCPUUtilizationPercentage"]
    bare["metadata"]["annotations"] = {"team": "a", METRICS_ANNOTATION: "not json"}
    v2 = v1_to_v2(bare)
    assert v2["spec"]["metrics"] == [cpu(80)] and v2["metadata"]["annotations"] == {"team": "a"}


def test_the_hpa_kind_serves_v1_beside_its_stored_v2():
    (v1,) = HORIZONTALPODAUTOSCALER.other_versions
    assert (v1.group, v1.version, v1.plural, v1.resource) == ("autoscaling", "v1", "horizontalpodautoscalers",
                                                             HORIZONTALPODAUTOSCALER.resource)
    assert registry.by_resource("autoscaling", "v1", "horizontalpodautoscalers") is v1
    assert registry.by_kind("autoscaling/v1", "HorizontalPodAutoscaler") is v1
    assert registry.group_versions()["autoscaling"] == ["v2", "v1"]
    assert v1 not in registry.KINDS  # controllers, snapshot and RBAC see the stored kind once
