"""The garnish cook's reconcile against a fake hub: garnishes every cooked dish once, writes only
its own field of the slip, guarded by the version it read."""

from control import errors
from control.client.runner import DONE
from control.restaurant.garnishcook import GarnishCook
from control.restaurant.slip import RECHECK_AFTER_CONFLICT
from tests.controllers.fakes import run

from .kitchen import dish, kitchen, order


def test_each_cooked_dish_is_garnished_and_the_slip_says_garnished():
    slip = order("table-1", 2, status={"cooked": 2, "phase": "Cooked"})
    cook, client, *_ = kitchen(GarnishCook, slip, dish("table-1-a", slip), dish("table-1-b", slip))
    assert run(cook.reconcile("default/table-1")) == DONE
    garnished = client.of("replace/status", "dishes")
    assert sorted(a.name for a in garnished) == ["table-1-a", "table-1-b"]
    assert all(a.body["status"]["garnished"] is True and a.body["status"]["garnishedAt"] for a in garnished)
    body = client.of("replace/status", "orders")[0].body
    assert body["status"] == {"cooked": 2, "garnished": 2, "phase": "Garnished"}
    assert body["metadata"]["resourceVersion"] == slip["metadata"]["resourceVersion"]


def test_a_garnished_dish_is_never_touched_again():
    slip = order("table-1", 2, status={"cooked": 2, "garnished": 2, "phase": "Garnished"})
    cook, client, *_ = kitchen(GarnishCook, slip, dish("table-1-a", slip, garnished=True),
                               dish("table-1-b", slip, garnished=True))
    run(cook.reconcile("default/table-1"))
    assert client.summary() == []


def test_half_an_order_is_garnished_but_the_slip_stays_cooking():
    slip = order("table-1", 2, status={"cooked": 1, "phase": "Cooking"})
    cook, client, *_ = kitchen(GarnishCook, slip, dish("table-1-a", slip))
    run(cook.reconcile("default/table-1"))
    assert client.of("replace/status", "orders")[0].body["status"] == {"cooked": 1, "garnished": 1, "phase": "Cooking"}


def test_a_dish_dropped_before_garnishing_is_skipped_not_fatal():
    slip = order("table-1", 1, status={"cooked": 1, "phase": "Cooked"})
    cook, client, *_ = kitchen(GarnishCook, slip, dish("table-1-a", slip))
    client.fail("replace/status", "dishes", errors.not_found("dishes.kitchen.kubekitchen.dev", "table-1-a"))
    assert run(cook.reconcile("default/table-1")) == DONE
    assert client.of("replace/status", "orders")[0].body["status"]["garnished"] == 0


def test_dishes_of_another_slip_are_not_garnished():
    old, new = order("table-1", 1, uid="old"), order("table-1", 1, uid="new")
    cook, client, *_ = kitchen(GarnishCook, new, dish("table-1-a", old))
    run(cook.reconcile("default/table-1"))
    assert client.of("replace/status", "dishes") == []


def test_a_409_on_the_slip_waits_for_the_newer_slip_instead_of_retrying_at_once():
    slip = order("table-1", 2, status={"cooked": 1})
    cook, client, *_ = kitchen(GarnishCook, slip, dish("table-1-a", slip))
    client.fail("replace/status", "orders", errors.conflict("orders.kitchen.kubekitchen.dev", "table-1"))
    result = run(cook.reconcile("default/table-1"))
    assert result.outcome == "requeue_after" and result.after == RECHECK_AFTER_CONFLICT and "409" in result.reason
    assert len(client.of("replace/status", "dishes")) == 1  # the dish itself was garnished


def test_a_gone_slip_needs_nothing():
    cook, client, *_ = kitchen(GarnishCook)
    assert run(cook.reconcile("default/nothing")) == DONE
    assert client.summary() == []
