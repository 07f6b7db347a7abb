"""LimitRanger and ResourceQuota admission on the hub's write path (policies of `Kind.policy`):
defaults applied, bounds and quotas refused with upstream's exact words, nothing stored then."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def post(api, plural, body, namespace="default"):
    answer = api.post(f"/api/v1/namespaces/{namespace}/{plural}", json.dumps(body))
    return answer.status_code, json.loads(answer.content)


def pod(name, *containers, init=()):
    spec = {"containers": [dict(c) for c in containers] or [{"name": "app", "image": "nginx"}]}
    if init:
        spec["initContainers"] = [dict(c) for c in init]
    return {"metadata": {"name": name}, "spec": spec}


def container(name="app", requests=None, limits=None):
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"name": name, "image": "nginx", **({"resources": resources} if resources else {})}


def limitrange(name="lr", **item):
    return {"metadata": {"name": name}, "spec": {"limits": [{"type": "Container", **item}]}}


def quota(name, **hard):
    return {"metadata": {"name": name}, "spec": {"hard": hard}}


def test_defaults_of_a_limitrange_fill_what_containers_leave_out(api):
    assert post(api, "limitranges", limitrange(default={"cpu": "500m", "memory": "256Mi"},
                                               defaultRequest={"cpu": "100m"}))[0] == 201
    status, created = post(api, "pods", pod("p", container(limits={"memory": "128Mi"}),
                                            container("side"), init=[container("init")]))
    assert status == 201
    app, side = created["spec"]["containers"]
    assert app["resources"] == {"limits": {"memory": "128Mi", "cpu": "500m"},
                                "requests": {"memory": "128Mi", "cpu": "100m"}}
    assert side["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                 "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert created["spec"]["initContainers"][0]["resources"]["requests"]["cpu"] == "100m"
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container app; cpu limit for container app; "
        "cpu, memory request for container side; cpu, memory limit for container side; "
        "cpu, memory request for init container init; cpu, memory limit for init container init")


def test_a_limitrange_is_defaulted_from_max_and_min(api):
    status, created = post(api, "limitranges", limitrange(max={"cpu": "1"}, min={"memory": "10Mi"}))
    assert status == 201
    [item] = created["spec"]["limits"]
    assert item["default"] == {"cpu": "1"} and item["defaultRequest"] == {"cpu": "1", "memory": "10Mi"}


def test_bounds_are_refused_with_upstreams_words_and_nothing_is_stored(api):
    post(api, "limitranges", limitrange(max={"cpu": "1"}, min={"cpu": "100m"}))
    status, body = post(api, "pods", pod("x", container(limits={"cpu": "2"})))
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == 'pods "x" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    assert api.get("/api/v1/namespaces/default/pods/x").status_code == 404
    status, body = post(api, "pods", pod("y", container(requests={"cpu": "50m"}, limits={"cpu": "3"})))
    assert body["message"] == ('pods "y" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
                               'maximum cpu usage per Container is 1, but limit is 3]')
    assert post(api, "pods", pod("ok", container(requests={"cpu": "200m"})))[0] == 201


def test_the_limit_to_request_ratio_is_enforced(api):
    post(api, "limitranges", limitrange(maxLimitRequestRatio={"memory": "2"}))
    status, body = post(api, "pods", pod("x", container(requests={"memory": "100Mi"}, limits={"memory": "300Mi"})))
    assert status == 403
    assert body["message"] == ('pods "x" is forbidden: memory max limit to request ratio per Container is 2, '
                               'but provided ratio is 3.000000')


def test_an_invalid_limitrange_is_422_with_causes(api):
    status, body = post(api, "limitranges", limitrange(min={"cpu": "2"}, max={"cpu": "1"}, defaultRequest={"cpu": "1"},
                                                       default={"cpu": "1"}))
    assert status == 422
    assert {"reason": "FieldValueInvalid", "field": "spec.limits[0].min[cpu]",
            "message": 'Invalid value: "2": min value 2 is greater than max value 1'} in body["details"]["causes"]
    status, body = post(api, "limitranges", {"metadata": {"name": "p"}, "spec": {"limits": [
        {"type": "Pod", "default": {"cpu": "1"}}, {"type": "Pod"}, {"type": "Box"}]}})
    assert status == 422
    fields = [(c["field"], c["reason"]) for c in body["details"]["causes"]]
    assert ("spec.limits[0].default", "FieldValueForbidden") in fields
    assert ("spec.limits[1].type", "FieldValueDuplicate") in fields
    assert ("spec.limits[2].type", "FieldValueInvalid") in fields


def test_quota_refuses_the_pod_past_its_count(api):
    assert post(api, "resourcequotas", quota("q", pods="2"))[0] == 201
    assert post(api, "pods", pod("a"))[0] == 201
    assert post(api, "pods", pod("b"))[0] == 201
    status, body = post(api, "pods", pod("c"))
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"] == 'pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2'
    assert api.get("/api/v1/namespaces/default/pods/c").status_code == 404


def test_terminal_pods_do_not_count(api):
    post(api, "resourcequotas", quota("q", pods="1"))
    post(api, "pods", pod("a"))
    current = json.loads(api.get("/api/v1/namespaces/default/pods/a").content)
    current["status"] = {"phase": "Succeeded"}
    assert api.put("/api/v1/namespaces/default/pods/a/status", json.dumps(current)).status_code == 200
    assert post(api, "pods", pod("b"))[0] == 201


def test_a_quotad_compute_resource_must_be_stated_by_every_container(api):
    post(api, "resourcequotas", quota("compute", **{"limits.cpu": "1", "requests.memory": "1Gi"}))
    status, body = post(api, "pods", pod("x", container("b"), container("a", limits={"cpu": "100m"})))
    assert status == 403
    assert body["message"] == ('pods "x" is forbidden: failed quota: compute: must specify limits.cpu for: b; '
                               'must specify requests.memory for: a,b')


def test_compute_usage_sums_containers_and_refuses_past_the_hard_value(api):
    post(api, "resourcequotas", quota("compute", **{"requests.cpu": "1", "requests.memory": "1Gi"}))
    ok = container(requests={"cpu": "600m", "memory": "512Mi"})
    assert post(api, "pods", pod("a", ok))[0] == 201
    status, body = post(api, "pods", pod("b", ok))
    assert status == 403
    assert body["message"] == ('pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, '
                               'used: requests.cpu=600m, limited: requests.cpu=1')


def test_object_counts_and_the_first_quota_by_name_refuses(api):
    post(api, "resourcequotas", quota("b-wide", **{"count/configmaps": "5"}))
    post(api, "resourcequotas", quota("a-tight", configmaps="1"))
    assert post(api, "configmaps", {"metadata": {"name": "one"}})[0] == 201
    status, body = post(api, "configmaps", {"metadata": {"name": "two"}})
    assert status == 403
    assert body["message"] == ('configmaps "two" is forbidden: exceeded quota: a-tight, requested: configmaps=1, '
                               'used: configmaps=1, limited: configmaps=1')
    assert post(api, "secrets", {"metadata": {"name": "s"}})[0] == 201  # not counted by either


def test_an_invalid_quota_is_422(api):
    status, body = post(api, "resourcequotas", quota("q", pods="1.5", cows="3", **{"requests.cpu": "-1"}))
    assert status == 422
    messages = {c["field"]: c["message"] for c in body["details"]["causes"]}
    assert messages == {"spec.hard[pods]": 'Invalid value: "1.5": must be an integer',
                        "spec.hard[cows]": 'Invalid value: "cows": must be a standard resource for quota',
                        "spec.hard[requests.cpu]": 'Invalid value: "-1": must be greater than or equal to 0'}


def test_quota_status_is_the_controllers_and_the_table_shows_used_over_hard(api):
    status, created = post(api, "resourcequotas", {**quota("q", pods="3", **{"limits.cpu": "2"}),
                                                   "status": {"used": {"pods": "9"}}})
    assert status == 201 and created["status"] == {}
    created["status"] = {"hard": {"pods": "3", "limits.cpu": "2"}, "used": {"pods": "1", "limits.cpu": "0"}}
    assert api.put("/api/v1/namespaces/default/resourcequotas/q/status", json.dumps(created)).status_code == 200
    table = json.loads(api.get("/api/v1/namespaces/default/resourcequotas/q",
                               HTTP_ACCEPT="application/json;as=Table;v=v1;g=meta.k8s.io").content)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age", "Request", "Limit"]
    assert table["rows"][0]["cells"][2:] == ["pods: 1/3", "limits.cpu: 0/2"]


def read_quota(api, name="q"):
    return json.loads(api.get(f"/api/v1/namespaces/default/resourcequotas/{name}").content)


def test_an_admitted_create_charges_the_quota_status_in_the_same_write(api):
    post(api, "resourcequotas", quota("q", pods="2", **{"requests.cpu": "1"}))
    assert read_quota(api)["status"] == {}
    assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod("dry", container(requests={"cpu": "100m"}))),
                    QUERY_STRING="dryRun=All").status_code == 201
    assert read_quota(api)["status"] == {}  # a dry run charges nothing
    assert post(api, "pods", pod("a", container(requests={"cpu": "300m"})))[0] == 201
    assert read_quota(api)["status"] == {"hard": {"pods": "2", "requests.cpu": "1"},
                                         "used": {"pods": "1", "requests.cpu": "300m"}}
    before = read_quota(api)["metadata"]["resourceVersion"]
    assert post(api, "pods", pod("b", container(requests={"cpu": "800m"})))[0] == 403
    assert post(api, "pods", pod("a", container(requests={"cpu": "100m"})))[0] == 409  # exists: rolled back
    assert read_quota(api)["metadata"]["resourceVersion"] == before
    assert post(api, "configmaps", {"metadata": {"name": "c"}})[0] == 201  # not counted: not charged
    assert read_quota(api)["metadata"]["resourceVersion"] == before


def test_an_update_refused_after_its_charge_leaves_the_quota_as_it_was(api):
    """The charge is written inside the update's own write (the store's savepoint for it): an update
    refused after admission charged it (here the allocator: the node port is taken) takes it back."""
    post(api, "resourcequotas", quota("q", **{"services.nodeports": "3"}))
    taken = {"metadata": {"name": "a"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}
    assert post(api, "services", taken)[0] == 201
    assert post(api, "services", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}})[0] == 201
    before = read_quota(api)
    assert before["status"]["used"] == {"services.nodeports": "1"}
    merge = "application/merge-patch+json"
    clash = {"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}
    answer = api.patch("/api/v1/namespaces/default/services/s", json.dumps(clash), merge)
    assert answer.status_code == 422 and "already allocated" in json.loads(answer.content)["message"]
    assert read_quota(api) == before
    answer = api.patch("/api/v1/namespaces/default/services/s", json.dumps({"spec": {"type": "NodePort"}}), merge)
    assert answer.status_code == 200
    assert read_quota(api)["status"]["used"] == {"services.nodeports": "2"}


def test_a_create_drawn_again_for_a_taken_generated_name_is_charged_to_the_quota_once(api, monkeypatch):
    from control.api import objects

    assert post(api, "resourcequotas", quota("pods", pods="2"))[0] == 201
    assert post(api, "pods", pod("web-bbbbb"))[0] == 201
    suffixes = ["bbbbb", "ccccc"]
    monkeypatch.setattr(objects, "generate_name", lambda base: base + suffixes.pop(0))
    status, created = post(api, "pods", {"metadata": {"generateName": "web-"},
                                         "spec": {"containers": [{"name": "app", "image": "nginx"}]}})
    assert status == 201 and created["metadata"]["name"] == "web-ccccc"
    used = json.loads(api.get("/api/v1/namespaces/default/resourcequotas/pods").content)["status"]["used"]
    assert used == {"pods": "2"}  # the attempt that found its name taken charged nothing
    status, refused = post(api, "pods", pod("third"))
    assert status == 403 and "exceeded quota: pods" in refused["message"]
