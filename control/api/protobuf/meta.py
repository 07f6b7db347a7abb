"""Field tables of k8s.io/apimachinery's meta/v1 messages that API objects embed (ObjectMeta and
friends), plus DeleteOptions. Numbers from apimachinery's pkg/apis/meta/v1/generated.proto; the
`?` marks follow the Go types (pointer fields). Format: see `control.api.protobuf.schema`.
"""

META = {
    "Condition": (
        "1 type str!, 2 status str!, 3 observedGeneration int, 4 lastTransitionTime Time, 5 reason str!, "
        "6 message str!"),
    "DeleteOptions": (
        "1 gracePeriodSeconds int?, 2 preconditions Preconditions, 3 orphanDependents bool?, "
        "4 propagationPolicy str?, 5 dryRun []str, "
        "6 ignoreStoreReadErrorWithClusterBreakingPotential bool?"),
    "LabelSelector": "1 matchLabels {str}, 2 matchExpressions []LabelSelectorRequirement",
    "LabelSelectorRequirement": "1 key str!, 2 operator str!, 3 values []str",
    "ListMeta": "1 selfLink str, 2 resourceVersion str, 3 continue str, 4 remainingItemCount int?",
    "ManagedFieldsEntry": (
        "1 manager str, 2 operation str, 3 apiVersion str, 4 time Time, 6 fieldsType str, "
        "7 fieldsV1 FieldsV1, 8 subresource str"),
    "ObjectMeta": (
        "1 name str, 2 generateName str, 3 namespace str, 4 selfLink str, 5 uid str, "
        "6 resourceVersion str, 7 generation int, 8 creationTimestamp Time, 9 deletionTimestamp Time, "
        "10 deletionGracePeriodSeconds int?, 11 labels {str}, 12 annotations {str}, "
        "13 ownerReferences []OwnerReference, 14 finalizers []str, 17 managedFields []ManagedFieldsEntry"),
    "OwnerReference": (
        "5 apiVersion str!, 1 kind str!, 3 name str!, 4 uid str!, 6 controller bool?, "
        "7 blockOwnerDeletion bool?"),
    "Preconditions": "1 uid str?, 2 resourceVersion str?",
}
