"""batch/v1 CronJob: defaults, validation of the schedule, time zone and Job template, printing, as
kube-apiserver's `pkg/registry/batch/cronjob/strategy.go` and `pkg/apis/batch` do them.

Guarantees:
- defaults as `pkg/apis/batch/v1/defaults.go`: concurrencyPolicy Allow, suspend false,
  successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1, and the pod template's defaults (the
  Job template's own fields are defaulted on the Jobs it makes, not here);
- validation never raises on odd input: the name is at most 52 characters (the Jobs it makes add
  11), the schedule parses (robfig's message), the time zone exists, startingDeadlineSeconds is
  non-negative, concurrencyPolicy is Allow/Forbid/Replace, the Job template is a valid Job spec
  without a selector and without manualSelector;
- the table is kubectl's `NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE` (v1.32).
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, reset_status, required
from control.kinds.cron import CronError, parse, valid_zone
from control.kinds.jobs import RESTART_POLICIES
from control.kinds.meta import age, parse_time
from control.kinds.pod_defaults import pod_spec_defaults
from control.kinds.pods import pod_spec_causes

MAX_NAME = 52
POLICIES = ("Allow", "Forbid", "Replace")


def _spec(obj: Obj) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def cronjob_defaults(cronjob: Obj) -> None:
    spec = cronjob.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    # Upstream defaults only the pod template inside (SetDefaults_Job is for Jobs, not JobSpecs).
    pod_template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") \
        if isinstance(spec.get("jobTemplate"), dict) and isinstance(spec["jobTemplate"].get("spec"), dict) else None
    if isinstance(pod_template, dict):
        pod_template.setdefault("metadata", {})
        if isinstance(pod_template.get("spec"), dict):
            pod_spec_defaults(pod_template["spec"])


def _non_negative(spec: dict[str, Any], key: str, path: str) -> list[Cause]:
    value = spec.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return []
    return [cause(path, f"Invalid value: {go_value(value)}: must be greater than or equal to 0")]


def _job_template_causes(template: Any) -> list[Cause]:
    path = "spec.jobTemplate.spec"
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return [required(path)]
    spec = template["spec"]
    out: list[Cause] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        out += _non_negative(spec, key, f"{path}.{key}")
    if spec.get("selector") is not None:
        out.append(cause(f"{path}.selector", f"Invalid value: {go_value(spec['selector'])}: "
                         "`selector` will be auto-generated"))
    if spec.get("manualSelector") is True:
        out.append(cause(f"{path}.manualSelector", 'Unsupported value: true: supported values: "nil", "false"',
                         "FieldValueNotSupported"))
    pod_template = spec.get("template")
    if not isinstance(pod_template, dict):
        return out + [required(f"{path}.template")]
    pod_spec = pod_template.get("spec")
    out += pod_spec_causes(pod_spec, f"{path}.template.spec")
    policy = pod_spec.get("restartPolicy") if isinstance(pod_spec, dict) else None
    if policy not in RESTART_POLICIES:
        out.append(cause(f"{path}.template.spec.restartPolicy", f"Unsupported value: {go_value(policy)}: supported "
                         'values: "OnFailure", "Never"', "FieldValueNotSupported"))
    return out


def validate_cronjob(cronjob: Obj) -> list[Cause]:
    name = (cronjob.get("metadata") or {}).get("name")
    out: list[Cause] = []
    if isinstance(name, str) and len(name) > MAX_NAME:
        out.append(cause("metadata.name", f'Invalid value: "{name}": must be no more than {MAX_NAME} characters'))
    spec = cronjob.get("spec")
    if not isinstance(spec, dict):
        return out + [required("spec")]
    schedule = spec.get("schedule")
    if not isinstance(schedule, str) or not schedule:
        out.append(required("spec.schedule"))
    else:
        try:
            parse(schedule)
        except CronError as exc:
            out.append(cause("spec.schedule", f"Invalid value: {go_value(schedule)}: {exc}"))
    zone = spec.get("timeZone")
    if zone is not None and (not isinstance(zone, str) or not zone or not valid_zone(zone)):
        out.append(cause("spec.timeZone", f"Invalid value: {go_value(zone)}: unknown time zone {zone}"))
    out += _non_negative(spec, "startingDeadlineSeconds", "spec.startingDeadlineSeconds")
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        out += _non_negative(spec, key, f"spec.{key}")
    policy = spec.get("concurrencyPolicy")
    if policy not in POLICIES:
        out.append(cause("spec.concurrencyPolicy", f"Unsupported value: {go_value(policy)}: supported values: "
                         '"Allow", "Forbid", "Replace"', "FieldValueNotSupported"))
    return out + _job_template_causes(spec.get("jobTemplate"))


def cronjob_cells(cronjob: Obj, now: float) -> list[Any]:
    spec, status = _spec(cronjob), cronjob.get("status") or {}
    suspend = spec.get("suspend")
    last = parse_time(status.get("lastScheduleTime"))
    template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    containers = (template.get("spec") or {}).get("containers") or []
    return [cronjob["metadata"]["name"], spec.get("schedule", ""), spec.get("timeZone") or "<none>",
            "<unset>" if suspend is None else ("True" if suspend else "False"), len(status.get("active") or []),
            "<none>" if last is None else age({"metadata": {"creationTimestamp": status["lastScheduleTime"]}}, now),
            age(cronjob, now), ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers), "<none>"]


CRONJOB = Kind(
    group="batch", version="v1", kind="CronJob", plural="cronjobs", namespaced=True,
    definition="io.k8s.api.batch.v1.CronJob", short_names=("cj",), categories=("all",), subresources=("status",),
    prepare_for_create=reset_status, defaults=cronjob_defaults, validate=validate_cronjob,
    columns=(NAME_COLUMN, Column("Schedule", description="The schedule in Cron format."),
             Column("Timezone", description="The time zone name for the given schedule."),
             Column("Suspend", type="boolean", description="Whether the controller suspends subsequent executions."),
             Column("Active", type="integer", description="A list of pointers to currently running jobs."),
             Column("Last Schedule", description="Information when was the last time the job was successfully "
                    "scheduled."), AGE_COLUMN,
             Column("Containers", priority=1, description="Names of each container in the template."),
             Column("Images", priority=1, description="Images referenced by each container in the template."),
             Column("Selector", priority=1, description="A label query over pods that should match the pod count.")),
    cells=cronjob_cells, has_spec=True,
)
