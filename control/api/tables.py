"""Server-side printing: Kubernetes `Table` responses for `kubectl get`.

Guarantees: column definitions come from the kind (priority ≥ 1 only with `-o wide`); each row
carries the object as PartialObjectMetadata (or the whole object with includeObject=Object), so
`-A`, `--show-labels` and `-L` work.
"""

from __future__ import annotations

from typing import Any

from control.clock import REAL as clock
from control.kinds.base import Kind

TABLE_MEDIA = "as=Table"


def wants_table(accept: str) -> bool:
    """True when the client asked for a meta.k8s.io Table (kubectl get does)."""
    return TABLE_MEDIA in accept.replace(" ", "") and "g=meta.k8s.io" in accept.replace(" ", "")


def _row_object(obj: dict[str, Any], include: str) -> dict[str, Any] | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def rows(kind: Kind, objects: list[dict[str, Any]], include: str = "Metadata") -> list[dict[str, Any]]:
    now = clock.now()
    out = []
    for obj in objects:
        row: dict[str, Any] = {"cells": kind.row(obj, now)}
        partial = _row_object(obj, include)
        if partial is not None:
            row["object"] = partial
        out.append(row)
    return out


def table(kind: Kind, objects: list[dict[str, Any]], *, resource_version: str = "", cont: str = "",
          include: str = "Metadata", with_columns: bool = True) -> dict[str, Any]:
    metadata: dict[str, Any] = {"resourceVersion": resource_version}
    if cont:
        metadata["continue"] = cont
    result: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata}
    result["columnDefinitions"] = [c.definition() for c in kind.columns] if with_columns else None
    result["rows"] = rows(kind, objects, include)
    return result
