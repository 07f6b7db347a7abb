"""apps/v1 ControllerRevision: the immutable snapshots DaemonSets and StatefulSets keep as their
history (`kubectl rollout history|undo`), as `pkg/registry/apps/controllerrevision` and
`pkg/apis/apps/validation` treat them.

Guarantees: `data` is required and immutable, `revision` is a non-negative number; the table is
kubectl's `NAME CONTROLLER REVISION AGE` (CONTROLLER as "statefulset.apps/web", "<none>" for an
orphan). `revision_name(owner, hash)` is the `<owner>-<hash>` name the controllers give them.
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, required
from control.kinds.meta import age, controller_ref


def validate_controllerrevision(revision: Obj) -> list[Cause]:
    out: list[Cause] = []
    if revision.get("data") is None:
        out.append(required("data"))
    number = revision.get("revision")
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        out.append(cause("revision", f"Invalid value: {go_value(number)}: must be greater than or equal to 0"))
    return out


def validate_controllerrevision_update(new: Obj, old: Obj) -> list[Cause]:
    if new.get("data") != old.get("data"):
        return [cause("data", f"Invalid value: {go_value(new.get('data'))}: field is immutable")]
    return []


def controller_text(obj: Obj) -> str:
    ref = controller_ref(obj)
    if not ref:
        return "<none>"
    group = str(ref.get("apiVersion", "")).rpartition("/")[0]
    kind = str(ref.get("kind", "")).lower()
    return f"{kind}.{group}/{ref.get('name', '')}" if group else f"{kind}/{ref.get('name', '')}"


def controllerrevision_cells(revision: Obj, now: float) -> list[Any]:
    return [revision["metadata"]["name"], controller_text(revision), revision.get("revision", 0), age(revision, now)]


def revision_name(owner_name: str, hash_text: str) -> str:
    return f"{owner_name}-{hash_text}"


CONTROLLERREVISION = Kind(
    group="apps", version="v1", kind="ControllerRevision", plural="controllerrevisions", namespaced=True,
    definition="io.k8s.api.apps.v1.ControllerRevision",
    validate=validate_controllerrevision, validate_update=validate_controllerrevision_update,
    columns=(NAME_COLUMN, Column("Controller", description="Controller of the object."),
             Column("Revision", type="integer", description="Revision indicates the revision of the state "
                    "represented by Data."), AGE_COLUMN),
    cells=controllerrevision_cells,
)
