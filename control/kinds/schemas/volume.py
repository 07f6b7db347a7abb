"""OpenAPI schemas of pod volumes and their sources.

Guarantees: every volume source of the core/v1 API is declared on Volume; the sources manifests use
(configMap, secret, emptyDir, hostPath, persistentVolumeClaim, projected, downwardAPI, nfs, csi,
image) are modelled field by field; the cloud and legacy in-tree sources are modelled with their
scalar fields, and the ephemeral claim template is kept as given.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    META, Schema, array, boolean, free, int32, int64, obj, quantity, ref, string, string_map, strings,
)

_FS = string("Filesystem type to mount, e.g. ext4.")
_RO = boolean("Mount read-only.")
_SECRET = ref("LocalObjectReference", "Secret with credentials.", default=False)
_MODE = int32("Permission bits for created files, as a number (e.g. 0644 in octal = 420).")
_USER = int64("Owner UID of created files.")
_KEY_ITEMS = "Which keys to project and where; all keys by default."


def _source(description: str, properties: dict[str, Schema], required: list[str] | None = None) -> Schema:
    return obj(description, properties, required=required or [])


_SOURCES: dict[str, tuple[str, str]] = {
    # field on Volume: (component, description on Volume)
    "awsElasticBlockStore": ("AWSElasticBlockStoreVolumeSource", "AWS EBS disk (deprecated in-tree)."),
    "azureDisk": ("AzureDiskVolumeSource", "Azure data disk (deprecated in-tree)."),
    "azureFile": ("AzureFileVolumeSource", "Azure File share (deprecated in-tree)."),
    "cephfs": ("CephFSVolumeSource", "CephFS mount."),
    "cinder": ("CinderVolumeSource", "OpenStack Cinder volume (deprecated in-tree)."),
    "configMap": ("ConfigMapVolumeSource", "Files made from the keys of a ConfigMap."),
    "csi": ("CSIVolumeSource", "Ephemeral volume from a CSI driver."),
    "downwardAPI": ("DownwardAPIVolumeSource", "Files holding pod fields and resource values."),
    "emptyDir": ("EmptyDirVolumeSource", "Empty directory that lives as long as the pod."),
    "ephemeral": ("EphemeralVolumeSource", "Volume from a claim created with the pod and deleted "
                  "with it."),
    "fc": ("FCVolumeSource", "Fibre Channel disk."),
    "flexVolume": ("FlexVolumeSource", "Volume from a FlexVolume plugin (deprecated)."),
    "flocker": ("FlockerVolumeSource", "Flocker dataset (deprecated)."),
    "gcePersistentDisk": ("GCEPersistentDiskVolumeSource", "GCE persistent disk (deprecated in-tree)."),
    "gitRepo": ("GitRepoVolumeSource", "Git repository cloned at pod start (deprecated)."),
    "glusterfs": ("GlusterfsVolumeSource", "GlusterFS mount (removed)."),
    "hostPath": ("HostPathVolumeSource", "File or directory of the node's filesystem."),
    "image": ("ImageVolumeSource", "Contents of an OCI image or artifact."),
    "iscsi": ("ISCSIVolumeSource", "iSCSI disk."),
    "nfs": ("NFSVolumeSource", "NFS export."),
    "persistentVolumeClaim": ("PersistentVolumeClaimVolumeSource", "Volume bound to a "
                              "PersistentVolumeClaim in the namespace."),
    "photonPersistentDisk": ("PhotonPersistentDiskVolumeSource", "Photon disk (removed)."),
    "portworxVolume": ("PortworxVolumeSource", "Portworx volume (deprecated in-tree)."),
    "projected": ("ProjectedVolumeSource", "Several sources merged into one directory."),
    "quobyte": ("QuobyteVolumeSource", "Quobyte mount (removed)."),
    "rbd": ("RBDVolumeSource", "Rados block device (deprecated)."),
    "scaleIO": ("ScaleIOVolumeSource", "ScaleIO volume (removed)."),
    "secret": ("SecretVolumeSource", "Files made from the keys of a Secret."),
    "storageos": ("StorageOSVolumeSource", "StorageOS volume (removed)."),
    "vsphereVolume": ("VsphereVirtualDiskVolumeSource", "vSphere disk (deprecated in-tree)."),
}

_volume_props: dict[str, Schema] = {
    field: ref(component, text, default=False) for field, (component, text) in _SOURCES.items()
}
_volume_props["name"] = string("Name of the volume, a DNS label unique within the pod; mounts refer "
                               "to it.")

DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.Volume": obj(
        "A named volume of the pod; exactly one source field is set besides the name.",
        dict(sorted(_volume_props.items())), required=["name"],
    ),
    "io.k8s.api.core.v1.KeyToPath": _source(
        "Projects one key to a file path.",
        {"key": string("The key to project."), "mode": _MODE,
         "path": string("Relative file path; must not contain '..'."), "user": _USER},
        ["key", "path"],
    ),
    "io.k8s.api.core.v1.ConfigMapVolumeSource": _source(
        "A ConfigMap presented as files, one per key.",
        {"defaultMode": _MODE, "defaultUser": _USER,
         "items": array("KeyToPath", _KEY_ITEMS, list_type="atomic"),
         "name": string("Name of the ConfigMap."),
         "optional": boolean("Whether the ConfigMap or its keys may be missing.")},
    ),
    "io.k8s.api.core.v1.SecretVolumeSource": _source(
        "A Secret presented as files, one per key.",
        {"defaultMode": _MODE, "defaultUser": _USER,
         "items": array("KeyToPath", _KEY_ITEMS, list_type="atomic"),
         "optional": boolean("Whether the Secret or its keys may be missing."),
         "secretName": string("Name of the Secret.")},
    ),
    "io.k8s.api.core.v1.EmptyDirVolumeSource": _source(
        "An empty directory shared by the pod's containers.",
        {"medium": string("Storage medium: \"\" (node default) or Memory (tmpfs)."),
         "mode": _MODE,
         "sizeLimit": quantity("Largest size the directory may reach.")},
    ),
    "io.k8s.api.core.v1.HostPathVolumeSource": _source(
        "A path on the node.",
        {"path": string("Path on the node; a symlink is followed."),
         "type": string("What must exist at the path: \"\", DirectoryOrCreate, Directory, "
                        "FileOrCreate, File, Socket, CharDevice or BlockDevice.")},
        ["path"],
    ),
    "io.k8s.api.core.v1.PersistentVolumeClaimVolumeSource": _source(
        "Uses the volume bound to a claim.",
        {"claimName": string("Name of the PersistentVolumeClaim."), "readOnly": _RO},
        ["claimName"],
    ),
    "io.k8s.api.core.v1.NFSVolumeSource": _source(
        "An NFS export.",
        {"path": string("Exported path."), "readOnly": _RO, "server": string("NFS server host or IP.")},
        ["server", "path"],
    ),
    "io.k8s.api.core.v1.CSIVolumeSource": _source(
        "An ephemeral volume provided by a CSI driver.",
        {"driver": string("Name of the CSI driver."), "fsType": _FS,
         "nodePublishSecretRef": ref("LocalObjectReference", "Secret passed to the driver.",
                                     default=False),
         "readOnly": _RO,
         "volumeAttributes": string_map("Driver-specific settings.")},
        ["driver"],
    ),
    "io.k8s.api.core.v1.ImageVolumeSource": _source(
        "An OCI image or artifact mounted read-only.",
        {"pullPolicy": string("Always, Never or IfNotPresent."),
         "reference": string("Image or artifact reference.")},
    ),
    "io.k8s.api.core.v1.EphemeralVolumeSource": _source(
        "A claim created together with the pod.",
        {"volumeClaimTemplate": free("Template of the PersistentVolumeClaim to create.")},
    ),
    "io.k8s.api.core.v1.DownwardAPIVolumeSource": _source(
        "Files holding information about the pod.",
        {"defaultMode": _MODE, "defaultUser": _USER,
         "items": array("DownwardAPIVolumeFile", "Files to create.", list_type="atomic")},
    ),
    "io.k8s.api.core.v1.DownwardAPIVolumeFile": _source(
        "One file holding a pod field or resource value.",
        {"fieldRef": ref("ObjectFieldSelector", "Pod field to write.", default=False),
         "mode": _MODE, "path": string("Relative file path."),
         "resourceFieldRef": ref("ResourceFieldSelector", "Container resource to write.",
                                 default=False),
         "user": _USER},
        ["path"],
    ),
    "io.k8s.api.core.v1.ProjectedVolumeSource": _source(
        "Several sources projected into one directory.",
        {"defaultMode": _MODE, "defaultUser": _USER,
         "sources": array("VolumeProjection", "The sources.", list_type="atomic")},
    ),
    "io.k8s.api.core.v1.VolumeProjection": _source(
        "One source of a projected volume; exactly one field is set.",
        {
            "clusterTrustBundle": ref("ClusterTrustBundleProjection", "Trust anchors from "
                                      "ClusterTrustBundles.", default=False),
            "configMap": ref("ConfigMapProjection", "Keys of a ConfigMap.", default=False),
            "downwardAPI": ref("DownwardAPIProjection", "Pod information.", default=False),
            "podCertificate": free("A certificate and key issued for the pod."),
            "secret": ref("SecretProjection", "Keys of a Secret.", default=False),
            "serviceAccountToken": ref("ServiceAccountTokenProjection", "A service account token.",
                                       default=False),
        },
    ),
    "io.k8s.api.core.v1.ConfigMapProjection": _source(
        "Keys of a ConfigMap in a projected volume.",
        {"items": array("KeyToPath", _KEY_ITEMS, list_type="atomic"),
         "name": string("Name of the ConfigMap."), "optional": boolean("Whether it may be missing.")},
    ),
    "io.k8s.api.core.v1.SecretProjection": _source(
        "Keys of a Secret in a projected volume.",
        {"items": array("KeyToPath", _KEY_ITEMS, list_type="atomic"),
         "name": string("Name of the Secret."), "optional": boolean("Whether it may be missing.")},
    ),
    "io.k8s.api.core.v1.DownwardAPIProjection": _source(
        "Pod information in a projected volume.",
        {"items": array("DownwardAPIVolumeFile", "Files to create.", list_type="atomic")},
    ),
    "io.k8s.api.core.v1.ServiceAccountTokenProjection": _source(
        "A token of the pod's service account, refreshed before it expires.",
        {"audience": string("Intended audience of the token."),
         "expirationSeconds": int64("Requested lifetime; default one hour."),
         "path": string("Relative file path of the token."), "user": _USER},
        ["path"],
    ),
    "io.k8s.api.core.v1.ClusterTrustBundleProjection": _source(
        "Certificates from ClusterTrustBundles, written to one file.",
        {"labelSelector": ref(META + "LabelSelector", "Bundles to include, by label.", default=False),
         "name": string("Bundle to include, by name."),
         "optional": boolean("Whether the bundle may be missing."),
         "path": string("Relative file path."), "signerName": string("Signer of the bundles."),
         "user": _USER},
        ["path"],
    ),
    "io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource": _source(
        "An AWS EBS disk.",
        {"fsType": _FS, "partition": int32("Partition to mount."), "readOnly": _RO,
         "volumeID": string("ID of the EBS volume.")}, ["volumeID"],
    ),
    "io.k8s.api.core.v1.AzureDiskVolumeSource": _source(
        "An Azure data disk.",
        {"cachingMode": string("None, ReadOnly or ReadWrite."), "diskName": string("Disk name."),
         "diskURI": string("Disk URI."), "fsType": _FS, "kind": string("Shared, Dedicated or Managed."),
         "readOnly": _RO}, ["diskName", "diskURI"],
    ),
    "io.k8s.api.core.v1.AzureFileVolumeSource": _source(
        "An Azure File share.",
        {"readOnly": _RO, "secretName": string("Secret with the account name and key."),
         "shareName": string("Share name.")}, ["secretName", "shareName"],
    ),
    "io.k8s.api.core.v1.CephFSVolumeSource": _source(
        "A CephFS mount.",
        {"monitors": strings("Ceph monitors.", list_type="atomic"), "path": string("Path to mount."),
         "readOnly": _RO, "secretFile": string("Keyring path."), "secretRef": _SECRET,
         "user": string("RADOS user.")}, ["monitors"],
    ),
    "io.k8s.api.core.v1.CinderVolumeSource": _source(
        "An OpenStack Cinder volume.",
        {"fsType": _FS, "readOnly": _RO, "secretRef": _SECRET, "volumeID": string("Volume ID.")},
        ["volumeID"],
    ),
    "io.k8s.api.core.v1.FCVolumeSource": _source(
        "A Fibre Channel disk.",
        {"fsType": _FS, "lun": int32("Target LUN."), "readOnly": _RO,
         "targetWWNs": strings("Target world wide names.", list_type="atomic"),
         "wwids": strings("Volume world wide identifiers.", list_type="atomic")},
    ),
    "io.k8s.api.core.v1.FlexVolumeSource": _source(
        "A volume from a FlexVolume driver.",
        {"driver": string("Driver name."), "fsType": _FS,
         "options": string_map("Driver options."), "readOnly": _RO, "secretRef": _SECRET},
        ["driver"],
    ),
    "io.k8s.api.core.v1.FlockerVolumeSource": _source(
        "A Flocker dataset.",
        {"datasetName": string("Dataset name."), "datasetUUID": string("Dataset UUID.")},
    ),
    "io.k8s.api.core.v1.GCEPersistentDiskVolumeSource": _source(
        "A GCE persistent disk.",
        {"fsType": _FS, "partition": int32("Partition to mount."), "pdName": string("Disk name."),
         "readOnly": _RO}, ["pdName"],
    ),
    "io.k8s.api.core.v1.GitRepoVolumeSource": _source(
        "A git repository cloned into the volume.",
        {"directory": string("Target directory."), "repository": string("Repository URL."),
         "revision": string("Commit to check out.")}, ["repository"],
    ),
    "io.k8s.api.core.v1.GlusterfsVolumeSource": _source(
        "A GlusterFS mount.",
        {"endpoints": string("Endpoints naming the cluster."), "path": string("Volume path."),
         "readOnly": _RO}, ["endpoints", "path"],
    ),
    "io.k8s.api.core.v1.ISCSIVolumeSource": _source(
        "An iSCSI disk.",
        {"chapAuthDiscovery": boolean("Use CHAP for discovery."),
         "chapAuthSession": boolean("Use CHAP for the session."), "fsType": _FS,
         "initiatorName": string("Custom initiator name."), "iqn": string("Target IQN."),
         "iscsiInterface": string("Interface name."), "lun": int32("Target LUN."),
         "portals": strings("Extra target portals.", list_type="atomic"), "readOnly": _RO,
         "secretRef": _SECRET, "targetPortal": string("Target portal.")},
        ["targetPortal", "iqn", "lun"],
    ),
    "io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource": _source(
        "A Photon disk.", {"fsType": _FS, "pdID": string("Disk ID.")}, ["pdID"],
    ),
    "io.k8s.api.core.v1.PortworxVolumeSource": _source(
        "A Portworx volume.", {"fsType": _FS, "readOnly": _RO, "volumeID": string("Volume ID.")},
        ["volumeID"],
    ),
    "io.k8s.api.core.v1.QuobyteVolumeSource": _source(
        "A Quobyte mount.",
        {"group": string("Group to map access to."), "readOnly": _RO,
         "registry": string("Registry services."), "tenant": string("Tenant."),
         "user": string("User to map access to."), "volume": string("Volume name.")},
        ["registry", "volume"],
    ),
    "io.k8s.api.core.v1.RBDVolumeSource": _source(
        "A Rados block device.",
        {"fsType": _FS, "image": string("Image name."), "keyring": string("Keyring path."),
         "monitors": strings("Ceph monitors.", list_type="atomic"), "pool": string("Pool name."),
         "readOnly": _RO, "secretRef": _SECRET, "user": string("RADOS user.")},
        ["monitors", "image"],
    ),
    "io.k8s.api.core.v1.ScaleIOVolumeSource": _source(
        "A ScaleIO volume.",
        {"fsType": _FS, "gateway": string("Gateway host."), "protectionDomain": string("Domain."),
         "readOnly": _RO, "secretRef": _SECRET, "sslEnabled": boolean("Use SSL."),
         "storageMode": string("ThickProvisioned or ThinProvisioned."),
         "storagePool": string("Storage pool."), "system": string("Storage system."),
         "volumeName": string("Volume name.")},
        ["gateway", "system", "secretRef"],
    ),
    "io.k8s.api.core.v1.StorageOSVolumeSource": _source(
        "A StorageOS volume.",
        {"fsType": _FS, "readOnly": _RO, "secretRef": _SECRET, "volumeName": string("Volume name."),
         "volumeNamespace": string("Volume namespace.")},
    ),
    "io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource": _source(
        "A vSphere virtual disk.",
        {"fsType": _FS, "storagePolicyID": string("Storage policy ID."),
         "storagePolicyName": string("Storage policy name."), "volumePath": string("Disk path.")},
        ["volumePath"],
    ),
}
