"""storage.k8s.io/v1 StorageClass: defaults, validation and immutability with Kubernetes' messages
(`pkg/apis/storage/validation`), kubectl's table, and the default class the hub starts with.

Guarantees: reclaimPolicy defaults to Delete and volumeBindingMode to Immediate; the provisioner
is required and, like parameters and reclaimPolicy, cannot change ("updates to ... are
forbidden."), volumeBindingMode is immutable; the NAME column reads "standard (default)" for a
class annotated `storageclass.kubernetes.io/is-default-class=true`; `default_storage_class()` is
the class bootstrap creates (`standard`, provisioner `kubernetes.io/host-path`, the simulated
provisioner of the persistentvolume-binder spoke).
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, QUALIFIED_NAME, Cause, Column, Kind, Obj, cause, required
from control.kinds.meta import age
from control.kinds.volumes import DEFAULT_CLASS_ANNOTATION, is_default_class

DEFAULT_CLASS_NAME = "standard"
HOST_PATH_PROVISIONER = "kubernetes.io/host-path"
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
RECLAIM_POLICIES = ("Delete", "Retain")


def storageclass_defaults(sc: Obj) -> None:
    if sc.get("reclaimPolicy") is None:
        sc["reclaimPolicy"] = "Delete"
    if sc.get("volumeBindingMode") is None:
        sc["volumeBindingMode"] = "Immediate"


def _supported(values: tuple[str, ...]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def validate_storageclass(sc: Obj) -> list[Cause]:
    out: list[Cause] = []
    provisioner = sc.get("provisioner")
    if not provisioner:
        out.append(required("provisioner"))
    elif not isinstance(provisioner, str) or len(provisioner.rpartition("/")[2]) > 63 or \
            not QUALIFIED_NAME.match(provisioner.rpartition("/")[2]):
        out.append(cause("provisioner", f"Invalid value: {go_value(provisioner)}: name part must consist of "
                         "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                         "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"))
    policy = sc.get("reclaimPolicy")
    if policy not in RECLAIM_POLICIES:
        out.append(cause("reclaimPolicy", f"Unsupported value: {go_value(policy)}: supported values: "
                         f"{_supported(RECLAIM_POLICIES)}", "FieldValueNotSupported"))
    mode = sc.get("volumeBindingMode")
    if mode not in BINDING_MODES:
        out.append(cause("volumeBindingMode", f"Unsupported value: {go_value(mode)}: supported values: "
                         f"{_supported(BINDING_MODES)}", "FieldValueNotSupported"))
    parameters = sc.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        out.append(cause("parameters", f"Invalid value: {go_value(parameters)}: must be a map of strings"))
    return out


def validate_storageclass_update(new: Obj, old: Obj) -> list[Cause]:
    out: list[Cause] = []
    for key in ("parameters", "provisioner", "reclaimPolicy"):
        if (new.get(key) or None) != (old.get(key) or None):
            out.append(cause(key, f"Forbidden: updates to {key} are forbidden.", "FieldValueForbidden"))
    if new.get("volumeBindingMode") != old.get("volumeBindingMode"):
        out.append(cause("volumeBindingMode", f"Invalid value: {go_value(new.get('volumeBindingMode'))}: "
                         "field is immutable"))
    return out


def storageclass_cells(sc: Obj, now: float) -> list[Any]:
    name = sc["metadata"]["name"] + (" (default)" if is_default_class(sc) else "")
    return [name, sc.get("provisioner") or "", sc.get("reclaimPolicy") or "", sc.get("volumeBindingMode") or "",
            bool(sc.get("allowVolumeExpansion")), age(sc, now)]


def default_storage_class(uid: str, created: str) -> Obj:
    """The class a fresh cluster has (minikube's `standard`: host paths, bound at once)."""
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
          "metadata": {"name": DEFAULT_CLASS_NAME, "uid": uid, "creationTimestamp": created,
                       "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
          "provisioner": HOST_PATH_PROVISIONER, "volumeBindingMode": "Immediate"}
    storageclass_defaults(sc)
    return sc


STORAGECLASS = Kind(
    group="storage.k8s.io", version="v1", kind="StorageClass", plural="storageclasses", namespaced=False,
    definition="io.k8s.api.storage.v1.StorageClass", short_names=("sc",),
    defaults=storageclass_defaults, validate=validate_storageclass, validate_update=validate_storageclass_update,
    columns=(NAME_COLUMN, Column("Provisioner", description="provisioner indicates the type of the provisioner."),
             Column("ReclaimPolicy", description="reclaimPolicy controls the reclaimPolicy for dynamically "
                    "provisioned PersistentVolumes of this storage class."),
             Column("VolumeBindingMode", description="volumeBindingMode indicates how PersistentVolumeClaims "
                    "should be provisioned and bound."),
             Column("AllowVolumeExpansion", type="boolean", description="allowVolumeExpansion shows whether the "
                    "storage class allow volume expand."),
             AGE_COLUMN),
    cells=storageclass_cells,
)
