"""events.k8s.io/v1 answers the stored core/v1 Events under their new names."""

import json

import pytest

from control.api.extras.events_v1 import core_selector, to_events_v1

pytestmark = pytest.mark.django_db(transaction=True)

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


def test_field_selectors_are_translated_to_the_stored_names():
    assert core_selector("regarding.name=web,type=Warning,reportingController=kubelet") == (
        "involvedObject.name=web,type=Warning,reportingComponent=kubelet")


def test_list_get_and_discovery_of_the_view(api):
    created = api.post("/api/v1/namespaces/default/events", json.dumps(CORE))
    assert created.status_code == 201, created.content
    listed = json.loads(api.get("/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector="
                                "regarding.name%3Dweb").content)
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    assert [e["note"] for e in listed["items"]] == [CORE["message"]]
    assert json.loads(api.get("/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector="
                              "regarding.name%3Dother").content)["items"] == []
    one = json.loads(api.get("/apis/events.k8s.io/v1/namespaces/default/events/web.1").content)
    assert one["regarding"]["name"] == "web" and one["deprecatedCount"] == 3
    resources = json.loads(api.get("/apis/events.k8s.io/v1").content)["resources"]
    assert [(r["name"], r["kind"], r["verbs"]) for r in resources] == [("events", "Event", ["delete", "get", "list"])]
    refused = api.post("/apis/events.k8s.io/v1/namespaces/default/events", json.dumps(CORE))
    assert refused.status_code == 405 and json.loads(refused.content)["reason"] == "MethodNotAllowed"
    assert api.delete("/apis/events.k8s.io/v1/namespaces/default/events/web.1").status_code == 200
    assert api.get("/api/v1/namespaces/default/events/web.1").status_code == 404
