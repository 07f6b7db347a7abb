"""OpenAPI schema of core/v1 ReplicationController, as k8s.io/api/core/v1 publishes it.

Guarantees: `spec.selector` is a plain label map (atomic: a patch replaces it whole, not a
LabelSelector); status conditions merge by type; the kind carries its
`x-kubernetes-group-version-kind`.
"""

from __future__ import annotations

from control.kinds.schemas.build import CORE, Schema, array, int32, int64, kind_obj, metadata, obj, ref, string, string_map, time

DEFINITIONS: dict[str, Schema] = {
    CORE + "ReplicationController": kind_obj(
        "Keeps a given number of identical pods running (the older form of a ReplicaSet).",
        ("", "v1", "ReplicationController"),
        {
            "metadata": metadata("If the labels of a ReplicationController are empty, they are defaulted to be "
                                 "the same as the pod template's."),
            "spec": ref(CORE + "ReplicationControllerSpec", "Desired behaviour of the replication controller."),
            "status": ref(CORE + "ReplicationControllerStatus", "Most recently observed state of the "
                          "replication controller."),
        },
    ),
    CORE + "ReplicationControllerSpec": obj(
        "Desired behaviour of a replication controller.",
        {
            "minReadySeconds": int32("Seconds a new pod must be ready, with no container crashing, to count as "
                                     "available; default 0."),
            "replicas": int32("Number of desired pods; default 1."),
            "selector": {**string_map("Label keys and values that pods must carry to be controlled by this "
                                      "replication controller; if empty, defaulted to the pod template's labels."),
                         "x-kubernetes-map-type": "atomic"},
            "template": ref("PodTemplateSpec", "The pod created for each missing replica.", default=False),
        },
    ),
    CORE + "ReplicationControllerStatus": obj(
        "What the replication manager last observed.",
        {
            "availableReplicas": int32("Pods available (ready for minReadySeconds)."),
            "conditions": array(CORE + "ReplicationControllerCondition", "Current conditions.",
                                strategy="merge", key="type", list_type="map", map_keys=["type"]),
            "fullyLabeledReplicas": int32("Pods whose labels match the template's."),
            "observedGeneration": int64("metadata.generation the controller last acted on."),
            "readyReplicas": int32("Pods that are ready."),
            "replicas": int32("Pods currently owned (not terminating)."),
        },
        required=["replicas"],
    ),
    CORE + "ReplicationControllerCondition": obj(
        "One aspect of a replication controller's state.",
        {
            "lastTransitionTime": time("When the status last changed."),
            "message": string("Human-readable detail."),
            "reason": string("Brief CamelCase reason for the last change."),
            "status": string("True, False or Unknown."),
            "type": string("Condition type of the replication controller."),
        },
        required=["type", "status"],
    ),
}
