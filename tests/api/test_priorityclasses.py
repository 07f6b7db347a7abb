"""scheduling.k8s.io/v1 PriorityClass through the hub: the built-in system classes, upstream's 422s
and 403s, kubectl's table, and the Priority admission of pods."""

import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

PATH = "/apis/scheduling.k8s.io/v1/priorityclasses"
PODS = "/api/v1/namespaces/default/pods"


def _class(name, value, **fields):
    return json.dumps({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                       "value": value, **fields})


def _pod(name, **spec):
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}})


def test_the_system_classes_are_there_and_cannot_be_deleted(api):
    table = api.get(PATH, HTTP_ACCEPT="application/json;as=Table;v=v1;g=meta.k8s.io")
    body = json.loads(table.content)
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Value", "Global-Default", "Age",
                                                             "PreemptionPolicy"]
    rows = {r["cells"][0]: (r["cells"][1], r["cells"][2], r["cells"][4]) for r in body["rows"]}
    assert rows == {"system-cluster-critical": (2000000000, False, "PreemptLowerPriority"),
                    "system-node-critical": (2000001000, False, "PreemptLowerPriority")}
    refused = api.delete(f"{PATH}/system-node-critical")
    assert refused.status_code == 403, refused.content
    assert json.loads(refused.content)["message"] == ('priorityclasses.scheduling.k8s.io "system-node-critical" is '
                                                      "forbidden: this is a system priority class and cannot be deleted")


def test_bad_classes_are_422_and_nothing_is_stored(api):
    too_high = api.post(PATH, _class("greedy", 1_000_000_001))
    assert too_high.status_code == 422, too_high.content
    status = json.loads(too_high.content)
    assert status["message"] == ('PriorityClass.scheduling.k8s.io "greedy" is invalid: value: Forbidden: maximum '
                                 "allowed value of a user defined priority is 1000000000")
    reserved = api.post(PATH, _class("system-vip", 5))
    assert reserved.status_code == 422 and "reserved for system use only" in reserved.content.decode()
    assert api.get(f"{PATH}/greedy").status_code == 404 and api.get(f"{PATH}/system-vip").status_code == 404


def test_value_is_immutable_and_only_one_global_default(api):
    assert api.post(PATH, _class("gold", 1000, globalDefault=True)).status_code == 201
    changed = api.patch(f"{PATH}/gold", json.dumps({"value": 2000}), content_type="application/merge-patch+json")
    assert changed.status_code == 422 and "value: Forbidden: may not be changed in an update." in changed.content.decode()
    second = api.post(PATH, _class("silver", 500, globalDefault=True))
    assert second.status_code == 403, second.content
    assert json.loads(second.content)["message"] == (
        'priorityclasses.scheduling.k8s.io "silver" is forbidden: PriorityClass gold is already marked as default. '
        "Only one default can exist")


def test_pods_get_their_class_priority_the_default_or_zero(api):
    plain = json.loads(api.post(PODS, _pod("plain")).content)
    assert plain["spec"]["priority"] == 0 and "priorityClassName" not in plain["spec"]
    assert api.post(PATH, _class("vip", 1000, preemptionPolicy="Never")).status_code == 201
    vip = json.loads(api.post(PODS, _pod("guest", priorityClassName="vip")).content)
    assert (vip["spec"]["priority"], vip["spec"]["preemptionPolicy"]) == (1000, "Never")
    assert api.post(PATH, _class("house", 7, globalDefault=True)).status_code == 201
    walk_in = json.loads(api.post(PODS, _pod("walk-in")).content)
    assert (walk_in["spec"]["priorityClassName"], walk_in["spec"]["priority"]) == ("house", 7)


def test_a_missing_class_or_a_disagreeing_priority_is_403(api):
    missing = api.post(PODS, _pod("lost", priorityClassName="platinum"))
    assert missing.status_code == 403, missing.content
    assert json.loads(missing.content)["message"] == ('pods "lost" is forbidden: no PriorityClass with name platinum '
                                                      "was found")
    cheat = api.post(PODS, _pod("cheat", priorityClassName="system-cluster-critical", priority=5))
    assert cheat.status_code == 403 and "the integer value of priority (5) must not be provided" in cheat.content.decode()
    assert api.get(f"{PODS}/lost").status_code == 404 and api.get(f"{PODS}/cheat").status_code == 404


def test_a_put_of_the_pod_as_written_keeps_the_priority_it_was_given(api):
    assert api.post(PATH, _class("vip", 1000)).status_code == 201
    created = json.loads(api.post(PODS, _pod("guest", priorityClassName="vip")).content)
    written = json.loads(_pod("guest", priorityClassName="vip"))
    written["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    written["spec"] = {**created["spec"], "priority": None, "preemptionPolicy": None}
    replaced = api.put(f"{PODS}/guest", json.dumps(written))
    assert replaced.status_code == 200, replaced.content
    assert json.loads(replaced.content)["spec"]["priority"] == 1000
