"""OpenAPI schemas of policy/v1 PodDisruptionBudget (spec, status) and Eviction, the body of a pod's
`eviction` subresource, as k8s.io/api/policy/v1 publishes them.

Guarantees: minAvailable and maxUnavailable are IntOrString (a count or a percentage); the
selector is replaced whole by a strategic merge patch (upstream's `patchStrategy:"replace"`); the
status conditions are meta/v1 Conditions merged by type; disruptedPods maps pod names to times.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    META, REF_PREFIX, TIME, Schema, array, int32, int64, int_or_string, kind_obj, metadata, obj, ref, string,
)

POLICY = "io.k8s.api.policy.v1."

_selector = ref(META + "LabelSelector", "Label query over pods whose evictions are managed by the disruption "
                "budget. A null selector selects no pods; an empty one selects all pods in the namespace.",
                default=False)
_selector["x-kubernetes-patch-strategy"] = "replace"

_conditions = array(META + "Condition", "Conditions of the budget: DisruptionAllowed (True with reason "
                    "SufficientPods when pods may be disrupted; False with InsufficientPods or SyncFailed).",
                    strategy="merge", key="type", list_type="map", map_keys=["type"])

DEFINITIONS: dict[str, Schema] = {
    POLICY + "PodDisruptionBudget": kind_obj(
        "PodDisruptionBudget is an object to define the max disruption that can be caused to a collection "
        "of pods.", ("policy", "v1", "PodDisruptionBudget"),
        {
            "metadata": metadata(),
            "spec": ref(POLICY + "PodDisruptionBudgetSpec", "Specification of the desired behavior of the "
                        "PodDisruptionBudget."),
            "status": ref(POLICY + "PodDisruptionBudgetStatus", "Most recently observed status of the "
                          "PodDisruptionBudget."),
        },
    ),
    POLICY + "PodDisruptionBudgetSpec": obj(
        "PodDisruptionBudgetSpec is a description of a PodDisruptionBudget.",
        {
            "maxUnavailable": int_or_string("An eviction is allowed if at most \"maxUnavailable\" pods selected "
                                            "by \"selector\" are unavailable after the eviction. Mutually "
                                            "exclusive with minAvailable."),
            "minAvailable": int_or_string("An eviction is allowed if at least \"minAvailable\" pods selected by "
                                          "\"selector\" will still be available after the eviction. Mutually "
                                          "exclusive with maxUnavailable."),
            "selector": _selector,
            "unhealthyPodEvictionPolicy": string(
                "When running but not ready pods may be evicted: IfHealthyBudget (only while the budget is "
                "met) or AlwaysAllow (regardless of the budget).", enum=["AlwaysAllow", "IfHealthyBudget"]),
        },
    ),
    POLICY + "PodDisruptionBudgetStatus": obj(
        "PodDisruptionBudgetStatus represents information about the status of a PodDisruptionBudget.",
        {
            "conditions": _conditions,
            "currentHealthy": int32("current number of healthy pods"),
            "desiredHealthy": int32("minimum desired number of healthy pods"),
            "disruptedPods": {"type": "object", "additionalProperties": {"$ref": REF_PREFIX + TIME},
                              "description": "Pods whose eviction the API server allowed but the disruption "
                                             "controller has not yet seen deleted, with the time of the "
                                             "eviction."},
            "disruptionsAllowed": int32("Number of pod disruptions that are currently allowed."),
            "expectedPods": int32("total number of pods counted by this disruption budget"),
            "observedGeneration": int64("Most recent generation observed when updating this PDB status."),
        },
        required=["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"],
    ),
    POLICY + "Eviction": kind_obj(
        "Eviction evicts a pod from its node subject to certain policies and safety constraints. This is a "
        "subresource of Pod. A request to cause such an eviction is created by POSTing to "
        ".../pods/<pod name>/evictions.", ("policy", "v1", "Eviction"),
        {
            "deleteOptions": ref(META + "DeleteOptions", "DeleteOptions may be provided", default=False),
            "metadata": metadata("ObjectMeta describes the pod that is being evicted."),
        },
    ),
}
