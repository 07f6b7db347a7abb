"""The line cook (조리 담당): for every Order, keeps exactly `spec.count` Dishes cooked.

Guarantees:
- Level-triggered and idempotent: `reconcile(order key)` compares the slip with the dishes the
  informer shows and acts on the difference only; a second pass over the same state does nothing.
- Each Dish it cooks has generateName `<order>-`, the label `kitchen.kubekitchen.dev/order=<order>`
  and a controller ownerReference to the Order (by uid: a new slip with an old name gets new dishes).
- A dish dropped on the floor (deleted) is cooked again, because the slip still says `count`;
  extras are thrown away (ungarnished and newest first). Creates and deletes sent but not yet seen
  are remembered as expectations, so a lagging cache never cooks twice.
- It never cleans up after a slip that is gone (or after an older slip of the same name): its
  dishes carry an ownerReference to it, and the garbage collector of the controller-manager, which
  follows every custom kind, deletes them — as Kubernetes does for a ReplicaSet's pods.
- It writes only `status.cooked`, `status.observedGeneration` and the derived `status.phase` of
  the slip, with a PUT to the status subresource carrying the resourceVersion it read. The garnish
  cook writes `status.garnished` of the same slip the same way, so when both write at once one
  gets 409 Conflict: it is logged, and the pass is done again when the newer slip arrives through
  the watch (`slip.stale`) — the seed story's 409, on the wire for the dashboard to show. (A merge patch of one field would never
  conflict, but `phase` depends on both cooks' counts: only a write guarded by the version it was
  computed from keeps phase and counts in agreement.)
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from control import errors
from control.client.expectations import Expectations
from control.client.informer import Handlers, Informer, by_controller
from control.client.resources import key_of
from control.client.runner import DONE, Result, Runner, retry
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.kinds.meta import metadata
from control.restaurant import slip
from control.restaurant.manifests import DISHES, ORDERS

log = logging.getLogger(__name__)

NAME = "line-cook"
Obj = dict[str, Any]


def cooked_status(order: Obj, dishes: list[Obj]) -> Obj:
    status = copy.deepcopy(order.get("status") or {})
    cooked = len(dishes)
    status["cooked"] = cooked
    status["observedGeneration"] = metadata(order).get("generation", 1)
    status["phase"] = slip.phase(slip.wanted(order), cooked, int(status.get("garnished") or 0))
    return status


class LineCook:
    def __init__(self, client: Any, orders: Informer, dishes: Informer, *, clock: Clock, recorder: Any = None):
        self.client, self.orders, self.dishes = client, orders, dishes
        self.clock, self.recorder = clock, recorder
        self.queue = WorkQueue(clock=clock)
        self.expectations = Expectations(clock=clock)
        dishes.cache.add_indexer("controller", by_controller)
        orders.add_handlers(Handlers(on_add=self._order_changed, on_update=lambda old, new: self._order_changed(new),
                                     on_delete=self._order_deleted))
        dishes.add_handlers(Handlers(on_add=self._dish_added, on_update=self._dish_updated,
                                     on_delete=self._dish_deleted))

    # --- handlers: objects to keys -------------------------------------------------------------

    def _order_changed(self, order: Obj) -> None:
        self.queue.add(key_of(order))

    def _order_deleted(self, order: Obj) -> None:
        self.expectations.forget(key_of(order))
        self.queue.add(key_of(order))

    def _dish_added(self, dish: Obj) -> None:
        key = slip.order_key_of(dish)
        if key:
            self.expectations.created(key)
            self.queue.add(key)

    def _dish_updated(self, old: Obj, new: Obj) -> None:
        for key in {slip.order_key_of(old), slip.order_key_of(new)} - {None}:
            self.queue.add(key)

    def _dish_deleted(self, dish: Obj) -> None:
        key = slip.order_key_of(dish)
        if key:
            self.expectations.deleted(key, metadata(dish).get("uid", ""))
            self.queue.add(key)

    # --- reconcile ------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        order = self.orders.cache.get(key)
        if order is None or metadata(order).get("deletionTimestamp"):
            return DONE  # its dishes are the garbage collector's: they point at the slip that is gone
        uid = metadata(order)["uid"]
        mine = slip.cooked_for(order, self.dishes.cache.by_index("controller", uid))
        # The slip first says what the cook sees (cooked 1 of 2 after a drop), then the cook acts.
        # A stale slip (409) ends the pass until the newer slip arrives, so "cooked 1" is never
        # skipped, at the price of a few milliseconds.
        try:
            await slip.status_write(self.client, order, cooked_status(order, mine), cook=NAME)
        except errors.Conflict as exc:
            return slip.stale(key, exc)
        if not self.expectations.satisfied(key):
            return DONE  # what we sent is not back yet: each arrival brings us here again
        diff = slip.wanted(order) - len(mine)
        if diff > 0:
            return await self.cook(key, order, diff)
        if diff < 0:
            return await self.throw_away(key, slip.extra_dishes(mine, slip.wanted(order)), "the slip asks for fewer")
        return DONE

    async def cook(self, key: str, order: Obj, count: int) -> Result:
        self.expectations.expect(key, adds=count)
        namespace = metadata(order).get("namespace")
        results = await asyncio.gather(*(self.client.create(DISHES, slip.new_dish(order), namespace) for _ in range(count)),
                                       return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        for _ in failures:
            self.expectations.create_failed(key)
        cooked = [r for r in results if not isinstance(r, BaseException)]
        if cooked and self.recorder:
            names = ", ".join(metadata(d)["name"] for d in cooked)
            menu = (order.get("spec") or {}).get("menu", "dish")
            await self.recorder.record(order, "Normal", "Cooked", f"Cooked {len(cooked)} {menu}: {names}")
        if failures:
            if not isinstance(failures[0], errors.ApiError):
                raise failures[0]
            return retry(f"cooking for {key}: {failures[0]}")
        return DONE

    async def throw_away(self, key: str, dishes: list[Obj], why: str) -> Result:
        if not dishes:
            return DONE
        self.expectations.expect(key, deletes={metadata(d).get("uid", "") for d in dishes})

        async def delete(dish: Obj) -> None:
            try:
                await self.client.delete(DISHES, metadata(dish)["name"], metadata(dish).get("namespace"),
                                         preconditions={"uid": metadata(dish).get("uid", "")})
            except errors.ApiError:
                self.expectations.deleted(key, metadata(dish).get("uid", ""))  # we will not see it go
                raise

        results = await asyncio.gather(*(delete(d) for d in dishes), return_exceptions=True)
        log.info("%s: threw away %d dish(es) of %s: %s", NAME, len(dishes), key, why)
        failures = [r for r in results if isinstance(r, BaseException) and not isinstance(r, errors.NotFound)]
        if failures:
            if not isinstance(failures[0], errors.ApiError):
                raise failures[0]
            return retry(f"throwing away dishes of {key}: {failures[0]}")
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, recorder: Any = None) -> Runner:
    orders, dishes = informers.get(ORDERS), informers.get(DISHES)
    cook = LineCook(client, orders, dishes, clock=clock, recorder=recorder)
    return Runner(NAME, cook.reconcile, cook.queue, [orders, dishes], workers=2)
