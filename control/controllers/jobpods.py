"""What the Job controller reads off pods and writes into new ones: pure helpers, no I/O.

Guarantees: nothing here changes its arguments (cached objects are read-only). `Pods` sorts a Job's
pods by what they count for (active, terminating, succeeded, failed); `new_pod` builds a pod from
the Job's template, with the index of an Indexed Job in the annotation and label
`batch.kubernetes.io/job-completion-index`, the env `JOB_COMPLETION_INDEX` (a literal value where
upstream uses a fieldRef to the annotation) and the hostname `<job>-<index>`; `matching_rule`
applies a podFailurePolicy's rules (onExitCodes In/NotIn, onPodConditions) in order;
`index_ranges` writes upstream's compressed interval text ("0-2,4"); job conditions carry lastProbeTime and
lastTransitionTime, as upstream's newCondition writes them.
"""

from __future__ import annotations

import copy
from typing import Any

from control.controllers.common import Obj, created_at, terminating
from control.kinds.meta import format_time, is_condition_true, metadata, new_controller_ref, parse_time
from control.kinds.jobs import COMPLETION_INDEX_ANNOTATION
from control.kinds.meta import set_condition as set_any_condition

FINISHED = ("Complete", "Failed")


def set_condition(conditions: Any, type_: str, status: str, now: float, **fields: Any) -> list[Obj]:
    """A Job condition as upstream writes it: lastProbeTime and lastTransitionTime both now."""
    return set_any_condition(conditions, type_, status, now, lastProbeTime=format_time(now), **fields)


def slow_start_batches(total: int) -> list[int]:
    """Creates go out 1, 2, 4, ... at a time, so a failing create costs one request, not `total`."""
    out, size = [], 1
    while total > 0:
        out.append(min(size, total))
        total, size = total - out[-1], size * 2
    return out


def finished(job: Obj) -> bool:
    return any(is_condition_true(job, c) for c in FINISHED)


def pod_phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def pod_index(pod: Obj) -> int | None:
    text = (metadata(pod).get("annotations") or {}).get(COMPLETION_INDEX_ANNOTATION)
    return int(text) if isinstance(text, str) and text.isdigit() else None


def finished_at(pod: Obj) -> float:
    """When a finished pod's last container ended (its creation time when no status says)."""
    ends = [parse_time(((s.get("state") or {}).get("terminated") or {}).get("finishedAt"))
            for s in (pod.get("status") or {}).get("containerStatuses") or []]
    known = [e for e in ends if e is not None]
    return max(known) if known else created_at(pod)


def index_ranges(indexes: set[int]) -> str:
    """Upstream's compressed interval text: {0, 1, 2, 4} -> "0-2,4"."""
    out: list[str] = []
    for i in sorted(indexes):
        if out and out[-1].split("-")[-1] == str(i - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{i}"
        else:
            out.append(str(i))
    return ",".join(out)


def new_pod(job: Obj, index: int | None = None) -> Obj:
    """A pod from the Job's template, controlled by it; an Indexed Job's pod knows its index."""
    template = (job.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    name = metadata(job)["name"]
    pod_meta: dict[str, Any] = {
        "generateName": f"{name}-" if index is None else f"{name}-{index}-", "namespace": metadata(job)["namespace"],
        "ownerReferences": [new_controller_ref(job, api_version="batch/v1", kind="Job")]}
    for field in ("labels", "annotations"):
        pod_meta[field] = copy.deepcopy(tmeta.get(field) or {})
    spec = copy.deepcopy(template.get("spec") or {})
    if index is not None:
        pod_meta["annotations"][COMPLETION_INDEX_ANNOTATION] = str(index)
        pod_meta["labels"][COMPLETION_INDEX_ANNOTATION] = str(index)
        spec.setdefault("hostname", f"{name}-{index}")
        for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
            env = [e for e in container.get("env") or [] if e.get("name") != "JOB_COMPLETION_INDEX"]
            container["env"] = env + [{"name": "JOB_COMPLETION_INDEX", "value": str(index)}]
    for field in ("labels", "annotations"):
        if not pod_meta[field]:
            del pod_meta[field]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}


def _exit_codes(pod: Obj, container: str | None) -> list[tuple[str, int]]:
    """(container, exit code) of the containers that ended with a non-zero code."""
    out = []
    status = pod.get("status") or {}
    for entry in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        code = ((entry.get("state") or {}).get("terminated") or {}).get("exitCode")
        if isinstance(code, int) and code != 0 and (container is None or entry.get("name") == container):
            out.append((str(entry.get("name", "")), code))
    return out


def matching_rule(pod: Obj, policy: Any) -> tuple[str, str] | None:
    """The action of the first podFailurePolicy rule a failed pod matches, and upstream's message
    for it; None when no rule matches (the failure counts, as without a policy)."""
    rules = policy.get("rules") if isinstance(policy, dict) else None
    where = f"{metadata(pod).get('namespace')}/{metadata(pod).get('name')}"
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        if not isinstance(rule, dict):
            continue
        action, codes = str(rule.get("action", "")), rule.get("onExitCodes")
        if isinstance(codes, dict):
            values = set(codes.get("values") or [])
            for name, code in _exit_codes(pod, codes.get("containerName")):
                if (code in values) == (codes.get("operator") != "NotIn"):
                    return action, (f"Container {name} for pod {where} failed with exit code {code} matching "
                                    f"{action} rule at index {index}")
        for pattern in rule.get("onPodConditions") or []:
            wanted = pattern.get("status") or "True"
            if any(c.get("type") == pattern.get("type") and c.get("status") == wanted
                   for c in (pod.get("status") or {}).get("conditions") or []):
                return action, f"Pod {where} has condition {pattern.get('type')} matching {action} rule at index {index}"
    return None


class Pods:
    """A Job's pods sorted by what they count for. With a podFailurePolicy, failed pods matching an
    Ignore rule are not counted at all, and the first matching a FailJob rule is kept as
    `fail_job` (the message that fails the Job)."""

    def __init__(self, pods: list[Obj], failure_policy: Any = None):
        self.active = [p for p in pods if not terminating(p) and pod_phase(p) not in ("Succeeded", "Failed")]
        self.terminating = [p for p in pods if terminating(p) and pod_phase(p) not in ("Succeeded", "Failed")]
        self.succeeded = [p for p in pods if pod_phase(p) == "Succeeded"]
        self.failed: list[Obj] = []
        self.fail_job = ""
        for pod in (p for p in pods if pod_phase(p) == "Failed"):
            rule = matching_rule(pod, failure_policy) if failure_policy else None
            if rule and rule[0] == "Ignore":
                continue
            if rule and rule[0] == "FailJob" and not self.fail_job:
                self.fail_job = rule[1]
            self.failed.append(pod)

    def succeeded_indexes(self, completions: int) -> set[int]:
        return {i for i in map(pod_index, self.succeeded) if i is not None and 0 <= i < completions}

    def failures_since_last_success(self) -> tuple[int, float]:
        """How many pods failed after the last success, and when the last of them failed."""
        last_success = max((finished_at(p) for p in self.succeeded), default=float("-inf"))
        times = [t for t in map(finished_at, self.failed) if t > last_success]
        return len(times), max(times, default=0.0)
