"""OpenAPI schemas of core/v1 PersistentVolume and PersistentVolumeClaim (with the claim template a
StatefulSet carries) and storage.k8s.io/v1 StorageClass, as k8s.io/api publishes them.

Guarantees: every field `kubectl explain pv|pvc|storageclass` and kubectl's client-side validation
look for is declared with upstream's types; conditions merge by type; the volume sources a
PersistentVolume may use are the in-tree ones this hub simulates (hostPath, local, nfs, csi) and
any other source is kept as given.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    CORE, META, Schema, array, boolean, free, kind_obj, metadata, obj, quantity_map, ref, string,
    string_map, strings, time,
)

STORAGE = "io.k8s.api.storage.v1."

_ACCESS_MODES = strings("ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.", list_type="atomic")

DEFINITIONS: dict[str, Schema] = {
    CORE + "PersistentVolume": kind_obj(
        "A piece of storage in the cluster, provisioned by an administrator or dynamically by a StorageClass.",
        ("", "v1", "PersistentVolume"),
        {
            "metadata": metadata(),
            "spec": ref(CORE + "PersistentVolumeSpec", "What the volume is and how it may be used."),
            "status": ref(CORE + "PersistentVolumeStatus", "Current phase of the volume."),
        },
    ),
    CORE + "PersistentVolumeSpec": obj(
        "The specification of a persistent volume.",
        {
            "accessModes": _ACCESS_MODES,
            "capacity": quantity_map("The volume's capacity, e.g. {storage: 1Gi}."),
            "claimRef": ref(CORE + "ObjectReference", "The claim this volume is bound to (both ways with "
                            "the claim's volumeName).", default=False),
            "csi": free("A volume handled by an external CSI driver."),
            "hostPath": ref(CORE + "HostPathVolumeSource", "A directory on the node (single-node testing).",
                            default=False),
            "local": ref(CORE + "LocalVolumeSource", "A local disk or directory of one node.", default=False),
            "mountOptions": strings("Mount options, e.g. [\"ro\", \"soft\"].", list_type="atomic"),
            "nfs": ref(CORE + "NFSVolumeSource", "An NFS export.", default=False),
            "nodeAffinity": ref(CORE + "VolumeNodeAffinity", "Nodes this volume can be reached from.",
                                default=False),
            "persistentVolumeReclaimPolicy": string("What happens when the claim is released: Retain "
                                                    "(default for manual volumes), Delete (default for "
                                                    "dynamically provisioned ones) or Recycle.",
                                                    enum=["Delete", "Recycle", "Retain"]),
            "storageClassName": string("The StorageClass this volume belongs to; empty: no class."),
            "volumeAttributesClassName": string("The VolumeAttributesClass this volume belongs to."),
            "volumeMode": string("Filesystem (default) or Block.", enum=["Block", "Filesystem"]),
        },
    ),
    CORE + "PersistentVolumeStatus": obj(
        "The current status of a persistent volume.",
        {
            "lastPhaseTransitionTime": time("When the volume last changed phase."),
            "message": string("Why the volume is in this phase."),
            "phase": string("Pending, Available, Bound, Released or Failed.",
                            enum=["Available", "Bound", "Failed", "Pending", "Released"]),
            "reason": string("Brief CamelCase reason for a failure."),
        },
    ),
    CORE + "LocalVolumeSource": obj(
        "A local storage device or directory.",
        {"fsType": string("Filesystem type of a block device."),
         "path": string("Full path to the volume on the node.")},
        required=["path"],
    ),
    CORE + "VolumeNodeAffinity": obj(
        "Constraints on which nodes a volume can be reached from.",
        {"required": ref(CORE + "NodeSelector", "Nodes that must match.", default=False)},
    ),
    CORE + "PersistentVolumeClaim": kind_obj(
        "A user's request for and claim to a persistent volume.", ("", "v1", "PersistentVolumeClaim"),
        {
            "metadata": metadata(),
            "spec": ref(CORE + "PersistentVolumeClaimSpec", "What the claim asks for."),
            "status": ref(CORE + "PersistentVolumeClaimStatus", "Current status of the claim."),
        },
    ),
    CORE + "PersistentVolumeClaimTemplate": obj(
        "A template of the claim created for an ephemeral volume.",
        {"metadata": metadata("Labels and annotations copied to the claim."),
         "spec": ref(CORE + "PersistentVolumeClaimSpec", "The claim's spec.")},
        required=["spec"],
    ),
    CORE + "PersistentVolumeClaimSpec": obj(
        "The desired characteristics of a volume requested by a pod author.",
        {
            "accessModes": _ACCESS_MODES,
            "dataSource": ref(CORE + "TypedLocalObjectReference", "An existing object to populate the "
                              "volume from (a VolumeSnapshot or another claim).", default=False),
            "dataSourceRef": ref(CORE + "TypedObjectReference", "The object to populate the volume from, "
                                 "possibly in another namespace.", default=False),
            "resources": ref(CORE + "VolumeResourceRequirements", "The minimum resources the volume "
                             "should have (requests.storage)."),
            "selector": ref(META + "LabelSelector", "A label query over volumes to consider for binding.",
                            default=False),
            "storageClassName": string("Name of the StorageClass required by the claim; unset: the default "
                                       "class, \"\": no class."),
            "volumeAttributesClassName": string("The VolumeAttributesClass used by this claim."),
            "volumeMode": string("Filesystem (default) or Block.", enum=["Block", "Filesystem"]),
            "volumeName": string("The binding reference to the PersistentVolume backing this claim."),
        },
    ),
    CORE + "VolumeResourceRequirements": obj(
        "The storage a claim requests (and may be limited to).",
        {"limits": quantity_map("Maximum amount of storage allowed."),
         "requests": quantity_map("Minimum amount of storage required, e.g. {storage: 1Gi}.")},
    ),
    CORE + "TypedLocalObjectReference": obj(
        "A reference to an object in the same namespace.",
        {"apiGroup": string("Group of the referenced resource (empty: core)."),
         "kind": string("Kind of the referenced resource."),
         "name": string("Name of the referenced resource.")},
        required=["kind", "name"],
    ),
    CORE + "TypedObjectReference": obj(
        "A reference to an object, possibly in another namespace.",
        {"apiGroup": string("Group of the referenced resource (empty: core)."),
         "kind": string("Kind of the referenced resource."),
         "name": string("Name of the referenced resource."),
         "namespace": string("Namespace of the referenced resource.")},
        required=["kind", "name"],
    ),
    CORE + "PersistentVolumeClaimStatus": obj(
        "The current status of a persistent volume claim.",
        {
            "accessModes": _ACCESS_MODES,
            "allocatedResourceStatuses": string_map("Resize status per resource."),
            "allocatedResources": quantity_map("Resources allocated to the claim."),
            "capacity": quantity_map("The actual resources of the underlying volume."),
            "conditions": array(CORE + "PersistentVolumeClaimCondition", "Current conditions of the claim.",
                                strategy="merge", key="type", list_type="map", map_keys=["type"]),
            "currentVolumeAttributesClassName": string("The VolumeAttributesClass in use."),
            "phase": string("Pending, Bound or Lost.", enum=["Bound", "Lost", "Pending"]),
        },
    ),
    CORE + "PersistentVolumeClaimCondition": obj(
        "One aspect of a claim's state.",
        {
            "lastProbeTime": time("Last time the condition was probed."),
            "lastTransitionTime": time("Last time the condition changed."),
            "message": string("Human-readable detail."),
            "reason": string("Brief CamelCase reason."),
            "status": string("True, False or Unknown."),
            "type": string("Resizing, FileSystemResizePending, ..."),
        },
        required=["type", "status"],
    ),
    STORAGE + "StorageClass": kind_obj(
        "A class of storage: the provisioner that creates volumes of it and their parameters.",
        ("storage.k8s.io", "v1", "StorageClass"),
        {
            "allowVolumeExpansion": boolean("Whether claims of this class may grow."),
            "allowedTopologies": array(CORE + "TopologySelectorTerm", "Where volumes may be provisioned.",
                                       list_type="atomic"),
            "metadata": metadata(),
            "mountOptions": strings("Mount options of the volumes provisioned.", list_type="atomic"),
            "parameters": string_map("Parameters for the provisioner."),
            "provisioner": string("The provisioner's name, e.g. kubernetes.io/host-path."),
            "reclaimPolicy": string("Reclaim policy of the volumes provisioned: Delete (default) or Retain.",
                                    enum=["Delete", "Recycle", "Retain"]),
            "volumeBindingMode": string("Immediate (default) or WaitForFirstConsumer.",
                                        enum=["Immediate", "WaitForFirstConsumer"]),
        },
        required=["provisioner"],
    ),
    CORE + "TopologySelectorTerm": obj(
        "A topology term: labels a node must have.",
        {"matchLabelExpressions": array(CORE + "TopologySelectorLabelRequirement", "Label requirements.",
                                        list_type="atomic")},
    ),
    CORE + "TopologySelectorLabelRequirement": obj(
        "A label key and the values it may have.",
        {"key": string("The label key."), "values": strings("Values, one of which must match.",
                                                             list_type="atomic")},
        required=["key", "values"],
    ),
}
