"""Field tables of apps/v1 (Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision),
autoscaling/v1 and v2 (Scale, HorizontalPodAutoscaler) and coordination.k8s.io/v1 (Lease).

Numbers from each group's generated.proto in k8s.io/api. autoscaling/v1 and v2 share message
names; the v1 HorizontalPodAutoscaler trio carries a `V1` suffix here, the rest is identical in
both versions. Format: see `control.api.protobuf.schema`.
"""

WORKLOADS = {
    "ContainerResourceMetricSource": "1 name str!, 2 target MetricTarget, 3 container str!",
    "ContainerResourceMetricStatus": "1 name str!, 2 current MetricValueStatus, 3 container str!",
    "ControllerRevision": "1 metadata ObjectMeta, 2 data RawExtension, 3 revision int",
    "CrossVersionObjectReference": "1 kind str!, 2 name str!, 3 apiVersion str",
    "DaemonSet": "1 metadata ObjectMeta, 2 spec DaemonSetSpec, 3 status DaemonSetStatus",
    "DaemonSetCondition": (
        "1 type str, 2 status str, 3 lastTransitionTime Time, 4 reason str, 5 message str"),
    "DaemonSetSpec": (
        "1 selector LabelSelector, 2 template PodTemplateSpec, 3 updateStrategy DaemonSetUpdateStrategy, "
        "4 minReadySeconds int, 6 revisionHistoryLimit int?"),
    "DaemonSetStatus": (
        "1 currentNumberScheduled int!, 2 numberMisscheduled int!, 3 desiredNumberScheduled int!, "
        "4 numberReady int!, 5 observedGeneration int, 6 updatedNumberScheduled int, "
        "7 numberAvailable int, 8 numberUnavailable int, 9 collisionCount int?, "
        "10 conditions []DaemonSetCondition"),
    "DaemonSetUpdateStrategy": "1 type str, 2 rollingUpdate RollingUpdateDaemonSet",
    "Deployment": "1 metadata ObjectMeta, 2 spec DeploymentSpec, 3 status DeploymentStatus",
    "DeploymentCondition": (
        "1 type str, 2 status str, 6 lastUpdateTime Time, 7 lastTransitionTime Time, 4 reason str, "
        "5 message str"),
    "DeploymentSpec": (
        "1 replicas int?, 2 selector LabelSelector, 3 template PodTemplateSpec, "
        "4 strategy DeploymentStrategy, 5 minReadySeconds int, 6 revisionHistoryLimit int?, 7 paused bool, "
        "9 progressDeadlineSeconds int?, 10 podReplacementPolicy str?"),
    "DeploymentStatus": (
        "1 observedGeneration int, 2 replicas int, 3 updatedReplicas int, 7 readyReplicas int, "
        "4 availableReplicas int, 5 unavailableReplicas int, 9 terminatingReplicas int?, "
        "6 conditions []DeploymentCondition, 8 collisionCount int?"),
    "DeploymentStrategy": "1 type str, 2 rollingUpdate RollingUpdateDeployment",
    "ExternalMetricSource": "1 metric MetricIdentifier, 2 target MetricTarget",
    "ExternalMetricStatus": "1 metric MetricIdentifier, 2 current MetricValueStatus",
    "HPAScalingPolicy": "1 type str!, 2 value int!, 3 periodSeconds int!",
    "HPAScalingRules": (
        "3 stabilizationWindowSeconds int?, 1 selectPolicy str?, 2 policies []HPAScalingPolicy, "
        "4 tolerance Quantity"),
    "HorizontalPodAutoscaler": (
        "1 metadata ObjectMeta, 2 spec HorizontalPodAutoscalerSpec, "
        "3 status HorizontalPodAutoscalerStatus"),
    "HorizontalPodAutoscalerBehavior": "1 scaleUp HPAScalingRules, 2 scaleDown HPAScalingRules",
    "HorizontalPodAutoscalerCondition": (
        "1 type str!, 2 status str!, 3 lastTransitionTime Time, 4 reason str, 5 message str"),
    "HorizontalPodAutoscalerSpec": (
        "1 scaleTargetRef CrossVersionObjectReference, 2 minReplicas int?, 3 maxReplicas int!, "
        "4 metrics []MetricSpec, 5 behavior HorizontalPodAutoscalerBehavior"),
    "HorizontalPodAutoscalerSpecV1": (
        "1 scaleTargetRef CrossVersionObjectReference, 2 minReplicas int?, 3 maxReplicas int!, "
        "4 targetCPUUtilizationPercentage int?"),
    "HorizontalPodAutoscalerStatus": (
        "1 observedGeneration int?, 2 lastScaleTime Time, 3 currentReplicas int, 4 desiredReplicas int!, "
        "5 currentMetrics []MetricStatus, 6 conditions []HorizontalPodAutoscalerCondition"),
    "HorizontalPodAutoscalerStatusV1": (
        "1 observedGeneration int?, 2 lastScaleTime Time, 3 currentReplicas int!, 4 desiredReplicas int!, "
        "5 currentCPUUtilizationPercentage int?"),
    "HorizontalPodAutoscalerV1": (
        "1 metadata ObjectMeta, 2 spec HorizontalPodAutoscalerSpecV1, "
        "3 status HorizontalPodAutoscalerStatusV1"),
    "Lease": "1 metadata ObjectMeta, 2 spec LeaseSpec",
    "LeaseSpec": (
        "1 holderIdentity str?, 2 leaseDurationSeconds int?, 3 acquireTime MicroTime, "
        "4 renewTime MicroTime, 5 leaseTransitions int?, 6 strategy str?, 7 preferredHolder str?"),
    "MetricIdentifier": "1 name str!, 2 selector LabelSelector",
    "MetricSpec": (
        "1 type str!, 2 object ObjectMetricSource, 3 pods PodsMetricSource, "
        "4 resource ResourceMetricSource, 7 containerResource ContainerResourceMetricSource, "
        "5 external ExternalMetricSource"),
    "MetricStatus": (
        "1 type str!, 2 object ObjectMetricStatus, 3 pods PodsMetricStatus, "
        "4 resource ResourceMetricStatus, 7 containerResource ContainerResourceMetricStatus, "
        "5 external ExternalMetricStatus"),
    "MetricTarget": "1 type str!, 2 value Quantity, 3 averageValue Quantity, 4 averageUtilization int?",
    "MetricValueStatus": "1 value Quantity, 2 averageValue Quantity, 3 averageUtilization int?",
    "ObjectMetricSource": (
        "1 describedObject CrossVersionObjectReference, 2 target MetricTarget, 3 metric MetricIdentifier"),
    "ObjectMetricStatus": (
        "1 metric MetricIdentifier, 2 current MetricValueStatus, "
        "3 describedObject CrossVersionObjectReference"),
    "PodsMetricSource": "1 metric MetricIdentifier, 2 target MetricTarget",
    "PodsMetricStatus": "1 metric MetricIdentifier, 2 current MetricValueStatus",
    "ReplicaSet": "1 metadata ObjectMeta, 2 spec ReplicaSetSpec, 3 status ReplicaSetStatus",
    "ReplicaSetCondition": (
        "1 type str, 2 status str, 3 lastTransitionTime Time, 4 reason str, 5 message str"),
    "ReplicaSetSpec": (
        "1 replicas int?, 4 minReadySeconds int, 2 selector LabelSelector, 3 template PodTemplateSpec"),
    "ReplicaSetStatus": (
        "1 replicas int!, 2 fullyLabeledReplicas int, 4 readyReplicas int, 5 availableReplicas int, "
        "7 terminatingReplicas int?, 3 observedGeneration int, 6 conditions []ReplicaSetCondition"),
    "ResourceMetricSource": "1 name str!, 2 target MetricTarget",
    "ResourceMetricStatus": "1 name str!, 2 current MetricValueStatus",
    "RollingUpdateDaemonSet": "1 maxUnavailable IntOrString, 2 maxSurge IntOrString",
    "RollingUpdateDeployment": "1 maxUnavailable IntOrString, 2 maxSurge IntOrString",
    "RollingUpdateStatefulSetStrategy": "1 partition int?, 2 maxUnavailable IntOrString",
    "Scale": "1 metadata ObjectMeta, 2 spec ScaleSpec, 3 status ScaleStatus",
    "ScaleSpec": "1 replicas int",
    "ScaleStatus": "1 replicas int!, 2 selector str",
    "StatefulSet": "1 metadata ObjectMeta, 2 spec StatefulSetSpec, 3 status StatefulSetStatus",
    "StatefulSetCondition": (
        "1 type str, 2 status str, 3 lastTransitionTime Time, 4 reason str, 5 message str"),
    "StatefulSetOrdinals": "1 start int",
    "StatefulSetPersistentVolumeClaimRetentionPolicy": "1 whenDeleted str, 2 whenScaled str",
    "StatefulSetSpec": (
        "1 replicas int?, 2 selector LabelSelector, 3 template PodTemplateSpec, "
        "4 volumeClaimTemplates []PersistentVolumeClaim, 5 serviceName str, 6 podManagementPolicy str, "
        "7 updateStrategy StatefulSetUpdateStrategy, 8 revisionHistoryLimit int?, 9 minReadySeconds int, "
        "10 persistentVolumeClaimRetentionPolicy StatefulSetPersistentVolumeClaimRetentionPolicy, "
        "11 ordinals StatefulSetOrdinals"),
    "StatefulSetStatus": (
        "1 observedGeneration int, 2 replicas int!, 3 readyReplicas int, 4 currentReplicas int, "
        "5 updatedReplicas int, 6 currentRevision str, 7 updateRevision str, 9 collisionCount int?, "
        "10 conditions []StatefulSetCondition, 11 availableReplicas int!"),
    "StatefulSetUpdateStrategy": "1 type str, 2 rollingUpdate RollingUpdateStatefulSetStrategy",
}
