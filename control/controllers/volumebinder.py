"""The persistent-volume binder with a simulated provisioner (kube-controller-manager's
persistentvolume-binder, `pkg/controller/volume/persistentvolume/pv_controller.go`, and the
in-tree host-path provisioner).

Guarantees:
- A claim without storageClassName gets the default class once one exists (retroactive default
  class assignment). An unbound claim binds to the smallest Available volume of its class whose
  access modes, volume mode, size and label selector fit (or to a volume pre-bound to it);
  otherwise its class provisions one: a volume `pvc-<claim uid>` of the requested size and the
  class's reclaim policy, pre-bound to the claim, annotated `pv.kubernetes.io/provisioned-by`,
  with a host path under `/var/lib/kube-kitchen/volumes/` (the kubelet keeps the data by volume
  name). Classes with volumeBindingMode WaitForFirstConsumer provision only once the claim has
  `volume.kubernetes.io/selected-node` or a pod using it has a node, and pin the volume there.
- Binding is both ways: volume claimRef (with the claim's uid) and phase Bound, claim volumeName,
  phase Bound, capacity and access modes, annotations `pv.kubernetes.io/bind-completed` and
  `pv.kubernetes.io/bound-by-controller`; every write is guarded by the resourceVersion read.
- A claim that nothing can satisfy stays Pending with upstream's Event: FailedBinding (no class,
  no volume), ProvisioningFailed (class missing, access modes the provisioner cannot give),
  ExternalProvisioning (a provisioner this hub does not simulate), WaitForFirstConsumer.
- A bound claim whose volume is gone is Lost (ClaimLost). A volume whose claim is gone is
  Released; with reclaim policy Delete it is then deleted, with Retain it stays Released. A volume
  with no claimRef is Available.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS, STORAGECLASSES, key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, terminating, uid_of, write_status
from control.kinds.meta import labels_of, metadata
from control.kinds.selectors import SelectorError, label_selector_from_object
from control.kinds.volumes import class_of, is_default_class, storage_of

log = logging.getLogger(__name__)

SIMULATED_PROVISIONERS = ("kubernetes.io/host-path", "k8s.io/minikube-hostpath", "rancher.io/local-path")
SUPPORTED_MODES = ["ReadWriteOnce", "ReadWriteOncePod"]
VOLUME_ROOT = "/var/lib/kube-kitchen/volumes"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
CLAIM, VOLUME = "claim:", "volume:"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def claim_request(pvc: Obj) -> float:
    return storage_of(_dict(_dict(pvc.get("spec")).get("resources")).get("requests"))


def volume_fits(pv: Obj, pvc: Obj) -> bool:
    """Whether an unbound volume may serve the claim (upstream's findMatchingVolume checks)."""
    spec, want = _dict(pv.get("spec")), _dict(pvc.get("spec"))
    ref = _dict(spec.get("claimRef"))
    same = ref.get("name") == metadata(pvc).get("name") and ref.get("namespace") == metadata(pvc).get("namespace")
    if ref and not (same and ref.get("uid") in (None, "", uid_of(pvc))):
        return False
    if not ref and _dict(pv.get("status")).get("phase") not in ("Available", "Pending", None):
        return False
    if terminating(pv) or class_of(pv) != class_of(pvc):
        return False
    if (spec.get("volumeMode") or "Filesystem") != (want.get("volumeMode") or "Filesystem"):
        return False
    if not set(want.get("accessModes") or []) <= set(spec.get("accessModes") or []):
        return False
    if storage_of(spec.get("capacity")) < claim_request(pvc):
        return False
    if want.get("selector"):
        try:
            if not label_selector_from_object(want["selector"]).matches(labels_of(pv)):
                return False
        except SelectorError:
            return False
    return True


def claim_volume_names(pod: Obj) -> list[str]:
    volumes = [v for v in _dict(pod.get("spec")).get("volumes") or [] if isinstance(v, dict)]
    return [str(_dict(v.get("persistentVolumeClaim"))["claimName"]) for v in volumes
            if _dict(v.get("persistentVolumeClaim")).get("claimName")]


class VolumeBinder:
    def __init__(self, client: Any, claims: Informer, volumes: Informer, classes: Informer, pods: Informer, *,
                 clock: Clock, recorder: Any = None):
        self.client, self.claims, self.volumes, self.classes, self.pods = client, claims, volumes, classes, pods
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        claims.add_handlers(Handlers(on_add=self._claim, on_update=lambda old, new: self._claim(new),
                                     on_delete=self._claim_gone))
        volumes.add_handlers(Handlers(on_add=self._volume, on_update=lambda old, new: self._volume(new),
                                      on_delete=self._volume_gone))
        classes.add_handlers(Handlers(on_add=self._class, on_update=lambda old, new: self._class(new)))
        pods.add_handlers(Handlers(on_add=self._pod, on_update=lambda old, new: self._pod(new)))

    # --- handlers: objects to keys -------------------------------------------------------------

    def _claim(self, pvc: Obj) -> None:
        self.queue.add(CLAIM + key_of(pvc))

    def _claim_gone(self, pvc: Obj) -> None:
        name = _dict(pvc.get("spec")).get("volumeName")
        if name:
            self.queue.add(VOLUME + name)
        for pv in self.volumes.cache.list():  # a volume pre-bound or bound to it is released
            ref = _dict(_dict(pv.get("spec")).get("claimRef"))
            if ref.get("uid") == uid_of(pvc):
                self.queue.add(VOLUME + key_of(pv))

    def _volume(self, pv: Obj) -> None:
        self.queue.add(VOLUME + key_of(pv))
        ref = _dict(_dict(pv.get("spec")).get("claimRef"))
        if ref.get("name"):
            self.queue.add(f"{CLAIM}{ref.get('namespace')}/{ref['name']}")

    def _volume_gone(self, pv: Obj) -> None:
        ref = _dict(_dict(pv.get("spec")).get("claimRef"))
        if ref.get("name"):
            self.queue.add(f"{CLAIM}{ref.get('namespace')}/{ref['name']}")

    def _class(self, sc: Obj) -> None:
        for pvc in self.claims.cache.list():
            if not _dict(pvc.get("spec")).get("volumeName"):
                self.queue.add(CLAIM + key_of(pvc))

    def _pod(self, pod: Obj) -> None:
        if _dict(pod.get("spec")).get("nodeName"):
            for name in claim_volume_names(pod):
                self.queue.add(f"{CLAIM}{metadata(pod).get('namespace')}/{name}")

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        try:
            if key.startswith(CLAIM):
                pvc = self.claims.cache.get(key[len(CLAIM):])
                return await self.sync_claim(pvc) if pvc is not None else DONE
            pv = self.volumes.cache.get(key[len(VOLUME):])
            return await self.sync_volume(pv) if pv is not None else DONE
        except (errors.Conflict, errors.NotFound, errors.AlreadyExists) as exc:
            return retry(f"{key}: {exc}")

    # --- claims ---------------------------------------------------------------------------------

    def default_class(self) -> Obj | None:
        defaults = sorted((c for c in self.classes.cache.list() if is_default_class(c)),
                          key=lambda c: metadata(c).get("creationTimestamp", ""), reverse=True)
        return defaults[0] if defaults else None

    async def sync_claim(self, pvc: Obj) -> Result:
        if terminating(pvc):
            return DONE
        spec = _dict(pvc.get("spec"))
        if spec.get("volumeName"):
            return await self.sync_bound_claim(pvc)
        if spec.get("storageClassName") is None and not class_of(pvc):
            default = self.default_class()
            if default is not None:
                body = copy.deepcopy(pvc)
                body["spec"]["storageClassName"] = metadata(default)["name"]
                await self.client.replace(PERSISTENTVOLUMECLAIMS, body)
                return DONE
        fitting = sorted((pv for pv in self.volumes.cache.list() if volume_fits(pv, pvc)),
                         key=lambda pv: (0 if _dict(_dict(pv.get("spec")).get("claimRef")) else 1,
                                         storage_of(_dict(pv.get("spec")).get("capacity"))))
        if fitting:
            return await self.bind(pvc, fitting[0])
        return await self.provision(pvc)

    async def provision(self, pvc: Obj) -> Result:
        name = class_of(pvc)
        if not name:
            await self._event(pvc, "Normal", "FailedBinding",
                              "no persistent volumes available for this claim and no storage class is set")
            return DONE
        sc = self.classes.cache.get(name)
        if sc is None:
            await self._event(pvc, "Warning", "ProvisioningFailed", f'storageclass.storage.k8s.io "{name}" not found')
            return DONE
        provisioner = str(sc.get("provisioner") or "")
        if provisioner not in SIMULATED_PROVISIONERS:
            await self._event(pvc, "Normal", "ExternalProvisioning", "Waiting for a volume to be created either by "
                              f"the external provisioner '{provisioner}' or manually by the system administrator. If "
                              "volume creation is delayed, please verify that the provisioner is running and "
                              "correctly registered.")
            return DONE
        node = ""
        if sc.get("volumeBindingMode") == "WaitForFirstConsumer":
            node = self.selected_node(pvc)
            if not node:
                await self._event(pvc, "Normal", "WaitForFirstConsumer",
                                  "waiting for first consumer to be created before binding")
                return DONE
        modes = _dict(pvc.get("spec")).get("accessModes") or []
        unsupported = [m for m in modes if m not in SUPPORTED_MODES]
        if unsupported:
            await self._event(pvc, "Warning", "ProvisioningFailed", f"Failed to provision volume with StorageClass "
                              f'"{name}": invalid AccessModes [{" ".join(modes)}]: only AccessModes '
                              f'[{" ".join(SUPPORTED_MODES)}] are supported')
            return DONE
        pv = self.new_volume(pvc, sc, node)
        try:
            await self.client.create(PERSISTENTVOLUMES, pv)
        except errors.AlreadyExists:
            return DONE  # provisioned on an earlier pass; the cache will show it and we bind then
        await self._event(pvc, "Normal", "ProvisioningSucceeded",
                          f"Successfully provisioned volume {metadata(pv)['name']} using {provisioner}")
        return DONE

    def selected_node(self, pvc: Obj) -> str:
        annotations = _dict(metadata(pvc).get("annotations"))
        if annotations.get(SELECTED_NODE):
            return str(annotations[SELECTED_NODE])
        for pod in self.pods.cache.by_index("namespace", metadata(pvc).get("namespace", "")):
            node = _dict(pod.get("spec")).get("nodeName")
            if node and not terminating(pod) and metadata(pvc)["name"] in claim_volume_names(pod):
                return str(node)
        return ""

    def new_volume(self, pvc: Obj, sc: Obj, node: str) -> Obj:
        name = f"pvc-{uid_of(pvc)}"
        spec = _dict(pvc.get("spec"))
        requests = _dict(_dict(spec.get("resources")).get("requests"))
        pv_spec: Obj = {
            "accessModes": list(spec.get("accessModes") or []),
            "capacity": {"storage": requests.get("storage", "1Gi")},
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": metadata(pvc)["name"],
                         "namespace": metadata(pvc)["namespace"], "uid": uid_of(pvc),
                         "resourceVersion": metadata(pvc).get("resourceVersion", "")},
            "hostPath": {"path": f"{VOLUME_ROOT}/{name}", "type": ""},
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "storageClassName": metadata(sc)["name"],
            "volumeMode": spec.get("volumeMode") or "Filesystem",
        }
        if node:
            pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
        return {"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": name, "annotations": {PROVISIONED_BY: str(sc.get("provisioner"))}},
                "spec": pv_spec}

    async def bind(self, pvc: Obj, pv: Obj) -> Result:
        """Both halves: the volume's claimRef and phase, then the claim's volumeName and phase."""
        pv_spec = _dict(pv.get("spec"))
        ref = _dict(pv_spec.get("claimRef"))
        if ref.get("uid") != uid_of(pvc):
            body = copy.deepcopy(pv)
            body["spec"]["claimRef"] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                        "name": metadata(pvc)["name"], "namespace": metadata(pvc)["namespace"],
                                        "uid": uid_of(pvc), "resourceVersion": metadata(pvc).get("resourceVersion", "")}
            body["metadata"].setdefault("annotations", {})[BOUND_BY_CONTROLLER] = "yes"
            pv = await self.client.replace(PERSISTENTVOLUMES, body)
        await write_status(self.client, PERSISTENTVOLUMES, pv, {**_dict(pv.get("status")), "phase": "Bound"})
        body = copy.deepcopy(pvc)
        body["spec"]["volumeName"] = metadata(pv)["name"]
        annotations = body["metadata"].setdefault("annotations", {})
        annotations[BIND_COMPLETED] = "yes"
        annotations[BOUND_BY_CONTROLLER] = "yes"
        provisioner = _dict(metadata(pv).get("annotations")).get(PROVISIONED_BY)
        if provisioner:
            annotations[STORAGE_PROVISIONER] = annotations[BETA_STORAGE_PROVISIONER] = provisioner
        pvc = await self.client.replace(PERSISTENTVOLUMECLAIMS, body)
        await self.claim_bound_status(pvc, pv)
        return DONE

    async def claim_bound_status(self, pvc: Obj, pv: Obj) -> None:
        pv_spec = _dict(pv.get("spec"))
        status = {**_dict(pvc.get("status")), "phase": "Bound", "accessModes": list(pv_spec.get("accessModes") or []),
                  "capacity": dict(_dict(pv_spec.get("capacity")))}
        await write_status(self.client, PERSISTENTVOLUMECLAIMS, pvc, status)

    async def sync_bound_claim(self, pvc: Obj) -> Result:
        name = _dict(pvc.get("spec"))["volumeName"]
        pv = self.volumes.cache.get(name)
        if pv is None:
            try:
                pv = await self.client.get(PERSISTENTVOLUMES, name)
            except errors.NotFound:
                pv = None
        if pv is None:
            if _dict(pvc.get("status")).get("phase") == "Bound":
                await self._event(pvc, "Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. "
                                  "Data on the volume is lost!")
            await write_status(self.client, PERSISTENTVOLUMECLAIMS, pvc, {**_dict(pvc.get("status")), "phase": "Lost"})
            return DONE
        ref = _dict(_dict(pv.get("spec")).get("claimRef"))
        if ref.get("uid") not in (None, "", uid_of(pvc)) or (ref and ref.get("name") != metadata(pvc)["name"]):
            await self._event(pvc, "Warning", "FailedBinding", "volume is bound to another claim")
            return DONE
        if ref.get("uid") != uid_of(pvc) or _dict(pv.get("status")).get("phase") != "Bound":
            return await self.bind(pvc, pv)  # finish a binding half done
        await self.claim_bound_status(pvc, pv)
        return DONE

    # --- volumes --------------------------------------------------------------------------------

    async def sync_volume(self, pv: Obj) -> Result:
        if terminating(pv):
            return DONE
        spec, status = _dict(pv.get("spec")), _dict(pv.get("status"))
        ref = _dict(spec.get("claimRef"))
        if not ref:
            await write_status(self.client, PERSISTENTVOLUMES, pv, {**status, "phase": "Available"})
            return DONE
        pvc = self.claims.cache.get(f"{ref.get('namespace')}/{ref.get('name')}")
        if pvc is not None and ref.get("uid") in (None, "", uid_of(pvc)):
            if status.get("phase") not in ("Bound", "Available"):
                await write_status(self.client, PERSISTENTVOLUMES, pv, {**status, "phase": "Available"})
            return DONE  # bound or about to be: the claim's pass finishes it
        if not ref.get("uid"):
            if status.get("phase") != "Available":  # pre-bound to a claim that does not exist yet
                await write_status(self.client, PERSISTENTVOLUMES, pv, {**status, "phase": "Available"})
            return DONE
        try:  # the cache may lag: confirm the claim is really gone before releasing its data
            live = await self.client.get(PERSISTENTVOLUMECLAIMS, ref.get("name", ""), ref.get("namespace"))
            if uid_of(live) == ref.get("uid"):
                return DONE
        except errors.NotFound:
            pass
        if status.get("phase") != "Released":
            await write_status(self.client, PERSISTENTVOLUMES, pv, {**status, "phase": "Released"})
        if spec.get("persistentVolumeReclaimPolicy") == "Delete":
            await self.client.delete(PERSISTENTVOLUMES, metadata(pv)["name"], preconditions={"uid": uid_of(pv)})
        return DONE

    async def _event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        if self.recorder:
            await self.recorder.record(obj, type_, reason, message)


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    claims, volumes = informers.get(PERSISTENTVOLUMECLAIMS), informers.get(PERSISTENTVOLUMES)
    classes, pods = informers.get(STORAGECLASSES), informers.get(PODS)
    binder = VolumeBinder(client, claims, volumes, classes, pods, clock=clock, recorder=recorder)
    return Runner("persistentvolume-binder", binder.reconcile, binder.queue, [claims, volumes, classes, pods],
                  workers=2)
