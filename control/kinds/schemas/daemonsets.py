"""OpenAPI schemas of apps/v1 DaemonSet and its parts (spec, update strategy, status, conditions),
as k8s.io/api/apps/v1 publishes them.

Guarantees: conditions merge by type; the update strategy is patched with retainKeys (switching to
OnDelete drops the defaulted rollingUpdate, as upstream); maxUnavailable and maxSurge are
IntOrString; the selector and template are refs to the shared meta and core components.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    APPS, META, Schema, array, int32, int64, int_or_string, kind_obj, metadata, obj, ref, string, time,
)

DEFINITIONS: dict[str, Schema] = {
    APPS + "DaemonSet": kind_obj(
        "DaemonSet represents the configuration of a daemon set.", ("apps", "v1", "DaemonSet"),
        {
            "metadata": metadata(),
            "spec": ref(APPS + "DaemonSetSpec", "The desired behavior of this daemon set."),
            "status": ref(APPS + "DaemonSetStatus", "The current status of this daemon set."),
        },
    ),
    APPS + "DaemonSetSpec": obj(
        "DaemonSetSpec is the specification of a daemon set.",
        {
            "minReadySeconds": int32("The minimum number of seconds for which a newly created DaemonSet pod "
                                     "should be ready without any of its container crashing, for it to be "
                                     "considered available. Defaults to 0."),
            "revisionHistoryLimit": int32("The number of old history to retain to allow rollback. Defaults to "
                                          "10."),
            "selector": ref(META + "LabelSelector", "A label query over pods that are managed by the daemon set. "
                            "Must match in order to be controlled. It must match the pod template's labels.",
                            default=False),
            "template": ref("PodTemplateSpec", "An object that describes the pod that will be created. The "
                            "DaemonSet will create exactly one copy of this pod on every node that matches the "
                            "template's node selector (or on every node if no node selector is specified)."),
            "updateStrategy": {**ref(APPS + "DaemonSetUpdateStrategy", "An update strategy to replace existing "
                                     "DaemonSet pods with new pods."), "x-kubernetes-patch-strategy": "retainKeys"},
        },
        required=["selector", "template"],
    ),
    APPS + "DaemonSetUpdateStrategy": obj(
        "DaemonSetUpdateStrategy is a struct used to control the update strategy for a DaemonSet.",
        {
            "rollingUpdate": ref(APPS + "RollingUpdateDaemonSet", "Rolling update config params. Present only "
                                 "if type = \"RollingUpdate\".", default=False),
            "type": string("Type of daemon set update. Can be \"RollingUpdate\" or \"OnDelete\". Default is "
                           "RollingUpdate.", enum=["OnDelete", "RollingUpdate"]),
        },
    ),
    APPS + "RollingUpdateDaemonSet": obj(
        "Spec to control the desired behavior of daemon set rolling update.",
        {
            "maxSurge": int_or_string("The maximum number of nodes with an existing available DaemonSet pod that "
                                      "can have an updated DaemonSet pod during an update; a number or a "
                                      "percentage. Default 0."),
            "maxUnavailable": int_or_string("The maximum number of DaemonSet pods that can be unavailable during "
                                            "the update; a number or a percentage. Default 1."),
        },
    ),
    APPS + "DaemonSetStatus": obj(
        "DaemonSetStatus represents the current status of a daemon set.",
        {
            "collisionCount": int32("Count of hash collisions for the DaemonSet, used to name its newest "
                                    "ControllerRevision."),
            "conditions": array(APPS + "DaemonSetCondition", "Represents the latest available observations of a "
                                "DaemonSet's current state.", strategy="merge", key="type", list_type="map",
                                map_keys=["type"]),
            "currentNumberScheduled": int32("The number of nodes that are running at least 1 daemon pod and are "
                                            "supposed to run the daemon pod."),
            "desiredNumberScheduled": int32("The total number of nodes that should be running the daemon pod "
                                            "(including nodes correctly running the daemon pod)."),
            "numberAvailable": int32("The number of nodes that should be running the daemon pod and have one or "
                                     "more of the daemon pod running and available (ready for at least "
                                     "spec.minReadySeconds)"),
            "numberMisscheduled": int32("The number of nodes that are running the daemon pod, but are not "
                                        "supposed to run the daemon pod."),
            "numberReady": int32("The number of nodes that should be running the daemon pod and have one or more "
                                 "of the daemon pod running with a Ready Condition."),
            "numberUnavailable": int32("The number of nodes that should be running the daemon pod and have none "
                                       "of the daemon pod running and available"),
            "observedGeneration": int64("The most recent generation observed by the daemon set controller."),
            "updatedNumberScheduled": int32("The total number of nodes that are running updated daemon pod"),
        },
        required=["currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"],
    ),
    APPS + "DaemonSetCondition": obj(
        "DaemonSetCondition describes the state of a DaemonSet at a certain point.",
        {
            "lastTransitionTime": time("Last time the condition transitioned from one status to another."),
            "message": string("A human readable message indicating details about the transition."),
            "reason": string("The reason for the condition's last transition."),
            "status": string("Status of the condition, one of True, False, Unknown."),
            "type": string("Type of DaemonSet condition."),
        },
        required=["type", "status"],
    ),
}
