"""A kind's other served versions (Kind.other_versions): autoscaling/v1 HorizontalPodAutoscaler,
converted to and from the stored autoscaling/v2 (kubectl autoscale), and events.k8s.io/v1 Event,
the stored core/v1 Events under their new names, with every verb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


pytestmark = pytest.mark.django_db(transaction=True)

V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
FIXTURE = Path(__file__).parent / "fixtures" / "protobuf" / "hpa-v1.pb"


def send(api, method, path, body=None, content_type="application/json", **extra):
    data = body if isinstance(body, (bytes, str)) else ("" if body is None else json.dumps(body))
    response = api.request(method, path, data=data, content_type=content_type, **extra)
    assert response["Content-Type"].startswith("application/json")
    return response.status_code, json.loads(response.content)


def v1_hpa(name: str = "web", percent: int = 60, **spec) -> dict:
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                     "maxReplicas": 4, "targetCPUUtilizationPercentage": percent, **spec}}


def test_kubectl_autoscale_protobuf_body_is_stored_as_v2_and_answered_as_v1(api):
    code, created = send(api, "POST", V1, FIXTURE.read_bytes(), "application/vnd.kubernetes.protobuf")
    assert code == 201, created
    assert created["apiVersion"] == "autoscaling/v1" and created["spec"]["targetCPUUtilizationPercentage"] == 80
    assert created["spec"]["minReplicas"] == 2 and "metrics" not in created["spec"]
    code, stored = send(api, "GET", f"{V2}/pre")
    assert code == 200 and stored["apiVersion"] == "autoscaling/v2"
    # the fields are recorded as they are kept: v2 paths under the v2 apiVersion
    assert [(m["apiVersion"], "f:metrics" in m["fieldsV1"]["f:spec"]) for m in stored["metadata"]["managedFields"]] == [
        ("autoscaling/v2", True)]
    assert stored["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]


def test_get_list_update_and_delete_through_v1(api):
    assert send(api, "POST", V1, v1_hpa())[0] == 201
    code, got = send(api, "GET", f"{V1}/web")
    assert code == 200 and got["spec"]["minReplicas"] == 1 and got["status"] == {"currentReplicas": 0,
                                                                                "desiredReplicas": 0}
    code, listed = send(api, "GET", V1)
    assert listed["kind"] == "HorizontalPodAutoscalerList" and listed["apiVersion"] == "autoscaling/v1"
    assert [i["apiVersion"] for i in listed["items"]] == ["autoscaling/v1"]
    got["spec"]["targetCPUUtilizationPercentage"] = 30
    code, updated = send(api, "PUT", f"{V1}/web", got)
    assert code == 200 and updated["spec"]["targetCPUUtilizationPercentage"] == 30
    assert send(api, "GET", f"{V2}/web")[1]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 30
    code, gone = send(api, "DELETE", f"{V1}/web")
    assert code == 200 and gone["status"] == "Success"
    assert send(api, "GET", f"{V2}/web")[0] == 404


def test_v1_bodies_get_v2_validation_and_statuses(api):
    code, status = send(api, "POST", V1, v1_hpa(percent=0, minReplicas=0))
    assert code == 422 and status["reason"] == "Invalid"
    fields = {c["field"] for c in status["details"]["causes"]}
    assert fields == {"spec.minReplicas", "spec.metrics[0].resource.target.averageUtilization"}
    code, status = send(api, "POST", V1, {**v1_hpa(), "apiVersion": "autoscaling/v2"})
    assert code == 400 and "does not match the expected API version (autoscaling/v1)" in status["message"]
    assert send(api, "GET", f"{V1}/nope")[0] == 404


def test_patch_works_on_v1_and_server_side_apply_is_for_the_stored_version(api):
    send(api, "POST", V1, v1_hpa())
    code, body = send(api, "PATCH", f"{V1}/web", {"spec": {"maxReplicas": 9}}, "application/merge-patch+json")
    assert code == 200 and body["apiVersion"] == "autoscaling/v1" and body["spec"]["maxReplicas"] == 9
    code, status = send(api, "PATCH", f"{V1}/web", "spec: {maxReplicas: 3}", "application/apply-patch+yaml",
                        QUERY_STRING="fieldManager=me")
    assert code == 415 and status["reason"] == "UnsupportedMediaType"
    assert send(api, "GET", "/apis/autoscaling/v1/namespaces/default/deployments")[0] == 404
    assert send(api, "GET", "/apis/autoscaling/v1")[0] == 200  # advertised after v2, the preferred version


V2_ONLY = {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}
BEHAVIOR = {"scaleDown": {"stabilizationWindowSeconds": 30}}


def test_v2_only_fields_survive_a_v1_round_trip_in_upstreams_annotations(api):
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
          "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 4,
                   "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                       "type": "Utilization", "averageUtilization": 50}}}, V2_ONLY], "behavior": BEHAVIOR}}
    assert send(api, "POST", V2, v2)[0] == 201
    code, seen = send(api, "GET", f"{V1}/web")
    assert code == 200 and seen["spec"]["targetCPUUtilizationPercentage"] == 50
    assert json.loads(seen["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]) == [
        {"type": "Pods", "pods": {"metricName": "rps", "targetAverageValue": "10"}}]
    seen["spec"]["maxReplicas"] = 6
    assert send(api, "PUT", f"{V1}/web", seen)[0] == 200
    assert send(api, "PATCH", f"{V1}/web", {"spec": {"minReplicas": 2}}, "application/merge-patch+json")[0] == 200
    code, stored = send(api, "GET", f"{V2}/web")
    assert stored["spec"]["maxReplicas"] == 6 and stored["spec"]["minReplicas"] == 2
    assert V2_ONLY in stored["spec"]["metrics"] and len(stored["spec"]["metrics"]) == 2
    assert stored["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 30
    assert "annotations" not in stored["metadata"]  # the round-trip annotations are never stored


def test_every_verb_and_tables_are_served_in_v1_too(api):
    send(api, "POST", V1, v1_hpa())
    code, table = send(api, "GET", V1, HTTP_ACCEPT="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert code == 200 and table["rows"][0]["cells"][:3] == ["web", "Deployment/web", "cpu: <unknown>/60%"]
    code, listed = send(api, "GET", "/apis/autoscaling/v1")
    (main,) = [r for r in listed["resources"] if r["name"] == "horizontalpodautoscalers"]
    assert {"watch", "deletecollection"} <= set(main["verbs"])


CORE_EVENT = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "default"},
              "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "apiVersion": "v1"},
              "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning", "count": 3,
              "firstTimestamp": "2030-01-01T00:00:00Z", "lastTimestamp": "2030-01-01T00:05:00Z",
              "source": {"component": "kubelet", "host": "node-1"}, "reportingComponent": "kubelet",
              "reportingInstance": "node-1"}


def test_events_k8s_io_serves_the_stored_core_events(api):
    created = api.post("/api/v1/namespaces/default/events", json.dumps(CORE_EVENT))
    assert created.status_code == 201, created.content
    listed = json.loads(api.get("/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector="
                                "regarding.name%3Dweb").content)
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    assert [e["note"] for e in listed["items"]] == [CORE_EVENT["message"]]
    assert json.loads(api.get("/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector="
                              "regarding.name%3Dother").content)["items"] == []
    one = json.loads(api.get("/apis/events.k8s.io/v1/namespaces/default/events/web.1").content)
    assert one["regarding"]["name"] == "web" and one["deprecatedCount"] == 3
    resources = json.loads(api.get("/apis/events.k8s.io/v1").content)["resources"]
    assert [(r["name"], r["kind"]) for r in resources] == [("events", "Event")] and "watch" in resources[0]["verbs"]
    new_style = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web.2"},
                 "eventTime": "2030-01-01T00:00:00.000000Z", "reportingController": "me", "reportingInstance": "me-1",
                 "action": "Poke", "reason": "Poked", "note": "poked web", "type": "Normal",
                 "regarding": {"kind": "Pod", "name": "web", "namespace": "default", "apiVersion": "v1"}}
    created = api.post("/apis/events.k8s.io/v1/namespaces/default/events", json.dumps(new_style))
    assert created.status_code == 201, created.content
    assert json.loads(created.content)["note"] == "poked web"
    stored = json.loads(api.get("/api/v1/namespaces/default/events/web.2").content)
    assert (stored["message"], stored["reportingComponent"], stored["involvedObject"]["name"]) == (
        "poked web", "me", "web")
    assert api.delete("/apis/events.k8s.io/v1/namespaces/default/events/web.1").status_code == 200
    assert api.get("/api/v1/namespaces/default/events/web.1").status_code == 404
