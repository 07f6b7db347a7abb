"""OpenAPI schemas of apps/v1 StatefulSet (spec, update strategy, claim retention policy, ordinals,
status, conditions) and ControllerRevision, as k8s.io/api/apps/v1 publishes them.

Guarantees: StatefulSet conditions merge by type; volumeClaimTemplates are PersistentVolumeClaims
replaced whole (atomic, as upstream); the partition and maxUnavailable of a rolling update are
int32 and IntOrString; a ControllerRevision's `data` is kept as given (a RawExtension).
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    APPS, CORE, META, Schema, array, int32, int64, int_or_string, kind_obj, metadata, obj, ref, string, time,
)

DEFINITIONS: dict[str, Schema] = {
    APPS + "StatefulSet": kind_obj(
        "Pods with stable identities: ordinal names, stable network names and their own claims.",
        ("apps", "v1", "StatefulSet"),
        {
            "metadata": metadata(),
            "spec": ref(APPS + "StatefulSetSpec", "Desired identities of the StatefulSet's pods."),
            "status": ref(APPS + "StatefulSetStatus", "Most recently observed state of the StatefulSet."),
        },
    ),
    APPS + "StatefulSetSpec": obj(
        "A StatefulSetSpec is the specification of a StatefulSet.",
        {
            "minReadySeconds": int32("Seconds a new pod must be ready to count as available; default 0."),
            "ordinals": ref(APPS + "StatefulSetOrdinals", "The numbering of the replicas' indices.",
                            default=False),
            "persistentVolumeClaimRetentionPolicy": ref(
                APPS + "StatefulSetPersistentVolumeClaimRetentionPolicy", "What happens to the claims made "
                "from volumeClaimTemplates when the set is deleted or scaled down; default Retain.",
                default=False),
            "podManagementPolicy": string("OrderedReady (default): pods are created in order, each Running "
                                          "and Ready before the next, and removed in reverse; Parallel: all "
                                          "at once.", enum=["OrderedReady", "Parallel"]),
            "replicas": int32("Desired number of replicas; default 1."),
            "revisionHistoryLimit": int32("ControllerRevisions kept in the history; default 10."),
            "selector": ref(META + "LabelSelector", "Label query over pods; must match the template's labels.",
                            default=False),
            "serviceName": string("The headless Service governing the set: pods get "
                                  "pod-specific-string.serviceName.default.svc.cluster.local."),
            "template": ref(CORE + "PodTemplateSpec", "The pod created for each ordinal."),
            "updateStrategy": ref(APPS + "StatefulSetUpdateStrategy", "How pods are replaced when the "
                                  "template changes."),
            "volumeClaimTemplates": array(CORE + "PersistentVolumeClaim", "Claims each pod gets, named "
                                          "<template>-<pod>; immutable.", list_type="atomic"),
        },
        required=["selector", "template"],
    ),
    APPS + "StatefulSetOrdinals": obj(
        "The numbering of a StatefulSet's replicas.",
        {"start": int32("The number of the first replica; default 0.")},
    ),
    APPS + "StatefulSetPersistentVolumeClaimRetentionPolicy": obj(
        "What happens to a StatefulSet's claims.",
        {
            "whenDeleted": string("Retain (default) or Delete, when the StatefulSet is deleted.",
                                  enum=["Delete", "Retain"]),
            "whenScaled": string("Retain (default) or Delete, when a replica is scaled away.",
                                 enum=["Delete", "Retain"]),
        },
    ),
    APPS + "StatefulSetUpdateStrategy": obj(
        "How a StatefulSet replaces its pods.",
        {
            "rollingUpdate": ref(APPS + "RollingUpdateStatefulSetStrategy", "Parameters of a rolling update.",
                                 default=False),
            "type": string("RollingUpdate (default) or OnDelete.", enum=["OnDelete", "RollingUpdate"]),
        },
    ),
    APPS + "RollingUpdateStatefulSetStrategy": obj(
        "Parameters of a StatefulSet's rolling update.",
        {
            "maxUnavailable": int_or_string("Pods that may be unavailable during the update; default 1."),
            "partition": int32("Ordinals at or above the partition are updated; default 0."),
        },
    ),
    APPS + "StatefulSetStatus": obj(
        "What the statefulset controller last observed.",
        {
            "availableReplicas": int32("Pods ready for at least minReadySeconds."),
            "collisionCount": int32("Counter used to avoid name collisions of ControllerRevisions."),
            "conditions": array(APPS + "StatefulSetCondition", "Current conditions.", strategy="merge",
                                key="type", list_type="map", map_keys=["type"]),
            "currentReplicas": int32("Pods created from the currentRevision."),
            "currentRevision": string("The revision the pods below the partition run."),
            "observedGeneration": int64("metadata.generation the controller last acted on."),
            "readyReplicas": int32("Pods with a Ready condition."),
            "replicas": int32("Pods created by the controller."),
            "updateRevision": string("The revision of the current template."),
            "updatedReplicas": int32("Pods created from the updateRevision."),
        },
        required=["replicas"],
    ),
    APPS + "StatefulSetCondition": obj(
        "One aspect of a StatefulSet's state.",
        {
            "lastTransitionTime": time("When the status last changed."),
            "message": string("Human-readable detail."),
            "reason": string("Brief CamelCase reason."),
            "status": string("True, False or Unknown."),
            "type": string("Condition type."),
        },
        required=["type", "status"],
    ),
}
