"""Allocation on the hub: the transaction and the reads around a kind's allocator (a Service's
cluster IPs and node ports, `control.kinds.service_addresses`), for any kind that declares one.

Guarantees:
- A create of a kind with an allocator runs in one transaction from the choice to the commit
  (`serialised`); other kinds pay nothing.
- The allocator reads what is taken inside the write transaction, after `store.writes_held()`
  (the revision row, which every write takes before it commits), so it decides from the objects
  stored at that moment; it reads only when it has something to choose.
- Requested values that cannot be had are a 422 naming the fields; a full range is a 500 with
  Kubernetes' words ("failed to allocate a serviceIP: range is full").
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from control import errors
from control.storage import savepoints, store
from control.api import admission
from control.kinds.base import Kind, Obj
from control.kinds.strategy import RangeFull


@contextlib.contextmanager
def serialised(kind: Kind, *, dry_run: bool = False) -> Iterator[None]:
    """Around the create of an object whose values are chosen from what is stored, or that a
    policy admits from what is stored (a ResourceQuota's room): one transaction, choice to commit."""
    if dry_run or (kind.allocator is None and not (kind.namespaced and admission.policies())):
        yield
        return
    with savepoints.atomic():  # Django's atomic, without its cost inside the database thread's transaction
        yield


def carry_over(kind: Kind, new: Obj, old: Obj) -> None:
    """Before validation of an update: what the allocator keeps from, or drops since, `old`."""
    if kind.allocator is not None:
        kind.allocator.carry_over(new, old)


def allocate(kind: Kind, obj: Obj, old: Obj | None = None) -> None:
    """After validation, inside the write transaction: let the kind's allocator fill `obj` in."""
    allocator = kind.allocator
    if allocator is None:
        return

    def stored_bodies() -> list[str]:
        store.writes_held()
        bodies, _ = store.object_list(resource=allocator.scans)
        return bodies

    try:
        causes = allocator.allocate(obj, old, stored_bodies)
    except RangeFull as full:
        raise errors.InternalError(str(full)) from None
    if causes:
        raise errors.invalid(kind.kind, kind.group, str(obj["metadata"].get("name") or ""), causes)
