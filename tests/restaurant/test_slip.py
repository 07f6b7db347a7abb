"""The pure helpers both cooks share: phase, ownership, the dish a slip asks for, which extras go."""

from control.restaurant import slip
from control.restaurant.manifests import ORDER_LABEL

from .kitchen import START, dish, order


def test_phase_follows_both_counts():
    assert slip.phase(2, 0, 0) == "Cooking"
    assert slip.phase(2, 1, 1) == "Cooking"
    assert slip.phase(2, 2, 1) == "Cooked"
    assert slip.phase(2, 2, 2) == "Garnished"
    assert slip.phase(1, 3, 3) == "Cooking"  # too many dishes: still adjusting


def test_a_new_dish_is_labelled_named_after_and_controlled_by_its_order():
    slip_ = order("table-7", 2, menu="soup", uid="u-7")
    body = slip.new_dish(slip_)
    assert body["metadata"]["generateName"] == "table-7-"
    assert body["metadata"]["labels"] == {ORDER_LABEL: "table-7"}
    assert body["metadata"]["ownerReferences"] == [{"apiVersion": "kitchen.kubekitchen.dev/v1", "kind": "Order",
                                                    "name": "table-7", "uid": "u-7", "controller": True,
                                                    "blockOwnerDeletion": True}]
    assert body["spec"] == {"menu": "soup", "order": "table-7"}


def test_dishes_belong_to_the_order_by_uid_not_by_name():
    old, new = order("t", uid="old"), order("t", uid="new")
    mine, theirs = dish("t-a", new), dish("t-b", old)
    assert slip.cooked_for(new, [mine, theirs]) == [mine]
    assert slip.order_key_of(theirs) == "default/t"


def test_extras_go_ungarnished_first_then_newest_first():
    o = order("t", 1)
    old_done = dish("t-a", o, garnished=True, created=START - 300)
    new_done = dish("t-b", o, garnished=True, created=START - 100)
    raw = dish("t-c", o, created=START - 500)
    assert [d["metadata"]["name"] for d in slip.extra_dishes([old_done, new_done, raw], 1)] == ["t-c", "t-b"]
    assert slip.extra_dishes([old_done], 1) == []


def test_a_slip_with_a_broken_count_asks_for_nothing():
    assert slip.wanted({"spec": {"count": "many"}}) == 0
    assert slip.wanted({"spec": {"count": -3}}) == 0
