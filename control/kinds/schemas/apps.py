"""OpenAPI schemas of apps/v1 Deployment and ReplicaSet, coordination.k8s.io/v1 Lease and the
autoscaling/v1 Scale subresource body.

Guarantees: Deployment and ReplicaSet conditions merge by type; a Deployment's strategy is patched
with retainKeys (as upstream), so switching to Recreate drops the defaulted rollingUpdate; rolling-update surge and
unavailability are IntOrString (a count or a percentage); each kind and Scale carries its
`x-kubernetes-group-version-kind`.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    APPS, AUTOSCALING, COORDINATION, META, Schema, array, boolean, int32, int64, int_or_string,
    kind_obj, metadata, micro_time, obj, ref, string, time,
)

_SELECTOR = ref(META + "LabelSelector", "Label query over the pods this object manages; must match "
                "the template's labels. Immutable.", default=False)
_TEMPLATE = ref("PodTemplateSpec", "The pod created for each replica.")
_MIN_READY = int32("Seconds a new pod must be ready, with no container crashing, to count as "
                   "available; default 0.")


def _condition(what: str, *, update_time: bool) -> Schema:
    props: dict[str, Schema] = {
        "lastTransitionTime": time("When the status last changed."),
        "message": string("Human-readable detail."),
        "reason": string("Brief CamelCase reason for the last change."),
        "status": string("True, False or Unknown."),
        "type": string(f"Condition type of the {what}."),
    }
    if update_time:
        props["lastUpdateTime"] = time("When the condition was last updated.")
        props = dict(sorted(props.items()))
    return obj(f"One aspect of a {what}'s state.", props, required=["type", "status"])


DEFINITIONS: dict[str, Schema] = {
    APPS + "Deployment": kind_obj(
        "Declarative updates for pods: keeps ReplicaSets rolling towards the current template.",
        ("apps", "v1", "Deployment"),
        {
            "metadata": metadata(),
            "spec": ref(APPS + "DeploymentSpec", "Desired behaviour of the Deployment."),
            "status": ref(APPS + "DeploymentStatus", "Most recently observed state of the "
                          "Deployment."),
        },
    ),
    APPS + "DeploymentSpec": obj(
        "Desired behaviour of a Deployment.",
        {
            "minReadySeconds": _MIN_READY,
            "paused": boolean("When true, template changes do not start a rollout."),
            "progressDeadlineSeconds": int32("Seconds a rollout may make no progress before it is "
                                             "reported as failed; default 600."),
            "replicas": int32("Number of desired pods; default 1."),
            "revisionHistoryLimit": int32("Old ReplicaSets kept for rollback; default 10."),
            "selector": _SELECTOR,
            # retainKeys: a patch that sets `type` drops the members it does not name (rollingUpdate).
            "strategy": {**ref(APPS + "DeploymentStrategy", "How old pods are replaced by new ones.",
                               default=True), "x-kubernetes-patch-strategy": "retainKeys"},
            "template": _TEMPLATE,
        },
        required=["selector", "template"],
    ),
    APPS + "DeploymentStrategy": obj(
        "How a Deployment replaces pods.",
        {
            "rollingUpdate": ref(APPS + "RollingUpdateDeployment", "Parameters of a rolling "
                                 "update; only with type RollingUpdate.", default=False),
            "type": string("RollingUpdate (default) or Recreate.", enum=["Recreate", "RollingUpdate"]),
        },
    ),
    APPS + "RollingUpdateDeployment": obj(
        "Bounds of a rolling update.",
        {
            "maxSurge": int_or_string("Pods allowed above the desired count during the update, as "
                                      "a number or a percentage; default 25%."),
            "maxUnavailable": int_or_string("Pods allowed to be unavailable during the update, as "
                                            "a number or a percentage; default 25%."),
        },
    ),
    APPS + "DeploymentStatus": obj(
        "What the deployment controller last observed.",
        {
            "availableReplicas": int32("Pods available (ready for minReadySeconds)."),
            "collisionCount": int32("Counter used to avoid name collisions of new ReplicaSets."),
            "conditions": array(APPS + "DeploymentCondition", "Current conditions: Available, "
                                "Progressing, ReplicaFailure.", strategy="merge", key="type",
                                list_type="map", map_keys=["type"]),
            "observedGeneration": int64("metadata.generation the controller last acted on."),
            "readyReplicas": int32("Pods that are ready."),
            "replicas": int32("Pods (not terminating) targeted by the Deployment."),
            "terminatingReplicas": int32("Pods that are shutting down."),
            "unavailableReplicas": int32("Pods still needed to reach full availability."),
            "updatedReplicas": int32("Pods created from the current template."),
        },
    ),
    APPS + "DeploymentCondition": _condition("Deployment", update_time=True),
    APPS + "ReplicaSet": kind_obj(
        "Keeps a given number of identical pods running.", ("apps", "v1", "ReplicaSet"),
        {
            "metadata": metadata(),
            "spec": ref(APPS + "ReplicaSetSpec", "Desired behaviour of the ReplicaSet."),
            "status": ref(APPS + "ReplicaSetStatus", "Most recently observed state of the "
                          "ReplicaSet."),
        },
    ),
    APPS + "ReplicaSetSpec": obj(
        "Desired behaviour of a ReplicaSet.",
        {
            "minReadySeconds": _MIN_READY,
            "replicas": int32("Number of desired pods; default 1."),
            "selector": _SELECTOR,
            "template": _TEMPLATE,
        },
        required=["selector"],
    ),
    APPS + "ReplicaSetStatus": obj(
        "What the replicaset controller last observed.",
        {
            "availableReplicas": int32("Pods available (ready for minReadySeconds)."),
            "conditions": array(APPS + "ReplicaSetCondition", "Current conditions.",
                                strategy="merge", key="type", list_type="map", map_keys=["type"]),
            "fullyLabeledReplicas": int32("Pods whose labels match the template's."),
            "observedGeneration": int64("metadata.generation the controller last acted on."),
            "readyReplicas": int32("Pods that are ready."),
            "replicas": int32("Pods currently owned (not terminating)."),
            "terminatingReplicas": int32("Pods that are shutting down."),
        },
        required=["replicas"],
    ),
    APPS + "ReplicaSetCondition": _condition("ReplicaSet", update_time=False),
    COORDINATION + "Lease": kind_obj(
        "A lease: who holds a lock and until when, e.g. a node's heartbeat or a leader election.",
        ("coordination.k8s.io", "v1", "Lease"),
        {"metadata": metadata(), "spec": ref(COORDINATION + "LeaseSpec", "What the lease says.")},
    ),
    COORDINATION + "LeaseSpec": obj(
        "Holder and timing of a lease.",
        {
            "acquireTime": micro_time("When the current holder acquired the lease."),
            "holderIdentity": string("Identity of the current holder."),
            "leaseDurationSeconds": int32("Seconds a candidate waits after renewTime before it may "
                                          "take the lease over."),
            "leaseTransitions": int32("How many times the lease has changed hands."),
            "preferredHolder": string("Holder the lease should pass to, under a coordinated "
                                      "strategy."),
            "renewTime": micro_time("When the holder last renewed the lease."),
            "strategy": string("How the next holder is chosen in coordinated leader election."),
        },
    ),
    AUTOSCALING + "Scale": kind_obj(
        "The replica count of a scalable resource, read and written through its scale "
        "subresource.", ("autoscaling", "v1", "Scale"),
        {
            "metadata": metadata(),
            "spec": ref(AUTOSCALING + "ScaleSpec", "Desired number of replicas."),
            "status": ref(AUTOSCALING + "ScaleStatus", "Current number of replicas; read-only."),
        },
    ),
    AUTOSCALING + "ScaleSpec": obj(
        "Desired scale.", {"replicas": int32("Desired number of replicas.")},
    ),
    AUTOSCALING + "ScaleStatus": obj(
        "Observed scale.",
        {"replicas": int32("Observed number of replicas."),
         "selector": string("Label query over the pods counted, in string form, e.g. app=web.")},
        required=["replicas"],
    ),
}
