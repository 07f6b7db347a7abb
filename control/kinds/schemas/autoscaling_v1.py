"""OpenAPI schemas of autoscaling/v1 HorizontalPodAutoscaler, the HPA kind's second served
version (`control.kinds.autoscaling_v1` converts it): one CPU utilisation target and its status.

Guarantees: names and field shapes follow Kubernetes' `io.k8s.api.autoscaling.v1.*` (Scale, the
scale subresource's type, is defined with the schemas of the kinds that have one).
"""

from __future__ import annotations

from typing import Any

_V1 = "io.k8s.api.autoscaling.v1."
_META = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."


def _int(description: str, fmt: str = "int32") -> dict[str, Any]:
    return {"type": "integer", "format": fmt, "description": description}


def _ref(name: str, description: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": name}], "description": description, "default": {}}


DEFINITIONS: dict[str, dict[str, Any]] = {
    _V1 + "HorizontalPodAutoscaler": {
        "type": "object", "description": "Configuration of a horizontal pod autoscaler (the CPU-only autoscaling/v1 view).",
        "properties": {
            "apiVersion": {"type": "string", "description": "Versioned schema of this representation."},
            "kind": {"type": "string", "description": "The REST resource type this object represents."},
            "metadata": _ref(_META + "ObjectMeta", "Standard object metadata."),
            "spec": _ref(f"#/components/schemas/{_V1}HorizontalPodAutoscalerSpec", "Behaviour of the autoscaler."),
            "status": _ref(f"#/components/schemas/{_V1}HorizontalPodAutoscalerStatus", "Current information about the autoscaler."),
        },
        "x-kubernetes-group-version-kind": [{"group": "autoscaling", "kind": "HorizontalPodAutoscaler", "version": "v1"}],
    },
    _V1 + "HorizontalPodAutoscalerSpec": {
        "type": "object", "description": "Specification of a horizontal pod autoscaler.",
        "properties": {
            "maxReplicas": _int("Upper limit for the number of pods; cannot be smaller than minReplicas."),
            "minReplicas": _int("Lower limit for the number of pods (default 1)."),
            "scaleTargetRef": _ref(f"#/components/schemas/{_V1}CrossVersionObjectReference",
                                   "Reference to the scaled resource."),
            "targetCPUUtilizationPercentage": _int("Target average CPU utilization over all the pods, in percent "
                                                   "of the requested CPU."),
        },
        "required": ["scaleTargetRef", "maxReplicas"],
    },
    _V1 + "CrossVersionObjectReference": {
        "type": "object", "description": "Enough information to identify the referred resource.",
        "properties": {
            "apiVersion": {"type": "string", "description": "API version of the referent."},
            "kind": {"type": "string", "description": "Kind of the referent."},
            "name": {"type": "string", "description": "Name of the referent."},
        },
        "required": ["kind", "name"], "x-kubernetes-map-type": "atomic",
    },
    _V1 + "HorizontalPodAutoscalerStatus": {
        "type": "object", "description": "Current status of a horizontal pod autoscaler.",
        "properties": {
            "currentCPUUtilizationPercentage": _int("Current average CPU utilization over all pods, in percent."),
            "currentReplicas": _int("Current number of replicas of pods managed by this autoscaler."),
            "desiredReplicas": _int("Desired number of replicas of pods managed by this autoscaler."),
            "lastScaleTime": {"allOf": [{"$ref": _META + "Time"}], "description": "Last time the autoscaler scaled."},
            "observedGeneration": _int("Most recent generation observed by this autoscaler.", "int64"),
        },
        "required": ["currentReplicas", "desiredReplicas"],
    },
}
