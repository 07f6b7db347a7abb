"""What both cooks read off the slip and the dishes, and how both take a 409 on the slip.

Guarantees: nothing here changes its arguments (cached objects are shared and read-only), and
only `status_write` does I/O: both cooks write the slip's status through it, a PUT guarded by the
resourceVersion they read. `phase` is one function of the slip's count and the two cooks' counts,
so whichever cook writes last, the phase on the slip agrees with the counts beside it.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from control import errors
from control.client.resources import key_of
from control.client.runner import Result
from control.kinds.meta import controller_ref, controller_uid, labels_of, metadata, new_controller_ref
from control.restaurant.manifests import API_VERSION, ORDER_LABEL, ORDERS

log = logging.getLogger(__name__)

Obj = dict[str, Any]
RECHECK_AFTER_CONFLICT = 1.0  # seconds; the newer slip's watch event normally brings the key back first


def stale(key: str, conflict: Exception) -> Result:
    """After a 409 on the slip: the newer slip is on its way through the watch, and its event
    queues the key again; retrying before it arrives would only earn another 409. A look after
    `RECHECK_AFTER_CONFLICT` is the safety net."""
    return Result("requeue_after", after=RECHECK_AFTER_CONFLICT, reason=f"409 Conflict on {key}: {conflict}")


async def status_write(client: Any, order: Obj, status: Obj, *, cook: str) -> None:
    """Write `status` on the slip unless it already says that. A 409 (the slip changed since it
    was read) is logged and raised, for the caller to wait for the newer slip (`stale`); a slip
    that is gone is left alone (its delete event brings the cook back)."""
    if status == (order.get("status") or {}):
        return
    body = copy.deepcopy(order)
    body["status"] = status
    try:
        await client.replace_status(ORDERS, body)
    except errors.Conflict:
        log.info("%s: 409 Conflict writing %s's status (the slip changed since we read it); "
                 "looking again when the newer slip arrives", cook, key_of(order))
        raise
    except errors.NotFound:
        pass


def wanted(order: Obj) -> int:
    try:
        return max(0, int((order.get("spec") or {}).get("count", 0)))
    except (TypeError, ValueError):
        return 0


def phase(count: int, cooked: int, garnished: int) -> str:
    """Cooking until exactly `count` dishes exist, Cooked until `count` are garnished, then Garnished."""
    if cooked != count:
        return "Cooking"
    if garnished < count:
        return "Cooked"
    return "Garnished"


def order_name(dish: Obj) -> str:
    """The Order a dish belongs to: its controller reference, else its label."""
    ref = controller_ref(dish) or {}
    if ref.get("kind") == "Order" and ref.get("apiVersion") == API_VERSION:
        return ref.get("name", "")
    return labels_of(dish).get(ORDER_LABEL, "")


def order_key_of(dish: Obj) -> str | None:
    name = order_name(dish)
    return f"{metadata(dish).get('namespace', '')}/{name}" if name else None


def cooked_for(order: Obj, dishes: list[Obj]) -> list[Obj]:
    """The dishes of this very Order (controller uid, so a new slip with an old name gets its own)."""
    uid = metadata(order).get("uid")
    return [d for d in dishes if uid and controller_uid(d) == uid and not metadata(d).get("deletionTimestamp")]


def garnished(dish: Obj) -> bool:
    return bool((dish.get("status") or {}).get("garnished"))


def new_dish(order: Obj) -> Obj:
    """A dish for the order: generateName `<order>-`, labelled with and controlled by the order."""
    name, namespace = metadata(order)["name"], metadata(order).get("namespace", "default")
    return {"apiVersion": API_VERSION, "kind": "Dish",
            "metadata": {"generateName": f"{name}-", "namespace": namespace, "labels": {ORDER_LABEL: name},
                         "ownerReferences": [new_controller_ref(order, api_version=API_VERSION, kind="Order")]},
            "spec": {"menu": (order.get("spec") or {}).get("menu", ""), "order": name}}


def extra_dishes(dishes: list[Obj], count: int) -> list[Obj]:
    """The dishes to throw away when there are more than `count`: ungarnished first, newest first."""
    surplus = len(dishes) - count
    if surplus <= 0:
        return []
    newest_first = sorted(dishes, key=lambda d: (metadata(d).get("creationTimestamp", ""), metadata(d).get("name", "")),
                          reverse=True)
    return sorted(newest_first, key=garnished)[:surplus]  # stable: keeps newest-first within each group
