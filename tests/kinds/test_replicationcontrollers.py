"""core/v1 ReplicationController: defaults, validation, printing and the Scale's selector, as
upstream's SetDefaults_ReplicationController and ValidateReplicationController."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control import kinds
from control.kinds.replicationcontrollers import rc_selector

RC = kinds.by_kind("v1", "ReplicationController")
KEYS = ["replicas", "selector", "template", "metadata", "labels", "spec", "containers", "name", "image",
        "restartPolicy", "activeDeadlineSeconds", "minReadySeconds", "readyReplicas"]


def rc(**spec) -> dict:
    """The classic nginx RC of kubernetes.io (no selector: it is defaulted from the template)."""
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "nginx", "namespace": "default"},
            "spec": {"replicas": 3,
                     "template": {"metadata": {"name": "nginx", "labels": {"app": "nginx"}},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx",
                                                           "ports": [{"containerPort": 80}]}]}}, **spec}}


def defaulted(obj: dict) -> dict:
    RC.defaults(obj)
    return obj


def fields(obj: dict) -> list[str]:
    return [c["field"] for c in RC.validate(obj)]


def test_served_as_core_v1_with_short_name_categories_and_subresources():
    assert kinds.by_resource("", "v1", "replicationcontrollers") is RC
    assert RC.short_names == ("rc",) and RC.categories == ("all",) and RC.namespaced
    assert set(RC.subresources) == {"status", "scale"} and RC.has_spec
    assert RC.definition in __import__("control.kinds.schemas", fromlist=["DEFINITIONS"]).DEFINITIONS


def test_selector_labels_and_replicas_default_from_the_template():
    obj = rc()
    del obj["spec"]["replicas"]
    defaulted(obj)
    assert obj["spec"]["selector"] == {"app": "nginx"}
    assert obj["metadata"]["labels"] == {"app": "nginx"}
    assert obj["spec"]["replicas"] == 1
    assert obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    again = copy.deepcopy(obj)
    assert defaulted(again) == obj, "defaults are idempotent"
    assert fields(obj) == []


def test_a_given_selector_and_labels_are_kept():
    obj = defaulted(rc(selector={"app": "nginx"}))
    obj2 = rc(selector={"app": "nginx"})
    obj2["metadata"]["labels"] = {"team": "a"}
    assert obj["spec"]["selector"] == {"app": "nginx"}
    assert defaulted(obj2)["metadata"]["labels"] == {"team": "a"}


def test_a_template_without_labels_leaves_the_selector_empty_and_required():
    obj = rc()
    del obj["spec"]["template"]["metadata"]["labels"]
    defaulted(obj)
    assert "selector" not in obj["spec"]
    causes = RC.validate(obj)
    assert {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.selector"} in causes


def test_the_selector_must_match_the_template_labels():
    causes = RC.validate(defaulted(rc(selector={"app": "web"})))
    assert [c["field"] for c in causes] == ["spec.template.metadata.labels"]
    assert causes[0]["message"] == ('Invalid value: map[string]string{"app":"nginx"}: '
                                    "`selector` does not match template `labels`")


@pytest.mark.parametrize("change, field, message", [
    ({"replicas": -1}, "spec.replicas", "Invalid value: -1: must be greater than or equal to 0"),
    ({"minReadySeconds": -5}, "spec.minReadySeconds", "Invalid value: -5: must be greater than or equal to 0"),
    ({"replicas": "three"}, "spec.replicas", 'Invalid value: "three": must be greater than or equal to 0'),
])
def test_counts_are_non_negative(change, field, message):
    causes = RC.validate(defaulted(rc(**change)))
    assert [(c["field"], c["message"]) for c in causes] == [(field, message)]


def test_the_template_is_required_and_its_pods_always_restart_without_a_deadline():
    obj = defaulted(rc(selector={"app": "nginx"}))
    del obj["spec"]["template"]
    assert fields(obj) == ["spec.template"]
    obj = defaulted(rc())
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    obj["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 30
    causes = {c["field"]: c for c in RC.validate(obj)}
    assert causes["spec.template.spec.restartPolicy"]["message"] == 'Unsupported value: "Never": supported values: "Always"'
    assert causes["spec.template.spec.activeDeadlineSeconds"]["reason"] == "FieldValueForbidden"
    obj = defaulted(rc())
    obj["spec"]["template"]["spec"]["containers"][0]["name"] = "Bad_Name"
    assert fields(obj) == ["spec.template.spec.containers[0].name"]


@pytest.mark.parametrize("spec", [None, "x", {"selector": "app=nginx"}, {"template": "x", "selector": {"a": "b"}},
                                  {"selector": {"bad key!": "x"}, "template": {"metadata": {"labels": 3}}}])
def test_odd_input_gives_causes_never_an_exception(spec):
    obj = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "x"}, "spec": spec}
    RC.defaults(obj)
    assert RC.validate(obj), "every one of these is invalid"


def test_the_selector_stays_mutable_as_upstream():
    old = defaulted(rc())
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"app": "nginx", "tier": "web"}
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "web"
    assert RC.validate_update(new, old) == [] and RC.validate(new) == []


def test_create_resets_status():
    obj = rc()
    obj["status"] = {"replicas": 9}
    RC.prepare_for_create(obj)
    assert obj["status"] == {"replicas": 0}


def test_the_table_is_name_desired_current_ready_age_and_wide_columns():
    assert [c.name for c in RC.columns if c.priority == 0] == ["Name", "Desired", "Current", "Ready", "Age"]
    assert [c.name for c in RC.columns if c.priority == 1] == ["Containers", "Images", "Selector"]
    obj = defaulted(rc(selector={"tier": "web", "app": "nginx"}))
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    obj["status"] = {"replicas": 2, "readyReplicas": 1}
    row = RC.row(obj, now=1767225600 + 90)
    assert row == ["nginx", 3, 2, 1, "90s", "nginx", "nginx", "app=nginx,tier=web"]


def test_the_scale_selector_and_the_controllers_selector_read_the_map():
    obj = defaulted(rc(selector={"tier": "web", "app": "nginx"}))
    assert RC.scale.selector(obj) == "app=nginx,tier=web"
    selector = rc_selector(obj)
    assert selector.matches({"app": "nginx", "tier": "web", "x": "y"}) and not selector.matches({"app": "nginx"})
    assert not rc_selector({"spec": {}}).matches({}), "no selector matches nothing, never everything"


JSONISH = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
                       lambda inner: st.one_of(st.lists(inner, max_size=3),
                                               st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner,
                                                               max_size=4)), max_leaves=20)


@settings(max_examples=300, deadline=None, database=None)
@given(spec=JSONISH, status=JSONISH)
def test_any_json_is_defaulted_validated_and_printed_without_raising(spec, status):
    obj = {"apiVersion": "v1", "kind": "ReplicationController",
           "metadata": {"name": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec, "status": status}
    RC.defaults(obj)
    assert isinstance(RC.validate(obj), list)
    RC.scale.selector(obj)
    rc_selector(obj)
    if isinstance(obj.get("spec"), dict):
        RC.row(obj, 1767225600.0)
