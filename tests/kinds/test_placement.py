"""Node selectors, node affinity terms and tolerations as upstream's component helpers judge them."""

from __future__ import annotations

import pytest

from control.kinds.placement import (
    expression_matches, preferred_affinity_score, required_affinity_matches, term_matches, tolerates,
    untolerated_taint,
)

NODE = {"metadata": {"name": "n1", "labels": {"zone": "a", "cores": "8"}}}


@pytest.mark.parametrize("expression, value, expected", [
    ({"operator": "In", "values": ["a", "b"]}, "a", True),
    ({"operator": "In", "values": ["b"]}, "a", False),
    ({"operator": "NotIn", "values": ["b"]}, None, True),
    ({"operator": "Exists"}, None, False),
    ({"operator": "DoesNotExist"}, None, True),
    ({"operator": "Gt", "values": ["4"]}, "8", True),
    ({"operator": "Lt", "values": ["4"]}, "8", False),
    ({"operator": "Gt", "values": ["x"]}, "8", False),
    ({"operator": "Bogus", "values": ["a"]}, "a", False),
    ("not a dict", "a", False),
])
def test_expressions(expression, value, expected):
    assert expression_matches(expression, value) is expected


def test_terms_selectors_and_fields():
    assert term_matches({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}, NODE)
    assert not term_matches({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}, NODE)
    assert not term_matches({}, NODE), "an empty term matches no node"
    spec = {"nodeSelector": {"zone": "a"}, "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["4"]}]}]}}}}
    assert required_affinity_matches(spec, NODE), "terms are ORed"
    assert not required_affinity_matches({"nodeSelector": {"zone": "b"}}, NODE)
    preferred = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}},
        {"weight": 7, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}]}}}
    assert preferred_affinity_score(preferred, NODE) == 5


def test_untolerated_taints_by_effect():
    taints = [{"key": "a", "effect": "PreferNoSchedule"}, {"key": "b", "effect": "NoSchedule"},
              {"key": "c", "effect": "NoExecute"}]
    assert untolerated_taint([], taints) == taints[1]
    assert untolerated_taint([{"key": "b", "operator": "Exists"}], taints) == taints[2]
    assert untolerated_taint([{"key": "b", "operator": "Exists"}], taints, ("NoExecute",)) == taints[2]
    assert untolerated_taint([{"operator": "Exists"}], taints) is None


@pytest.mark.parametrize(("toleration", "taint", "expected"), [
    # upstream ToleratesTaint: an empty key is every key, and the operator still decides
    ({"operator": "Exists"}, {"key": "a", "value": "x", "effect": "NoSchedule"}, True),
    ({"operator": "Equal", "value": "x"}, {"key": "a", "value": "x", "effect": "NoSchedule"}, True),
    ({"value": "y"}, {"key": "a", "value": "x", "effect": "NoSchedule"}, False),
    ({"key": "a", "operator": "Lt", "value": "9"}, {"key": "a", "value": "1", "effect": "NoSchedule"}, False),
    ({"key": "a", "operator": "Exists", "effect": "NoExecute"}, {"key": "a", "effect": "NoSchedule"}, False),
    ({"key": "a"}, {"key": "a", "effect": "NoExecute"}, True),  # no value on either side: equal
])
def test_tolerates_is_upstreams_toleratestaint(toleration, taint, expected):
    assert tolerates(toleration, taint) is expected
