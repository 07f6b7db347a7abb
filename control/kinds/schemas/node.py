"""OpenAPI schemas of the Node kind: spec (taints, pod CIDRs), status (capacity, conditions,
addresses, node info, daemon endpoints, images).

Guarantees: node conditions and addresses merge by type; taints carry no merge strategy, so a patch
replaces them whole; NodeSystemInfo lists the fields the node agent always reports as required.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    Schema, array, boolean, free, int32, int64, kind_obj, metadata, obj, quantity_map, ref, string,
    strings, time,
)

_EFFECTS = ["NoExecute", "NoSchedule", "PreferNoSchedule"]

DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.Node": kind_obj(
        "A worker machine that runs pods; the node agent keeps its status up to date.",
        ("", "v1", "Node"),
        {
            "metadata": metadata(),
            "spec": ref("NodeSpec", "How the node should be used: taints, pod CIDRs, whether it "
                        "takes new pods."),
            "status": ref("NodeStatus", "Most recently observed state of the node; read-only to "
                          "users."),
        },
    ),
    "io.k8s.api.core.v1.NodeSpec": obj(
        "Desired properties of a node.",
        {
            "configSource": free("Deprecated dynamic kubelet configuration source."),
            "externalID": string("Deprecated."),
            "podPreemptionPolicy": free("Limits on preempting pods on this node."),
            "podCIDR": string("IP range assigned to the node for pod IPs."),
            "podCIDRs": strings("IP ranges for pod IPs, one per family, primary first.",
                                strategy="merge", list_type="set"),
            "providerID": string("Cloud provider's ID of the machine."),
            "taints": array("Taint", "Taints that repel pods not tolerating them.", list_type="atomic"),
            "unschedulable": boolean("When true no new pods are scheduled here (kubectl cordon)."),
        },
    ),
    "io.k8s.api.core.v1.Taint": obj(
        "Marks a node so that pods without a matching toleration avoid it.",
        {
            "effect": string("NoSchedule, PreferNoSchedule or NoExecute.", enum=_EFFECTS),
            "key": string("Taint key."),
            "timeAdded": time("When a NoExecute taint was added."),
            "value": string("Taint value."),
        },
        required=["key", "effect"],
    ),
    "io.k8s.api.core.v1.NodeStatus": obj(
        "What the system last observed about a node.",
        {
            "addresses": array("NodeAddress", "Addresses of the node (InternalIP, Hostname, ...).",
                               strategy="merge", key="type", list_type="map", map_keys=["type"]),
            "allocatable": quantity_map("Resources available to pods: capacity minus what the "
                                        "system reserves."),
            "capacity": quantity_map("Total resources of the node: cpu, memory, pods, ..."),
            "conditions": array("NodeCondition", "Current conditions: Ready, MemoryPressure, "
                                "DiskPressure, PIDPressure, NetworkUnavailable.",
                                strategy="merge", key="type", list_type="map", map_keys=["type"]),
            "config": free("Status of the deprecated dynamic kubelet configuration."),
            "daemonEndpoints": ref("NodeDaemonEndpoints", "Ports of daemons on the node."),
            "declaredFeatures": strings("Features the node declares.", list_type="atomic"),
            "features": ref("NodeFeatures", "Features the node agent supports.", default=False),
            "images": array("ContainerImage", "Images present on the node.", list_type="atomic"),
            "nodeInfo": ref("NodeSystemInfo", "Versions and IDs reported by the node."),
            "phase": string("Deprecated lifecycle phase."),
            "runtimeHandlers": array("NodeRuntimeHandler", "Container runtime handlers available.",
                                     list_type="atomic"),
            "volumesAttached": array("AttachedVolume", "Volumes attached to the node.",
                                     list_type="atomic"),
            "volumesInUse": strings("Volumes in use (mounted) on the node.", list_type="atomic"),
        },
    ),
    "io.k8s.api.core.v1.NodeAddress": obj(
        "One address of a node.",
        {"address": string("The address."),
         "type": string("Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.")},
        required=["type", "address"],
    ),
    "io.k8s.api.core.v1.NodeCondition": obj(
        "One aspect of a node's health.",
        {
            "lastHeartbeatTime": time("When the node agent last reported this condition."),
            "lastTransitionTime": time("When the status last changed."),
            "message": string("Human-readable detail."),
            "reason": string("Brief CamelCase reason for the last change."),
            "status": string("True, False or Unknown."),
            "type": string("Condition type, e.g. Ready."),
        },
        required=["type", "status"],
    ),
    "io.k8s.api.core.v1.NodeDaemonEndpoints": obj(
        "Ports of daemons running on the node.",
        {"kubeletEndpoint": ref("DaemonEndpoint", "Where the node agent listens.")},
    ),
    "io.k8s.api.core.v1.DaemonEndpoint": obj(
        "A port a daemon listens on.", {"Port": int32("Port number.")}, required=["Port"],
    ),
    "io.k8s.api.core.v1.NodeSystemInfo": obj(
        "Identifiers and versions reported by the node.",
        {
            "architecture": string("CPU architecture, e.g. amd64."),
            "bootID": string("ID that changes on every boot."),
            "containerRuntimeVersion": string("Container runtime and version, e.g. "
                                              "containerd://1.7.0."),
            "kernelVersion": string("Kernel version (uname -r)."),
            "kubeProxyVersion": string("Deprecated: version of kube-proxy."),
            "kubeletVersion": string("Version of the node agent."),
            "machineID": string("Machine ID of the host."),
            "operatingSystem": string("Operating system, e.g. linux."),
            "osImage": string("OS image, e.g. Debian GNU/Linux 12."),
            "runningInUserNamespace": boolean("Whether the node agent runs in a user namespace."),
            "swap": ref("NodeSwapStatus", "Swap memory of the node.", default=False),
            "systemUUID": string("System UUID of the host."),
        },
        required=["machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                  "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion", "operatingSystem",
                  "architecture"],
    ),
    "io.k8s.api.core.v1.NodeSwapStatus": obj(
        "Swap memory of a node.", {"capacity": int64("Total swap in bytes.")},
    ),
    "io.k8s.api.core.v1.NodeFeatures": obj(
        "Features the node agent supports.",
        {"supplementalGroupsPolicy": boolean("Whether supplementalGroupsPolicy is honoured.")},
    ),
    "io.k8s.api.core.v1.NodeRuntimeHandler": obj(
        "One runtime handler of the node.",
        {"features": ref("NodeRuntimeHandlerFeatures", "What the handler supports.", default=False),
         "name": string("Handler name; empty for the default.")},
    ),
    "io.k8s.api.core.v1.NodeRuntimeHandlerFeatures": obj(
        "Features of a runtime handler.",
        {"recursiveReadOnlyMounts": boolean("Supports recursive read-only mounts."),
         "userNamespaces": boolean("Supports user namespaces.")},
    ),
    "io.k8s.api.core.v1.ContainerImage": obj(
        "An image present on a node.",
        {"names": strings("Names (tags and digests) of the image.", list_type="atomic"),
         "sizeBytes": int64("Size in bytes.")},
    ),
    "io.k8s.api.core.v1.AttachedVolume": obj(
        "A volume attached to a node.",
        {"devicePath": string("Where the device is available."), "name": string("Volume name.")},
        required=["name", "devicePath"],
    ),
}
