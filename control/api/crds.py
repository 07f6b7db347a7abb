"""Keeps the registry's custom kinds equal to the stored CustomResourceDefinitions, in every hub
process, and removes a definition's objects when it is deleted.

Guarantees:
- In the process that commits a CRD change, the registry is updated by a store listener before the
  write's answer leaves (a created kind is served "at once": the next request finds it).
- Other hub processes sharing the store follow the change feed: a CRD change committed elsewhere
  is served as soon as their feed reads it (milliseconds with PostgreSQL NOTIFY, at most the poll
  interval otherwise). The hub loads every stored CRD when it starts (`ensure_following`, at ASGI
  lifespan.startup) and again after its feed fell behind the log (410); `stop_following` ends it.
- `delete_definition` deletes a CRD and, in the same transaction, every object of its kind (one
  DELETED event each). Kubernetes does this with the `customresourcecleanup` finalizer and a
  controller; here it happens inside the delete, so finalizers on the objects are not waited for.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Callable

from django.db import transaction

from control.clock import REAL as clock
from control import errors, kinds as registry
from control.storage import store
from control.storage.db import run_db
from control.storage.feed import get_feed
from control.api.request import Call
from control.kinds.crd import RESOURCE
from control.storage.store import Change

log = logging.getLogger(__name__)

_listening = False
_following: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}


def _committed(changes: list[Change]) -> None:
    """Store listener: runs in the writing thread right after the commit."""
    for change in changes:
        if change.resource == RESOURCE:
            registry.crd_applied(change.obj(), revision=change.revision, deleted=change.type == store.DELETED)


def listen() -> None:
    """Subscribe the store listener once per process."""
    global _listening
    if not _listening:
        _listening = True
        store.subscribe(_committed)


def _stored_definitions() -> tuple[list[dict[str, Any]], int]:
    bodies, revision = store.object_list(resource=RESOURCE)
    return [json.loads(b) for b in bodies], revision


async def _load(reset: bool) -> int:
    crds, revision = await run_db(_stored_definitions)
    registry.crds_loaded(crds, revision=revision, reset=reset)
    return revision


async def _follow(revision: int) -> None:
    feed = await get_feed()
    while True:
        try:
            changes = await feed.read_after(revision, timeout=30)
        except errors.Gone:
            revision = await _load(reset=False)
            continue
        except asyncio.CancelledError:
            raise
        except Exception:  # a failed read must not stop serving new kinds; try again shortly
            log.exception("following CustomResourceDefinitions failed")
            await clock.sleep(1)
            continue
        for change in changes:
            revision = change.revision
            if change.resource == RESOURCE:
                registry.crd_applied(change.obj(), revision=change.revision, deleted=change.type == store.DELETED)


async def ensure_following() -> None:
    """When the hub starts on an event loop (or a test's client does): load every stored CRD, then
    follow the feed for changes made by other processes. Idempotent."""
    loop = asyncio.get_running_loop()
    if loop in _following:
        return
    _following[loop] = None  # type: ignore[assignment]  # claimed: concurrent first requests wait below
    listen()
    for old in [lp for lp in _following if lp is not loop and lp.is_closed()]:
        _following.pop(old, None)
    try:
        revision = await _load(reset=True)
    except BaseException:
        _following.pop(loop, None)
        raise
    _following[loop] = loop.create_task(_follow(revision))


async def stop_following() -> None:
    """Stop following on the running loop (the hub shutting down)."""
    task = _following.pop(asyncio.get_running_loop(), None)
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


# --- deleting a definition deletes its objects --------------------------------------------------

def purge_objects(crd: dict[str, Any], actor: str) -> int:
    """Delete every object stored for a definition's kind (inside the caller's transaction)."""
    spec = crd.get("spec") or {}
    resource = f"{spec.get('group')}/{(spec.get('names') or {}).get('plural')}"
    bodies, _ = store.object_list(resource=resource)
    for body in bodies:
        meta = json.loads(body)["metadata"]
        try:
            store.object_delete(resource=resource, namespace=meta.get("namespace", ""), name=meta["name"], actor=actor)
        except errors.NotFound:
            continue
    return len(bodies)


def delete_definition(delete_one: Callable[[Call, str, dict[str, Any]], tuple[dict[str, Any], bool]], call: Call,
                      name: str, options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """`delete_one` for a CRD: the definition and its objects go in one transaction. (A definition
    held by a finalizer of its own is removed later by an update; its objects then stay stored,
    unserved, until a definition of the same name serves them again.)"""
    with transaction.atomic():
        obj, gone = delete_one(call, name, options)
        if gone and not call.dry_run:
            purge_objects(obj, call.actor)
    return obj, gone
