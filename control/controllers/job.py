"""The Job controller: runs a Job's pods to completion, retries failures with back-off, and records
the outcome in the Job's status and conditions.

Guarantees (kube-controller-manager's job controller, `pkg/controller/job/job_controller.go`):
- Pods are tracked by counting the Job's pods by phase, as upstream did before pod finalizers
  (1.26): `succeeded`/`failed` are the Succeeded/Failed pods the Job controls, so a finished pod
  deleted by hand is no longer counted. Matching orphans are adopted, strays released (`claim`).
- At most `parallelism` pods are active, and never more than the completions still missing;
  a work-queue Job (no `completions`) starts no new pod once one has succeeded. Creates are
  remembered as expectations, so a lagging cache never over-creates. A refused create (a quota,
  a LimitRange) is a Warning `FailedCreate` event "Error creating: <the API's message>" on the
  Job and a retry with the queue's back-off; in a terminating namespace it is neither.
- Indexed Jobs: each pod knows its index (see `jobpods.new_pod`); the lowest missing indexes are
  created first; `completedIndexes` lists the succeeded ones as "0-2,4".
- Failures: after a failed pod, new pods wait 10 s, 20 s, 40 s ... (capped at 6 min) counted
  from the last failure, per consecutive failure since the last success. More failed pods than
  `backoffLimit` (or, with restartPolicy OnFailure, as many container restarts) make the Job
  fail: condition `FailureTarget` first, its active pods deleted, then `Failed` reason
  `BackoffLimitExceeded`. Running longer than `activeDeadlineSeconds` does the same with reason
  `DeadlineExceeded`.
- Success: enough succeeded pods (or indexes) set `SuccessCriteriaMet`, delete what still runs,
  then `Complete` with `completionTime` (v1.32's order); events `Completed`.
- `suspend: true` deletes the active pods and sets `Suspended` (reason JobSuspended); resuming
  sets it False (JobResumed) and restarts the clock of `activeDeadlineSeconds` (`startTime`).
- Status (active, ready, terminating, succeeded, failed, startTime, completionTime, conditions,
  completedIndexes, uncountedTerminatedPods) goes through the status subresource, only when it
  changed; 409s are retried by the runner. Timed looks again (back-off, deadline) use `Wakeups`.
- podFailurePolicy: a failed pod matching an Ignore rule is not counted, one matching FailJob fails
  the Job at once (reason PodFailurePolicy, upstream's message), Count is the default.
Not done: the FailIndex action, successPolicy, backoffLimitPerIndex, managedBy.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from control import errors
from control.client.expectations import Expectations
from control.client.informer import Handlers, Informer
from control.client.resources import JOBS, PODS, key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.claiming import claim
from control.controllers.common import (
    Obj, Wakeups, created_at, namespace_terminating, pod_ready, record_creates, terminating, uid_of, write_status,
)
from control.controllers.owned import PodsOfOwner
from control.kinds.meta import format_time, is_condition_true, metadata, parse_time
from control.controllers.jobpods import (
    Pods, finished, index_ranges, new_pod, pod_index, pod_phase, set_condition, slow_start_batches,
)
from control.kinds.jobs import INDEXED

log = logging.getLogger(__name__)

BURST = 500
BACKOFF_BASE = 10.0   # upstream DefaultJobPodFailureBackOff
BACKOFF_MAX = 360.0   # upstream MaxJobPodFailureBackOff


class JobController:
    def __init__(self, client: Any, jobs: Informer, pods: Informer, *, clock: Clock, recorder: Any = None,
                 backoff_base: float = BACKOFF_BASE, backoff_max: float = BACKOFF_MAX):
        self.client, self.jobs, self.pods = client, jobs, pods
        self.clock, self.recorder = clock, recorder
        self.backoff_base, self.backoff_max = backoff_base, backoff_max
        self.queue = WorkQueue(clock=clock)
        self.expectations = Expectations(clock=clock)
        self.wakeups = Wakeups(clock)
        jobs.add_handlers(Handlers(on_add=self._job_changed, on_update=lambda old, new: self._job_changed(new),
                                   on_delete=self._job_deleted))
        self.owned = PodsOfOwner("Job", "batch", jobs, self.queue.add, self.expectations)
        pods.add_handlers(self.owned.handlers())

    # --- handlers: objects to keys -------------------------------------------------------------

    def _job_changed(self, job: Obj) -> None:
        self.queue.add(key_of(job))

    def _job_deleted(self, job: Obj) -> None:
        self.expectations.forget(key_of(job))
        self.wakeups.forget(key_of(job))

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        job = self.jobs.cache.get(key)
        if job is None:
            self.expectations.forget(key)
            return DONE
        if finished(job) or terminating(job):
            return DONE
        try:
            return await self.sync(key, job)
        except errors.NotFound as exc:
            return retry(f"{key}: {exc}")

    async def sync(self, key: str, job: Obj) -> Result:
        candidates = self.pods.cache.by_index("namespace", metadata(job)["namespace"])
        spec, now = job.get("spec") or {}, self.clock.now()
        pods = Pods(await claim(self.client, job, JOBS, candidates, PODS), spec.get("podFailurePolicy"))
        status = copy.deepcopy(job.get("status") or {})
        events: list[tuple[str, str, str]] = []
        outcome: Result = DONE
        suspended = spec.get("suspend") is True
        if suspended:
            if not is_condition_true(job, "Suspended"):
                status["conditions"] = set_condition(status.get("conditions"), "Suspended", "True", now,
                                                     reason="JobSuspended", message="Job suspended")
                events.append(("Normal", "Suspended", "Job suspended"))
            await self.delete_pods(key, job, pods.active)
        else:
            if is_condition_true(job, "Suspended"):
                status["conditions"] = set_condition(status.get("conditions"), "Suspended", "False", now,
                                                     reason="JobResumed", message="Job resumed")
                status["startTime"] = format_time(now)  # the deadline's clock restarts on resume
                events.append(("Normal", "Resumed", "Job resumed"))
            status.setdefault("startTime", format_time(now))
            outcome = await self._run(key, job, pods, status, events, now)
        self._fill_counts(job, pods, status)
        await self._write_status(job, status)
        for type_, reason, message in events:
            if self.recorder:
                await self.recorder.record(job, type_, reason, message)
        return outcome

    async def _run(self, key: str, job: Obj, pods: Pods, status: Obj, events: list, now: float) -> Result:
        """Decide success, failure or more pods for a running Job; fills `status` and `events`."""
        spec = job.get("spec") or {}
        failure = self._failure(spec, pods, status, now)
        target = next((c for c in ("FailureTarget", "SuccessCriteriaMet")
                       if any(x.get("type") == c and x.get("status") == "True" for x in status.get("conditions") or [])),
                      None)
        if failure and target is None:
            reason, message = failure
            status["conditions"] = set_condition(status.get("conditions"), "FailureTarget", "True", now,
                                                 reason=reason, message=message)
            events.append(("Warning", reason, message))
            target = "FailureTarget"
        elif target is None and self._succeeded(spec, pods):
            status["conditions"] = set_condition(status.get("conditions"), "SuccessCriteriaMet", "True", now,
                                                 reason="CompletionsReached",
                                                 message="Reached expected number of succeeded pods")
            target = "SuccessCriteriaMet"
        if target is not None:
            await self.delete_pods(key, job, pods.active)
            if pods.active or pods.terminating:
                return DONE  # the terminal condition waits until its pods are gone
            terminal = next(c for c in status["conditions"] if c.get("type") == target)
            if target == "FailureTarget":
                status["conditions"] = set_condition(status["conditions"], "Failed", "True", now,
                                                     reason=terminal.get("reason"), message=terminal.get("message"))
            else:
                status["conditions"] = set_condition(status["conditions"], "Complete", "True", now,
                                                     reason="CompletionsReached",
                                                     message="Reached expected number of succeeded pods")
                status["completionTime"] = format_time(now)
                events.append(("Normal", "Completed", "Job completed"))
            return DONE
        return await self._manage(key, job, pods, now, status)

    def _failure(self, spec: Obj, pods: Pods, status: Obj, now: float) -> tuple[str, str] | None:
        if pods.fail_job:
            return "PodFailurePolicy", pods.fail_job
        limit = int(spec.get("backoffLimit") if spec.get("backoffLimit") is not None else 6)
        if len(pods.failed) > limit or self._past_limit_on_failure(spec, pods, limit):
            return "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        deadline, started = spec.get("activeDeadlineSeconds"), parse_time(status.get("startTime"))
        if deadline is not None and started is not None and now >= started + int(deadline):
            return "DeadlineExceeded", "Job was active longer than specified deadline"
        return None

    @staticmethod
    def _past_limit_on_failure(spec: Obj, pods: Pods, limit: int) -> bool:
        """With restartPolicy OnFailure a failure restarts the container in place: the restarts
        of the running pods count against backoffLimit (upstream pastBackoffLimitOnFailure)."""
        if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
            return False
        restarts = sum(int(s.get("restartCount") or 0) for p in pods.active
                       for key in ("initContainerStatuses", "containerStatuses")
                       for s in (p.get("status") or {}).get(key) or [])
        return restarts > 0 if limit == 0 else restarts >= limit

    @staticmethod
    def _succeeded(spec: Obj, pods: Pods) -> bool:
        completions = spec.get("completions")
        if completions is None:  # a work queue: done when one succeeded and none still runs
            return bool(pods.succeeded) and not pods.active
        if spec.get("completionMode") == INDEXED:
            return len(pods.succeeded_indexes(int(completions))) >= int(completions)
        return len(pods.succeeded) >= int(completions)

    async def _manage(self, key: str, job: Obj, pods: Pods, now: float, status: Obj) -> Result:
        """Create or delete pods towards the wanted number of active ones."""
        spec = job.get("spec") or {}
        parallelism, completions = int(spec.get("parallelism") or 0), spec.get("completions")
        indexed = spec.get("completionMode") == INDEXED and completions is not None
        if indexed:
            done = pods.succeeded_indexes(int(completions))
            running = {pod_index(p) for p in pods.active}
            missing = [i for i in range(int(completions)) if i not in done and i not in running]
            wanted = min(parallelism, len(running) + len(missing))
        elif completions is None:
            missing, wanted = [], (len(pods.active) if pods.succeeded else parallelism)
        else:
            missing, wanted = [], min(parallelism, max(int(completions) - len(pods.succeeded), 0))
        if len(pods.active) > wanted:
            extra = sorted(pods.active, key=lambda p: (pod_phase(p) == "Running", pod_ready(p), -created_at(p)))
            await self.delete_pods(key, job, extra[:len(pods.active) - wanted])
            return self._look_again(key, spec, status, now)
        count = min(wanted - len(pods.active), BURST)
        if count <= 0 or not self.expectations.satisfied(key):
            return self._look_again(key, spec, status, now)
        failures, last = pods.failures_since_last_success()
        if failures:
            wait = min(self.backoff_base * 2 ** (failures - 1), self.backoff_max) - (now - last)
            if wait > 0:
                return self._look_again(key, spec, status, now, wait)
        outcome = await self.create_pods(key, job, [missing[i] if indexed else None for i in range(count)])
        return self._look_again(key, spec, status, now) if outcome == DONE else outcome

    def _look_again(self, key: str, spec: Obj, status: Obj, now: float, back_off: float | None = None) -> Result:
        """One timed look for whichever comes first: the end of a back-off or activeDeadlineSeconds."""
        waits = [] if back_off is None else [back_off]
        deadline, started = spec.get("activeDeadlineSeconds"), parse_time(status.get("startTime"))
        if deadline is not None and started is not None:
            waits.append(max(started + int(deadline) - now, 0) + 0.5)
        return self.wakeups.after(key, min(waits)) if waits else DONE

    async def create_pods(self, key: str, job: Obj, indexes: list[int | None]) -> Result:
        self.expectations.expect(key, adds=len(indexes))
        sent = 0
        for size in slow_start_batches(len(indexes)):
            batch, sent = indexes[sent:sent + size], sent + size
            results = await asyncio.gather(*(self.client.create(PODS, new_pod(job, i), metadata(job)["namespace"])
                                             for i in batch), return_exceptions=True)
            failures = [r for r in results if isinstance(r, BaseException)]
            for _ in failures:
                self.expectations.create_failed(key)
            await record_creates(self.recorder, job, results)
            if failures:
                for _ in indexes[sent:]:
                    self.expectations.create_failed(key)
                if namespace_terminating(failures[0]):
                    return DONE  # every later create fails too (upstream ignores it)
                if not isinstance(failures[0], errors.ApiError):
                    raise failures[0]
                return retry(f"creating pods for {key}: {failures[0]}")
        return DONE

    async def delete_pods(self, key: str, job: Obj, victims: list[Obj]) -> None:
        if not victims:
            return
        self.expectations.expect(key, deletes={uid_of(p) for p in victims})
        for pod in victims:
            try:
                await self.client.delete(PODS, metadata(pod)["name"], metadata(pod)["namespace"],
                                         preconditions={"uid": uid_of(pod)})
            except errors.ApiError as exc:
                self.expectations.deleted(key, uid_of(pod))
                if not isinstance(exc, errors.NotFound):
                    raise
                continue
            if self.recorder:
                await self.recorder.record(job, "Normal", "SuccessfulDelete", f"Deleted pod: {metadata(pod)['name']}")

    @staticmethod
    def _fill_counts(job: Obj, pods: Pods, status: Obj) -> None:
        spec = job.get("spec") or {}
        status.update(active=len(pods.active), ready=sum(1 for p in pods.active if pod_ready(p)),
                      terminating=len(pods.terminating), succeeded=len(pods.succeeded), failed=len(pods.failed),
                      uncountedTerminatedPods={})
        if spec.get("completionMode") == INDEXED and spec.get("completions") is not None:
            text = index_ranges(pods.succeeded_indexes(int(spec["completions"])))
            if text:
                status["completedIndexes"] = text
            else:
                status.pop("completedIndexes", None)
        for zero in ("active", "succeeded", "failed"):  # omitempty upstream: a zero is not written
            if not status[zero]:
                del status[zero]

    async def _write_status(self, job: Obj, status: Obj) -> None:
        await write_status(self.client, JOBS, job, status)  # 409 → the runner retries


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    jobs = informers.get(JOBS)
    pods = informers.get(PODS)
    controller = JobController(client, jobs, pods, clock=clock, recorder=recorder)
    return Runner("job", controller.reconcile, controller.queue, [jobs, pods], workers=4)
