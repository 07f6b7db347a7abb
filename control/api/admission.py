"""Generic admission: the rules kube-apiserver's admission chain applies to every kind, before the
kind's own (`Kind.admit`, e.g. a pod's ServiceAccount admission) — upstream's NamespaceLifecycle
plugin (plugin/pkg/admission/namespace/lifecycle).

Guarantees:
- A namespaced object is created only in a namespace that exists (404 `namespaces "x" not found`)
  and is not being terminated (403 Forbidden, `<resource> "<name>" is forbidden: unable to create
  new content in namespace X because it is being terminated`, with the NamespaceTerminating cause).
- An object its kind says may never be deleted (`Deletion.refusal`: the namespaces `default`,
  `kube-system`, `kube-public`, `kube-node-lease`) is refused with 403 Forbidden, upstream's message.
- A write on the all-namespaces path of a namespaced kind (`DELETE /api/v1/pods`) is 405: upstream
  serves that path for list and watch only.
- No kind is named here: each rule asks the `Kind` (and the store, for the namespace).
"""

from __future__ import annotations

from typing import Any

from control import errors
from control.kinds.base import Kind, Obj
from control.storage import store

NAMESPACES = "/namespaces"  # the resource every namespaced object lives in
ALL_NAMESPACES_VERBS = ("list", "watch")


def forbidden(kind: Kind, name: str, why: str, causes: list[dict[str, str]] | None = None) -> errors.Forbidden:
    """apierrors.NewForbidden(resource, name, why), as admission.NewForbidden builds it."""
    details: dict[str, Any] = {"name": name, **({"group": kind.group} if kind.group else {}), "kind": kind.plural}
    if causes:
        details["causes"] = causes
    return errors.Forbidden(f'{errors.qualified_resource(kind.resource)} "{name}" is forbidden: {why}',
                            details=details)


def check_path(kind: Kind, namespace: str, name: str, verb: str) -> None:
    """The all-namespaces collection path of a namespaced kind answers list and watch only."""
    if kind.namespaced and not namespace and not name and verb not in ALL_NAMESPACES_VERBS:
        raise errors.MethodNotAllowed("the server does not allow this method on the requested resource",
                                      details={"kind": kind.plural})


def admit_create(kind: Kind, obj: Obj, namespace: str) -> None:
    """NamespaceLifecycle on create: the namespace exists and is not terminating. Runs on the
    database thread, inside the create's transaction scope."""
    if not namespace:
        return
    try:
        ns = store.object_get(resource=NAMESPACES, namespace="", name=namespace)
    except errors.NotFound:
        raise errors.not_found(NAMESPACES, namespace) from None
    terminating = ns["metadata"].get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating"
    if terminating:
        meta = obj["metadata"]
        name = str(meta.get("name") or meta.get("generateName") or "Unknown")
        raise forbidden(kind, name, f"unable to create new content in namespace {namespace} because it is being terminated",
                        [{"reason": "NamespaceTerminating", "message": f"namespace {namespace} is being terminated",
                          "field": "metadata.namespace"}])


def admit_delete(kind: Kind, current: Obj) -> None:
    """An object its kind keeps forever (an immortal namespace) is never deleted."""
    why = kind.deletion.refusal(current)
    if why:
        raise forbidden(kind, current["metadata"]["name"], why)
