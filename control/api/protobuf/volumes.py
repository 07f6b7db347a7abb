"""Field tables of core/v1 volume types: every VolumeSource and PersistentVolumeSource member,
projections, and the PersistentVolume / PersistentVolumeClaim messages they lead to.

Numbers from k8s.io/api core/v1/generated.proto. `Volume` and `PersistentVolumeSpec` embed their
source struct, which JSON inlines. Format: see `control.api.protobuf.schema`.
"""

VOLUMES = {
    "AWSElasticBlockStoreVolumeSource": "1 volumeID str!, 2 fsType str, 3 partition int, 4 readOnly bool",
    "AttachedVolume": "1 name str!, 2 devicePath str!",
    "AzureDiskVolumeSource": (
        "1 diskName str!, 2 diskURI str!, 3 cachingMode str?, 4 fsType str?, 5 readOnly bool?, "
        "6 kind str?"),
    "AzureFilePersistentVolumeSource": (
        "1 secretName str!, 2 shareName str!, 3 readOnly bool, 4 secretNamespace str?"),
    "AzureFileVolumeSource": "1 secretName str!, 2 shareName str!, 3 readOnly bool",
    "CSIPersistentVolumeSource": (
        "1 driver str!, 2 volumeHandle str!, 3 readOnly bool, 4 fsType str, 5 volumeAttributes {str}, "
        "6 controllerPublishSecretRef SecretReference, 7 nodeStageSecretRef SecretReference, "
        "8 nodePublishSecretRef SecretReference, 9 controllerExpandSecretRef SecretReference, "
        "10 nodeExpandSecretRef SecretReference"),
    "CSIVolumeSource": (
        "1 driver str!, 2 readOnly bool?, 3 fsType str?, 4 volumeAttributes {str}, "
        "5 nodePublishSecretRef LocalObjectReference"),
    "CephFSPersistentVolumeSource": (
        "1 monitors []str, 2 path str, 3 user str, 4 secretFile str, 5 secretRef SecretReference, "
        "6 readOnly bool"),
    "CephFSVolumeSource": (
        "1 monitors []str, 2 path str, 3 user str, 4 secretFile str, 5 secretRef LocalObjectReference, "
        "6 readOnly bool"),
    "CinderPersistentVolumeSource": (
        "1 volumeID str!, 2 fsType str, 3 readOnly bool, 4 secretRef SecretReference"),
    "CinderVolumeSource": (
        "1 volumeID str!, 2 fsType str, 3 readOnly bool, 4 secretRef LocalObjectReference"),
    "ClusterTrustBundleProjection": (
        "1 name str?, 2 signerName str?, 3 labelSelector LabelSelector, 5 optional bool?, 4 path str!"),
    "ConfigMapProjection": "1 ...LocalObjectReference, 2 items []KeyToPath, 4 optional bool?",
    "ConfigMapVolumeSource": (
        "1 ...LocalObjectReference, 2 items []KeyToPath, 3 defaultMode int?, 4 optional bool?"),
    "DownwardAPIProjection": "1 items []DownwardAPIVolumeFile",
    "DownwardAPIVolumeFile": (
        "1 path str!, 2 fieldRef ObjectFieldSelector, 3 resourceFieldRef ResourceFieldSelector, "
        "4 mode int?"),
    "DownwardAPIVolumeSource": "1 items []DownwardAPIVolumeFile, 2 defaultMode int?",
    "EmptyDirVolumeSource": "1 medium str, 2 sizeLimit Quantity",
    "EphemeralVolumeSource": "1 volumeClaimTemplate PersistentVolumeClaimTemplate",
    "FCVolumeSource": "1 targetWWNs []str, 2 lun int?, 3 fsType str, 4 readOnly bool, 5 wwids []str",
    "FlexPersistentVolumeSource": (
        "1 driver str!, 2 fsType str, 3 secretRef SecretReference, 4 readOnly bool, 5 options {str}"),
    "FlexVolumeSource": (
        "1 driver str!, 2 fsType str, 3 secretRef LocalObjectReference, 4 readOnly bool, 5 options {str}"),
    "FlockerVolumeSource": "1 datasetName str, 2 datasetUUID str",
    "GCEPersistentDiskVolumeSource": "1 pdName str!, 2 fsType str, 3 partition int, 4 readOnly bool",
    "GitRepoVolumeSource": "1 repository str!, 2 revision str, 3 directory str",
    "GlusterfsPersistentVolumeSource": (
        "1 endpoints str!, 2 path str!, 3 readOnly bool, 4 endpointsNamespace str?"),
    "GlusterfsVolumeSource": "1 endpoints str!, 2 path str!, 3 readOnly bool",
    "HostPathVolumeSource": "1 path str!, 2 type str?",
    "ISCSIPersistentVolumeSource": (
        "1 targetPortal str!, 2 iqn str!, 3 lun int!, 4 iscsiInterface str, 5 fsType str, 6 readOnly bool, "
        "7 portals []str, 8 chapAuthDiscovery bool, 11 chapAuthSession bool, 10 secretRef SecretReference, "
        "12 initiatorName str?"),
    "ISCSIVolumeSource": (
        "1 targetPortal str!, 2 iqn str!, 3 lun int!, 4 iscsiInterface str, 5 fsType str, 6 readOnly bool, "
        "7 portals []str, 8 chapAuthDiscovery bool, 11 chapAuthSession bool, "
        "10 secretRef LocalObjectReference, 12 initiatorName str?"),
    "ImageVolumeSource": "1 reference str, 2 pullPolicy str",
    "ImageVolumeStatus": "1 imageRef str!",
    "KeyToPath": "1 key str!, 2 path str!, 3 mode int?",
    "LocalVolumeSource": "1 path str!, 2 fsType str?",
    "ModifyVolumeStatus": "1 targetVolumeAttributesClassName str, 2 status str!",
    "NFSVolumeSource": "1 server str!, 2 path str!, 3 readOnly bool",
    "PersistentVolume": (
        "1 metadata ObjectMeta, 2 spec PersistentVolumeSpec, 3 status PersistentVolumeStatus"),
    "PersistentVolumeClaim": (
        "1 metadata ObjectMeta, 2 spec PersistentVolumeClaimSpec, 3 status PersistentVolumeClaimStatus"),
    "PersistentVolumeClaimCondition": (
        "1 type str!, 2 status str!, 3 lastProbeTime Time, 4 lastTransitionTime Time, 5 reason str, "
        "6 message str"),
    "PersistentVolumeClaimSpec": (
        "1 accessModes []str, 4 selector LabelSelector, 2 resources VolumeResourceRequirements, "
        "3 volumeName str, 5 storageClassName str?, 6 volumeMode str?, "
        "7 dataSource TypedLocalObjectReference, 8 dataSourceRef TypedObjectReference, "
        "9 volumeAttributesClassName str?"),
    "PersistentVolumeClaimStatus": (
        "1 phase str, 2 accessModes []str, 3 capacity {Quantity}, "
        "4 conditions []PersistentVolumeClaimCondition, 5 allocatedResources {Quantity}, "
        "7 allocatedResourceStatuses {str}, 8 currentVolumeAttributesClassName str?, "
        "9 modifyVolumeStatus ModifyVolumeStatus"),
    "PersistentVolumeClaimTemplate": "1 metadata ObjectMeta, 2 spec PersistentVolumeClaimSpec",
    "PersistentVolumeClaimVolumeSource": "1 claimName str!, 2 readOnly bool",
    "PersistentVolumeSource": (
        "1 gcePersistentDisk GCEPersistentDiskVolumeSource, "
        "2 awsElasticBlockStore AWSElasticBlockStoreVolumeSource, 3 hostPath HostPathVolumeSource, "
        "4 glusterfs GlusterfsPersistentVolumeSource, 5 nfs NFSVolumeSource, "
        "6 rbd RBDPersistentVolumeSource, 7 iscsi ISCSIPersistentVolumeSource, "
        "8 cinder CinderPersistentVolumeSource, 9 cephfs CephFSPersistentVolumeSource, "
        "10 fc FCVolumeSource, 11 flocker FlockerVolumeSource, 12 flexVolume FlexPersistentVolumeSource, "
        "13 azureFile AzureFilePersistentVolumeSource, 14 vsphereVolume VsphereVirtualDiskVolumeSource, "
        "15 quobyte QuobyteVolumeSource, 16 azureDisk AzureDiskVolumeSource, "
        "17 photonPersistentDisk PhotonPersistentDiskVolumeSource, 18 portworxVolume PortworxVolumeSource, "
        "19 scaleIO ScaleIOPersistentVolumeSource, 20 local LocalVolumeSource, "
        "21 storageos StorageOSPersistentVolumeSource, 22 csi CSIPersistentVolumeSource"),
    "PersistentVolumeSpec": (
        "1 capacity {Quantity}, 2 ...PersistentVolumeSource, 3 accessModes []str, "
        "4 claimRef ObjectReference, 5 persistentVolumeReclaimPolicy str, 6 storageClassName str, "
        "7 mountOptions []str, 8 volumeMode str?, 9 nodeAffinity VolumeNodeAffinity, "
        "10 volumeAttributesClassName str?"),
    "PersistentVolumeStatus": "1 phase str, 2 message str, 3 reason str, 4 lastPhaseTransitionTime Time",
    "PhotonPersistentDiskVolumeSource": "1 pdID str!, 2 fsType str",
    "PodCertificateProjection": (
        "1 signerName str!, 2 keyType str!, 3 maxExpirationSeconds int?, 4 credentialBundlePath str, "
        "5 keyPath str, 6 certificateChainPath str, 7 userAnnotations {str}"),
    "PortworxVolumeSource": "1 volumeID str!, 2 fsType str, 3 readOnly bool",
    "ProjectedVolumeSource": "1 sources []VolumeProjection, 2 defaultMode int?",
    "QuobyteVolumeSource": (
        "1 registry str!, 2 volume str!, 3 readOnly bool, 4 user str, 5 group str, 6 tenant str"),
    "RBDPersistentVolumeSource": (
        "1 monitors []str, 2 image str!, 3 fsType str, 4 pool str, 5 user str, 6 keyring str, "
        "7 secretRef SecretReference, 8 readOnly bool"),
    "RBDVolumeSource": (
        "1 monitors []str, 2 image str!, 3 fsType str, 4 pool str, 5 user str, 6 keyring str, "
        "7 secretRef LocalObjectReference, 8 readOnly bool"),
    "ScaleIOPersistentVolumeSource": (
        "1 gateway str!, 2 system str!, 3 secretRef SecretReference, 4 sslEnabled bool, "
        "5 protectionDomain str, 6 storagePool str, 7 storageMode str, 8 volumeName str, 9 fsType str, "
        "10 readOnly bool"),
    "ScaleIOVolumeSource": (
        "1 gateway str!, 2 system str!, 3 secretRef LocalObjectReference, 4 sslEnabled bool, "
        "5 protectionDomain str, 6 storagePool str, 7 storageMode str, 8 volumeName str, 9 fsType str, "
        "10 readOnly bool"),
    "SecretProjection": "1 ...LocalObjectReference, 2 items []KeyToPath, 4 optional bool?",
    "SecretReference": "1 name str, 2 namespace str",
    "SecretVolumeSource": "1 secretName str, 2 items []KeyToPath, 3 defaultMode int?, 4 optional bool?",
    "ServiceAccountTokenProjection": "1 audience str, 2 expirationSeconds int?, 3 path str!",
    "StorageOSPersistentVolumeSource": (
        "1 volumeName str, 2 volumeNamespace str, 3 fsType str, 4 readOnly bool, "
        "5 secretRef ObjectReference"),
    "StorageOSVolumeSource": (
        "1 volumeName str, 2 volumeNamespace str, 3 fsType str, 4 readOnly bool, "
        "5 secretRef LocalObjectReference"),
    "TypedLocalObjectReference": "1 apiGroup str?, 2 kind str!, 3 name str!",
    "TypedObjectReference": "1 apiGroup str?, 2 kind str!, 3 name str!, 4 namespace str?",
    "Volume": "1 name str!, 2 ...VolumeSource",
    "VolumeDevice": "1 name str!, 2 devicePath str!",
    "VolumeMount": (
        "1 name str!, 2 readOnly bool, 7 recursiveReadOnly str?, 3 mountPath str!, 4 subPath str, "
        "5 mountPropagation str?, 6 subPathExpr str"),
    "VolumeMountStatus": (
        "1 name str!, 2 mountPath str!, 3 readOnly bool, 4 recursiveReadOnly str?, "
        "5 volumeStatus VolumeStatus"),
    "VolumeNodeAffinity": "1 required NodeSelector",
    "VolumeProjection": (
        "1 secret SecretProjection, 2 downwardAPI DownwardAPIProjection, 3 configMap ConfigMapProjection, "
        "4 serviceAccountToken ServiceAccountTokenProjection, "
        "5 clusterTrustBundle ClusterTrustBundleProjection, 6 podCertificate PodCertificateProjection"),
    "VolumeResourceRequirements": "1 limits {Quantity}, 2 requests {Quantity}",
    "VolumeSource": (
        "1 hostPath HostPathVolumeSource, 2 emptyDir EmptyDirVolumeSource, "
        "3 gcePersistentDisk GCEPersistentDiskVolumeSource, "
        "4 awsElasticBlockStore AWSElasticBlockStoreVolumeSource, 5 gitRepo GitRepoVolumeSource, "
        "6 secret SecretVolumeSource, 7 nfs NFSVolumeSource, 8 iscsi ISCSIVolumeSource, "
        "9 glusterfs GlusterfsVolumeSource, 10 persistentVolumeClaim PersistentVolumeClaimVolumeSource, "
        "11 rbd RBDVolumeSource, 12 flexVolume FlexVolumeSource, 13 cinder CinderVolumeSource, "
        "14 cephfs CephFSVolumeSource, 15 flocker FlockerVolumeSource, "
        "16 downwardAPI DownwardAPIVolumeSource, 17 fc FCVolumeSource, 18 azureFile AzureFileVolumeSource, "
        "19 configMap ConfigMapVolumeSource, 20 vsphereVolume VsphereVirtualDiskVolumeSource, "
        "21 quobyte QuobyteVolumeSource, 22 azureDisk AzureDiskVolumeSource, "
        "23 photonPersistentDisk PhotonPersistentDiskVolumeSource, 26 projected ProjectedVolumeSource, "
        "24 portworxVolume PortworxVolumeSource, 25 scaleIO ScaleIOVolumeSource, "
        "27 storageos StorageOSVolumeSource, 28 csi CSIVolumeSource, 29 ephemeral EphemeralVolumeSource, "
        "30 image ImageVolumeSource"),
    "VolumeStatus": "1 image ImageVolumeStatus",
    "VsphereVirtualDiskVolumeSource": (
        "1 volumePath str!, 2 fsType str, 3 storagePolicyName str, 4 storagePolicyID str"),
}
