"""Claiming children (kube-controller-manager's ControllerRefManager), shared by the ReplicaSet
controller (pods) and the Deployment controller (ReplicaSets).

Guarantees: an owner keeps its children that still match its selector; it adopts matching orphans
only after a fresh read shows it alive and unchanged (never on a lagging cache's word); it
releases its children that no longer match. A child deleted meanwhile is simply skipped.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from control import errors
from control.client.resources import Resource
from control.controllers.common import Obj, adopt_patch, release_patch, terminating, uid_of
from control.kinds.meta import controller_ref, labels_of, metadata, spec_selector
from control.kinds.selectors import LabelSelector


async def claim(client: Any, owner: Obj, owner_resource: Resource, candidates: Iterable[Obj],
                child_resource: Resource, selector_of: Callable[[Obj], LabelSelector] = spec_selector) -> list[Obj]:
    """The children `owner` controls, after adopting matching orphans and releasing strays;
    `selector_of` reads the owner's selector (its spec.selector, a LabelSelector, by default)."""
    selector, uid = selector_of(owner), uid_of(owner)
    owned: list[Obj] = []
    checked = False
    for child in candidates:
        ref, matches = controller_ref(child), selector.matches(labels_of(child))
        if ref is not None and ref.get("uid") == uid:
            if matches or terminating(owner):
                owned.append(child)
            else:
                await _patch_child(client, child_resource, child, release_patch(child, uid))
            continue
        if ref is not None or not matches or terminating(child) or terminating(owner):
            continue
        if not checked:
            fresh = await client.get(owner_resource, metadata(owner)["name"], metadata(owner)["namespace"])
            if uid_of(fresh) != uid or terminating(fresh):
                raise errors.NotFound(f"the {owner_resource.kind} was replaced or is being deleted")
            checked = True
        adopted = await _patch_child(client, child_resource, child, adopt_patch(child, owner))
        if adopted is not None:
            owned.append(adopted)
    return owned


async def _patch_child(client: Any, resource: Resource, child: Obj, patch: Obj) -> Obj | None:
    try:
        return await client.patch(resource, metadata(child)["name"], patch, metadata(child)["namespace"])
    except errors.NotFound:
        return None
