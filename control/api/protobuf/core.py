"""Field tables of core/v1 objects other than volumes: Namespace, ConfigMap, Secret, Service,
Endpoints, Node, Event, Pod with everything a PodSpec and a Container hold, and the rest of the
core group's top-level kinds.

Numbers from k8s.io/api core/v1/generated.proto (which is ahead of kubectl 1.32; a field a client
does not know it never sends). Format: see `control.api.protobuf.schema`.
"""

# Container and EphemeralContainerCommon carry the same fields under the same numbers.
CONTAINER_FIELDS = (
    "1 name str!, 2 image str, 3 command []str, 4 args []str, 5 workingDir str, 6 ports []ContainerPort, "
    "19 envFrom []EnvFromSource, 7 env []EnvVar, 8 resources ResourceRequirements, "
    "23 resizePolicy []ContainerResizePolicy, 24 restartPolicy str?, "
    "25 restartPolicyRules []ContainerRestartRule, 9 volumeMounts []VolumeMount, "
    "21 volumeDevices []VolumeDevice, 10 livenessProbe Probe, 11 readinessProbe Probe, "
    "22 startupProbe Probe, 12 lifecycle Lifecycle, 13 terminationMessagePath str, "
    "20 terminationMessagePolicy str, 14 imagePullPolicy str, 15 securityContext SecurityContext, "
    "16 stdin bool, 17 stdinOnce bool, 18 tty bool")

CORE = {
    "Affinity": "1 nodeAffinity NodeAffinity, 2 podAffinity PodAffinity, 3 podAntiAffinity PodAntiAffinity",
    "AppArmorProfile": "1 type str!, 2 localhostProfile str?",
    "Binding": "1 metadata ObjectMeta, 2 target ObjectReference",
    "Capabilities": "1 add []str, 2 drop []str",
    "ClientIPConfig": "1 timeoutSeconds int?",
    "ConfigMap": "1 metadata ObjectMeta, 4 immutable bool?, 2 data {str}, 3 binaryData {bytes}",
    "ConfigMapEnvSource": "1 ...LocalObjectReference, 2 optional bool?",
    "ConfigMapKeySelector": "1 ...LocalObjectReference, 2 key str!, 3 optional bool?",
    "ConfigMapNodeConfigSource": (
        "1 namespace str!, 2 name str!, 3 uid str, 4 resourceVersion str, 5 kubeletConfigKey str!"),
    "Container": CONTAINER_FIELDS,
    "ContainerExtendedResourceRequest": "1 containerName str!, 2 resourceName str!, 3 requestName str!",
    "ContainerImage": "1 names []str, 2 sizeBytes int",
    "ContainerPort": "1 name str, 2 hostPort int, 3 containerPort int!, 4 protocol str, 5 hostIP str",
    "ContainerResizePolicy": "1 resourceName str!, 2 restartPolicy str!",
    "ContainerRestartRule": "1 action str!, 2 exitCodes ContainerRestartRuleOnExitCodes",
    "ContainerRestartRuleOnExitCodes": "1 operator str!, 2 values []int",
    "ContainerState": (
        "1 waiting ContainerStateWaiting, 2 running ContainerStateRunning, "
        "3 terminated ContainerStateTerminated"),
    "ContainerStateRunning": "1 startedAt Time",
    "ContainerStateTerminated": (
        "1 exitCode int!, 2 signal int, 3 reason str, 4 message str, 5 startedAt Time, 6 finishedAt Time, "
        "7 containerID str"),
    "ContainerStateWaiting": "1 reason str, 2 message str",
    "ContainerStatus": (
        "1 name str!, 2 state ContainerState, 3 lastState ContainerState, 4 ready bool!, "
        "5 restartCount int!, 6 image str!, 7 imageID str!, 8 containerID str, 9 started bool?, "
        "10 allocatedResources {Quantity}, 11 resources ResourceRequirements, "
        "12 volumeMounts []VolumeMountStatus, 13 user ContainerUser, "
        "14 allocatedResourcesStatus []ResourceStatus, 15 stopSignal str?"),
    "ContainerUser": "1 linux LinuxContainerUser",
    "DaemonEndpoint": "1 Port int!",
    "EndpointAddress": "1 ip str!, 3 hostname str, 4 nodeName str?, 2 targetRef ObjectReference",
    "EndpointPort": "1 name str, 2 port int!, 3 protocol str, 4 appProtocol str?",
    "EndpointSubset": (
        "1 addresses []EndpointAddress, 2 notReadyAddresses []EndpointAddress, 3 ports []EndpointPort"),
    "Endpoints": "1 metadata ObjectMeta, 2 subsets []EndpointSubset",
    "EnvFromSource": "1 prefix str, 2 configMapRef ConfigMapEnvSource, 3 secretRef SecretEnvSource",
    "EnvVar": "1 name str!, 2 value str, 3 valueFrom EnvVarSource",
    "EnvVarSource": (
        "1 fieldRef ObjectFieldSelector, 2 resourceFieldRef ResourceFieldSelector, "
        "3 configMapKeyRef ConfigMapKeySelector, 4 secretKeyRef SecretKeySelector, "
        "5 fileKeyRef FileKeySelector"),
    "EphemeralContainer": "1 ...EphemeralContainerCommon, 2 targetContainerName str",
    "EphemeralContainerCommon": CONTAINER_FIELDS,
    "Event": (
        "1 metadata ObjectMeta, 2 involvedObject ObjectReference, 3 reason str, 4 message str, "
        "5 source EventSource, 6 firstTimestamp Time, 7 lastTimestamp Time, 8 count int, 9 type str, "
        "10 eventTime MicroTime, 11 series EventSeries, 12 action str, 13 related ObjectReference, "
        "14 reportingComponent str!, 15 reportingInstance str!"),
    "EventSeries": "1 count int, 2 lastObservedTime MicroTime",
    "EventSource": "1 component str, 2 host str",
    "ExecAction": "1 command []str",
    "FileKeySelector": "1 volumeName str!, 2 path str!, 3 key str!, 4 optional bool?",
    "GRPCAction": "1 port int!, 2 service str?",
    "HTTPGetAction": "1 path str, 2 port IntOrString, 3 host str, 4 scheme str, 5 httpHeaders []HTTPHeader",
    "HTTPHeader": "1 name str!, 2 value str!",
    "HostAlias": "1 ip str!, 2 hostnames []str",
    "HostIP": "1 ip str!",
    "Lifecycle": "1 postStart LifecycleHandler, 2 preStop LifecycleHandler, 3 stopSignal str?",
    "LifecycleHandler": (
        "1 exec ExecAction, 2 httpGet HTTPGetAction, 3 tcpSocket TCPSocketAction, 4 sleep SleepAction"),
    "LimitRange": "1 metadata ObjectMeta, 2 spec LimitRangeSpec",
    "LimitRangeItem": (
        "1 type str!, 2 max {Quantity}, 3 min {Quantity}, 4 default {Quantity}, "
        "5 defaultRequest {Quantity}, 6 maxLimitRequestRatio {Quantity}"),
    "LimitRangeSpec": "1 limits []LimitRangeItem",
    "LinuxContainerUser": "1 uid int!, 2 gid int!, 3 supplementalGroups []int",
    "LoadBalancerIngress": "1 ip str, 2 hostname str, 3 ipMode str?, 4 ports []PortStatus",
    "LoadBalancerStatus": "1 ingress []LoadBalancerIngress",
    "LocalObjectReference": "1 name str",
    "Namespace": "1 metadata ObjectMeta, 2 spec NamespaceSpec, 3 status NamespaceStatus",
    "NamespaceCondition": (
        "1 type str!, 2 status str!, 4 lastTransitionTime Time, 5 reason str, 6 message str"),
    "NamespaceSpec": "1 finalizers []str",
    "NamespaceStatus": "1 phase str, 2 conditions []NamespaceCondition",
    "Node": "1 metadata ObjectMeta, 2 spec NodeSpec, 3 status NodeStatus",
    "NodeAddress": "1 type str!, 2 address str!",
    "NodeAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution NodeSelector, "
        "2 preferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm"),
    "NodeCondition": (
        "1 type str!, 2 status str!, 3 lastHeartbeatTime Time, 4 lastTransitionTime Time, 5 reason str, "
        "6 message str"),
    "NodeConfigSource": "2 configMap ConfigMapNodeConfigSource",
    "NodeConfigStatus": (
        "1 assigned NodeConfigSource, 2 active NodeConfigSource, 3 lastKnownGood NodeConfigSource, "
        "4 error str"),
    "NodeDaemonEndpoints": "1 kubeletEndpoint DaemonEndpoint",
    "NodeFeatures": "1 supplementalGroupsPolicy bool?, 2 containerUlimits bool?",
    "NodeRuntimeHandler": "1 name str, 2 features NodeRuntimeHandlerFeatures",
    "NodeRuntimeHandlerFeatures": "1 recursiveReadOnlyMounts bool?, 2 userNamespaces bool?",
    "NodeSelector": "1 nodeSelectorTerms []NodeSelectorTerm",
    "NodeSelectorRequirement": "1 key str!, 2 operator str!, 3 values []str",
    "NodeSelectorTerm": (
        "1 matchExpressions []NodeSelectorRequirement, 2 matchFields []NodeSelectorRequirement"),
    "NodeSpec": (
        "1 podCIDR str, 7 podCIDRs []str, 3 providerID str, 4 unschedulable bool, 5 taints []Taint, "
        "6 configSource NodeConfigSource, 2 externalID str"),
    "NodeStatus": (
        "1 capacity {Quantity}, 2 allocatable {Quantity}, 3 phase str, 4 conditions []NodeCondition, "
        "5 addresses []NodeAddress, 6 daemonEndpoints NodeDaemonEndpoints, 7 nodeInfo NodeSystemInfo, "
        "8 images []ContainerImage, 9 volumesInUse []str, 10 volumesAttached []AttachedVolume, "
        "11 config NodeConfigStatus, 12 runtimeHandlers []NodeRuntimeHandler, 13 features NodeFeatures, "
        "14 declaredFeatures []str"),
    "NodeSwapStatus": "1 capacity int?",
    "NodeSystemInfo": (
        "1 machineID str!, 2 systemUUID str!, 3 bootID str!, 4 kernelVersion str!, 5 osImage str!, "
        "6 containerRuntimeVersion str!, 7 kubeletVersion str!, 8 kubeProxyVersion str!, "
        "9 operatingSystem str!, 10 architecture str!, 11 swap NodeSwapStatus"),
    "ObjectFieldSelector": "1 apiVersion str, 2 fieldPath str!",
    "ObjectReference": (
        "1 kind str, 2 namespace str, 3 name str, 4 uid str, 5 apiVersion str, 6 resourceVersion str, "
        "7 fieldPath str"),
    "Pod": "1 metadata ObjectMeta, 2 spec PodSpec, 3 status PodStatus",
    "PodAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm, "
        "2 preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm"),
    "PodAffinityTerm": (
        "1 labelSelector LabelSelector, 2 namespaces []str, 3 topologyKey str!, "
        "4 namespaceSelector LabelSelector, 5 matchLabelKeys []str, 6 mismatchLabelKeys []str"),
    "PodAntiAffinity": (
        "1 requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm, "
        "2 preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm"),
    "PodCondition": (
        "1 type str!, 7 observedGeneration int, 2 status str!, 3 lastProbeTime Time, "
        "4 lastTransitionTime Time, 5 reason str, 6 message str"),
    "PodDNSConfig": "1 nameservers []str, 2 searches []str, 3 options []PodDNSConfigOption",
    "PodDNSConfigOption": "1 name str, 2 value str?",
    "PodExtendedResourceClaimStatus": (
        "1 requestMappings []ContainerExtendedResourceRequest, 2 resourceClaimName str!"),
    "PodIP": "1 ip str!",
    "PodOS": "1 name str!",
    "PodReadinessGate": "1 conditionType str!",
    "PodResourceClaim": "1 name str!, 3 resourceClaimName str?, 4 resourceClaimTemplateName str?",
    "PodResourceClaimStatus": "1 name str!, 2 resourceClaimName str?",
    "PodSchedulingGate": "1 name str!",
    "PodSecurityContext": (
        "1 seLinuxOptions SELinuxOptions, 8 windowsOptions WindowsSecurityContextOptions, "
        "2 runAsUser int?, 6 runAsGroup int?, 3 runAsNonRoot bool?, 4 supplementalGroups []int, "
        "12 supplementalGroupsPolicy str?, 5 fsGroup int?, 7 sysctls []Sysctl, 9 fsGroupChangePolicy str?, "
        "10 seccompProfile SeccompProfile, 11 appArmorProfile AppArmorProfile, "
        "13 seLinuxChangePolicy str?"),
    "PodSignature": "1 podController OwnerReference",
    "PodSpec": (
        "1 volumes []Volume, 20 initContainers []Container, 2 containers []Container, "
        "34 ephemeralContainers []EphemeralContainer, 3 restartPolicy str, "
        "4 terminationGracePeriodSeconds int?, 5 activeDeadlineSeconds int?, 6 dnsPolicy str, "
        "7 nodeSelector {str}, 8 serviceAccountName str, 9 serviceAccount str, "
        "21 automountServiceAccountToken bool?, 10 nodeName str, 11 hostNetwork bool, 12 hostPID bool, "
        "13 hostIPC bool, 27 shareProcessNamespace bool?, 14 securityContext PodSecurityContext, "
        "15 imagePullSecrets []LocalObjectReference, 16 hostname str, 17 subdomain str, "
        "18 affinity Affinity, 19 schedulerName str, 22 tolerations []Toleration, "
        "23 hostAliases []HostAlias, 24 priorityClassName str, 25 priority int?, "
        "26 dnsConfig PodDNSConfig, 28 readinessGates []PodReadinessGate, 29 runtimeClassName str?, "
        "30 enableServiceLinks bool?, 31 preemptionPolicy str?, 32 overhead {Quantity}, "
        "33 topologySpreadConstraints []TopologySpreadConstraint, 35 setHostnameAsFQDN bool?, 36 os PodOS, "
        "37 hostUsers bool?, 38 schedulingGates []PodSchedulingGate, 39 resourceClaims []PodResourceClaim, "
        "40 resources ResourceRequirements, 41 hostnameOverride str?, 42 workloadRef WorkloadReference"),
    "PodStatus": (
        "17 observedGeneration int, 1 phase str, 2 conditions []PodCondition, 3 message str, 4 reason str, "
        "11 nominatedNodeName str, 5 hostIP str, 16 hostIPs []HostIP, 6 podIP str, 12 podIPs []PodIP, "
        "7 startTime Time, 10 initContainerStatuses []ContainerStatus, "
        "8 containerStatuses []ContainerStatus, 9 qosClass str, "
        "13 ephemeralContainerStatuses []ContainerStatus, 14 resize str, "
        "15 resourceClaimStatuses []PodResourceClaimStatus, "
        "18 extendedResourceClaimStatus PodExtendedResourceClaimStatus, 19 allocatedResources {Quantity}, "
        "20 resources ResourceRequirements"),
    "PodTemplate": "1 metadata ObjectMeta, 2 template PodTemplateSpec",
    "PodTemplateSpec": "1 metadata ObjectMeta, 2 spec PodSpec",
    "PortStatus": "1 port int!, 2 protocol str!, 3 error str?",
    "PreferAvoidPodsEntry": "1 podSignature PodSignature, 2 evictionTime Time, 3 reason str, 4 message str",
    "PreferredSchedulingTerm": "1 weight int!, 2 preference NodeSelectorTerm",
    "Probe": (
        "1 ...ProbeHandler, 2 initialDelaySeconds int, 3 timeoutSeconds int, 4 periodSeconds int, "
        "5 successThreshold int, 6 failureThreshold int, 7 terminationGracePeriodSeconds int?"),
    "ProbeHandler": (
        "1 exec ExecAction, 2 httpGet HTTPGetAction, 3 tcpSocket TCPSocketAction, 4 grpc GRPCAction"),
    "ReplicationController": (
        "1 metadata ObjectMeta, 2 spec ReplicationControllerSpec, 3 status ReplicationControllerStatus"),
    "ReplicationControllerCondition": (
        "1 type str!, 2 status str!, 3 lastTransitionTime Time, 4 reason str, 5 message str"),
    "ReplicationControllerSpec": (
        "1 replicas int?, 4 minReadySeconds int, 2 selector {str}, 3 template PodTemplateSpec"),
    "ReplicationControllerStatus": (
        "1 replicas int!, 2 fullyLabeledReplicas int, 4 readyReplicas int, 5 availableReplicas int, "
        "3 observedGeneration int, 6 conditions []ReplicationControllerCondition"),
    "ResourceClaim": "1 name str, 2 request str",
    "ResourceFieldSelector": "1 containerName str, 2 resource str!, 3 divisor Quantity",
    "ResourceHealth": "1 resourceID str!, 2 health str, 6 message str?",
    "ResourceQuota": "1 metadata ObjectMeta, 2 spec ResourceQuotaSpec, 3 status ResourceQuotaStatus",
    "ResourceQuotaSpec": "1 hard {Quantity}, 2 scopes []str, 3 scopeSelector ScopeSelector",
    "ResourceQuotaStatus": "1 hard {Quantity}, 2 used {Quantity}",
    "ResourceRequirements": "1 limits {Quantity}, 2 requests {Quantity}, 3 claims []ResourceClaim",
    "ResourceStatus": "1 name str!, 2 resources []ResourceHealth",
    "SELinuxOptions": "1 user str, 2 role str, 3 type str, 4 level str",
    "ScopeSelector": "1 matchExpressions []ScopedResourceSelectorRequirement",
    "ScopedResourceSelectorRequirement": "1 scopeName str!, 2 operator str!, 3 values []str",
    "SeccompProfile": "1 type str!, 2 localhostProfile str?",
    "Secret": "1 metadata ObjectMeta, 5 immutable bool?, 2 data {bytes}, 4 stringData {str}, 3 type str",
    "SecretEnvSource": "1 ...LocalObjectReference, 2 optional bool?",
    "SecretKeySelector": "1 ...LocalObjectReference, 2 key str!, 3 optional bool?",
    "SecurityContext": (
        "1 capabilities Capabilities, 2 privileged bool?, 3 seLinuxOptions SELinuxOptions, "
        "10 windowsOptions WindowsSecurityContextOptions, 4 runAsUser int?, 8 runAsGroup int?, "
        "5 runAsNonRoot bool?, 6 readOnlyRootFilesystem bool?, 7 allowPrivilegeEscalation bool?, "
        "9 procMount str?, 11 seccompProfile SeccompProfile, 12 appArmorProfile AppArmorProfile, "
        "13 ulimits []Ulimit"),
    "Service": "1 metadata ObjectMeta, 2 spec ServiceSpec, 3 status ServiceStatus",
    "ServiceAccount": (
        "1 metadata ObjectMeta, 2 secrets []ObjectReference, 3 imagePullSecrets []LocalObjectReference, "
        "4 automountServiceAccountToken bool?"),
    "ServicePort": (
        "1 name str, 2 protocol str, 6 appProtocol str?, 3 port int!, 4 targetPort IntOrString, "
        "5 nodePort int"),
    "ServiceSpec": (
        "1 ports []ServicePort, 2 selector {str}, 3 clusterIP str, 18 clusterIPs []str, 4 type str, "
        "5 externalIPs []str, 7 sessionAffinity str, 8 loadBalancerIP str, "
        "9 loadBalancerSourceRanges []str, 10 externalName str, 11 externalTrafficPolicy str, "
        "12 healthCheckNodePort int, 13 publishNotReadyAddresses bool, "
        "14 sessionAffinityConfig SessionAffinityConfig, 19 ipFamilies []str, 17 ipFamilyPolicy str?, "
        "20 allocateLoadBalancerNodePorts bool?, 21 loadBalancerClass str?, 22 internalTrafficPolicy str?, "
        "23 trafficDistribution str?"),
    "ServiceStatus": "1 loadBalancer LoadBalancerStatus, 2 conditions []Condition",
    "SessionAffinityConfig": "1 clientIP ClientIPConfig",
    "SleepAction": "1 seconds int!",
    "Sysctl": "1 name str!, 2 value str!",
    "TCPSocketAction": "1 port IntOrString, 2 host str",
    "Taint": "1 key str!, 2 value str, 3 effect str!, 4 timeAdded Time",
    "Toleration": "1 key str, 2 operator str, 3 value str, 4 effect str, 5 tolerationSeconds int?",
    "TopologySpreadConstraint": (
        "1 maxSkew int!, 2 topologyKey str!, 3 whenUnsatisfiable str!, 4 labelSelector LabelSelector, "
        "5 minDomains int?, 6 nodeAffinityPolicy str?, 7 nodeTaintsPolicy str?, 8 matchLabelKeys []str"),
    "Ulimit": "1 name str, 2 hard int, 3 soft int",
    "WeightedPodAffinityTerm": "1 weight int!, 2 podAffinityTerm PodAffinityTerm",
    "WindowsSecurityContextOptions": (
        "1 gmsaCredentialSpecName str?, 2 gmsaCredentialSpec str?, 3 runAsUserName str?, "
        "4 hostProcess bool?"),
    "WorkloadReference": "1 name str, 2 podGroup str, 3 podGroupReplicaKey str",
}
