"""policy/v1 PodDisruptionBudget validation and printing, and the eviction decision (pure: the
hub carries out what `evict` asks for)."""

from __future__ import annotations

import pytest

from control import errors
from control.kinds.disruption import (
    PODDISRUPTIONBUDGET, Outcome, budgets_of, check_and_decrement, evict, pdb_cells, validate_pdb,
)
from control.kinds.meta import format_time
from control.kinds.strategy import Lent

NOW = 1_800_000_000.0


def pdb(**spec):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web-pdb", "namespace": "default", "generation": 1,
                         "creationTimestamp": format_time(NOW - 120)},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}


def messages(obj):
    return [f"{c['field']}: {c['message']}" for c in validate_pdb(obj)]


def test_a_budget_with_one_of_the_two_is_valid():
    assert validate_pdb(pdb(minAvailable=2)) == []
    assert validate_pdb(pdb(maxUnavailable="25%")) == []
    assert validate_pdb(pdb()) == []  # neither: upstream allows it (nothing is ever allowed)


def test_both_minimum_and_maximum_are_refused_as_kubernetes_says():
    [message] = messages(pdb(minAvailable=1, maxUnavailable=1))
    assert message.startswith("spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)(0x")
    assert message.endswith("UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}: "
                            "minAvailable and maxUnavailable cannot be both set")


@pytest.mark.parametrize("value, expected", [
    (-1, "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
    ("50", 'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"50"}: a valid percent '
           "string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for "
           "validation is '[0-9]+%')"),
    ("150%", 'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be '
             "greater than 100%"),
])
def test_a_bad_count_or_percentage_has_kubernetes_message(value, expected):
    assert messages(pdb(minAvailable=value)) == [expected]


def test_the_unhealthy_pod_policy_and_the_selector_are_checked():
    assert messages(pdb(minAvailable=1, unhealthyPodEvictionPolicy="Sometimes")) == [
        'spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", '
        '"IfHealthyBudget"']
    bad = pdb(minAvailable=1, selector={"matchExpressions": [{"key": "app", "operator": "In"}]})
    assert messages(bad) == ["spec.selector.matchExpressions[0].values: Required value: must be specified when "
                             "`operator` is 'In' or 'NotIn'"]
    assert messages(pdb(minAvailable=1, selector={"matchExpressions": [{"key": "a", "operator": "Near"}]})) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator']


def test_the_table_row_is_kubectls():
    assert [c.name for c in PODDISRUPTIONBUDGET.columns] == ["Name", "Min Available", "Max Unavailable",
                                                             "Allowed Disruptions", "Age"]
    assert pdb_cells({**pdb(minAvailable="50%"), "status": {"disruptionsAllowed": 1}}, NOW) == \
        ["web-pdb", "50%", "N/A", 1, "2m"]


# --- eviction ----------------------------------------------------------------------------------

def pod(name="web-1", *, ready=True, phase="Running", labels=None, deleting=False):
    meta = {"name": name, "namespace": "default", "resourceVersion": "7", "labels": labels or {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return {"metadata": meta, "status": {"phase": phase,
                                         "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def lent(*budgets):
    return Lent(lookup=lambda *a: None, now=NOW, sign=lambda c: "", list=lambda r, ns: [b for b in budgets])


def eviction(name="web-1", **options):
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    if options:
        body["deleteOptions"] = options
    return body


def with_status(budget, **status):
    return {**budget, "status": {"observedGeneration": 1, **status}}


def test_a_finished_pod_goes_without_asking_and_a_pending_one_is_guarded_by_its_version():
    finished = evict(pod(phase="Succeeded", ready=False), eviction(), lent(with_status(pdb(minAvailable=5))))
    assert finished.writes == () and finished.delete_parent == {}
    pending = evict(pod(phase="Pending", ready=False), eviction(gracePeriodSeconds=3), lent())
    assert pending.delete_parent == {"gracePeriodSeconds": 3, "preconditions": {"resourceVersion": "7"}}
    assert pending.retry_on_conflict


def test_a_running_pod_under_a_budget_writes_the_budget_first():
    budget = with_status(pdb(minAvailable=1), disruptionsAllowed=1, currentHealthy=2, desiredHealthy=1)
    outcome = evict(pod(), eviction(), lent(budget))
    assert isinstance(outcome, Outcome) and outcome.delete_parent == {}
    [write] = outcome.writes
    assert (write.resource, write.namespace, write.name) == ("policy/poddisruptionbudgets", "default", "web-pdb")
    after = write.mutate(budget)
    assert after["status"]["disruptionsAllowed"] == 0 and after["status"]["disruptedPods"] == {"web-1": format_time(NOW)}
    assert after["status"]["conditions"][0]["reason"] == "InsufficientPods"
    evicted = pod()
    outcome.before_delete(evicted)
    assert evicted["status"]["conditions"][-1] == {
        "type": "DisruptionTarget", "status": "True", "lastProbeTime": None, "lastTransitionTime": format_time(NOW),
        "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}


def test_the_decrement_reads_the_budget_as_stored_when_written():
    spent = with_status(pdb(minAvailable=1), disruptionsAllowed=0, currentHealthy=1, desiredHealthy=1)
    with pytest.raises(errors.TooManyRequests) as caught:
        check_and_decrement("web-1", NOW)(spent)
    assert caught.value.details["causes"][0]["message"] == \
        "The disruption budget web-pdb needs 1 healthy pods and has 1 currently"
    negative = with_status(pdb(minAvailable=1), disruptionsAllowed=-1)
    with pytest.raises(errors.Forbidden, match=r'^poddisruptionbudget.policy "web-pdb" is forbidden: pdb '
                                               r"disruptions allowed is negative$"):
        check_and_decrement("web-1", NOW)(negative)


def test_budgets_with_an_empty_selector_select_nothing_at_eviction():
    assert budgets_of(pod(), [pdb(minAvailable=1, selector={})]) == []
    assert budgets_of(pod(labels={"app": "db"}), [pdb(minAvailable=1)]) == []
    assert len(budgets_of(pod(), [pdb(minAvailable=1)])) == 1
