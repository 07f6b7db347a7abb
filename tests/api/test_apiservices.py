"""GET /apis/apiregistration.k8s.io/v1/apiservices answers as kube-aggregator: one Local, Available
APIService per group version discovery lists; a second create of the same one is a 409."""

import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

PATH = "/apis/apiregistration.k8s.io/v1/apiservices"


def test_every_served_group_version_is_a_local_available_apiservice(api):
    answer = api.get(PATH)
    assert answer.status_code == 200, answer.content
    items = {i["metadata"]["name"]: i for i in json.loads(answer.content)["items"]}
    groups = json.loads(api.get("/apis").content)["groups"]
    served = {"v1."} | {f"{v['version']}.{g['name']}" for g in groups for v in g["versions"]}
    assert served <= set(items) and {"v1.", "v1.apps", "v1.apiregistration.k8s.io", "v1beta1.metrics.k8s.io"} <= served
    for item in items.values():
        assert "service" not in item["spec"]
        [condition] = item["status"]["conditions"]
        assert (condition["type"], condition["status"], condition["reason"]) == ("Available", "True", "Local")


def test_a_created_apiservice_conflicts_on_the_second_create_and_a_bad_one_is_422(api):
    body = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": "v1alpha1.wardle.example.com"},
            "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 2000,
                     "versionPriority": 200, "service": {"namespace": "wardle", "name": "api"},
                     "insecureSkipTLSVerify": True},
            "status": {"conditions": [{"type": "Available", "status": "True"}]}}
    created = api.post(PATH, json.dumps(body))
    assert created.status_code == 201, created.content
    stored = json.loads(created.content)
    assert stored["spec"]["service"]["port"] == 443 and stored["status"] == {}, "a client's status is dropped"
    again = api.post(PATH, json.dumps(body))
    assert again.status_code == 409 and json.loads(again.content)["details"] == {
        "name": "v1alpha1.wardle.example.com", "group": "apiregistration.k8s.io", "kind": "apiservices"}
    body["metadata"]["name"] = "v1.wardle.example.com"
    bad = api.post(PATH, json.dumps(body))
    assert bad.status_code == 422 and "must be `spec.version+\\\".\\\"+spec.group`" in bad.content.decode()
    assert json.loads(bad.content)["details"]["causes"][0]["field"] == "metadata.name"
    table = api.get(PATH, HTTP_ACCEPT="application/json;as=Table;v=v1;g=meta.k8s.io")
    rows = {r["cells"][0]: r["cells"][1:3] for r in json.loads(table.content)["rows"]}
    assert rows["v1.apps"] == ["Local", "True"] and rows["v1alpha1.wardle.example.com"][0] == "wardle/api"
