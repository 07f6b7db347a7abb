"""The line cook's reconcile against a fake hub: cooks what the slip asks for, recooks a dropped
dish, throws extras away, remembers what it sent, writes only its own status fields."""

from control import errors
from control.client.runner import DONE
from control.restaurant.linecook import LineCook
from control.restaurant.slip import RECHECK_AFTER_CONFLICT
from tests.controllers.fakes import observe, run, vanish

from .kitchen import dish, kitchen, order


def test_an_order_of_two_is_cooked_as_two_dishes_and_the_slip_says_cooking_0():
    slip = order("table-1", 2)
    cook, client, *_ = kitchen(LineCook, slip)
    assert run(cook.reconcile("default/table-1")) == DONE
    created = client.of("create", "dishes")
    assert len(created) == 2 and all(a.body["metadata"]["generateName"] == "table-1-" for a in created)
    status = client.of("replace/status", "orders")[0].body
    assert status["status"] == {"cooked": 0, "observedGeneration": 1, "phase": "Cooking"}
    assert status["metadata"]["resourceVersion"] == slip["metadata"]["resourceVersion"]  # optimistic concurrency


def test_when_both_dishes_are_there_the_slip_says_cooked_and_nothing_more_is_cooked():
    slip = order("table-1", 2, status={"garnished": 1})
    cook, client, *_ = kitchen(LineCook, slip, dish("table-1-a", slip), dish("table-1-b", slip, garnished=True))
    run(cook.reconcile("default/table-1"))
    assert client.of("create") == []
    assert client.of("replace/status", "orders")[0].body["status"] == {
        "cooked": 2, "garnished": 1, "observedGeneration": 1, "phase": "Cooked"}


def test_a_second_pass_over_the_same_state_does_nothing():
    slip = order("table-1", 2, status={"cooked": 2, "garnished": 2, "observedGeneration": 1, "phase": "Garnished"})
    cook, client, *_ = kitchen(LineCook, slip, dish("table-1-a", slip, garnished=True),
                               dish("table-1-b", slip, garnished=True))
    run(cook.reconcile("default/table-1"))
    assert client.summary() == []


def test_a_dropped_dish_is_cooked_again_once_and_only_once():
    slip = order("table-1", 2, status={"cooked": 2, "garnished": 2, "observedGeneration": 1, "phase": "Garnished"})
    a, b = dish("table-1-a", slip, garnished=True), dish("table-1-b", slip, garnished=True)
    cook, client, orders, dishes = kitchen(LineCook, slip, a, b)
    vanish(dishes, b)  # dropped on the floor
    run(cook.reconcile("default/table-1"))
    assert len(client.of("create", "dishes")) == 1
    assert client.of("replace/status", "orders")[0].body["status"]["cooked"] == 1
    run(cook.reconcile("default/table-1"))  # the new dish is not in the cache yet: expectations hold
    assert len(client.of("create", "dishes")) == 1
    observe(dishes, dish("table-1-c", slip))
    run(cook.reconcile("default/table-1"))
    assert len(client.of("create", "dishes")) == 1


def test_fewer_on_the_slip_throws_away_the_ungarnished_first():
    slip = order("table-1", 1)
    cook, client, *_ = kitchen(LineCook, slip, dish("table-1-a", slip, garnished=True), dish("table-1-b", slip),
                               dish("table-1-c", slip, garnished=True))
    run(cook.reconcile("default/table-1"))
    deleted = [a.name for a in client.of("delete", "dishes")]
    assert deleted[0] == "table-1-b" and len(deleted) == 2
    assert all(a.options["preconditions"]["uid"].startswith("uid-table-1-") for a in client.of("delete"))


def test_a_gone_order_is_left_to_the_garbage_collector():
    slip = order("table-1", 2)
    cook, client, orders, dishes = kitchen(LineCook, slip, dish("table-1-a", slip), dish("table-1-b", slip))
    vanish(orders, slip)
    assert run(cook.reconcile("default/table-1")) == DONE
    assert client.actions == []


def test_dishes_of_an_older_slip_with_the_same_name_do_not_count():
    old, new = order("table-1", 1, uid="old"), order("table-1", 1, uid="new")
    cook, client, *_ = kitchen(LineCook, new, dish("table-1-a", old))
    run(cook.reconcile("default/table-1"))
    assert len(client.of("create", "dishes")) == 1
    assert client.of("delete") == []  # the garbage collector's job: its owner's uid is gone


def test_a_409_on_the_slip_waits_for_the_newer_slip_instead_of_retrying_at_once():
    slip = order("table-1", 2, status={"cooked": 1})
    cook, client, *_ = kitchen(LineCook, slip, dish("table-1-a", slip))
    client.fail("replace/status", "orders", errors.conflict("orders.kitchen.kubekitchen.dev", "table-1"))
    result = run(cook.reconcile("default/table-1"))
    assert result.outcome == "requeue_after" and result.after == RECHECK_AFTER_CONFLICT and "409" in result.reason
    assert client.of("create") == []  # the line cook cooks only after the slip says what it saw


def test_the_slip_says_what_the_cook_saw_before_the_cook_acts():
    slip = order("table-1", 2, status={"cooked": 2, "garnished": 2, "observedGeneration": 1, "phase": "Garnished"})
    cook, client, *_ = kitchen(LineCook, slip, dish("table-1-a", slip, garnished=True))
    run(cook.reconcile("default/table-1"))
    assert [a.verb for a in client.actions] == ["replace/status", "create"]
    assert client.of("replace/status")[0].body["status"]["cooked"] == 1


def test_a_refused_create_is_retried_and_not_waited_for():
    slip = order("table-1", 1)
    cook, client, *_ = kitchen(LineCook, slip)
    client.fail("create", "dishes", errors.ServiceUnavailable("busy"))
    assert run(cook.reconcile("default/table-1")).outcome == "retry"
    assert cook.expectations.satisfied("default/table-1")


def test_dish_events_wake_their_order():
    slip = order("table-1", 2)
    cook, client, orders, dishes = kitchen(LineCook)
    observe(dishes, dish("table-1-a", slip))
    assert len(cook.queue) == 1
