"""The kubelet's volume manager: each pod's volumes, kept up to date, and each container's view
of them (its `Filesystem` with the pod's volumes mounted where its `volumeMounts` say).

Guarantees:
- `sync(pod, ...)` sets up or refreshes every volume of the pod: ConfigMap, Secret, downward API
  and projected volumes are re-projected (so a changed ConfigMap reaches running containers at the
  next sync); an emptyDir is made once and shared by all the pod's containers (it survives their
  restarts and goes with the pod); a persistentVolumeClaim is the directory
  `<data>/volumes/<pv name>/` on the kubelet's disk (it outlives the pod; a new pod with the same
  claim sees its files). It answers the FailedMount messages of volumes that could not be set up
  yet; a volume that was set up once keeps its last content when a later refresh fails.
- `filesystem(pod, container, pod_ip)` is taken once per container run, at its start: a
  `subPath` of a ConfigMap/Secret/downward API/projected volume is copied then and never changes
  (the lesson Kubernetes teaches); other mounts are live. Projected volumes are read-only.
- Names reaching the disk are checked (`safe_name`, `safe_path`): nothing from a pod spec can
  point outside `<data>/volumes/`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from control.kubelet.envvars import NodeFacts, Sources, expand, mapping_for
from control.kubelet.filesystem import Filesystem, Mount, pod_hostname
from control.kubelet.projection import MountError, Tokens, safe_path, volume_contents
from control.kubelet.storage import DiskTree, MemoryTree, normal, safe_name

Obj = dict[str, Any]
Tree = Union[MemoryTree, DiskTree]
Claims = dict[str, Union[str, MountError]]  # claimName -> bound PV name, or why it cannot be used


@dataclass
class PodVolumes:
    trees: dict[str, Tree] = field(default_factory=dict)
    projected: set[str] = field(default_factory=set)  # read-only, re-projected volumes


def set_up_message(volume: str, error: Exception) -> str:
    return f'MountVolume.SetUp failed for volume "{volume}" : {error}'


def claim_volumes(pod: Obj) -> dict[str, str]:
    """volume name -> claimName, for the pod's persistentVolumeClaim volumes."""
    out = {}
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        claim = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
        if isinstance(claim, dict) and volume.get("name"):
            out[str(volume["name"])] = str(claim.get("claimName") or "")
    return out


class VolumeManager:
    def __init__(self, data_dir: Path | None = None):
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.pods: dict[str, PodVolumes] = {}

    def mounted(self, uid: str, volume: str) -> bool:
        return volume in (self.pods.get(uid) or PodVolumes()).trees

    def sync(self, pod: Obj, sources: Sources, facts: NodeFacts, tokens: Tokens, claims: Claims) -> list[str]:
        """Set up or refresh the pod's volumes; the FailedMount messages of those not set up."""
        uid = (pod.get("metadata") or {}).get("uid") or ""
        mine = self.pods.setdefault(uid, PodVolumes())
        failures = []
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            if not isinstance(volume, dict) or not volume.get("name"):
                continue
            name = str(volume["name"])
            try:
                contents = volume_contents(pod, volume, sources, facts, tokens)
                if contents is not None:
                    tree = mine.trees.get(name)
                    if not isinstance(tree, MemoryTree):
                        tree = mine.trees[name] = MemoryTree()
                    tree.replace(contents)
                    mine.projected.add(name)
                elif isinstance(volume.get("persistentVolumeClaim"), dict):
                    if name not in mine.trees:
                        mine.trees[name] = self._claim_tree(pod, volume, claims)
                else:  # emptyDir (and kinds not simulated): a directory the pod's containers share
                    mine.trees.setdefault(name, MemoryTree())
            except MountError as exc:
                if name not in mine.trees:  # never set up: the pod waits for it
                    failures.append(set_up_message(name, exc) if contents_kind(volume) else
                                    f"Unable to attach or mount volumes: unmounted volumes=[{name}]: {exc}")
        return failures

    def _claim_tree(self, pod: Obj, volume: Obj, claims: Claims) -> DiskTree:
        claim = str(volume["persistentVolumeClaim"].get("claimName") or "")
        bound = claims.get(claim)
        if bound is None:
            raise MountError(f"error processing PVC {(pod.get('metadata') or {}).get('namespace')}/{claim}: "
                             "PVC is not bound")
        if isinstance(bound, MountError):
            raise bound
        if self.data_dir is None or not safe_name(bound):
            raise MountError(f'MountVolume.SetUp failed for volume "{bound}" : invalid volume name')
        return DiskTree(self.data_dir / "volumes" / bound)

    def forget(self, uid: str) -> None:
        """The pod is gone: its emptyDirs and projections go (a claim's files stay on disk)."""
        self.pods.pop(uid, None)

    def filesystem(self, pod: Obj, container: Obj, pod_ip: str, env: dict[str, str] | None = None) -> Filesystem:
        """A container's files at the start of a run, with the pod's volumes mounted (`env`, the
        run's, expands a mount's `subPathExpr`)."""
        meta = pod.get("metadata") or {}
        hostname, domain = pod_hostname(pod)
        fs = Filesystem.for_container(pod_name=hostname, namespace=str(meta.get("namespace") or ""), pod_ip=pod_ip,
                                      domain=domain, aliases=(pod.get("spec") or {}).get("hostAliases"))
        mine = self.pods.get(meta.get("uid") or "") or PodVolumes()
        for mount in container.get("volumeMounts") or []:
            if not isinstance(mount, dict) or not mount.get("mountPath"):
                continue
            name, path = str(mount.get("name") or ""), normal(str(mount["mountPath"]))
            tree = mine.trees.get(name)
            if tree is None or path == "/":
                continue
            read_only = bool(mount.get("readOnly")) or name in mine.projected
            sub = str(mount.get("subPath") or "")
            if not sub and mount.get("subPathExpr"):
                sub = expand(str(mount["subPathExpr"]), mapping_for(env or {}))
            if not sub:
                fs.mount(path, Mount(tree, "/", read_only))
                continue
            try:
                inside = "/" + safe_path(sub)
            except MountError:
                continue  # validation refuses such a subPath; never follow it
            if name in mine.projected and isinstance(tree, MemoryTree):
                kind = tree.kind(inside)
                if kind == "file":
                    fs.mount_file(path, tree.read(inside), tree.mode(inside))
                elif kind == "dir":
                    fs.mount(path, Mount(tree.copy(inside), "/", True))
                continue
            if tree.kind(inside) is None:
                tree.make_dir(inside, parents=True)  # the kubelet makes a missing subPath directory
            fs.mount(path, Mount(tree, inside, read_only))
        return fs


def contents_kind(volume: Obj) -> bool:
    """Whether a volume is one the kubelet projects (its errors get the MountVolume.SetUp prefix)."""
    return any(isinstance(volume.get(k), dict) for k in ("configMap", "secret", "downwardAPI", "projected"))

