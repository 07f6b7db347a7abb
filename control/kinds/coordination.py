"""coordination.k8s.io/v1 Lease: the heartbeat a kubelet renews so the hub knows its node lives.

Guarantees: validation rejects negative durations and transitions; the table shows the holder.
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause
from control.kinds.meta import age


def validate_lease(lease: Obj) -> list[Cause]:
    spec = lease.get("spec") or {}
    out = []
    if not isinstance(spec, dict):
        return [cause("spec", "Invalid value: must be an object")]
    for key in ("leaseDurationSeconds", "leaseTransitions"):
        value = spec.get(key)
        if value is not None and (not isinstance(value, int) or value < 0 or (key == "leaseDurationSeconds" and value == 0)):
            out.append(cause(f"spec.{key}", f"Invalid value: {go_value(value)}: must be greater than {'0' if key == 'leaseDurationSeconds' else 'or equal to 0'}"))
    return out


def lease_cells(lease: Obj, now: float) -> list[Any]:
    return [lease["metadata"]["name"], (lease.get("spec") or {}).get("holderIdentity") or "", age(lease, now)]


LEASE = Kind(
    group="coordination.k8s.io", version="v1", kind="Lease", plural="leases", namespaced=True,
    definition="io.k8s.api.coordination.v1.Lease", validate=validate_lease, allow_create_on_update=True,
    columns=(NAME_COLUMN, Column("Holder", description="The holder of the lease."), AGE_COLUMN),
    cells=lease_cells,
)
