"""The CronJob controller: creates a Job at each time a CronJob's schedule names, on the injected clock.

Guarantees (kube-controller-manager's cronjob controller v2, `pkg/controller/cronjob`):
- The Job for a scheduled time `t` is named `<cronjob>-<t in minutes since the epoch>`, so a time
  is run at most once whatever the cache shows (a 409 AlreadyExists counts as done); it carries the
  template's labels and annotations, `batch.kubernetes.io/cronjob-scheduled-timestamp` (RFC 3339 in
  the schedule's zone) and the CronJob as its controller.
- Only the most recent missed time since `lastScheduleTime` (or creation) is run; with
  `startingDeadlineSeconds`, a time older than the deadline is skipped. `concurrencyPolicy`:
  Allow runs beside active Jobs, Forbid waits for them, Replace deletes them (Background) first.
- `suspend: true` creates nothing. `status.active` lists the CronJob's unfinished Jobs,
  `lastScheduleTime` the last time run, `lastSuccessfulTime` the last completion; finished Jobs
  beyond `successfulJobsHistoryLimit`/`failedJobsHistoryLimit` are deleted oldest first.
- The next look is timed for the next scheduled time (`Wakeups`), so nothing polls.
Events: SuccessfulCreate, SawCompletedJob, SuccessfulDelete, MissSchedule.
"""

from __future__ import annotations

import copy
import datetime as dt
import logging
from typing import Any
from zoneinfo import ZoneInfo

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import CRONJOBS, JOBS, key_of
from control.client.runner import DONE, Result, Runner, drop
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, Wakeups, created_at, terminating, write_status
from control.kinds.meta import controller_ref, format_time, metadata, new_controller_ref, parse_time
from control.controllers.jobpods import finished
from control.kinds.cron import CronError, parse
from control.kinds.meta import is_condition_true

log = logging.getLogger(__name__)

SCHEDULED_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MAX_MISSED = 1000  # scheduled times walked through to find the most recent (then it skips ahead)


def job_name(cronjob: Obj, scheduled: float) -> str:
    return f"{metadata(cronjob)['name']}-{int(scheduled // 60)}"


def job_ref(job: Obj) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "namespace": metadata(job).get("namespace"),
            "name": metadata(job)["name"], "uid": metadata(job).get("uid"),
            "resourceVersion": metadata(job).get("resourceVersion")}


def rfc3339(moment: float, zone: str) -> str:
    """Go's time.RFC3339 in `zone`: "Z" for UTC, else the offset ("+09:00")."""
    text = dt.datetime.fromtimestamp(moment, ZoneInfo(zone)).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") and zone == "UTC" else text


def new_job(cronjob: Obj, scheduled: float, zone: str) -> Obj:
    template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[SCHEDULED_ANNOTATION] = rfc3339(scheduled, zone)
    job_meta: Obj = {"name": job_name(cronjob, scheduled), "namespace": metadata(cronjob)["namespace"],
                     "annotations": annotations,
                     "ownerReferences": [new_controller_ref(cronjob, api_version="batch/v1", kind="CronJob")]}
    if tmeta.get("labels"):
        job_meta["labels"] = dict(tmeta["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta,
            "spec": copy.deepcopy(template.get("spec") or {})}


def most_recent_time(schedule: Any, zone: str, since: float, now: float) -> float | None:
    """The last scheduled time in (since, now], or None."""
    found, at = None, schedule.next_after(since, zone)
    for _ in range(MAX_MISSED):
        if at is None or at > now:
            return found
        found, at = at, schedule.next_after(at, zone)
    # too many missed: the most recent one is found by walking back from now
    back = schedule.next_after(now - 2 * 86400, zone)
    while back is not None and back <= now:
        found, back = back, schedule.next_after(back, zone)
    return found


class CronJobController:
    def __init__(self, client: Any, cronjobs: Informer, jobs: Informer, *, clock: Clock, recorder: Any = None):
        self.client, self.cronjobs, self.jobs = client, cronjobs, jobs
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        self.wakeups = Wakeups(clock)
        cronjobs.add_handlers(Handlers(on_add=self._changed, on_update=lambda old, new: self._changed(new),
                                       on_delete=lambda cj: self.wakeups.forget(key_of(cj))))
        jobs.add_handlers(Handlers(on_add=self._job_event, on_update=lambda old, new: self._job_event(new),
                                   on_delete=self._job_event))

    def _changed(self, cronjob: Obj) -> None:
        self.queue.add(key_of(cronjob))

    def _job_event(self, job: Obj) -> None:
        ref = controller_ref(job)
        if ref and ref.get("kind") == "CronJob" and str(ref.get("apiVersion", "")).startswith("batch/"):
            self.queue.add(f"{metadata(job).get('namespace')}/{ref.get('name')}")

    async def _event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        if self.recorder:
            await self.recorder.record(obj, type_, reason, message)

    async def reconcile(self, key: str) -> Result:
        cronjob = self.cronjobs.cache.get(key)
        if cronjob is None or terminating(cronjob):
            return DONE
        spec, now = cronjob.get("spec") or {}, self.clock.now()
        uid = metadata(cronjob).get("uid")
        owned = [j for j in self.jobs.cache.by_index("namespace", metadata(cronjob)["namespace"])
                 if (controller_ref(j) or {}).get("uid") == uid]
        status = copy.deepcopy(cronjob.get("status") or {})
        await self._account(cronjob, owned, status)
        await self._trim_history(cronjob, owned)
        try:
            schedule = parse(str(spec.get("schedule") or ""))
        except CronError as exc:
            await self._write_status(cronjob, status)
            return drop(f"{key}: unparseable schedule: {exc}")
        zone = spec.get("timeZone") or "UTC"
        if spec.get("suspend") is not True:
            await self._run_due(cronjob, schedule, zone, owned, status, now)
        await self._write_status(cronjob, status)
        upcoming = schedule.next_after(now, zone)
        return DONE if upcoming is None else self.wakeups.after(key, upcoming - now + 0.1)

    async def _account(self, cronjob: Obj, owned: list[Obj], status: Obj) -> None:
        """status.active from the unfinished Jobs; lastSuccessfulTime from the completed ones."""
        was_active = {r.get("uid") for r in status.get("active") or []}
        for job in owned:
            if finished(job) and metadata(job).get("uid") in was_active:
                condition = "Complete" if is_condition_true(job, "Complete") else "Failed"
                await self._event(cronjob, "Normal", "SawCompletedJob",
                                  f"Saw completed job: {metadata(job)['name']}, condition: {condition}")
        active = sorted((job_ref(j) for j in owned if not finished(j)), key=lambda r: r["name"])
        if active:
            status["active"] = active
        else:
            status.pop("active", None)
        done = [parse_time((j.get("status") or {}).get("completionTime")) for j in owned
                if is_condition_true(j, "Complete")]
        latest = max([d for d in done if d is not None] + [parse_time(status.get("lastSuccessfulTime")) or 0])
        if latest:
            status["lastSuccessfulTime"] = format_time(latest)

    async def _trim_history(self, cronjob: Obj, owned: list[Obj]) -> None:
        spec = cronjob.get("spec") or {}
        for condition, limit_key in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            limit = spec.get(limit_key)
            done = sorted((j for j in owned if is_condition_true(j, condition) and not terminating(j)),
                          key=lambda j: (parse_time((j.get("status") or {}).get("completionTime")) or created_at(j)))
            if limit is None or len(done) <= int(limit):
                continue
            for job in done[:len(done) - int(limit)]:
                await self._delete_job(cronjob, job)

    async def _delete_job(self, cronjob: Obj, job: Obj) -> None:
        try:
            await self.client.delete(JOBS, metadata(job)["name"], metadata(job)["namespace"], propagation="Background",
                                     preconditions={"uid": metadata(job).get("uid")})
        except errors.NotFound:
            return
        await self._event(cronjob, "Normal", "SuccessfulDelete", f"Deleted job {metadata(job)['name']}")

    async def _run_due(self, cronjob: Obj, schedule: Any, zone: str, owned: list[Obj], status: Obj,
                       now: float) -> None:
        spec = cronjob.get("spec") or {}
        since = parse_time(status.get("lastScheduleTime")) or created_at(cronjob)
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None:
            since = max(since, now - int(deadline))
        scheduled = most_recent_time(schedule, zone, since, now)
        if scheduled is None:
            return
        if deadline is not None and scheduled + int(deadline) < now:
            await self._event(cronjob, "Warning", "MissSchedule",
                              f"Missed scheduled time to start a job: {format_time(scheduled)}")
            return
        name = job_name(cronjob, scheduled)
        if any(metadata(j)["name"] == name for j in owned):
            status["lastScheduleTime"] = format_time(scheduled)
            return
        running = [j for j in owned if not finished(j)]
        policy = spec.get("concurrencyPolicy") or "Allow"
        if running and policy == "Forbid":
            return  # the next look (a job's end or the next time) tries again
        if running and policy == "Replace":
            for job in running:
                await self._delete_job(cronjob, job)
            status.pop("active", None)
        try:
            created = await self.client.create(JOBS, new_job(cronjob, scheduled, zone), metadata(cronjob)["namespace"])
        except errors.AlreadyExists:
            status["lastScheduleTime"] = format_time(scheduled)
            return
        status["active"] = [*(status.get("active") or []), job_ref(created)]
        status["lastScheduleTime"] = format_time(scheduled)
        await self._event(cronjob, "Normal", "SuccessfulCreate", f"Created job {metadata(created)['name']}")

    async def _write_status(self, cronjob: Obj, status: Obj) -> None:
        await write_status(self.client, CRONJOBS, cronjob, status)  # 409 → the runner retries


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    cronjobs = informers.get(CRONJOBS)
    jobs = informers.get(JOBS)
    controller = CronJobController(client, cronjobs, jobs, clock=clock, recorder=recorder)
    return Runner("cronjob", controller.reconcile, controller.queue, [cronjobs, jobs], workers=2)
