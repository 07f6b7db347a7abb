"""OpenAPI schemas of autoscaling/v2 HorizontalPodAutoscaler: spec (target, bounds, metrics,
behaviour) and status (current metrics, conditions).

Guarantees: names and field shapes follow Kubernetes' `io.k8s.api.autoscaling.v2.*`; the metric
sources the controller does not act on (Pods, Object, External, ContainerResource) are declared
too, so a manifest using them is accepted and explained rather than refused as unknown fields;
status conditions merge by type.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    META, Schema, array, int32, int64, kind_obj, metadata, obj, quantity, ref, string, time,
)

V2 = "io.k8s.api.autoscaling.v2."

_METRIC_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]


def _target(what: str) -> Schema:
    return ref(V2 + "MetricTarget", f"The target value of the {what}.")


def _current(what: str) -> Schema:
    return ref(V2 + "MetricValueStatus", f"The current value of the {what}.")


def _identifier() -> Schema:
    return ref(V2 + "MetricIdentifier", "The metric's name and optional label selector.")


DEFINITIONS: dict[str, Schema] = {
    V2 + "HorizontalPodAutoscaler": kind_obj(
        "Automatically scales a resource with a scale subresource (e.g. a Deployment) between "
        "minReplicas and maxReplicas, from the metrics it observes.",
        ("autoscaling", "v2", "HorizontalPodAutoscaler"),
        {
            "metadata": metadata(),
            "spec": ref(V2 + "HorizontalPodAutoscalerSpec", "What to scale, within which bounds, on "
                        "which metrics."),
            "status": ref(V2 + "HorizontalPodAutoscalerStatus", "What the autoscaler last observed "
                          "and decided."),
        },
    ),
    V2 + "HorizontalPodAutoscalerSpec": obj(
        "Desired behaviour of the autoscaler.",
        {
            "behavior": ref(V2 + "HorizontalPodAutoscalerBehavior", "How fast to scale up and down; "
                            "Kubernetes' defaults when left out.", default=False),
            "maxReplicas": int32("Upper bound of the replica count; must be at least minReplicas."),
            "metrics": array(V2 + "MetricSpec", "Metrics to compute the desired replica count from "
                             "(the largest proposal wins); default: 80% average CPU utilisation.",
                             list_type="atomic"),
            "minReplicas": int32("Lower bound of the replica count; default 1."),
            "scaleTargetRef": ref(V2 + "CrossVersionObjectReference", "The resource to scale; it must "
                                  "have a scale subresource."),
        },
        required=["scaleTargetRef", "maxReplicas"],
    ),
    V2 + "CrossVersionObjectReference": obj(
        "Names the scaled resource.",
        {
            "apiVersion": string("API version of the referent, e.g. apps/v1."),
            "kind": string("Kind of the referent, e.g. Deployment."),
            "name": string("Name of the referent, in the autoscaler's namespace."),
        },
        required=["kind", "name"],
    ),
    V2 + "MetricSpec": obj(
        "One metric to scale on; `type` says which of the source fields is set.",
        {
            "containerResource": ref(V2 + "ContainerResourceMetricSource", "A resource metric of "
                                     "one container in every pod.", default=False),
            "external": ref(V2 + "ExternalMetricSource", "A metric from outside the cluster.",
                            default=False),
            "object": ref(V2 + "ObjectMetricSource", "A metric describing one Kubernetes object.",
                          default=False),
            "pods": ref(V2 + "PodsMetricSource", "A metric averaged over the target's pods.",
                        default=False),
            "resource": ref(V2 + "ResourceMetricSource", "A resource metric (cpu, memory) of the "
                            "target's pods, as known from their requests and limits.", default=False),
            "type": string("Which source is set.", enum=_METRIC_TYPES),
        },
        required=["type"],
    ),
    V2 + "ResourceMetricSource": obj(
        "CPU or memory of the target's pods, averaged over them.",
        {"name": string("Name of the resource: cpu or memory."), "target": _target("resource")},
        required=["name", "target"],
    ),
    V2 + "ContainerResourceMetricSource": obj(
        "CPU or memory of one named container in every pod of the target.",
        {"container": string("Name of the container."), "name": string("Name of the resource."),
         "target": _target("resource")},
        required=["name", "target", "container"],
    ),
    V2 + "PodsMetricSource": obj(
        "A metric of each pod, averaged over the target's pods.",
        {"metric": _identifier(), "target": _target("metric")},
        required=["metric", "target"],
    ),
    V2 + "ObjectMetricSource": obj(
        "A metric of one object in the namespace.",
        {"describedObject": ref(V2 + "CrossVersionObjectReference", "The object the metric "
                                "describes."),
         "metric": _identifier(), "target": _target("metric")},
        required=["describedObject", "target", "metric"],
    ),
    V2 + "ExternalMetricSource": obj(
        "A metric not tied to any Kubernetes object.",
        {"metric": _identifier(), "target": _target("metric")},
        required=["metric", "target"],
    ),
    V2 + "MetricIdentifier": obj(
        "Names a metric.",
        {"name": string("Name of the metric."),
         "selector": ref(META + "LabelSelector", "Narrows the metric down by its labels.",
                         default=False)},
        required=["name"],
    ),
    V2 + "MetricTarget": obj(
        "The value a metric should have: a utilisation percentage, an average or a total value.",
        {
            "averageUtilization": int32("Target average over the pods, as a percentage of their "
                                        "requests; only for resource metrics."),
            "averageValue": quantity("Target average over the pods, as a quantity."),
            "type": string("Utilization, Value or AverageValue.",
                           enum=["AverageValue", "Utilization", "Value"]),
            "value": quantity("Target value of the metric, as a quantity."),
        },
        required=["type"],
    ),
    V2 + "HorizontalPodAutoscalerBehavior": obj(
        "Scaling rules for each direction.",
        {
            "scaleDown": ref(V2 + "HPAScalingRules", "Rules when shrinking; default: a 300 s "
                             "stabilisation window, at most 100% of the pods per 15 s.", default=False),
            "scaleUp": ref(V2 + "HPAScalingRules", "Rules when growing; default: no stabilisation, "
                           "the larger of 4 pods or 100% per 15 s.", default=False),
        },
    ),
    V2 + "HPAScalingRules": obj(
        "How fast the replica count may change in one direction.",
        {
            "policies": array(V2 + "HPAScalingPolicy", "Limits on the change per period.",
                              list_type="atomic"),
            "selectPolicy": string("Which policy applies when several do: Max (the largest "
                                   "change, default), Min or Disabled (never scale this way)."),
            "stabilizationWindowSeconds": int32("Seconds of past recommendations to consider, so "
                                                "the count does not flap; 0 to 3600."),
            "tolerance": quantity("Fraction of the target the metric may differ by without "
                                  "scaling; default 0.1."),
        },
    ),
    V2 + "HPAScalingPolicy": obj(
        "One limit on the change: at most `value` pods (or percent) per `periodSeconds`.",
        {
            "periodSeconds": int32("Length of the window the policy holds over; 1 to 1800."),
            "type": string("Pods or Percent."),
            "value": int32("How many pods, or which percentage of the current ones; > 0."),
        },
        required=["type", "value", "periodSeconds"],
    ),
    V2 + "HorizontalPodAutoscalerStatus": obj(
        "What the autoscaler last observed and decided.",
        {
            "conditions": array(V2 + "HorizontalPodAutoscalerCondition", "AbleToScale, "
                                "ScalingActive and ScalingLimited.", strategy="merge", key="type",
                                list_type="map", map_keys=["type"]),
            "currentMetrics": array(V2 + "MetricStatus", "The last values read of the metrics.",
                                    list_type="atomic"),
            "currentReplicas": int32("Replicas of the target when last seen."),
            "desiredReplicas": int32("Replicas the autoscaler last asked for."),
            "lastScaleTime": time("When the autoscaler last changed the replica count."),
            "observedGeneration": int64("metadata.generation the autoscaler last acted on."),
        },
        required=["desiredReplicas"],
    ),
    V2 + "HorizontalPodAutoscalerCondition": obj(
        "One aspect of the autoscaler's state.",
        {
            "lastTransitionTime": time("When the status last changed."),
            "message": string("Human-readable detail."),
            "reason": string("Brief CamelCase reason for the last change."),
            "status": string("True, False or Unknown."),
            "type": string("AbleToScale, ScalingActive or ScalingLimited."),
        },
        required=["type", "status"],
    ),
    V2 + "MetricStatus": obj(
        "The last value read of one metric; `type` says which field is set.",
        {
            "containerResource": ref(V2 + "ContainerResourceMetricStatus", "A container's resource "
                                     "metric.", default=False),
            "external": ref(V2 + "ExternalMetricStatus", "An external metric.", default=False),
            "object": ref(V2 + "ObjectMetricStatus", "An object's metric.", default=False),
            "pods": ref(V2 + "PodsMetricStatus", "A per-pod metric.", default=False),
            "resource": ref(V2 + "ResourceMetricStatus", "A resource metric.", default=False),
            "type": string("Which field is set.", enum=_METRIC_TYPES),
        },
        required=["type"],
    ),
    V2 + "ResourceMetricStatus": obj(
        "Current CPU or memory of the target's pods.",
        {"current": _current("resource"), "name": string("Name of the resource.")},
        required=["name", "current"],
    ),
    V2 + "ContainerResourceMetricStatus": obj(
        "Current resource use of one container in the target's pods.",
        {"container": string("Name of the container."), "current": _current("resource"),
         "name": string("Name of the resource.")},
        required=["name", "current", "container"],
    ),
    V2 + "PodsMetricStatus": obj(
        "Current per-pod metric.", {"current": _current("metric"), "metric": _identifier()},
        required=["metric", "current"],
    ),
    V2 + "ObjectMetricStatus": obj(
        "Current metric of one object.",
        {"current": _current("metric"),
         "describedObject": ref(V2 + "CrossVersionObjectReference", "The object the metric "
                                "describes."),
         "metric": _identifier()},
        required=["metric", "current", "describedObject"],
    ),
    V2 + "ExternalMetricStatus": obj(
        "Current external metric.", {"current": _current("metric"), "metric": _identifier()},
        required=["metric", "current"],
    ),
    V2 + "MetricValueStatus": obj(
        "A metric's current value.",
        {
            "averageUtilization": int32("Average over the pods as a percentage of their "
                                        "requests."),
            "averageValue": quantity("Average over the pods."),
            "value": quantity("Total value."),
        },
    ),
}
