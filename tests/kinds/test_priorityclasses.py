"""PriorityClass validation and the Priority admission plugin, as pure functions (upstream's
pkg/apis/scheduling/validation and plugin/pkg/admission/priority tables)."""

from control.kinds.priorityclasses import (
    PRIORITYCLASS, SYSTEM_CLASSES, admit_pod_priority, priorityclass_cells, priorityclass_defaults,
    system_class_refusal, system_priority_class, validate_priorityclass, validate_priorityclass_default,
    validate_priorityclass_update,
)

RESOURCE = "scheduling.k8s.io/priorityclasses"


def _class(name, value, **fields):
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
          "value": value, **fields}
    priorityclass_defaults(pc)
    return pc


def _lister(*classes):
    def listed(resource, namespace):
        assert (resource, namespace) == (RESOURCE, "")
        return list(classes)
    return listed


def _pod(**spec):
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}], **spec}}


def _messages(causes):
    return [(c["field"], c["message"]) for c in causes]


def test_a_user_class_may_go_up_to_one_billion_and_no_further():
    assert validate_priorityclass(_class("high", 1_000_000_000)) == []
    assert validate_priorityclass(_class("low", -5)) == []
    assert _messages(validate_priorityclass(_class("too-high", 1_000_000_001))) == [
        ("value", "Forbidden: maximum allowed value of a user defined priority is 1000000000")]


def test_system_prefix_is_reserved_for_the_two_built_in_classes():
    for name in SYSTEM_CLASSES:
        assert validate_priorityclass(system_priority_class(name, "u", "2026-01-01T00:00:00Z")) == []
    assert _messages(validate_priorityclass(_class("system-mine", 10))) == [
        ("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
                          "error: system-mine is not a known system priority class")]
    assert _messages(validate_priorityclass(_class("system-node-critical", 10))) == [
        ("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
                          "error: value of system-node-critical PriorityClass must be 2000001000")]
    wrong_default = _class("system-cluster-critical", 2_000_000_000, globalDefault=True)
    assert "globalDefault of system-cluster-critical PriorityClass must be false" in \
        validate_priorityclass(wrong_default)[0]["message"]


def test_preemption_policy_defaults_and_must_be_known():
    assert _class("a", 1)["preemptionPolicy"] == "PreemptLowerPriority"
    causes = validate_priorityclass(_class("a", 1, preemptionPolicy="Sometimes"))
    assert _messages(causes) == [("preemptionPolicy", 'Unsupported value: "Sometimes": supported values: '
                                                      '"PreemptLowerPriority", "Never"')]


def test_value_and_preemption_policy_are_immutable_but_description_is_not():
    old = _class("a", 1, description="x")
    assert validate_priorityclass_update(_class("a", 1, description="y", globalDefault=True), old) == []
    assert _messages(validate_priorityclass_update(_class("a", 2, preemptionPolicy="Never"), old)) == [
        ("value", "Forbidden: may not be changed in an update."),
        ("preemptionPolicy", 'Invalid value: "Never": field is immutable')]


def test_system_classes_cannot_be_deleted_and_table_has_kubectls_columns():
    system = system_priority_class("system-node-critical", "u", "2026-01-01T00:00:00Z")
    assert system_class_refusal(system) == "this is a system priority class and cannot be deleted"
    assert system_class_refusal(_class("mine", 1)) == ""
    assert [c.name for c in PRIORITYCLASS.columns] == ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
    assert PRIORITYCLASS.short_names == ("pc",) and not PRIORITYCLASS.namespaced
    system["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    assert priorityclass_cells(system, 0)[:3] == ["system-node-critical", 2000001000, False]
    assert priorityclass_cells(system, 0)[4] == "PreemptLowerPriority"


def test_admission_resolves_the_named_class():
    pod = _pod(priorityClassName="vip")
    assert admit_pod_priority("/pods", pod, None, _lister(_class("vip", 1000, preemptionPolicy="Never"))) == ""
    assert (pod["spec"]["priority"], pod["spec"]["preemptionPolicy"]) == (1000, "Never")


def test_admission_uses_the_lowest_global_default_or_zero():
    pod = _pod()
    assert admit_pod_priority("/pods", pod, None, _lister()) == ""
    assert pod["spec"]["priority"] == 0 and "priorityClassName" not in pod["spec"]
    pod = _pod()
    defaults = _lister(_class("b", 50, globalDefault=True), _class("a", 20, globalDefault=True), _class("c", 5))
    assert admit_pod_priority("/pods", pod, None, defaults) == ""
    assert (pod["spec"]["priorityClassName"], pod["spec"]["priority"]) == ("a", 20)


def test_admission_refuses_a_missing_class_and_a_disagreeing_priority():
    assert admit_pod_priority("/pods", _pod(priorityClassName="nope"), None, _lister()) == \
        "no PriorityClass with name nope was found"
    classes = _lister(_class("vip", 1000))
    assert admit_pod_priority("/pods", _pod(priorityClassName="vip", priority=5), None, classes) == (
        "the integer value of priority (5) must not be provided in pod spec; priority admission controller "
        "computed 1000 from the given PriorityClass name")
    assert admit_pod_priority("/pods", _pod(priorityClassName="vip", priority=1000), None, classes) == ""
    assert admit_pod_priority("/pods", _pod(priorityClassName="vip", preemptionPolicy="Never"), None, classes) == (
        "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission "
        "controller computed PreemptLowerPriority from the given PriorityClass name")


def test_admission_leaves_other_kinds_and_updates_alone():
    pod = _pod(priorityClassName="nope")
    assert admit_pod_priority("/pods", pod, pod, _lister()) == ""
    assert admit_pod_priority("/configmaps", {"metadata": {"name": "x"}}, None, _lister()) == ""


def test_only_one_global_default():
    existing = _class("first", 10, globalDefault=True)
    second = _class("second", 20, globalDefault=True)
    assert validate_priorityclass_default(RESOURCE, second, None, _lister(existing)) == \
        "PriorityClass first is already marked as default. Only one default can exist"
    assert validate_priorityclass_default(RESOURCE, existing, existing, _lister(existing)) == ""
    assert validate_priorityclass_default(RESOURCE, second, _class("second", 20), _lister(existing)) != ""
    assert validate_priorityclass_default(RESOURCE, _class("third", 1), None, _lister(existing)) == ""
