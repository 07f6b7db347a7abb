"""The pvc-protection controller: a claim being deleted keeps its `kubernetes.io/pvc-protection`
finalizer while a pod uses it (kube-controller-manager's `pkg/controller/volume/pvcprotection`).

Guarantees: the finalizer is removed only from a claim marked for deletion, and only when no pod
of its namespace that has not finished (phase neither Succeeded nor Failed) names it in a
persistentVolumeClaim volume; "no pod" is confirmed by a live list (a lagging cache never frees
a claim in use). The write is a merge patch guarded by the claim's resourceVersion. A pod that
goes away (or finishes) re-examines the claims it named.
"""

from __future__ import annotations

from typing import Any

from control.client.informer import Handlers, Informer
from control.client.resources import PERSISTENTVOLUMECLAIMS, PODS, key_of
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, remove_finalizer, terminating
from control.controllers.volumebinder import claim_volume_names
from control.kinds.meta import metadata
from control.kinds.volumes import PVC_PROTECTION


def uses(pod: Obj, claim: str) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and claim in claim_volume_names(pod)


class PVCProtection:
    def __init__(self, client: Any, claims: Informer, pods: Informer, *, clock: Clock):
        self.client, self.claims, self.pods = client, claims, pods
        self.queue = WorkQueue(clock=clock)
        claims.add_handlers(Handlers(on_add=self._claim, on_update=lambda old, new: self._claim(new)))
        pods.add_handlers(Handlers(on_update=lambda old, new: self._pod(new), on_delete=self._pod))

    def _claim(self, pvc: Obj) -> None:
        if terminating(pvc) and PVC_PROTECTION in (metadata(pvc).get("finalizers") or []):
            self.queue.add(key_of(pvc))

    def _pod(self, pod: Obj) -> None:
        for name in claim_volume_names(pod):
            self.queue.add(f"{metadata(pod).get('namespace')}/{name}")

    async def reconcile(self, key: str) -> Result:
        pvc = self.claims.cache.get(key)
        if pvc is None or not terminating(pvc) or PVC_PROTECTION not in (metadata(pvc).get("finalizers") or []):
            return DONE
        namespace, name = metadata(pvc)["namespace"], metadata(pvc)["name"]
        if any(uses(p, name) for p in self.pods.cache.by_index("namespace", namespace)):
            return DONE  # a pod event brings us back
        live = await self.client.list(PODS, namespace)
        if any(uses(p, name) for p in live.get("items") or []):
            return DONE
        return await remove_finalizer(self.client, PERSISTENTVOLUMECLAIMS, pvc, PVC_PROTECTION)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    claims, pods = informers.get(PERSISTENTVOLUMECLAIMS), informers.get(PODS)
    controller = PVCProtection(client, claims, pods, clock=clock)
    return Runner("pvc-protection", controller.reconcile, controller.queue, [claims, pods])
