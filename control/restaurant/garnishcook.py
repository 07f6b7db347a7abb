"""The garnish cook (가니싱 담당): garnishes every cooked Dish and says so on the slip.

Guarantees:
- It never talks to the line cook: it learns that a dish was cooked only because the hub tells it
  (a Dish appears in its watch), and the line cook learns nothing from it but the slip.
- `reconcile(order key)` garnishes each of the order's dishes that is not garnished yet
  (`status.garnished: true` through the Dish's status subresource), then writes the slip's
  `status.garnished` (how many of its dishes are garnished) and the derived `status.phase`
  (Garnished once all `count` dishes are), with a PUT guarded by the resourceVersion it read.
  The line cook writes `status.cooked` of the same slip: a 409 Conflict between them is logged
  and the pass is done again when the newer slip arrives (why not a merge patch: see `linecook`).
- Idempotent: a garnished dish is never touched again; an unchanged status is not written.
"""

from __future__ import annotations

import copy
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer, by_controller
from control.client.resources import key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.kinds.meta import format_time, metadata
from control.restaurant import slip
from control.restaurant.manifests import DISHES, ORDERS

NAME = "garnish-cook"
Obj = dict[str, Any]


def garnished_status(order: Obj, garnished: int) -> Obj:
    status = copy.deepcopy(order.get("status") or {})
    status["garnished"] = garnished
    status["phase"] = slip.phase(slip.wanted(order), int(status.get("cooked") or 0), garnished)
    return status


class GarnishCook:
    def __init__(self, client: Any, orders: Informer, dishes: Informer, *, clock: Clock, recorder: Any = None):
        self.client, self.orders, self.dishes = client, orders, dishes
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        dishes.cache.add_indexer("controller", by_controller)
        orders.add_handlers(Handlers(on_add=self._order_changed, on_update=lambda old, new: self._order_changed(new)))
        dishes.add_handlers(Handlers(on_add=self._dish_changed, on_update=lambda old, new: self._dish_changed(new),
                                     on_delete=self._dish_changed))

    def _order_changed(self, order: Obj) -> None:
        self.queue.add(key_of(order))

    def _dish_changed(self, dish: Obj) -> None:
        key = slip.order_key_of(dish)
        if key:
            self.queue.add(key)

    async def reconcile(self, key: str) -> Result:
        order = self.orders.cache.get(key)
        if order is None or metadata(order).get("deletionTimestamp"):
            return DONE  # nothing to garnish for a slip that is gone
        mine = slip.cooked_for(order, self.dishes.cache.by_index("controller", metadata(order)["uid"]))
        done = sum(1 for d in mine if slip.garnished(d))
        failed: Exception | None = None
        for dish in (d for d in mine if not slip.garnished(d)):
            try:
                await self.garnish(dish)
                done += 1
            except errors.NotFound:
                pass  # dropped on the floor before we got to it: its delete event brings us back
            except errors.ApiError as exc:
                failed = failed or exc
        try:
            await slip.status_write(self.client, order, garnished_status(order, done), cook=NAME)
        except errors.Conflict as exc:
            return slip.stale(key, exc)  # the dishes garnished stay garnished; the count waits for the newer slip
        if failed:
            return retry(f"garnishing dishes of {key}: {failed}")
        return DONE

    async def garnish(self, dish: Obj) -> None:
        body = copy.deepcopy(dish)
        body["status"] = {**(dish.get("status") or {}), "garnished": True, "garnishedAt": format_time(self.clock.now())}
        await self.client.replace_status(DISHES, body)
        if self.recorder:
            await self.recorder.record(dish, "Normal", "Garnished", f"Garnished {metadata(dish)['name']}")


def build(*, client: Any, informers: Any, clock: Clock, recorder: Any = None) -> Runner:
    orders, dishes = informers.get(ORDERS), informers.get(DISHES)
    cook = GarnishCook(client, orders, dishes, clock=clock, recorder=recorder)
    return Runner(NAME, cook.reconcile, cook.queue, [orders, dishes], workers=2)
