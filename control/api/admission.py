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
- Policies (`Kind.policy`: LimitRanger, ResourceQuota) judge every write of every kind: their
  mutating step runs on create after the kind's own admission, their validating step after
  validation, on create and update; a refusal is 403 Forbidden with the policy's words. The
  validating step reads the store with writes held (`store.writes_held`) inside the write's
  transaction (`control.api.allocation.serialised`), so two creates cannot both be admitted
  against the same free room. The objects the policies read are shared between writes (each stored
  text decoded once, `DecodedBodies`): a policy reads them and never changes them.
- No kind is named here: each rule asks the `Kind` (and the store, for the namespace).
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from typing import Callable

from control import errors
from control.kinds.base import Kind, Obj
from control.kinds.strategy import Policy
from control.storage import store

NAMESPACES = "/namespaces"  # the resource every namespaced object lives in
ALL_NAMESPACES_VERBS = ("list", "watch")


def forbidden(kind: Kind, name: str, why: str, causes: list[dict[str, str]] | None = None) -> errors.Forbidden:
    """apierrors.NewForbidden(resource, name, why), as admission.NewForbidden builds it."""
    details = errors.ordered_details({"name": name, "group": kind.group, "kind": kind.plural, "causes": causes})
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


@functools.cache  # the built-in kinds are fixed at import; this is asked several times per write
def policies() -> tuple[Policy, ...]:
    """The policies of the built-in kinds, in the order the kinds are registered."""
    from control.kinds import KINDS  # the registry imports every kind; this module only needs their policies

    return tuple(k.policy for k in KINDS if k.policy is not None)


class DecodedBodies:
    """Stored JSON texts decoded once: a text seen again (the same object at the same revision)
    gives the object decoded the first time. So a quota's count of a namespace's pods decodes only
    what changed since the last write, not every pod at every create (each of N creates decoding
    the N before it). The objects are shared: the policies only read them. At most `max_chars` of
    text is kept, the least recently used going first; one lock (writes of several threads)."""

    def __init__(self, max_chars: int = 2 * 1024 * 1024, decode: Callable[[str], Obj] = json.loads):
        self.max_chars, self.decode = max_chars, decode
        self._objects: OrderedDict[str, Obj] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def decoded(self, body: str) -> Obj:
        with self._lock:
            obj = self._objects.get(body)
            if obj is not None:
                self._objects.move_to_end(body)
                return obj
        obj = self.decode(body)
        if len(body) > self.max_chars:
            return obj
        with self._lock:
            if body not in self._objects:
                self._objects[body] = obj
                self._chars += len(body)
                while self._chars > self.max_chars:
                    oldest, _ = self._objects.popitem(last=False)
                    self._chars -= len(oldest)
        return obj


_DECODED = DecodedBodies()


def _listed(resource: str, namespace: str) -> list[Obj]:
    bodies, _ = store.object_list(resource=resource, namespace=namespace)
    return [_DECODED.decoded(body) for body in bodies]


def _lister(*, held: bool) -> Callable[[str, str], list[Obj]]:
    """The store as one write's policies see it: each (resource, namespace) read once, since they
    ask for the same quotas and ranges several times; with `held`, writes are held before the first
    read (so nothing read can change before the write commits)."""
    seen: dict[tuple[str, str], list[Obj]] = {}

    def listed(resource: str, namespace: str) -> list[Obj]:
        key = (resource, namespace)
        if key not in seen:
            if held and not seen:
                store.writes_held()
            seen[key] = _listed(resource, namespace)
        return seen[key]
    return listed


def _refuse(kind: Kind, obj: Obj, why: str) -> None:
    if why:
        raise forbidden(kind, str(obj["metadata"].get("name") or obj["metadata"].get("generateName") or ""), why)


def mutate_by_policies(kind: Kind, obj: Obj) -> None:
    """The mutating step of every policy, on create (may change `obj`)."""
    listed = _lister(held=False)
    for policy in policies():
        _refuse(kind, obj, policy.mutate(kind.resource, obj, None, listed))


def validate_by_policies(kind: Kind, obj: Obj, old: Obj | None, *, dry_run: bool, actor: str) -> None:
    """The validating step of every policy, on create (`old` None) and update; then, unless this
    is a dry run, what the policies charge to other objects, written in the caller's transaction
    (so a refused or failed write leaves them as they were)."""
    listed = _lister(held=True)
    for policy in policies():
        _refuse(kind, obj, policy.validate(kind.resource, obj, old, listed))
    if dry_run:
        return
    for policy in policies():
        for write in policy.charge(kind.resource, obj, old, listed):
            try:
                store.object_update(resource=write.resource, namespace=write.namespace, name=write.name,
                                    mutate=write.mutate, actor=actor)
            except errors.NotFound:
                continue  # gone meanwhile: nothing left to charge
