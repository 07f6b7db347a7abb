"""autoscaling/v2 HorizontalPodAutoscaler: defaults, validation messages, kubectl's columns, v1 view."""

from __future__ import annotations

import copy

from control.kinds import by_kind, by_resource
from control.kinds.autoscaling import (
    HORIZONTALPODAUTOSCALER, SCALE_DOWN_DEFAULT, SCALE_UP_DEFAULT, effective_behavior, hpa_cells, hpa_defaults,
    targets_text, validate_hpa,
)
from control.kinds.schemas import DEFINITIONS
from control.kinds.structure import check


def hpa(**spec) -> dict:
    body = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 5}}
    body["spec"].update(spec)
    return body


def cpu(percent: int) -> dict:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                        "averageUtilization": percent}}}


def test_registered_with_short_name_category_and_status():
    kind = by_resource("autoscaling", "v2", "horizontalpodautoscalers")
    assert kind is HORIZONTALPODAUTOSCALER is by_kind("autoscaling/v2", "HorizontalPodAutoscaler")
    assert kind.short_names == ("hpa",) and kind.categories == ("all",) and kind.subresources == ("status",)
    assert kind.definition in DEFINITIONS


def test_defaults_min_one_and_eighty_percent_cpu_and_no_behavior():
    obj = hpa()
    hpa_defaults(obj)
    assert obj["spec"]["minReplicas"] == 1
    assert obj["spec"]["metrics"] == [cpu(80)]
    assert "behavior" not in obj["spec"]


def test_a_given_behavior_gets_its_missing_parts_from_kubernetes_defaults():
    obj = hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 5}})
    hpa_defaults(obj)
    behavior = obj["spec"]["behavior"]
    assert behavior["scaleDown"] == {**SCALE_DOWN_DEFAULT, "stabilizationWindowSeconds": 5}
    assert behavior["scaleUp"] == SCALE_UP_DEFAULT
    assert SCALE_DOWN_DEFAULT["stabilizationWindowSeconds"] == 300
    assert SCALE_DOWN_DEFAULT["policies"] == [{"type": "Percent", "value": 100, "periodSeconds": 15}]
    assert {(p["type"], p["value"], p["periodSeconds"]) for p in SCALE_UP_DEFAULT["policies"]} == {
        ("Pods", 4, 15), ("Percent", 100, 15)}
    assert SCALE_UP_DEFAULT["stabilizationWindowSeconds"] == 0 and SCALE_UP_DEFAULT["selectPolicy"] == "Max"


def test_effective_behavior_without_behavior_is_the_defaults():
    assert effective_behavior(hpa()) == {"scaleUp": SCALE_UP_DEFAULT, "scaleDown": SCALE_DOWN_DEFAULT}


def test_valid_hpa_has_no_causes():
    obj = hpa(minReplicas=2, metrics=[cpu(50)])
    hpa_defaults(obj)
    assert validate_hpa(obj) == []


def fields(causes):
    return {c["field"]: c["message"] for c in causes}


def test_kubernetes_messages_for_bad_bounds_target_and_utilization():
    obj = hpa(minReplicas=0, metrics=[cpu(0)])
    obj["spec"]["scaleTargetRef"] = {"apiVersion": "apps/v1"}
    got = fields(validate_hpa(obj))
    assert got["spec.scaleTargetRef.kind"] == "Required value"
    assert got["spec.scaleTargetRef.name"] == "Required value"
    assert got["spec.minReplicas"] == "Invalid value: 0: must be greater than or equal to 1"
    assert got["spec.metrics[0].resource.target.averageUtilization"] == "Invalid value: 0: must be greater than 0"
    assert fields(validate_hpa(hpa(minReplicas=4, maxReplicas=3)))["spec.maxReplicas"] == (
        "Invalid value: 3: must be greater than or equal to `minReplicas`")
    assert fields(validate_hpa(hpa(maxReplicas=0)))["spec.maxReplicas"] == "Invalid value: 0: must be greater than 0"


def test_behavior_and_metric_type_checks():
    bad = hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 4000, "selectPolicy": "Most",
                                      "policies": [{"type": "Pods", "value": 0, "periodSeconds": 2000}]}},
              metrics=[{"type": "Magic"}])
    got = fields(validate_hpa(bad))
    assert got["spec.behavior.scaleDown.stabilizationWindowSeconds"].endswith("must be less than or equal to 3600")
    assert "supported values" in got["spec.behavior.scaleDown.selectPolicy"]
    assert got["spec.behavior.scaleDown.policies[0].value"] == "Invalid value: 0: must be greater than zero"
    assert got["spec.behavior.scaleDown.policies[0].periodSeconds"].endswith("must be less than or equal to 1800")
    assert got["spec.metrics[0].type"].startswith('Unsupported value: "Magic"')


def test_validation_never_raises_on_odd_input():
    for spec in (None, [], "x", {"scaleTargetRef": "x", "maxReplicas": "3", "metrics": "x",
                                  "behavior": {"scaleUp": "x"}},
                 {"metrics": [None, {"type": "Resource", "resource": None}], "minReplicas": True}):
        assert validate_hpa({"metadata": {"name": "x"}, "spec": spec})


def test_targets_column_like_kubectl():
    obj = hpa(metrics=[cpu(50)])
    assert targets_text(obj) == "cpu: <unknown>/50%"
    obj["status"] = {"currentMetrics": [{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageUtilization": 45, "averageValue": "45m"}}}], "currentReplicas": 2}
    assert targets_text(obj) == "cpu: 45%/50%"
    memory = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                              "averageValue": "100Mi"}}}
    many = hpa(metrics=[cpu(50), memory, cpu(60), cpu(70)])
    assert targets_text(many) == ("cpu: <unknown>/50%, memory: <unknown>/100Mi, cpu: <unknown>/60% + 1 more...")
    assert targets_text(hpa(metrics=[])) == "<none>"


def test_row_has_kubectls_columns():
    obj = hpa(minReplicas=1, metrics=[cpu(50)])
    obj["status"] = {"currentReplicas": 3}
    names = [c.name for c in HORIZONTALPODAUTOSCALER.columns]
    assert names == ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
    assert hpa_cells(obj, 1767225600 + 90) == ["web", "Deployment/web", "cpu: <unknown>/50%", 1, 5, 3, "90s"]


def test_schema_accepts_a_full_hpa_and_flags_unknown_fields():
    obj = hpa(minReplicas=1, metrics=[cpu(50)], behavior={"scaleDown": {"stabilizationWindowSeconds": 5}})
    hpa_defaults(obj)
    obj["status"] = {"currentReplicas": 1, "desiredReplicas": 1, "lastScaleTime": "2026-01-01T00:00:00Z",
                     "conditions": [{"type": "AbleToScale", "status": "True", "reason": "x", "message": "y",
                                     "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                     "currentMetrics": [{"type": "Resource", "resource": {
                         "name": "cpu", "current": {"averageUtilization": 4, "averageValue": "4m"}}}]}
    assert check(obj, HORIZONTALPODAUTOSCALER.definition) == []
    obj["spec"]["targetCPU"] = 3
    assert [p.path for p in check(obj, HORIZONTALPODAUTOSCALER.definition)] == ["spec.targetCPU"]
