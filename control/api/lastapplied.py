"""The hand-over from client-side `kubectl apply` to `kubectl apply --server-side`, as kube-apiserver
does it (apimachinery's managedfields `lastAppliedManager` and `lastAppliedUpdater`).

An object written by client-side apply records what kubectl applied in the
`kubectl.kubernetes.io/last-applied-configuration` annotation, while its fields belong to the
"kubectl-client-side-apply" manager (operation Update). When the manager named "kubectl" then
applies server-side, Kubernetes does not report those fields as conflicts:

Guarantees:
- `takeover_allowed` is the set of fields the annotation (of the object's own apiVersion) says were
  applied and whose live value is still the applied one; a field changed since by anyone else is
  not in it. A missing, empty, unparsable or other-version annotation allows nothing.
- Only an apply by the manager "kubectl" may take fields over this way; any other manager name
  (the documented opt-out) sees the conflicts.
- `sync_annotation` keeps the annotation, where the object already has one, equal to the
  configuration "kubectl" applied server-side (without the annotation itself), so a later
  client-side apply computes its three-way patch from what was really applied last.
- Neither function mutates its inputs.
"""

from __future__ import annotations

import json
from typing import Any

from control.api.smp import PatchMeta

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL = "kubectl"  # the field manager `kubectl apply --server-side` uses

Path = tuple[str, ...]


def _annotation(obj: dict | None) -> str:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations")
    value = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) else ""


def takeover_allowed(live: dict | None, manager: str, meta: PatchMeta, api_version: str) -> set[Path]:
    """Fields `manager` may take from client-side apply without a conflict (see the guarantees)."""
    from control.api.apply import _differs, field_set  # apply imports this module: import late

    text = _annotation(live)
    if manager != KUBECTL or not text:
        return set()
    try:
        last_applied = json.loads(text)
    except ValueError:
        return set()
    if not isinstance(last_applied, dict) or last_applied.get("apiVersion") != api_version:
        return set()
    # Fields whose live value differs, was added or was removed since were not ours to hand over.
    return {path for path in field_set(last_applied, meta) if not _differs(last_applied, live, path)}


def _go_json(value: Any) -> str:
    """JSON as Go's encoder writes an unstructured object: sorted keys, compact, HTML-escaped, newline."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    for char, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)  # these only ever occur inside strings
    return text + "\n"


def sync_annotation(result: dict, live: dict | None, applied: dict, manager: str) -> dict:
    """`result` with the annotation rewritten to `applied` when "kubectl" applied over one."""
    if manager != KUBECTL or not _annotation(live):
        return result
    recorded = {**applied}
    metadata = recorded.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        annotations = {k: v for k, v in metadata["annotations"].items() if k != LAST_APPLIED}
        recorded["metadata"] = {**metadata, "annotations": annotations}
    out_metadata = dict(result.get("metadata") or {})
    out_metadata["annotations"] = {**(out_metadata.get("annotations") or {}), LAST_APPLIED: _go_json(recorded)}
    return {**result, "metadata": out_metadata}
