"""Field tables of batch/v1 (Job, CronJob and their parts): what `kubectl create job` and
`kubectl create cronjob` POST. Numbers from k8s.io/api's generated.proto files;
checked against the descriptors compiled into kubectl by the tests. Format: see
`control.api.protobuf.schema`.
"""

BATCH = {
    "CronJob": "1 metadata ObjectMeta, 2 spec CronJobSpec, 3 status CronJobStatus",
    "CronJobSpec": (
        "1 schedule str!, 8 timeZone str?, 2 startingDeadlineSeconds int?, 3 concurrencyPolicy str, "
        "4 suspend bool?, 5 jobTemplate JobTemplateSpec, 6 successfulJobsHistoryLimit int?, "
        "7 failedJobsHistoryLimit int?"),
    "CronJobStatus": "1 active []ObjectReference, 4 lastScheduleTime Time, 5 lastSuccessfulTime Time",
    "Job": "1 metadata ObjectMeta, 2 spec JobSpec, 3 status JobStatus",
    "JobCondition": (
        "1 type str!, 2 status str!, 3 lastProbeTime Time, 4 lastTransitionTime Time, 5 reason str, "
        "6 message str"),
    "JobSpec": (
        "1 parallelism int?, 2 completions int?, 3 activeDeadlineSeconds int?, "
        "11 podFailurePolicy PodFailurePolicy, 16 successPolicy SuccessPolicy, 7 backoffLimit int?, "
        "12 backoffLimitPerIndex int?, 13 maxFailedIndexes int?, 4 selector LabelSelector, "
        "5 manualSelector bool?, 6 template PodTemplateSpec, 8 ttlSecondsAfterFinished int?, "
        "9 completionMode str?, 10 suspend bool?, 14 podReplacementPolicy str?, 15 managedBy str?"),
    "JobStatus": (
        "1 conditions []JobCondition, 2 startTime Time, 3 completionTime Time, 4 active int, "
        "5 succeeded int, 6 failed int, 11 terminating int?, 7 completedIndexes str, 10 failedIndexes str?, "
        "8 uncountedTerminatedPods UncountedTerminatedPods, 9 ready int?"),
    "JobTemplateSpec": "1 metadata ObjectMeta, 2 spec JobSpec",
    "PodFailurePolicy": "1 rules []PodFailurePolicyRule",
    "PodFailurePolicyOnExitCodesRequirement": "1 containerName str?, 2 operator str!, 3 values []int",
    "PodFailurePolicyOnPodConditionsPattern": "1 type str!, 2 status str!",
    "PodFailurePolicyRule": (
        "1 action str!, 2 onExitCodes PodFailurePolicyOnExitCodesRequirement, "
        "3 onPodConditions []PodFailurePolicyOnPodConditionsPattern"),
    "SuccessPolicy": "1 rules []SuccessPolicyRule",
    "SuccessPolicyRule": "1 succeededIndexes str?, 2 succeededCount int?",
    "UncountedTerminatedPods": "1 succeeded []str, 2 failed []str",
}
