"""Field tables of policy/v1: PodDisruptionBudget (what `kubectl create poddisruptionbudget` POSTs)
and Eviction (what `kubectl drain` POSTs to a pod's `eviction` subresource). Numbers from
k8s.io/api/policy/v1/generated.proto; min/maxUnavailable and the selector are Go pointers; the
status counts have no omitempty. Format: see `control.api.protobuf.schema`.
"""

POLICY = {
    "Eviction": "1 metadata ObjectMeta, 2 deleteOptions DeleteOptions",
    "PodDisruptionBudget": "1 metadata ObjectMeta, 2 spec PodDisruptionBudgetSpec, 3 status PodDisruptionBudgetStatus",
    "PodDisruptionBudgetSpec": (
        "1 minAvailable IntOrString?, 2 selector LabelSelector?, 3 maxUnavailable IntOrString?, "
        "4 unhealthyPodEvictionPolicy str?"),
    "PodDisruptionBudgetStatus": (
        "1 observedGeneration int, 2 disruptedPods {Time}, 3 disruptionsAllowed int!, 4 currentHealthy int!, "
        "5 desiredHealthy int!, 6 expectedPods int!, 7 conditions []Condition"),
}
