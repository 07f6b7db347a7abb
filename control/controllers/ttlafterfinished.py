"""The TTL-after-finished controller: deletes a finished Job `ttlSecondsAfterFinished` seconds after
it finished, so the garbage collector takes its pods.

Guarantees (kube-controller-manager's ttlafterfinished controller): only Jobs with the field set
and a true `Complete` or `Failed` condition are considered; the finish time is `completionTime`, or
that condition's lastTransitionTime; before the TTL is up the Job is looked at again when it will
be; the delete is Background propagation with a uid precondition, so a Job recreated under the
same name is never the one deleted. A Job being deleted already is left alone.
"""

from __future__ import annotations

import logging
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import JOBS, key_of
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, Wakeups, terminating, uid_of
from control.kinds.meta import metadata, parse_time
from control.kinds.meta import find_condition

log = logging.getLogger(__name__)


def finish_time(job: Obj) -> float | None:
    """When the Job finished, or None while it has not."""
    conditions = (job.get("status") or {}).get("conditions")
    for type_ in ("Complete", "Failed"):
        condition = find_condition(conditions, type_)
        if condition and condition.get("status") == "True":
            return parse_time((job.get("status") or {}).get("completionTime")) or \
                parse_time(condition.get("lastTransitionTime"))
    return None


def expires_at(job: Obj) -> float | None:
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    done = finish_time(job)
    if ttl is None or done is None or terminating(job):
        return None
    return done + int(ttl)


class TTLAfterFinishedController:
    def __init__(self, client: Any, jobs: Informer, *, clock: Clock):
        self.client, self.jobs, self.clock = client, jobs, clock
        self.queue = WorkQueue(clock=clock)
        self.wakeups = Wakeups(clock)
        jobs.add_handlers(Handlers(on_add=self._changed, on_update=lambda old, new: self._changed(new),
                                   on_delete=lambda job: self.wakeups.forget(key_of(job))))

    def _changed(self, job: Obj) -> None:
        if expires_at(job) is not None:
            self.queue.add(key_of(job))

    async def reconcile(self, key: str) -> Result:
        job = self.jobs.cache.get(key)
        at = None if job is None else expires_at(job)
        if job is None or at is None:
            return DONE
        now = self.clock.now()
        if now < at:
            return self.wakeups.after(key, at - now)
        log.info("deleting finished Job %s (ttlSecondsAfterFinished)", key)
        try:
            await self.client.delete(JOBS, metadata(job)["name"], metadata(job)["namespace"], propagation="Background",
                                     preconditions={"uid": uid_of(job)})
        except (errors.NotFound, errors.Conflict):
            pass  # gone already, or a new Job of that name: not ours to delete
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    jobs = informers.get(JOBS)
    controller = TTLAfterFinishedController(client, jobs, clock=clock)
    return Runner("ttl-after-finished", controller.reconcile, controller.queue, [jobs], workers=1)
