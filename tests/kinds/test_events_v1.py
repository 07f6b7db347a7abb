"""events.k8s.io/v1 Event, the core Event's other served version (control.kinds.events_v1): the
stored core/v1 Events under their new names, every verb."""

from control.kinds.core import EVENT
from control.kinds.events_v1 import FIELD_GETTERS, from_events_v1, to_events_v1

CORE = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "apiVersion": "v1"},
        "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning", "count": 3,
        "firstTimestamp": "2030-01-01T00:00:00Z", "lastTimestamp": "2030-01-01T00:05:00Z",
        "source": {"component": "kubelet", "host": "node-1"}, "reportingComponent": "kubelet",
        "reportingInstance": "node-1"}


def test_the_conversion_renames_as_upstreams_and_keeps_go_field_order():
    shown = to_events_v1(CORE)
    assert list(shown) == ["kind", "apiVersion", "metadata", "eventTime", "reportingController", "reportingInstance",
                           "reason", "regarding", "note", "type", "deprecatedSource", "deprecatedFirstTimestamp",
                           "deprecatedLastTimestamp", "deprecatedCount"]
    assert shown["apiVersion"] == "events.k8s.io/v1" and shown["eventTime"] is None
    assert shown["regarding"] == CORE["involvedObject"] and shown["note"] == CORE["message"]
    assert (shown["deprecatedCount"], shown["reportingController"]) == (3, "kubelet")


def test_the_conversion_back_is_the_stored_core_event():
    back = from_events_v1(to_events_v1(CORE))
    assert back == {k: v for k, v in CORE.items()}


def test_field_selectors_read_the_stored_names():
    assert FIELD_GETTERS["regarding.name"](CORE) == "web"
    assert FIELD_GETTERS["reportingController"](CORE) == "kubelet"
    assert FIELD_GETTERS["deprecatedSource"](CORE) == "kubelet"
    (v1,) = EVENT.other_versions
    assert (v1.group, v1.version, v1.resource, v1.stored_as.api_version) == ("events.k8s.io", "v1", "/events", "v1")
