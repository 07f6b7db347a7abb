"""core/v1 PersistentVolume and PersistentVolumeClaim: defaults, validation with Kubernetes'
messages, immutability, the protection finalizers, the default StorageClass and kubectl's tables,
as `pkg/registry/core/persistentvolume(claim)/strategy.go`, `pkg/apis/core/validation` and the
StorageObjectInUseProtection and DefaultStorageClass admission plugins do them.

Guarantees:
- create resets status to phase Pending (the binder moves it on); defaults: a volume's reclaim
  policy Retain, volumeMode Filesystem on both;
- admission on create adds `kubernetes.io/pv-protection` / `kubernetes.io/pvc-protection`, and a
  claim without `storageClassName` (absent, not "") gets the default class when one is marked
  `storageclass.kubernetes.io/is-default-class=true` (the binder also does it afterwards, as
  upstream's retroactive default class assignment does, for classes marked default later);
- validation never raises on odd input: access modes, capacity/requests of `storage` only and
  positive, one volume source, supported reclaim policies and modes;
- updates: a volume's source is immutable; a claim's spec is immutable except
  resources.requests.storage (bound claims, never shrinking), a first volumeName and a first
  storageClassName;
- tables are kubectl's `get pv` and `get pvc` (v1.32 printers).
"""

from __future__ import annotations

from typing import Any

from control.errors import go_strings, go_value
from control.kinds.base import (
    AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, name_causes, required,
)
from control.kinds.meta import age
from control.kinds.quantity import parse_quantity
from control.kinds.strategy import Lookup

PV_PROTECTION = "kubernetes.io/pv-protection"
PVC_PROTECTION = "kubernetes.io/pvc-protection"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
ACCESS_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
# The volume sources a PersistentVolume may have (PersistentVolumeSource's members).
PV_SOURCES = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume",
              "flocker", "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs",
              "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _spec(obj: Obj) -> dict[str, Any]:
    return _dict(obj.get("spec"))


def _supported(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


# --- shared parts ------------------------------------------------------------------------------

def _access_mode_causes(modes: Any, path: str, *, claim: bool) -> list[Cause]:
    if not modes:
        return [cause(path, "Required value: at least 1 access mode is required" if claim else "Required value",
                      "FieldValueRequired")]
    if not isinstance(modes, list):
        return [cause(path, f"Invalid value: {go_value(modes)}: must be a list")]
    out = [cause(path, f"Unsupported value: {go_value(m)}: supported values: "
                 f"{_supported(sorted(ACCESS_MODES))}", "FieldValueNotSupported")
           for m in modes if m not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        out.append(cause(path, "Forbidden: may not use ReadWriteOncePod with other access modes",
                         "FieldValueForbidden"))
    return out


def _storage_causes(amounts: Any, path: str, *, claim: bool) -> list[Cause]:
    amounts = _dict(amounts)
    out: list[Cause] = []
    if not claim and not amounts:
        return [required(path)]
    if not claim and ("storage" not in amounts or len(amounts) > 1):
        out.append(cause(path, f"Unsupported value: {go_strings(sorted(amounts))}: supported values: \"storage\"",
                         "FieldValueNotSupported"))
    if "storage" not in amounts:
        return out + ([required(f"{path[:-len('.requests')]}[storage]")] if claim else [])
    value = amounts["storage"]
    field = f"{path}[storage]"
    try:
        amount = parse_quantity(value)
    except ValueError:
        return out + [cause(field, f"Invalid value: {go_value(value)}: quantities must match the regular expression "
                            r"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
    if amount <= 0:
        out.append(cause(field, f"Invalid value: {go_value(value)}: must be greater than zero"))
    return out


def _mode_causes(spec: dict[str, Any], path: str = "spec") -> list[Cause]:
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        return [cause(f"{path}.volumeMode", f"Unsupported value: {go_value(mode)}: supported values: "
                      f"{_supported(VOLUME_MODES)}", "FieldValueNotSupported")]
    return []


def _class_name_causes(spec: dict[str, Any], path: str = "spec") -> list[Cause]:
    name = spec.get("storageClassName")
    return name_causes(name, f"{path}.storageClassName") if name else []


def storage_of(amounts: Any) -> float:
    """Bytes of a `storage` quantity (0 when absent or unreadable)."""
    try:
        return parse_quantity(_dict(amounts).get("storage", 0))
    except ValueError:
        return 0.0


def access_modes_text(modes: Any) -> str:
    return ",".join(ACCESS_MODES.get(m, m) for m in modes or [] if isinstance(m, str))


def class_of(obj: Obj) -> str:
    """The StorageClass a volume or claim names: spec.storageClassName or the beta annotation."""
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    if BETA_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_CLASS_ANNOTATION])
    return str(_spec(obj).get("storageClassName") or "")


def is_default_class(storage_class: Obj) -> bool:
    annotations = _dict(_dict(storage_class.get("metadata")).get("annotations"))
    return annotations.get(DEFAULT_CLASS_ANNOTATION) == "true"


def _add_finalizer(obj: Obj, finalizer: str) -> None:
    meta = obj.setdefault("metadata", {})
    finalizers = list(meta.get("finalizers") or [])
    if finalizer not in finalizers:
        meta["finalizers"] = finalizers + [finalizer]


def _pending(obj: Obj) -> None:
    obj["status"] = {"phase": "Pending"}


# --- PersistentVolume --------------------------------------------------------------------------

def pv_defaults(pv: Obj) -> None:
    spec = pv.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    status = pv.setdefault("status", {})
    if isinstance(status, dict):
        status.setdefault("phase", "Pending")


def admit_pv(pv: Obj, lookup: Lookup) -> str:
    _add_finalizer(pv, PV_PROTECTION)
    return ""


def validate_pv(pv: Obj) -> list[Cause]:
    spec = pv.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    out = _access_mode_causes(spec.get("accessModes"), "spec.accessModes", claim=False)
    out += _storage_causes(spec.get("capacity"), "spec.capacity", claim=False)
    sources = [s for s in PV_SOURCES if spec.get(s) is not None]
    if not sources:
        out.append(cause("spec", "Required value: must specify a volume type", "FieldValueRequired"))
    for extra in sources[1:]:
        out.append(cause(f"spec.{extra}", "Forbidden: may not specify more than 1 volume type", "FieldValueForbidden"))
    host = _dict(spec.get("hostPath"))
    if spec.get("hostPath") is not None and not host.get("path"):
        out.append(required("spec.hostPath.path"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy not in RECLAIM_POLICIES:
        out.append(cause("spec.persistentVolumeReclaimPolicy", f"Unsupported value: {go_value(policy)}: supported "
                         f"values: {_supported(RECLAIM_POLICIES)}", "FieldValueNotSupported"))
    return out + _mode_causes(spec) + _class_name_causes(spec)


def validate_pv_update(new: Obj, old: Obj) -> list[Cause]:
    spec, old_spec = _spec(new), _spec(old)
    out: list[Cause] = []
    if {s: spec.get(s) for s in PV_SOURCES} != {s: old_spec.get(s) for s in PV_SOURCES}:
        out.append(cause("spec.persistentvolumesource", "Forbidden: spec.persistentvolumesource is immutable after "
                         "creation", "FieldValueForbidden"))
    if spec.get("volumeMode") != old_spec.get("volumeMode"):
        out.append(cause("spec.volumeMode", f"Invalid value: {go_value(spec.get('volumeMode'))}: field is immutable"))
    if old_spec.get("nodeAffinity") and spec.get("nodeAffinity") != old_spec.get("nodeAffinity"):
        out.append(cause("spec.nodeAffinity", "Forbidden: field is immutable", "FieldValueForbidden"))
    return out


def pv_cells(pv: Obj, now: float) -> list[Any]:
    spec, status = _spec(pv), _dict(pv.get("status"))
    claim = _dict(spec.get("claimRef"))
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim.get("name") else ""
    phase = status.get("phase") or ""
    if _dict(pv.get("metadata")).get("deletionTimestamp"):
        phase = "Terminating"
    capacity = _dict(spec.get("capacity")).get("storage", "")
    return [pv["metadata"]["name"], str(capacity), access_modes_text(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy") or "", phase, claim_text, class_of(pv),
            spec.get("volumeAttributesClassName") or "<unset>", status.get("reason") or "", age(pv, now),
            spec.get("volumeMode") or "<unset>"]


PERSISTENTVOLUME = Kind(
    group="", version="v1", kind="PersistentVolume", plural="persistentvolumes", namespaced=False,
    definition="io.k8s.api.core.v1.PersistentVolume", short_names=("pv",), subresources=("status",),
    prepare_for_create=_pending, defaults=pv_defaults, validate=validate_pv, validate_update=validate_pv_update,
    admit=admit_pv,
    columns=(NAME_COLUMN, Column("Capacity", description="capacity is the description of the persistent volume's "
                                 "resources and capacity."),
             Column("Access Modes", description="accessModes contains all ways the volume can be mounted."),
             Column("Reclaim Policy", description="persistentVolumeReclaimPolicy defines what happens to a "
                    "persistent volume when released from its claim."),
             Column("Status", description="phase indicates if a volume is available, bound to a claim, or released "
                    "by a claim."),
             Column("Claim", description="claimRef is part of a bi-directional binding between PersistentVolume "
                    "and PersistentVolumeClaim."),
             Column("StorageClass", description="storageClassName is the name of StorageClass to which this "
                    "persistent volume belongs."),
             Column("VolumeAttributesClass", description="Name of VolumeAttributesClass to which this persistent "
                    "volume belongs."),
             Column("Reason", description="reason is a brief CamelCase string that describes any failure."),
             AGE_COLUMN,
             Column("VolumeMode", priority=1, description="volumeMode defines if a volume is intended to be used "
                    "with a formatted filesystem or to remain in raw block state.")),
    cells=pv_cells,
    field_getters={"status.phase": lambda o: str(_dict(o.get("status")).get("phase") or "")},
)


# --- PersistentVolumeClaim ---------------------------------------------------------------------

def pvc_defaults(pvc: Obj) -> None:
    spec = pvc.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
    status = pvc.setdefault("status", {})
    if isinstance(status, dict):
        status.setdefault("phase", "Pending")


def admit_pvc(pvc: Obj, lookup: Lookup) -> str:
    """StorageObjectInUseProtection, then DefaultStorageClass (a class named in an annotation wins)."""
    _add_finalizer(pvc, PVC_PROTECTION)
    spec = pvc.get("spec")
    annotations = _dict(_dict(pvc.get("metadata")).get("annotations"))
    if isinstance(spec, dict) and spec.get("storageClassName") is None and BETA_CLASS_ANNOTATION not in annotations:
        from control.kinds.storageclasses import DEFAULT_CLASS_NAME, STORAGECLASS

        default = lookup(STORAGECLASS.resource, "", DEFAULT_CLASS_NAME)
        if default is not None and is_default_class(default):
            spec["storageClassName"] = DEFAULT_CLASS_NAME
    return ""


def validate_pvc(pvc: Obj) -> list[Cause]:
    spec = pvc.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    return claim_spec_causes(spec, "spec")


def claim_spec_causes(spec: dict[str, Any], path: str) -> list[Cause]:
    """ValidatePersistentVolumeClaimSpec (also for a StatefulSet's volumeClaimTemplates)."""
    out = _access_mode_causes(spec.get("accessModes"), f"{path}.accessModes", claim=True)
    out += _storage_causes(_dict(spec.get("resources")).get("requests"), f"{path}.resources.requests", claim=True)
    return out + _mode_causes(spec, path) + _class_name_causes(spec, path)


def _comparable(spec: dict[str, Any], old: dict[str, Any], *, bound: bool) -> dict[str, Any]:
    """A claim's spec without what an update may change."""
    out = {k: v for k, v in spec.items()}
    if not old.get("volumeName"):
        out.pop("volumeName", None)
    if old.get("storageClassName") is None:
        out.pop("storageClassName", None)
    if bound:
        resources = dict(_dict(out.get("resources")))
        requests = dict(_dict(resources.get("requests")))
        requests.pop("storage", None)
        resources["requests"] = requests
        out["resources"] = resources
    return out


def validate_pvc_update(new: Obj, old: Obj) -> list[Cause]:
    spec, old_spec = _spec(new), _spec(old)
    bound = _dict(new.get("status")).get("phase") == "Bound"
    out: list[Cause] = []
    before, after = _comparable(old_spec, old_spec, bound=bound), _comparable(spec, old_spec, bound=bound)
    if before != after:
        diff = "\n".join(f"  {key}: {go_value(before.get(key))} -> {go_value(after.get(key))}"
                         for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key))
        out.append(cause("spec", "Forbidden: spec is immutable after creation except resources.requests and "
                         f"volumeAttributesClassName for bound claims\n{diff}", "FieldValueForbidden"))
    new_size = storage_of(_dict(spec.get("resources")).get("requests"))
    if bound and new_size < storage_of(_dict(old_spec.get("resources")).get("requests")):
        out.append(cause("spec.resources.requests.storage", "Forbidden: field can not be less than previous value",
                         "FieldValueForbidden"))
    return out


def pvc_cells(pvc: Obj, now: float) -> list[Any]:
    spec, status = _spec(pvc), _dict(pvc.get("status"))
    phase = status.get("phase") or ""
    if _dict(pvc.get("metadata")).get("deletionTimestamp"):
        phase = "Terminating"
    capacity, modes = "", ""
    if spec.get("volumeName"):
        capacity = str(_dict(status.get("capacity")).get("storage", ""))
        modes = access_modes_text(status.get("accessModes"))
    return [pvc["metadata"]["name"], phase, spec.get("volumeName") or "", capacity, modes, class_of(pvc),
            spec.get("volumeAttributesClassName") or "<unset>", age(pvc, now), spec.get("volumeMode") or "<unset>"]


PERSISTENTVOLUMECLAIM = Kind(
    group="", version="v1", kind="PersistentVolumeClaim", plural="persistentvolumeclaims", namespaced=True,
    definition="io.k8s.api.core.v1.PersistentVolumeClaim", short_names=("pvc",), subresources=("status",),
    prepare_for_create=_pending, defaults=pvc_defaults, validate=validate_pvc, validate_update=validate_pvc_update,
    admit=admit_pvc,
    columns=(NAME_COLUMN, Column("Status", description="phase represents the current phase of "
                                 "PersistentVolumeClaim."),
             Column("Volume", description="volumeName is the binding reference to the PersistentVolume backing "
                    "this claim."),
             Column("Capacity", description="capacity represents the actual resources of the underlying volume."),
             Column("Access Modes", description="accessModes contains the desired access modes the volume should "
                    "have."),
             Column("StorageClass", description="storageClassName is the name of the StorageClass required by the "
                    "claim."),
             Column("VolumeAttributesClass", description="volumeAttributesClassName may be used to set the "
                    "VolumeAttributesClass used by this claim."),
             AGE_COLUMN,
             Column("VolumeMode", priority=1, description="volumeMode defines what type of volume is required by "
                    "the claim.")),
    cells=pvc_cells,
    field_getters={"status.phase": lambda o: str(_dict(o.get("status")).get("phase") or "")},
)
