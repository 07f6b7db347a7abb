"""The pods/eviction subresource, as kube-apiserver's eviction REST storage answers: a delete that
asks the pod's PodDisruptionBudget first, in JSON (kubectl drain's genuine body) and protobuf."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
FIXTURES = Path(__file__).parent / "fixtures"
PROTOBUF = "application/vnd.kubernetes.protobuf"
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


def body(answer) -> dict:
    return json.loads(answer.content)


def running_pod(api, name: str, *, ready: bool = True, labels: dict | None = None, phase: str = "Running") -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {"app": "web"}},
           "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}}
    assert api.post(PODS, json.dumps(pod)).status_code == 201
    stored = body(api.get(f"{PODS}/{name}"))
    stored["status"] = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    answer = api.put(f"{PODS}/{name}/status", json.dumps(stored))
    assert answer.status_code == 200, answer.content
    return body(answer)


def budget(api, name: str, *, allowed: int, current: int = 2, desired: int = 2, selector: dict | None = None,
           policy: str | None = None, observed: bool = True) -> dict:
    spec = {"minAvailable": desired, "selector": selector if selector is not None else {"matchLabels": {"app": "web"}}}
    if policy:
        spec["unhealthyPodEvictionPolicy"] = policy
    created = api.post(PDBS, json.dumps({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                         "metadata": {"name": name}, "spec": spec}))
    assert created.status_code == 201, created.content
    pdb = body(created)
    pdb["status"] = {"observedGeneration": pdb["metadata"]["generation"] if observed else 0,
                     "disruptionsAllowed": allowed, "currentHealthy": current, "desiredHealthy": desired,
                     "expectedPods": current}
    answer = api.put(f"{PDBS}/{name}/status", json.dumps(pdb))
    assert answer.status_code == 200, answer.content
    return body(answer)


def evict(api, name: str, options=None, query: str = ""):
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}
    if options is not None:
        eviction["deleteOptions"] = options
    return api.post(f"{PODS}/{name}/eviction", json.dumps(eviction), QUERY_STRING=query)


def test_discovery_names_the_eviction_subresource_as_kubectl_drain_looks_for_it(api):
    resources = body(api.get("/api/v1"))["resources"]
    entry = next(r for r in resources if r["name"] == "pods/eviction")
    assert (entry["group"], entry["version"], entry["kind"], entry["verbs"]) == ("policy", "v1", "Eviction", ["create"])


def test_without_a_budget_the_pod_is_deleted_gracefully_as_its_options_say(api):
    running_pod(api, "web-1")
    answer = evict(api, "web-1", {"gracePeriodSeconds": 5})
    assert answer.status_code == 201
    assert body(answer) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    pod = body(api.get(f"{PODS}/web-1"))
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 5 and pod["metadata"]["deletionTimestamp"]
    target = pod["status"]["conditions"][-1]
    assert {k: target[k] for k in ("type", "status", "reason", "message")} == {
        "type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting"}


def test_an_exhausted_budget_answers_429_with_kubernetes_words_and_changes_nothing(api):
    before = running_pod(api, "web-1")
    pdb = budget(api, "web-pdb", allowed=0, current=2, desired=2)
    answer = evict(api, "web-1")
    assert answer.status_code == 429
    assert body(answer) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": VIOLATION,
        "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget web-pdb needs 2 healthy pods and has 2 currently"}]},
        "code": 429}
    assert "retry-after" not in answer.headers
    assert body(api.get(f"{PODS}/web-1")) == before
    assert body(api.get(f"{PDBS}/web-pdb")) == pdb


def test_an_allowed_eviction_spends_the_budget_and_records_the_pod(api):
    running_pod(api, "web-1")
    running_pod(api, "web-2")
    budget(api, "web-pdb", allowed=1, current=3, desired=2)
    assert evict(api, "web-1").status_code == 201
    status = body(api.get(f"{PDBS}/web-pdb"))["status"]
    assert status["disruptionsAllowed"] == 0 and list(status["disruptedPods"]) == ["web-1"]
    condition = status["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == \
        ("DisruptionAllowed", "False", "InsufficientPods")
    assert body(api.get(f"{PODS}/web-1"))["metadata"]["deletionTimestamp"]
    second = evict(api, "web-2")
    assert second.status_code == 429 and "needs 2 healthy pods and has 3 currently" in second.content.decode()
    assert "deletionTimestamp" not in body(api.get(f"{PODS}/web-2"))["metadata"]


def test_a_budget_the_controller_has_not_seen_yet_asks_to_retry_later(api):
    running_pod(api, "web-1")
    budget(api, "web-pdb", allowed=1, observed=False)
    answer = evict(api, "web-1")
    assert answer.status_code == 429 and answer.headers["retry-after"] == "10"
    assert body(answer)["details"] == {
        "causes": [{"reason": "DisruptionBudget",
                    "message": "The disruption budget web-pdb is still being processed by the server."}],
        "retryAfterSeconds": 10}


def test_two_budgets_over_one_pod_are_a_500_failure_as_upstream(api):
    running_pod(api, "web-1")
    budget(api, "a", allowed=1)
    budget(api, "b", allowed=1)
    answer = evict(api, "web-1")
    assert answer.status_code == 500
    assert body(answer) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                                       "subresource does not support.", "code": 500}
    assert "deletionTimestamp" not in body(api.get(f"{PODS}/web-1"))["metadata"]


def test_a_missing_pod_is_404_and_a_wrong_name_400(api):
    missing = evict(api, "nope")
    assert missing.status_code == 404 and body(missing)["message"] == 'pods "nope" not found'
    running_pod(api, "web-1")
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other"}}
    wrong = api.post(f"{PODS}/web-1/eviction", json.dumps(eviction))
    assert wrong.status_code == 400 and body(wrong)["message"] == "name in URL does not match name in Eviction object"


def test_bad_delete_options_are_refused_as_a_delete_refuses_them(api):
    running_pod(api, "web-1")
    wrong = evict(api, "web-1", "soon")
    assert wrong.status_code == 400 and body(wrong)["message"].endswith(
        "json: cannot unmarshal string into Go struct field Eviction.deleteOptions of type v1.DeleteOptions")
    dry = evict(api, "web-1", {"dryRun": ["Some"]})
    assert dry.status_code == 422 and body(dry)["details"]["causes"][0]["field"] == "dryRun"
    assert "deletionTimestamp" not in body(api.get(f"{PODS}/web-1"))["metadata"]


def test_pending_and_unready_pods_go_without_spending_the_budget(api):
    running_pod(api, "pending", phase="Pending", ready=False)
    running_pod(api, "unready", ready=False)
    pdb = budget(api, "web-pdb", allowed=0, current=2, desired=2)
    assert evict(api, "pending").status_code == 201
    assert evict(api, "unready").status_code == 201
    for name in ("pending", "unready"):
        assert body(api.get(f"{PODS}/{name}"))["metadata"]["deletionTimestamp"]
    assert body(api.get(f"{PDBS}/web-pdb")) == pdb


def test_an_unready_pod_under_a_broken_budget_waits_unless_the_policy_says_always_allow(api):
    running_pod(api, "unready", ready=False)
    budget(api, "web-pdb", allowed=0, current=1, desired=2)
    assert evict(api, "unready").status_code == 429
    api.delete(f"{PDBS}/web-pdb")
    budget(api, "web-pdb", allowed=0, current=1, desired=2, policy="AlwaysAllow")
    assert evict(api, "unready").status_code == 201


def test_a_dry_run_eviction_checks_everything_and_writes_nothing(api):
    pod = running_pod(api, "web-1")
    pdb = budget(api, "web-pdb", allowed=1, current=3)
    assert evict(api, "web-1", {"dryRun": ["All"]}).status_code == 201
    assert evict(api, "web-1", query="dryRun=All").status_code == 201
    assert body(api.get(f"{PODS}/web-1")) == pod and body(api.get(f"{PDBS}/web-pdb")) == pdb


def test_a_refused_deletion_leaves_the_budget_unspent(api):
    running_pod(api, "web-1")
    budget(api, "web-pdb", allowed=1, current=3)
    answer = evict(api, "web-1", {"preconditions": {"uid": "not-the-pod"}})
    assert answer.status_code == 409
    assert body(api.get(f"{PDBS}/web-pdb"))["status"]["disruptionsAllowed"] == 1


def test_kubectl_drains_genuine_eviction_body_is_honoured(api):
    # kubectl 1.32's drain POSTs its Eviction as JSON (captured through a recording proxy by
    # tests/e2e/test_drain.py); its typed create commands are the ones that send protobuf.
    raw = (FIXTURES / "eviction" / "drain.json").read_bytes()
    name = json.loads(raw)["metadata"]["name"]
    running_pod(api, name)
    answer = api.post(f"{PODS}/{name}/eviction", raw)
    assert answer.status_code == 201, answer.content
    assert body(api.get(f"{PODS}/{name}"))["metadata"]["deletionTimestamp"]


def test_a_protobuf_eviction_is_decoded_and_honoured(api):
    from tests.api.test_protobuf import encode, envelope, ld

    running_pod(api, "web-1")
    raw = ld(1, encode("ObjectMeta", {"name": "web-1", "namespace": "default"})) + \
        ld(2, encode("DeleteOptions", {"gracePeriodSeconds": 7}))
    answer = api.post(f"{PODS}/web-1/eviction", envelope("policy/v1", "Eviction", raw), content_type=PROTOBUF)
    assert answer.status_code == 201, answer.content
    assert body(api.get(f"{PODS}/web-1"))["metadata"]["deletionGracePeriodSeconds"] == 7


# --- the budget itself, through the API ---------------------------------------------------------

def test_a_budget_with_both_fields_is_422_and_nothing_is_stored(api):
    bad = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "bad"},
           "spec": {"minAvailable": 1, "maxUnavailable": "150%", "selector": {"matchLabels": {"app": "web"}}}}
    answer = api.post(PDBS, json.dumps(bad))
    assert answer.status_code == 422
    status = body(answer)
    assert status["reason"] == "Invalid" and status["details"]["kind"] == "PodDisruptionBudget"
    assert status["details"]["group"] == "policy"
    assert [c["field"] for c in status["details"]["causes"]] == ["spec", "spec.maxUnavailable"]
    assert api.get(f"{PDBS}/bad").status_code == 404


def test_a_spec_change_bumps_the_generation_and_keeps_the_controllers_status(api):
    pdb = budget(api, "web-pdb", allowed=1)
    pdb["spec"]["minAvailable"] = 1
    pdb["status"] = {"disruptionsAllowed": 99}
    updated = body(api.put(f"{PDBS}/web-pdb", json.dumps(pdb)))
    assert updated["metadata"]["generation"] == 2 and updated["status"]["disruptionsAllowed"] == 1
    created = body(api.post(PDBS, json.dumps({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                              "metadata": {"name": "fresh"}, "spec": {"maxUnavailable": 1},
                                              "status": {"disruptionsAllowed": 5}})))
    assert created["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0} and created["metadata"]["generation"] == 1
