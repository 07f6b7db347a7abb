"""apps/v1 ControllerRevision: an immutable snapshot of a workload's state (DaemonSet and
StatefulSet history, read by `kubectl rollout history|undo`), as kube-apiserver's
`pkg/registry/apps/controllerrevision` and `ValidateControllerRevision(Update)` do them.

Guarantees: `data` is required and immutable (`revision` may change: a controller renumbers a
revision it rolls back to); `revision` is non-negative; there is no status and no generation; the
table is kubectl's `NAME CONTROLLER REVISION AGE`, the controller printed as
`<kind lower-case>.<group>/<name>` (`daemonset.apps/fluentd`), `<none>` without one.
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause
from control.kinds.meta import age, controller_ref


def validate_controllerrevision(revision: Obj) -> list[Cause]:
    out: list[Cause] = []
    if revision.get("data") is None:
        out.append(cause("data", "Required value: data is mandatory", "FieldValueRequired"))
    number = revision.get("revision")
    if number is not None and (not isinstance(number, int) or isinstance(number, bool) or number < 0):
        out.append(cause("revision", f"Invalid value: {go_value(number)}: must be greater than or equal to 0"))
    return out


def validate_controllerrevision_update(new: Obj, old: Obj) -> list[Cause]:
    if new.get("data") != old.get("data"):
        return [cause("data", f"Invalid value: {go_value(new.get('data'))}: field is immutable")]
    return []


def controller_text(revision: Obj) -> str:
    ref = controller_ref(revision)
    if not ref:
        return "<none>"
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    kind = str(ref.get("kind") or "").lower()
    return f"{kind}.{group}/{ref.get('name', '')}" if group else f"{kind}/{ref.get('name', '')}"


def controllerrevision_cells(revision: Obj, now: float) -> list[Any]:
    return [revision["metadata"]["name"], controller_text(revision), int(revision.get("revision") or 0),
            age(revision, now)]


CONTROLLERREVISION = Kind(
    group="apps", version="v1", kind="ControllerRevision", plural="controllerrevisions", namespaced=True,
    definition="io.k8s.api.apps.v1.ControllerRevision",
    validate=validate_controllerrevision, validate_update=validate_controllerrevision_update,
    columns=(NAME_COLUMN, Column("Controller", description="Controller of the object"),
             Column("Revision", type="integer", description="Revision indicates the revision of the state "
                    "represented by Data."),
             AGE_COLUMN),
    cells=controllerrevision_cells,
)


def revision_name(owner_name: str, hash_text: str) -> str:
    """The `<owner>-<hash>` name the DaemonSet and StatefulSet controllers give a revision."""
    return f"{owner_name}-{hash_text}"
