"""batch/v1 Job: defaults, the generated selector, validation, immutable fields, printing and field
selectors, as kube-apiserver's `pkg/registry/batch/job/strategy.go` and `pkg/apis/batch` do them.

Guarantees:
- create resets status and, unless `spec.manualSelector` is true, generates the selector
  `batch.kubernetes.io/controller-uid=<uid>` and adds the template labels
  `batch.kubernetes.io/controller-uid`, `batch.kubernetes.io/job-name`, `controller-uid` and
  `job-name` (labels the user already set are kept, and then fail validation if they disagree);
- defaults as `pkg/apis/batch/v1/defaults.go`: completions and parallelism 1 when both are unset,
  parallelism 1, backoffLimit 6, completionMode NonIndexed, suspend false, podReplacementPolicy
  TerminatingOrFailed (Failed with a podFailurePolicy), the Job's labels from its template's
  when it has none, and the pod template's own defaults;
- validation never raises on odd input; counts are non-negative, restartPolicy is OnFailure or
  Never (only Never with a podFailurePolicy, whose rules name an action and one of onExitCodes or
  onPodConditions), the selector matches the template; on update the selector, completionMode and template are
  immutable (the template's scheduling directives and labels may change while the Job is suspended
  and has never started) and completions may change only for an Indexed Job kept at completions ==
  parallelism (elastic Indexed Jobs);
- the table is kubectl's `NAME STATUS COMPLETIONS DURATION AGE` (printJob of v1.32).
"""

from __future__ import annotations

import copy
from typing import Any

from control.errors import go_value
from control.kinds.apps import pod_template_defaults, selector_match_causes, template_labels
from control.kinds.base import (
    AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, label_causes, required, selector_string,
)
from control.kinds.meta import age, human_duration, is_condition_true, parse_time
from control.kinds.pods import pod_spec_causes

CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
NON_INDEXED, INDEXED = "NonIndexed", "Indexed"
RESTART_POLICIES = ("OnFailure", "Never")
FAILURE_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
MAX_PARALLELISM_INDEXED = 100_000
# What a suspended Job that never started may still change in its template (upstream's
# JobMutableNodeSchedulingDirectives): where its pods may run, and their labels and annotations.
SCHEDULING_DIRECTIVES = ("nodeSelector", "tolerations", "affinity", "schedulingGates")


def _spec(job: Obj) -> dict[str, Any]:
    spec = job.get("spec")
    return spec if isinstance(spec, dict) else {}


def _template_labels(job: Obj) -> dict[str, Any] | None:
    template = _spec(job).get("template")
    if not isinstance(template, dict):
        return None
    meta = template.setdefault("metadata", {})
    if not isinstance(meta, dict):
        return None
    labels = meta.get("labels")
    if labels is None:
        labels = meta["labels"] = {}
    return labels if isinstance(labels, dict) else None


def prepare_job_for_create(job: Obj) -> None:
    """Status is the controller's; the selector is generated unless the user asked to pick it."""
    job["status"] = {}
    spec = _spec(job)
    if spec.get("manualSelector") is True or not isinstance(job.get("spec"), dict):
        return
    labels = _template_labels(job)
    if labels is None:
        return
    meta = job["metadata"]
    name, uid = meta.get("name") or "", meta.get("uid") or ""
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)  # a label the user set wins here and is judged by validation
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault(CONTROLLER_UID_LABEL, uid)


def job_defaults(job: Obj) -> None:
    spec = job.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", NON_INDEXED)
    spec.setdefault("suspend", False)
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    pod_template_defaults(spec, job)


def _non_negative(spec: dict[str, Any], key: str) -> list[Cause]:
    value = spec.get(key)
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return [cause(f"spec.{key}", f"Invalid value: {go_value(value)}: must be greater than or equal to 0")]
    return []


def _selector_causes(job: Obj, spec: dict[str, Any]) -> list[Cause]:
    selector = spec.get("selector")
    labels = template_labels(spec)
    if not isinstance(selector, dict):
        return [required("spec.selector")]
    out = selector_match_causes(selector, labels)
    if any(c["field"] == "spec.selector" for c in out):  # a selector that does not parse: nothing more to say
        return out
    if spec.get("manualSelector") is not True:
        meta = job.get("metadata") or {}
        uid, name = meta.get("uid") or "", meta.get("name") or ""
        have = labels if isinstance(labels, dict) else {}
        for key, want in ((LEGACY_CONTROLLER_UID_LABEL, uid), (LEGACY_JOB_NAME_LABEL, name),
                          (CONTROLLER_UID_LABEL, uid), (JOB_NAME_LABEL, name)):
            if key not in have:
                out.append(cause("spec.template.metadata.labels", f'Required value: `{key}` must be specified',
                                 "FieldValueRequired"))
            elif have[key] != want:
                out.append(cause("spec.template.metadata.labels",
                                 f'Invalid value: "{have[key]}": must be \'{want}\''))
        from control.kinds.selectors import label_selector_from_object

        if not label_selector_from_object(selector).matches({CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name,
                               LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name}):
            out.append(cause("spec.selector", f"Invalid value: {go_value(selector)}: `selector` not auto-generated"))
    return out


def validate_job(job: Obj) -> list[Cause]:
    spec = job.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    out: list[Cause] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        out += _non_negative(spec, key)
    mode = spec.get("completionMode")
    if mode not in (NON_INDEXED, INDEXED):
        out.append(cause("spec.completionMode", f"Unsupported value: {go_value(mode)}: supported values: "
                         '"NonIndexed", "Indexed"', "FieldValueNotSupported"))
    if mode == INDEXED:
        if spec.get("completions") is None:
            out.append(cause("spec.completions", "Required value: when completion mode is Indexed",
                             "FieldValueRequired"))
        parallelism = spec.get("parallelism")
        if isinstance(parallelism, int) and parallelism > MAX_PARALLELISM_INDEXED:
            out.append(cause("spec.parallelism", f"Invalid value: {parallelism}: must be less than or equal to "
                             f"{MAX_PARALLELISM_INDEXED} when completion mode is Indexed"))
    template = spec.get("template")
    if not isinstance(template, dict):
        return out + [required("spec.template")]
    out += _selector_causes(job, spec)
    out += label_causes((template.get("metadata") or {}).get("labels"), "spec.template.metadata.labels")
    pod_spec = template.get("spec")
    out += pod_spec_causes(pod_spec, "spec.template.spec")
    policy = pod_spec.get("restartPolicy") if isinstance(pod_spec, dict) else None
    if policy not in RESTART_POLICIES:
        out.append(cause("spec.template.spec.restartPolicy", f'Unsupported value: {go_value(policy)}: supported '
                         'values: "OnFailure", "Never"', "FieldValueNotSupported"))
    return out + _failure_policy_causes(spec.get("podFailurePolicy"), policy)


def _failure_policy_causes(failure_policy: Any, restart_policy: Any) -> list[Cause]:
    if failure_policy is None:
        return []
    out: list[Cause] = []
    if restart_policy in RESTART_POLICIES and restart_policy != "Never":
        out.append(cause("spec.template.spec.restartPolicy", f"Invalid value: {go_value(restart_policy)}: only "
                         '"Never" is supported when podFailurePolicy is specified'))
    rules = failure_policy.get("rules") if isinstance(failure_policy, dict) else None
    if not isinstance(rules, list):
        return out + [required("spec.podFailurePolicy.rules")]
    for i, rule in enumerate(rules):
        path = f"spec.podFailurePolicy.rules[{i}]"
        action = rule.get("action") if isinstance(rule, dict) else None
        if action not in FAILURE_ACTIONS:
            out.append(cause(f"{path}.action", f"Unsupported value: {go_value(action)}: supported values: "
                             '"Count", "FailIndex", "FailJob", "Ignore"', "FieldValueNotSupported"))
        if isinstance(rule, dict) and (rule.get("onExitCodes") is None) == (rule.get("onPodConditions") is None):
            out.append(cause(path, "Invalid value: specifying one of OnExitCodes and OnPodConditions is required"))
    return out


def _scheduling_free(template: Any) -> Any:
    """The template without what a suspended, never-started Job may still change."""
    if not isinstance(template, dict):
        return template
    out = copy.deepcopy(template)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("labels", None)
        meta.pop("annotations", None)
    if isinstance(out.get("spec"), dict):
        for key in SCHEDULING_DIRECTIVES:
            out["spec"].pop(key, None)
    return out


def _immutable(path: str, value: Any) -> Cause:
    return cause(path, f"Invalid value: {go_value(value)}: field is immutable")


def validate_job_update(new: Obj, old: Obj) -> list[Cause]:
    spec, old_spec = _spec(new), _spec(old)
    out: list[Cause] = []  # the hub validates the whole object with `validate_job` as well
    if spec.get("selector") != old_spec.get("selector"):
        out.append(_immutable("spec.selector", spec.get("selector")))
    if spec.get("completionMode") != old_spec.get("completionMode"):
        out.append(_immutable("spec.completionMode", spec.get("completionMode")))
    if spec.get("completions") != old_spec.get("completions"):
        elastic = spec.get("completionMode") == INDEXED and spec.get("completions") == spec.get("parallelism")
        if not elastic:
            out.append(_immutable("spec.completions", spec.get("completions")))
    template, old_template = spec.get("template"), old_spec.get("template")
    if template != old_template:
        never_started = not (old.get("status") or {}).get("startTime")
        if not (old_spec.get("suspend") is True and never_started
                and _scheduling_free(template) == _scheduling_free(old_template)):
            out.append(_immutable("spec.template", template))
    return out


def job_status(job: Obj) -> str:
    """The STATUS column: the terminal condition, then Terminating, Suspended, the interim ones."""
    for condition, shown in (("Complete", "Complete"), ("Failed", "Failed")):
        if is_condition_true(job, condition):
            return shown
    if (job.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    for condition in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if is_condition_true(job, condition):
            return condition
    return "Running"


def job_completions(job: Obj) -> str:
    spec, status = _spec(job), job.get("status") or {}
    succeeded = int(status.get("succeeded") or 0)
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    parallelism = int(spec.get("parallelism") or 0)
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def job_duration(job: Obj, now: float) -> str:
    status = job.get("status") or {}
    started = parse_time(status.get("startTime"))
    if started is None:
        return ""
    finished = parse_time(status.get("completionTime"))
    return human_duration((now if finished is None else finished) - started)


def job_cells(job: Obj, now: float) -> list[Any]:
    containers = ((_spec(job).get("template") or {}).get("spec") or {}).get("containers") or []
    return [job["metadata"]["name"], job_status(job), job_completions(job), job_duration(job, now), age(job, now),
            ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers),
            selector_string(_spec(job).get("selector")) or "<none>"]


JOB = Kind(
    group="batch", version="v1", kind="Job", plural="jobs", namespaced=True,
    definition="io.k8s.api.batch.v1.Job", categories=("all",), subresources=("status",),
    prepare_for_create=prepare_job_for_create, defaults=job_defaults, validate=validate_job,
    validate_update=validate_job_update,
    columns=(NAME_COLUMN, Column("Status", description="Status of the job."),
             Column("Completions", description="The number of pods which reached phase Succeeded."),
             Column("Duration", description="Time required to complete the job."), AGE_COLUMN,
             Column("Containers", priority=1, description="Names of each container in the template."),
             Column("Images", priority=1, description="Images referenced by each container in the template."),
             Column("Selector", priority=1, description="A label query over pods that should match the pod "
                    "count.")),
    cells=job_cells, has_spec=True,
    field_getters={"status.successful": lambda o: str(int((o.get("status") or {}).get("succeeded") or 0))},
)
