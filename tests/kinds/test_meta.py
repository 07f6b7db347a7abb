"""The object layer (control/kinds/meta.py): Kubernetes' time formats, conditions that keep their
transition time, owner references, labels and node readiness."""

from __future__ import annotations

import copy

import pytest

from control.kinds.meta import (
    LATEST_TIME, age, condition_status, controller_ref, controller_uid, created_at, find_condition, format_micro_time,
    format_nano_time, format_time, get_condition, human_duration, is_condition_true, is_controlled_by,
    is_node_ready, is_owned_by, labels_of, new_condition, new_controller_ref, node_ready, node_ready_status,
    owner_name, owner_reference, owner_references, parse_time, set_condition, spec_selector,
)

T0 = 1_700_000_000  # 2023-11-14T22:13:20Z


def test_time_is_written_as_kubernetes_writes_it():
    assert format_time(T0) == "2023-11-14T22:13:20Z"
    assert format_time(T0 + 0.99) == "2023-11-14T22:13:20Z"  # whole seconds, truncated as Go's Time
    assert format_micro_time(T0 + 0.25) == "2023-11-14T22:13:20.250000Z"
    assert format_nano_time(T0 + 0.5) == "2023-11-14T22:13:20.500000000Z"



def test_the_same_second_again_and_the_next_one_are_each_written_right():
    # format_time keeps the last second it wrote: a repeat, a later and an earlier second all read right
    assert [format_time(t) for t in (T0, T0 + 0.5, T0 + 1, T0, T0 - 1, T0 + 1.2)] == [
        "2023-11-14T22:13:20Z", "2023-11-14T22:13:20Z", "2023-11-14T22:13:21Z", "2023-11-14T22:13:20Z",
        "2023-11-14T22:13:19Z", "2023-11-14T22:13:21Z"]

def test_absurd_times_are_clamped_to_what_rfc3339_can_hold():
    assert format_time(LATEST_TIME + 10**9) == "9999-12-31T23:59:59Z"
    assert format_time(-5) == "1970-01-01T00:00:00Z"


@pytest.mark.parametrize("stamp, seconds", [
    ("2023-11-14T22:13:20Z", T0),
    ("2023-11-14T22:13:20.250000Z", T0 + 0.25),
    ("2023-11-14T22:13:20.500000000Z", T0 + 0.5),
    ("2023-11-15T00:13:20+02:00", T0),
    ("2023-11-14T22:13:20", T0),  # no offset: read as UTC, as Kubernetes writes every stamp
])
def test_any_rfc3339_stamp_is_read(stamp, seconds):
    assert parse_time(stamp) == pytest.approx(seconds)


@pytest.mark.parametrize("junk", [None, "", "yesterday", "2023-11-14", "2023-13-40T99:00:00Z", 17, {"t": 1}])
def test_unreadable_stamps_are_none_not_errors(junk):
    assert parse_time(junk) is None


def test_round_trip():
    for seconds in (0, T0, LATEST_TIME):
        assert parse_time(format_time(seconds)) == seconds


@pytest.mark.parametrize("seconds, text", [
    (0, "0s"), (45, "45s"), (119, "119s"), (125, "2m5s"), (600, "10m"), (179 * 60, "179m"),
    (3 * 3600 + 5 * 60, "3h5m"), (8 * 3600, "8h"), (47 * 3600, "47h"), (50 * 3600, "2d2h"),
    (8 * 86400, "8d"), (729 * 86400, "729d"), (730 * 86400, "2y"), (800 * 86400, "2y70d"),
    (8 * 365 * 86400 + 5 * 86400, "8y"), (-1.5, "0s"), (-2, "<invalid>"),
])
def test_ages_read_as_kubectl_prints_them(seconds, text):
    assert human_duration(seconds) == text


def test_age_of_an_object():
    obj = {"metadata": {"creationTimestamp": format_time(T0)}}
    assert created_at(obj) == T0 and age(obj, T0 + 90) == "90s"
    assert age({"metadata": {}}, T0) == "<unknown>" and created_at({}) is None


# --- conditions ------------------------------------------------------------------------------------

def test_transition_time_holds_while_the_status_holds():
    first = new_condition("Ready", "True", T0, None, reason="Up")
    assert first == {"type": "Ready", "status": "True", "reason": "Up", "lastTransitionTime": format_time(T0)}
    same = new_condition("Ready", "True", T0 + 60, first, reason="StillUp")
    assert same["lastTransitionTime"] == format_time(T0) and same["reason"] == "StillUp"
    flipped = new_condition("Ready", "False", T0 + 120, same)
    assert flipped["lastTransitionTime"] == format_time(T0 + 120)


def test_set_condition_replaces_in_place_and_leaves_its_input_alone():
    conditions = [{"type": "A", "status": "True", "lastTransitionTime": "t-a"},
                  {"type": "Ready", "status": "False", "lastTransitionTime": "t-r"}]
    before = copy.deepcopy(conditions)
    out = set_condition(conditions, "A", "True", T0, message="m")
    assert conditions == before
    assert [c["type"] for c in out] == ["A", "Ready"]
    assert out[0] == {"type": "A", "status": "True", "message": "m", "lastTransitionTime": "t-a"}
    out = set_condition(out, "Ready", "True", T0)
    assert out[1]["lastTransitionTime"] == format_time(T0)
    out = set_condition(None, "New", "Unknown", T0)
    assert out == [{"type": "New", "status": "Unknown", "lastTransitionTime": format_time(T0)}]


def test_reading_conditions():
    pod = {"status": {"conditions": ["junk", {"type": "Ready", "status": "True"}, {"type": "X", "status": "False"}]}}
    assert get_condition(pod, "Ready") == {"type": "Ready", "status": "True"}
    assert find_condition(pod["status"]["conditions"], "X")["status"] == "False"
    assert condition_status(pod, "X") == "False" and condition_status(pod, "Missing") is None
    assert is_condition_true(pod, "Ready") and not is_condition_true(pod, "X")
    assert get_condition({}, "Ready") is None


# --- nodes -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("status, word, ready", [
    ("True", "Ready", True), ("False", "NotReady", False), ("Unknown", "Unknown", False), (None, "Unknown", False),
])
def test_node_readiness(status, word, ready):
    node = {"status": {"conditions": [{"type": "MemoryPressure", "status": "False"}]
                       + ([{"type": "Ready", "status": status}] if status else [])}}
    assert node_ready(node) == word and is_node_ready(node) is ready
    assert node_ready_status(node) == (status or "Unknown")


def test_a_missing_node_is_not_ready():
    assert node_ready(None) == "Unknown" and not is_node_ready(None) and node_ready_status({}) == "Unknown"


# --- owners and labels -----------------------------------------------------------------------------

OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "uid": "rs-uid"}}


def test_controller_reference_as_controllers_write_it():
    assert new_controller_ref(OWNER) == {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                         "uid": "rs-uid", "controller": True, "blockOwnerDeletion": True}
    assert new_controller_ref(OWNER, block=False)["blockOwnerDeletion"] is False
    assert "blockOwnerDeletion" not in new_controller_ref(OWNER, block=None)  # kubectl create job --from


def test_controller_reference_takes_the_owners_type_when_the_object_lacks_it():
    item = {"metadata": {"name": "web", "uid": "d-uid"}}  # a list's item: no apiVersion, no kind
    assert new_controller_ref(item, api_version="apps/v1", kind="Deployment") == {
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-uid", "controller": True,
        "blockOwnerDeletion": True}


def test_a_plain_owner_reference_has_no_controller():
    assert owner_reference("v1", "Node", "node-1", "n-uid") == {"apiVersion": "v1", "kind": "Node", "name": "node-1",
                                                               "uid": "n-uid"}


def test_owner_references():
    pod = {"metadata": {"ownerReferences": [
        {"kind": "Node", "name": "n1", "uid": "node-uid"},
        {"kind": "Thing", "name": "ghost"},  # no uid: points nowhere
        new_controller_ref(OWNER)]}}
    assert [r["uid"] for r in owner_references(pod)] == ["node-uid", "rs-uid"]
    assert controller_ref(pod)["uid"] == "rs-uid" and controller_uid(pod) == "rs-uid"
    assert controller_uid({"metadata": {"ownerReferences": [{"kind": "Node", "uid": "n"}]}}) == ""
    assert is_owned_by(pod, "node-uid") and is_owned_by(pod, "rs-uid") and not is_owned_by(pod, "other")
    assert is_controlled_by(pod, "rs-uid") and not is_controlled_by(pod, "node-uid") and not is_controlled_by({}, "")
    assert owner_name(pod, "ReplicaSet") == "web-1" and owner_name(pod, "Deployment") == ""
    assert controller_ref({"metadata": {}}) is None and owner_references({}) == []


def test_labels_and_spec_selectors():
    rs = {"metadata": {"labels": {"app": "web"}},
          "spec": {"selector": {"matchLabels": {"app": "web"}, "matchExpressions": [
              {"key": "tier", "operator": "NotIn", "values": ["db"]}]}}}
    assert labels_of(rs) == {"app": "web"} and labels_of({}) == {}
    assert spec_selector(rs).matches({"app": "web", "tier": "front"})
    assert not spec_selector(rs).matches({"app": "web", "tier": "db"})
    broken = {"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Sideways"}]}}}
    assert not spec_selector(broken).matches({}) and not spec_selector(broken).matches({"a": "b"})
