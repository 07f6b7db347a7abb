"""The Deployment controller: one ReplicaSet per pod template, rolled by the strategy.

Guarantees (kube-controller-manager's deployment controller):
- The ReplicaSet for the current template is `<deployment>-<pod-template-hash>`, with the hash as
  label on its selector, labels and template; a template seen before (a rollback) re-uses its
  ReplicaSet and gives it the next `deployment.kubernetes.io/revision`, appending the number it
  had to its `deployment.kubernetes.io/revision-history`.
- RollingUpdate never runs more than replicas + maxSurge pods nor fewer than replicas -
  maxUnavailable available ones; Recreate scales the old sets to 0, waits until their pods are
  gone, then scales the new one up. Each pass takes one step and returns; the ReplicaSets'
  status changes bring the next pass.
- A paused Deployment, or a change of spec.replicas alone, only scales (proportionally across
  the sets of an unfinished rollout); old sets with no replicas beyond revisionHistoryLimit are
  deleted once a rollout is complete; orphan ReplicaSets that match are adopted.
- Status (observedGeneration, replicas, updatedReplicas, readyReplicas, availableReplicas,
  unavailableReplicas, conditions Available and Progressing, progress deadline) is written through
  the status subresource only when it changed. Every write carries a resourceVersion; a 409 is
  the runner's to retry.
Not done: rollback via spec.rollbackTo (kubectl undoes client-side), ReplicaFailure conditions.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer, by_controller
from control.client.resources import DEPLOYMENTS, PODS, REPLICASETS, key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers import rollout
from control.controllers.claiming import claim
from control.controllers.common import (
    Obj, Wakeups, created_at, matching_in_namespace, terminating, uid_of, write_status,
)
from control.kinds.hashing import collision_count, template_hash
from control.kinds.meta import controller_ref, labels_of, metadata, new_controller_ref
from control.controllers.rollout import DESIRED, MAX_REPLICAS, REVISION, replicas

log = logging.getLogger(__name__)


def new_replicaset(deploy: Obj, pod_hash: str, revision: int, count: int) -> Obj:
    spec = deploy.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    template.setdefault("metadata", {}).setdefault("labels", {})[rollout.HASH_LABEL] = pod_hash
    selector = copy.deepcopy(spec.get("selector") or {})
    selector.setdefault("matchLabels", {})[rollout.HASH_LABEL] = pod_hash
    annotations = {k: v for k, v in (metadata(deploy).get("annotations") or {}).items() if k not in rollout.SKIPPED_ANNOTATIONS}
    annotations.update({REVISION: str(revision), DESIRED: str(replicas(deploy)),
                        MAX_REPLICAS: str(replicas(deploy) + rollout.max_surge(deploy))})
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{metadata(deploy)['name']}-{pod_hash}", "namespace": metadata(deploy)["namespace"],
                         "labels": dict(template["metadata"]["labels"]), "annotations": annotations,
                         "ownerReferences": [new_controller_ref(deploy)]},
            "spec": {"replicas": count, "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                     "selector": selector, "template": template}}


class DeploymentController:
    def __init__(self, client: Any, deployments: Informer, replicasets: Informer, pods: Informer, *, clock: Clock,
                 recorder: Any = None):
        self.client, self.deployments, self.replicasets, self.pods = client, deployments, replicasets, pods
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        self.wakeups = Wakeups(clock)
        pods.cache.add_indexer("by_controller", by_controller)
        deployments.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                          on_delete=self._enqueue))
        replicasets.add_handlers(Handlers(on_add=self._rs_changed, on_update=self._rs_updated, on_delete=self._rs_changed))
        pods.add_handlers(Handlers(on_delete=self._pod_deleted))

    # --- handlers ------------------------------------------------------------------------------

    def _enqueue(self, deploy: Obj) -> None:
        self.queue.add(key_of(deploy))

    def _owner_key(self, obj: Obj, kind: str) -> str | None:
        ref = controller_ref(obj)
        if ref and ref.get("kind") == kind:
            return f"{metadata(obj).get('namespace')}/{ref.get('name')}"
        return None

    def _rs_changed(self, rs: Obj) -> None:
        owner = self._owner_key(rs, "Deployment")
        if owner:
            self.queue.add(owner)
        elif controller_ref(rs) is None:
            for deploy in matching_in_namespace(self.deployments, metadata(rs).get("namespace", ""), labels_of(rs)):
                self.queue.add(key_of(deploy))

    def _rs_updated(self, old: Obj, new: Obj) -> None:
        if controller_ref(old) != controller_ref(new):
            self._rs_changed(old)
        self._rs_changed(new)

    def _pod_deleted(self, pod: Obj) -> None:
        """Recreate waits for old pods to be gone: the last one going wakes the Deployment."""
        rs_key = self._owner_key(pod, "ReplicaSet")
        rs = self.replicasets.cache.get(rs_key) if rs_key else None
        owner = self._owner_key(rs, "Deployment") if rs else None
        if owner:
            self.queue.add(owner)

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        deploy = self.deployments.cache.get(key)
        if deploy is None:
            return DONE
        try:
            return await self.sync(deploy)
        except errors.NotFound as exc:  # deleted under our feet: the next pass sees it in the cache
            return retry(f"{key}: {exc}")

    async def sync(self, deploy: Obj) -> Result:
        rss = await self.claim_replicasets(deploy)
        new_rs = next((rs for rs in sorted(rss, key=created_at) if rollout.same_template(rs, deploy)), None)
        if terminating(deploy):
            return await self.write_status(deploy, None, rss, new_rs, estimate=False)
        pass_ = _Pass(self, deploy, rss, new_rs)
        if (deploy.get("spec") or {}).get("paused") or rollout.is_scaling_event(deploy, rss):
            return await pass_.sync()
        if rollout.is_rolling(deploy):
            return await pass_.rolling()
        return await pass_.recreate()

    async def claim_replicasets(self, deploy: Obj) -> list[Obj]:
        candidates = self.replicasets.cache.by_index("namespace", metadata(deploy)["namespace"])
        return await claim(self.client, deploy, DEPLOYMENTS, candidates, REPLICASETS)

    async def write_status(self, deploy: Obj, base: Obj | None, rss: list[Obj], new_rs: Obj | None, *,
                           estimate: bool) -> Result:
        now = self.clock.now()
        base = copy.deepcopy(deploy.get("status") or {}) if base is None else base
        status = rollout.calculate_status(deploy, base, rss, new_rs, now, estimate_progress=estimate)
        await write_status(self.client, DEPLOYMENTS, deploy, status)
        at = rollout.progress_deadline_at(deploy, status) if estimate and not rollout.complete(deploy, status) else None
        return self.wakeups.after(key_of(deploy), max(1.0, at - now + 1)) if at is not None else DONE


class _Pass:
    """One reconcile of one Deployment: its ReplicaSets as last written, and the steps to take."""

    def __init__(self, controller: DeploymentController, deploy: Obj, rss: list[Obj], new_rs: Obj | None):
        self.c, self.deploy = controller, copy.deepcopy(deploy)
        self.rss = list(rss)
        self.new_name = metadata(new_rs)["name"] if new_rs else None
        self.base = copy.deepcopy(deploy.get("status") or {})

    @property
    def new_rs(self) -> Obj | None:
        return next((rs for rs in self.rss if metadata(rs)["name"] == self.new_name), None)

    @property
    def old_rss(self) -> list[Obj]:
        return [rs for rs in self.rss if metadata(rs)["name"] != self.new_name]

    def _replace(self, rs: Obj) -> None:
        self.rss = [rs if metadata(r)["name"] == metadata(rs)["name"] else r for r in self.rss]

    async def status(self, *, estimate: bool = True) -> Result:
        return await self.c.write_status(self.deploy, self.base, self.rss, self.new_rs, estimate=estimate)

    # --- strategies -----------------------------------------------------------------------------

    async def sync(self) -> Result:
        """Paused, or only spec.replicas changed: scale, never roll."""
        await self.sync_revision(create=False)
        for name, size in rollout.scale_targets(self.deploy, self.new_rs, self.old_rss).items():
            await self.scale(name, size)
        if (self.deploy.get("spec") or {}).get("paused"):
            await self.cleanup()
        return await self.status(estimate=False)

    async def rolling(self) -> Result:
        await self.sync_revision(create=True)
        new_rs = self.new_rs
        if new_rs is not None and replicas(new_rs) != replicas(self.deploy):
            target = min(replicas(self.deploy), rollout.new_rs_target(self.deploy, self.rss, replicas(new_rs)))
            if target != replicas(new_rs):
                await self.scale(self.new_name, target)
                return await self.status()
        plan = rollout.old_scale_down(self.deploy, self.new_rs, [rs for rs in self.old_rss if replicas(rs) > 0])
        for name, size in plan.items():
            await self.scale(name, size)
        if not plan:
            probe = rollout.calculate_status(self.deploy, self.base, self.rss, self.new_rs, self.c.clock.now(),
                                             estimate_progress=False)
            if rollout.complete(self.deploy, probe):
                await self.cleanup()
        return await self.status()

    async def recreate(self) -> Result:
        await self.sync_revision(create=False)
        active_old = [rs for rs in self.old_rss if replicas(rs) > 0]
        for rs in active_old:
            await self.scale(metadata(rs)["name"], 0)
        if active_old or self.old_pods_running():
            return await self.status()
        if self.new_rs is None:
            await self.sync_revision(create=True)
        elif replicas(self.new_rs) != replicas(self.deploy):
            await self.scale(self.new_name, replicas(self.deploy))
        probe = rollout.calculate_status(self.deploy, self.base, self.rss, self.new_rs, self.c.clock.now(),
                                         estimate_progress=False)
        if rollout.complete(self.deploy, probe):
            await self.cleanup()
        return await self.status()

    def old_pods_running(self) -> bool:
        if any(rollout.status_count(rs, "replicas") for rs in self.old_rss):
            return True
        for rs in self.old_rss:
            for pod in self.c.pods.cache.by_index("by_controller", uid_of(rs)):
                if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    return True
        return False

    # --- writes ---------------------------------------------------------------------------------

    async def sync_revision(self, *, create: bool) -> None:
        """Find (or create) the new ReplicaSet, give it the next revision, and record it on the Deployment."""
        next_revision = max((rollout.revision(rs) for rs in self.old_rss), default=0) + 1
        new_rs = self.new_rs
        if new_rs is None and not create:
            return
        if new_rs is None:
            new_rs = await self.create_new(next_revision)
            if new_rs is None:
                return
        else:
            new_rs = await self.refresh_new(new_rs, next_revision)
        revision = str(rollout.revision(new_rs))
        dmeta = metadata(self.deploy)
        if (dmeta.get("annotations") or {}).get(REVISION) != revision:
            patch = {"metadata": {"annotations": {REVISION: revision}, "resourceVersion": dmeta["resourceVersion"]}}
            self.deploy = await self.c.client.patch(DEPLOYMENTS, dmeta["name"], patch, dmeta["namespace"])

    async def refresh_new(self, rs: Obj, next_revision: int) -> Obj:
        body = copy.deepcopy(rs)
        annotations = body["metadata"].setdefault("annotations", {})
        for k, v in (metadata(self.deploy).get("annotations") or {}).items():
            if k not in rollout.SKIPPED_ANNOTATIONS:
                annotations[k] = v
        rollout.advance_revision(annotations, next_revision)
        if not annotations:
            del body["metadata"]["annotations"]
        min_ready = int((self.deploy.get("spec") or {}).get("minReadySeconds") or 0)
        if int(body["spec"].get("minReadySeconds") or 0) != min_ready:
            body["spec"]["minReadySeconds"] = min_ready
        if body == rs:
            if rollout.condition(self.base, "Progressing") is None and rollout.deadline(self.deploy) is not None:
                rollout.set_condition(self.base, "Progressing", "True", "FoundNewReplicaSet",
                                      f'Found new replica set "{metadata(rs)["name"]}"', self.c.clock.now())
            return rs
        updated = await self.c.client.replace(REPLICASETS, body)
        self._replace(updated)
        return updated

    async def create_new(self, next_revision: int) -> Obj | None:
        collisions = int((self.deploy.get("status") or {}).get("collisionCount") or 0)
        pod_hash = template_hash((self.deploy.get("spec") or {}).get("template") or {}, collision_count(self.deploy))
        count = min(replicas(self.deploy), rollout.new_rs_target(self.deploy, self.rss, 0))
        body = new_replicaset(self.deploy, pod_hash, next_revision, count)
        try:
            created = await self.c.client.create(REPLICASETS, body, metadata(self.deploy)["namespace"])
        except errors.AlreadyExists:
            existing = await self.c.client.get(REPLICASETS, body["metadata"]["name"], metadata(self.deploy)["namespace"])
            ref = controller_ref(existing)
            if ref and ref.get("uid") == uid_of(self.deploy) and rollout.same_template(existing, self.deploy):
                raise errors.Conflict("the new ReplicaSet exists but is not in the cache yet") from None
            status = copy.deepcopy(self.deploy)
            status.setdefault("status", {})["collisionCount"] = collisions + 1
            await self.c.client.replace_status(DEPLOYMENTS, status)
            raise errors.Conflict(f"hash collision on {body['metadata']['name']}; "
                                  f"collisionCount is now {collisions + 1}") from None
        self.rss.append(created)
        self.new_name = metadata(created)["name"]
        if rollout.deadline(self.deploy) is not None:
            rollout.set_condition(self.base, "Progressing", "True", "NewReplicaSetCreated",
                                  f'Created new replica set "{self.new_name}"', self.c.clock.now())
        await self.event("ScalingReplicaSet", f"Scaled up replica set {self.new_name} from 0 to {count}")
        return created

    async def scale(self, name: str, size: int) -> None:
        rs = next(r for r in self.rss if metadata(r)["name"] == name)
        body = copy.deepcopy(rs)
        annotations = body["metadata"].setdefault("annotations", {})
        annotations[DESIRED] = str(replicas(self.deploy))
        annotations[MAX_REPLICAS] = str(replicas(self.deploy) + rollout.max_surge(self.deploy))
        body["spec"]["replicas"] = size
        if body == rs:
            return
        self._replace(await self.c.client.replace(REPLICASETS, body))
        if size != replicas(rs):
            direction = "up" if size > replicas(rs) else "down"
            await self.event("ScalingReplicaSet", f"Scaled {direction} replica set {name} from {replicas(rs)} to {size}")

    async def cleanup(self) -> None:
        """Delete the oldest unused ReplicaSets beyond spec.revisionHistoryLimit."""
        limit = (self.deploy.get("spec") or {}).get("revisionHistoryLimit")
        if not isinstance(limit, int):
            return
        candidates = sorted((rs for rs in self.old_rss if not terminating(rs)),
                            key=lambda rs: (rollout.revision(rs), created_at(rs)))
        for rs in candidates[:max(0, len(candidates) - limit)]:
            if replicas(rs) or rollout.status_count(rs, "replicas"):
                continue
            if int(metadata(rs).get("generation") or 0) > rollout.status_count(rs, "observedGeneration"):
                continue
            try:
                await self.c.client.delete(REPLICASETS, metadata(rs)["name"], metadata(rs)["namespace"],
                                           preconditions={"uid": uid_of(rs)})
            except errors.NotFound:
                pass

    async def event(self, reason: str, message: str) -> None:
        if self.c.recorder:
            await self.c.recorder.record(self.deploy, "Normal", reason, message)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    deployments = informers.get(DEPLOYMENTS)
    replicasets = informers.get(REPLICASETS, indexers={"by_controller": by_controller})
    pods = informers.get(PODS, indexers={"by_controller": by_controller})
    controller = DeploymentController(client, deployments, replicasets, pods, clock=clock, recorder=recorder)
    return Runner("deployment", controller.reconcile, controller.queue, [deployments, replicasets, pods], workers=2)

