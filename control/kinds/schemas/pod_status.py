"""OpenAPI schemas of a pod's observed state: phase, conditions, IPs and per-container status.

Guarantees: pod conditions merge by type and pod/host IPs by ip (strategic merge); ContainerStatus
lists as required the fields the official Python client insists on (name, ready, restartCount,
image, imageID); container state is one of waiting, running or terminated.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    Schema, array, boolean, free, int32, int64, obj, quantity_map, ref, string, time,
)

_PHASES = ["Failed", "Pending", "Running", "Succeeded", "Unknown"]

DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.PodStatus": obj(
        "What the system last observed about a pod.",
        {
            "allocatedResources": quantity_map("Resources the node set aside for the pod."),
            "conditions": array("PodCondition", "Current conditions: PodScheduled, Initialized, "
                                "ContainersReady, Ready, ...", strategy="merge", key="type"),
            "containerStatuses": array("ContainerStatus", "One entry per app container.",
                                       list_type="atomic"),
            "ephemeralContainerStatuses": array("ContainerStatus", "One entry per ephemeral "
                                                "container.", list_type="atomic"),
            "extendedResourceClaimStatus": free("Status of the claim made for extended resources."),
            "hostIP": string("Primary IP of the node the pod runs on."),
            "hostIPs": array("HostIP", "IPs of the node, primary first.", strategy="merge", key="ip",
                             list_type="atomic"),
            "initContainerStatuses": array("ContainerStatus", "One entry per init container.",
                                           list_type="atomic"),
            "message": string("Human-readable note on why the pod is in this state."),
            "nodeAllocatableResourceClaimStatuses": {
                "type": "array", "items": free("Resources a claim took from the node."),
                "description": "Node-allocatable resources held through resource claims.",
                "x-kubernetes-list-type": "atomic",
            },
            "nominatedNodeName": string("Node where the pod may run once preemption finishes."),
            "observedGeneration": int64("metadata.generation this status reflects."),
            "phase": string("Coarse lifecycle stage: Pending, Running, Succeeded, Failed or "
                            "Unknown.", enum=_PHASES),
            "podIP": string("Primary IP of the pod; empty until one is assigned."),
            "podIPs": array("PodIP", "IPs of the pod, primary first.", strategy="merge", key="ip",
                            list_type="atomic"),
            "qosClass": string("Quality of service class from the resource settings: Guaranteed, "
                               "Burstable or BestEffort.", enum=["BestEffort", "Burstable", "Guaranteed"]),
            "reason": string("Brief CamelCase reason for the state, e.g. Evicted."),
            "resize": string("State of a pending in-place resize."),
            "resourceClaimStatuses": array("PodResourceClaimStatus", "Generated names of the "
                                           "pod's resource claims.", strategy="merge,retainKeys",
                                           key="name", list_type="map", map_keys=["name"]),
            "resources": ref("ResourceRequirements", "Pod-level resources in effect.", default=False),
            "startTime": time("When the node acknowledged the pod, before images were pulled."),
            "volumeHealth": {
                "type": "array", "items": free("Health of one volume of the pod."),
                "description": "Health of the pod's volumes.", "x-kubernetes-list-type": "atomic",
            },
        },
    ),
    "io.k8s.api.core.v1.PodCondition": obj(
        "One aspect of a pod's state.",
        {
            "lastProbeTime": time("When the condition was last checked."),
            "lastTransitionTime": time("When the status last changed."),
            "message": string("Human-readable detail."),
            "observedGeneration": int64("metadata.generation the condition reflects."),
            "reason": string("Brief CamelCase reason for the last change."),
            "status": string("True, False or Unknown."),
            "type": string("Condition type, e.g. Ready or PodScheduled."),
        },
        required=["type", "status"],
    ),
    "io.k8s.api.core.v1.HostIP": obj(
        "An IP of the pod's node.", {"ip": string("The IP address.")}, required=["ip"],
    ),
    "io.k8s.api.core.v1.PodIP": obj(
        "An IP of the pod.", {"ip": string("The IP address.")}, required=["ip"],
    ),
    "io.k8s.api.core.v1.PodResourceClaimStatus": obj(
        "Name of the ResourceClaim generated for one claim of the pod.",
        {"name": string("Name of the claim in pod.spec.resourceClaims."),
         "resourceClaimName": string("Name of the generated ResourceClaim.")},
        required=["name"],
    ),
    "io.k8s.api.core.v1.ContainerStatus": obj(
        "What the node agent last saw of one container.",
        {
            "allocatedResources": quantity_map("Resources the node set aside for the container."),
            "allocatedResourcesStatus": array("ResourceStatus", "Health of the resources assigned "
                                              "to the container.", strategy="merge", key="name",
                                              list_type="map", map_keys=["name"]),
            "containerID": string("Runtime's ID of the container, as <type>://<id>."),
            "image": string("Image the container runs."),
            "imageID": string("Resolved ID (digest) of the image."),
            "lastState": ref("ContainerState", "State before the last restart, e.g. the last "
                             "termination."),
            "name": string("Name of the container in the pod spec."),
            "ready": boolean("Whether the container passes its readiness probe."),
            "resources": ref("ResourceRequirements", "Resources in effect for the running "
                             "container.", default=False),
            "restartCount": int32("How many times the container has been restarted."),
            "started": boolean("Whether the container has started and passed its startup probe."),
            "state": ref("ContainerState", "Current state of the container."),
            "stopSignal": string("Signal the container is stopped with."),
            "user": ref("ContainerUser", "Identity the first process runs as.", default=False),
            "volumeMounts": array("VolumeMountStatus", "Status of the container's mounts.",
                                  strategy="merge", key="mountPath"),
        },
        required=["name", "ready", "restartCount", "image", "imageID"],
    ),
    "io.k8s.api.core.v1.ContainerState": obj(
        "State of a container; exactly one field is set.",
        {
            "running": ref("ContainerStateRunning", "The container is running.", default=False),
            "terminated": ref("ContainerStateTerminated", "The container has exited.", default=False),
            "waiting": ref("ContainerStateWaiting", "The container has not started yet.",
                           default=False),
        },
    ),
    "io.k8s.api.core.v1.ContainerStateRunning": obj(
        "A running container.", {"startedAt": time("When the container last (re)started.")},
    ),
    "io.k8s.api.core.v1.ContainerStateWaiting": obj(
        "A container that is not running yet.",
        {"message": string("Why the container is waiting, in words."),
         "reason": string("Brief reason, e.g. ContainerCreating, CrashLoopBackOff, ErrImagePull.")},
    ),
    "io.k8s.api.core.v1.ContainerStateTerminated": obj(
        "A container that has exited.",
        {
            "containerID": string("Runtime's ID of the container."),
            "exitCode": int32("Exit status of the last run."),
            "finishedAt": time("When the container exited."),
            "message": string("Termination message."),
            "reason": string("Brief reason, e.g. Completed, Error, OOMKilled."),
            "signal": int32("Signal that ended the container, if any."),
            "startedAt": time("When the last run began."),
        },
        required=["exitCode"],
    ),
    "io.k8s.api.core.v1.ContainerUser": obj(
        "Identity of a container's first process.",
        {"linux": ref("LinuxContainerUser", "Linux user and groups.", default=False)},
    ),
    "io.k8s.api.core.v1.LinuxContainerUser": obj(
        "Linux identity of a container's first process.",
        {
            "gid": int64("Primary group ID."),
            "supplementalGroups": {"type": "array", "items": {"type": "integer", "format": "int64",
                                                              "default": 0},
                                   "x-kubernetes-list-type": "atomic",
                                   "description": "Supplementary group IDs."},
            "uid": int64("User ID."),
        },
        required=["uid", "gid"],
    ),
    "io.k8s.api.core.v1.VolumeMountStatus": obj(
        "Status of one mount of a container.",
        {
            "mountPath": string("Path of the mount inside the container."),
            "name": string("Name of the volume."),
            "readOnly": boolean("Whether the mount is read-only."),
            "recursiveReadOnly": string("Whether sub-mounts are read-only too."),
            "volumeStatus": free("Extra status of the volume source."),
        },
        required=["name", "mountPath"],
    ),
    "io.k8s.api.core.v1.ResourceStatus": obj(
        "Health of one resource assigned to a container.",
        {"name": string("Name of the resource."),
         "resources": array("ResourceHealth", "Health of each device.", list_type="map",
                            map_keys=["resourceID"])},
        required=["name"],
    ),
    "io.k8s.api.core.v1.ResourceHealth": obj(
        "Health of one device.",
        {"health": string("Healthy, Unhealthy or Unknown."),
         "message": string("Detail about the health."),
         "resourceID": string("ID of the device.")},
        required=["resourceID"],
    ),
}
