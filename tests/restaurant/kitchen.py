"""Builders for the restaurant's objects in tests (an Order slip, its Dishes) and a fake kitchen:
a fake hub client with the two cooks' informers, filled directly (the sample-controller way)."""

from __future__ import annotations

from typing import Any

from control.clock import FakeClock
from control.restaurant.manifests import API_VERSION, DISHES, ORDER_LABEL, ORDERS
from tests.controllers.fakes import START, FakeClient, fill, informers, metadata

Obj = dict[str, Any]


def order(name: str = "table-1", count: int = 2, *, menu: str = "pasta", status: Obj | None = None,
          uid: str | None = None, generation: int = 1, **extra: Any) -> Obj:
    return {"apiVersion": API_VERSION, "kind": "Order",
            "metadata": metadata(name, uid=uid, generation=generation, **extra),
            "spec": {"menu": menu, "count": count}, "status": status or {}}


def dish(name: str, owner: Obj, *, garnished: bool = False, created: float = START - 60, labelled: bool = True) -> Obj:
    labels = {ORDER_LABEL: owner["metadata"]["name"]} if labelled else {}
    return {"apiVersion": API_VERSION, "kind": "Dish",
            "metadata": metadata(name, labels=labels, owners=[owner], created=created),
            "spec": {"menu": owner["spec"]["menu"], "order": owner["metadata"]["name"]},
            "status": {"garnished": True} if garnished else {}}


def kitchen(cook_class: type, *objs: Obj, clock: FakeClock | None = None) -> tuple[Any, FakeClient, Any, Any]:
    """A cook over a fake hub whose caches hold `objs`; returns (cook, client, orders, dishes)."""
    clock = clock or FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    orders, dishes = shared.get(ORDERS), shared.get(DISHES)
    cook = cook_class(client, orders, dishes, clock=clock)
    for obj in objs:
        fill(orders if obj["kind"] == "Order" else dishes, obj)
    return cook, client, orders, dishes


__all__ = ["order", "dish", "kitchen", "START"]
