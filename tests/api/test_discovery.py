"""Discovery lists every version the hub serves, with kube-apiserver's storage version hashes."""

import json

import pytest

from control.api import discovery

pytestmark = pytest.mark.django_db(transaction=True)


def _get(api, path: str) -> dict:
    answer = api.get(path)
    assert answer.status_code == 200, answer.content
    return json.loads(answer.content)


@pytest.mark.parametrize("gvk, expected", [
    (("", "v1", "Pod"), "xPOwRZ+Yhw8="), (("", "v1", "Namespace"), "Q3oi5N2YM8M="),
    (("apps", "v1", "Deployment"), "8aSe+NMegvE="), (("", "v1", "ConfigMap"), "qFsyl6wFWjQ="),
    (("", "v1", "ReplicationController"), "Jond2If31h0="),
])
def test_storage_version_hash_matches_kube_apiservers(gvk, expected):
    assert discovery.storage_version_hash(*gvk) == expected


def test_every_stored_resource_carries_its_storage_version_hash(api):
    core = _get(api, "/api/v1")["resources"]
    pods = next(r for r in core if r["name"] == "pods")
    assert pods["storageVersionHash"] == "xPOwRZ+Yhw8="
    assert all("storageVersionHash" not in r for r in core if "/" in r["name"])  # subresources carry none
    deployments = next(r for r in _get(api, "/apis/apps/v1")["resources"] if r["name"] == "deployments")
    assert deployments["storageVersionHash"] == "8aSe+NMegvE="


def test_replicationcontrollers_are_discoverable_with_scale_and_status(api):
    core = {r["name"]: r for r in _get(api, "/api/v1")["resources"]}
    rc = core["replicationcontrollers"]
    assert rc["kind"] == "ReplicationController" and rc["shortNames"] == ["rc"] and rc["categories"] == ["all"]
    assert rc["namespaced"] and {"create", "delete", "get", "list", "patch", "update", "watch"} <= set(rc["verbs"])
    assert core["replicationcontrollers/scale"]["kind"] == "Scale" and core["replicationcontrollers/scale"]["group"] == "autoscaling"
    assert core["replicationcontrollers/status"]["kind"] == "ReplicationController"


def test_autoscaling_lists_v1_after_the_preferred_v2(api):
    group = _get(api, "/apis/autoscaling")
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    assert group["preferredVersion"]["version"] == "v2"
    listed = next(g for g in _get(api, "/apis")["groups"] if g["name"] == "autoscaling")
    assert [v["version"] for v in listed["versions"]] == ["v2", "v1"]


def test_the_hpas_v1_version_is_discoverable_with_every_verb(api):
    v1 = _get(api, "/apis/autoscaling/v1")
    assert v1["groupVersion"] == "autoscaling/v1"
    hpa = next(r for r in v1["resources"] if r["name"] == "horizontalpodautoscalers")
    assert hpa["kind"] == "HorizontalPodAutoscaler" and hpa["shortNames"] == ["hpa"]
    assert {"create", "get", "list", "watch", "patch", "update", "delete", "deletecollection"} <= set(hpa["verbs"])
    v2 = next(r for r in _get(api, "/apis/autoscaling/v2")["resources"] if r["name"] == "horizontalpodautoscalers")
    assert hpa["storageVersionHash"] == v2["storageVersionHash"]  # both are kept as v2
    assert {"horizontalpodautoscalers/status"} <= {r["name"] for r in v1["resources"]}


def test_metrics_stays_discoverable(api):
    assert "metrics.k8s.io" in [g["name"] for g in _get(api, "/apis")["groups"]]
    assert {r["name"] for r in _get(api, "/apis/metrics.k8s.io/v1beta1")["resources"]} == {"nodes", "pods"}


def test_an_unknown_group_version_is_a_404_status(api):
    for path in ("/apis/autoscaling/v9", "/apis/nothing", "/apis/nothing/v1"):
        answer = api.get(path)
        assert answer.status_code == 404 and json.loads(answer.content)["reason"] == "NotFound"


HPA_V1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "frontend-scaler"},
          "spec": {"scaleTargetRef": {"kind": "ReplicaSet", "name": "frontend"}, "minReplicas": 3,
                   "maxReplicas": 10, "targetCPUUtilizationPercentage": 50}}


def test_a_v1_hpa_can_be_patched_as_kubectl_apply_does(api):
    path = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
    assert api.post(path, json.dumps(HPA_V1)).status_code == 201
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    v2_path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/frontend-scaler"
    assert api.patch(v2_path, json.dumps({"spec": {"behavior": behavior}}),
                     content_type="application/merge-patch+json").status_code == 200
    answer = api.patch(f"{path}/frontend-scaler", json.dumps({"spec": {"maxReplicas": 12}}),
                       content_type="application/strategic-merge-patch+json")
    assert answer.status_code == 200, answer.content
    seen = json.loads(answer.content)
    assert seen["apiVersion"] == "autoscaling/v1" and seen["spec"]["maxReplicas"] == 12
    assert seen["spec"]["targetCPUUtilizationPercentage"] == 50
    stored = _get(api, v2_path)
    assert stored["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60  # v1 cannot see it
    answer = api.patch(f"{path}/frontend-scaler", json.dumps({"spec": {"targetCPUUtilizationPercentage": 70}}),
                       content_type="application/merge-patch+json")
    assert json.loads(answer.content)["spec"]["targetCPUUtilizationPercentage"] == 70
    assert _get(api, v2_path)["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 70
    answer = api.patch(f"{path}/frontend-scaler", "{}", content_type="application/apply-patch+yaml")
    assert answer.status_code == 415


def test_openapi_v3_serves_the_v1_view_so_kubectl_can_validate_it(api):
    root = _get(api, "/openapi/v3")["paths"]
    assert "apis/autoscaling/v1" in root and "apis/autoscaling/v2" in root
    document = _get(api, root["apis/autoscaling/v1"]["serverRelativeURL"])
    schemas = document["components"]["schemas"]
    hpa = schemas["io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"]
    assert hpa["x-kubernetes-group-version-kind"] == [
        {"group": "autoscaling", "kind": "HorizontalPodAutoscaler", "version": "v1"}]
    assert "targetCPUUtilizationPercentage" in schemas["io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec"]["properties"]
    item = document["paths"]["/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers/{name}"]
    assert item["patch"]["x-kubernetes-group-version-kind"]["version"] == "v1"
    assert any(p.get("name") == "fieldValidation" for p in item["patch"].get("parameters", []) + item.get("parameters", []))
