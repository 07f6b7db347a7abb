"""The pv-protection controller: a volume being deleted keeps its `kubernetes.io/pv-protection`
finalizer while it is Bound to a claim (kube-controller-manager's `pkg/controller/volume/pvprotection`).

Guarantees: the finalizer is removed only from a volume marked for deletion whose phase is not
Bound, by a merge patch guarded by its resourceVersion; a volume that stops being Bound (its
claim released it) is looked at again.
"""

from __future__ import annotations

from typing import Any

from control.client.informer import Handlers, Informer
from control.client.resources import PERSISTENTVOLUMES, key_of
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, remove_finalizer, terminating
from control.kinds.meta import metadata
from control.kinds.volumes import PV_PROTECTION


class PVProtection:
    def __init__(self, client: Any, volumes: Informer, *, clock: Clock):
        self.client, self.volumes = client, volumes
        self.queue = WorkQueue(clock=clock)
        volumes.add_handlers(Handlers(on_add=self._volume, on_update=lambda old, new: self._volume(new)))

    def _volume(self, pv: Obj) -> None:
        if terminating(pv) and PV_PROTECTION in (metadata(pv).get("finalizers") or []):
            self.queue.add(key_of(pv))

    async def reconcile(self, key: str) -> Result:
        pv = self.volumes.cache.get(key)
        if pv is None or not terminating(pv) or PV_PROTECTION not in (metadata(pv).get("finalizers") or []):
            return DONE
        if (pv.get("status") or {}).get("phase") == "Bound":
            return DONE
        return await remove_finalizer(self.client, PERSISTENTVOLUMES, pv, PV_PROTECTION)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    volumes = informers.get(PERSISTENTVOLUMES)
    controller = PVProtection(client, volumes, clock=clock)
    return Runner("pv-protection", controller.reconcile, controller.queue, [volumes])
