"""Workload values in messages, printed as Go's %#v prints them (what kubectl shows for an immutable
selector), never in Python's spelling."""

from control.kinds.apps import go_label_selector, go_map


def test_labels_print_as_a_go_map_with_sorted_quoted_keys():
    assert go_map({"tier": "front", "app": "web"}) == 'map[string]string{"app":"web", "tier":"front"}'
    assert go_map(None) == "map[string]string(nil)"
    assert go_map({"on": True, "gone": None}) == 'map[string]string{"gone":"", "on":"true"}'


def test_a_label_selector_prints_as_go_percent_hash_v():
    assert go_label_selector({"matchLabels": {"app": "web"}}) == (
        'v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}")
    assert go_label_selector({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                                                   {"key": "x", "operator": "Exists"}]}) == (
        "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{"
        'v1.LabelSelectorRequirement{Key:"tier", Operator:"In", Values:[]string{"a", "b"}}, '
        'v1.LabelSelectorRequirement{Key:"x", Operator:"Exists", Values:[]string(nil)}}}')
    assert go_label_selector(None) == "(*v1.LabelSelector)(nil)"
