"""The garbage collector and custom kinds: it follows CustomResourceDefinitions through the hub,
watches each Established kind, and collects dependents of custom owners (an Order's Dishes)."""

from __future__ import annotations

import copy

from control.clock import FakeClock
from control.client.resources import PODS
from control.controllers.garbagecollector import (
    DEFINITIONS, WATCHED, GarbageCollector, custom_resource, item_key,
)
from control.restaurant.manifests import DISH_CRD, DISHES, ORDER_CRD, ORDERS
from tests.restaurant.kitchen import dish, order

from .fakes import START, FakeClient, fill, informers, observe, pod, run, vanish

ESTABLISHED = {"conditions": [{"type": "Established", "status": "True"}]}


def established(crd):
    out = pending(crd)
    out["status"] = ESTABLISHED
    out["metadata"]["resourceVersion"] = "2"
    return out


def pending(crd):
    out = copy.deepcopy(crd)
    out["metadata"]["resourceVersion"] = "1"
    return out


class Tasks:
    def __init__(self):
        self.started, self.cancelled = [], []

    def start(self, informer):
        self.started.append(informer.resource)
        tasks = self

        class Task:
            def cancel(self):
                tasks.cancelled.append(informer.resource)
        return Task()


def setup():
    client, shared = FakeClient(), informers()
    collector = GarbageCollector(client, {r: shared.get(r) for r in WATCHED}, clock=FakeClock(START))
    definitions, tasks = shared.get(DEFINITIONS), Tasks()
    collector.follow_definitions(definitions, tasks.start)
    return collector, client, definitions, tasks


def test_the_kind_of_an_established_definition_at_its_storage_version():
    assert custom_resource(ORDER_CRD) is None  # not Established yet
    assert custom_resource(established(ORDER_CRD)) == ORDERS
    two = established(DISH_CRD)
    two["spec"]["versions"] = [{"name": "v1", "served": True, "storage": False},
                               {"name": "v2", "served": True, "storage": True}]
    assert custom_resource(two).version == "v2"
    cluster = established(ORDER_CRD)
    cluster["spec"]["scope"] = "Cluster"
    assert custom_resource(cluster).namespaced is False


def test_an_established_definition_starts_one_informer_for_its_kind():
    collector, client, definitions, tasks = setup()
    observe(definitions, pending(ORDER_CRD))
    assert tasks.started == []
    observe(definitions, established(ORDER_CRD), established(DISH_CRD))
    observe(definitions, established(ORDER_CRD))  # an unchanged kind: nothing new
    assert tasks.started == [ORDERS, DISHES]
    assert collector.kinds[("kitchen.kubekitchen.dev/v1", "Order")] == ORDERS


def test_the_dishes_of_a_gone_order_are_collected_after_a_live_check():
    collector, client, definitions, tasks = setup()
    observe(definitions, established(ORDER_CRD), established(DISH_CRD))
    slip = order("table-1")
    plate = dish("table-1-a", slip)
    fill(collector.informers[DISHES], plate)
    client.store(DISHES, plate)  # the hub has it too
    run(collector.reconcile(item_key(DISHES, plate)))
    assert [(a.verb, a.plural, a.name) for a in client.actions] == [
        ("get", "orders", "table-1"), ("get", "dishes", "table-1-a"), ("delete", "dishes", "table-1-a")]
    assert client.of("delete")[0].options["preconditions"] == {"uid": "uid-table-1-a", "resourceVersion": plate["metadata"]["resourceVersion"]}


def test_deleting_an_order_wakes_its_dishes_and_a_live_order_keeps_them():
    collector, client, definitions, tasks = setup()
    observe(definitions, established(ORDER_CRD), established(DISH_CRD))
    slip = order("table-1")
    plate = dish("table-1-a", slip)
    fill(collector.informers[ORDERS], slip)
    fill(collector.informers[DISHES], plate)
    client.store(DISHES, plate)  # the hub has it too
    run(collector.reconcile(item_key(DISHES, plate)))
    assert client.actions == []  # owner found in the cache by uid
    vanish(collector.informers[ORDERS], slip)
    assert len(collector.queue) == 1
    run(collector.reconcile(item_key(DISHES, plate)))
    assert client.summary() == [("delete", "dishes", "table-1-a")]


def test_a_deleted_definition_stops_its_informer_and_its_owners_are_kept():
    collector, client, definitions, tasks = setup()
    observe(definitions, established(ORDER_CRD), established(DISH_CRD))
    vanish(definitions, established(ORDER_CRD))
    assert tasks.cancelled == [ORDERS] and ORDERS not in collector.informers
    p = pod("p", owners=[order("table-1")])
    fill(collector.informers[PODS], p)
    run(collector.reconcile(item_key(PODS, p)))
    assert client.summary() == []  # an owner of a kind no longer served is not ours to judge


def test_an_owner_named_at_another_version_of_its_kind_is_still_known():
    collector, client, definitions, tasks = setup()
    observe(definitions, established(ORDER_CRD), established(DISH_CRD))
    slip = order("table-1")
    slip["apiVersion"] = "kitchen.kubekitchen.dev/v1beta1"
    plate = dish("table-1-a", slip)
    fill(collector.informers[DISHES], plate)
    client.store(DISHES, plate)  # the hub has it too
    run(collector.reconcile(item_key(DISHES, plate)))
    assert client.summary() == [("delete", "dishes", "table-1-a")]
    assert client.actions[0].plural == "orders"  # looked up live at the watched version
