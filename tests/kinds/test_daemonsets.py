"""apps/v1 DaemonSet and ControllerRevision as kinds: upstream's defaults, validation messages, the
template generation, the kubectl columns; and the same through the hub (422 Status, store
unchanged, immutable selector and revision data, the template generation bumped by the server)."""

from __future__ import annotations

import copy
import json

import pytest

from control.kinds import by_kind
from control.kinds.controllerrevisions import (
    CONTROLLERREVISION, controller_text, validate_controllerrevision, validate_controllerrevision_update,
)
from control.kinds.daemonsets import (
    DAEMONSET, TEMPLATE_GENERATION, daemonset_cells, daemonset_defaults, prepare_daemonset_for_create,
    prepare_daemonset_for_update, validate_daemonset,
)
from control.kinds.meta import format_time
from tests.api.conftest import api  # noqa: F401  (the in-process hub, for the tests at the end)


def ds(name: str = "agent", labels: dict | None = None, **spec) -> dict:
    labels = {"app": "agent"} if labels is None else labels
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}, **spec}}


def created(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    prepare_daemonset_for_create(obj)
    daemonset_defaults(obj)
    return obj


def messages(causes: list[dict]) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_registered_as_apps_v1_daemonsets_and_controllerrevisions():
    assert by_kind("apps/v1", "DaemonSet") is DAEMONSET
    assert DAEMONSET.short_names == ("ds",) and DAEMONSET.subresources == ("status",) and DAEMONSET.has_spec
    assert by_kind("apps/v1", "ControllerRevision") is CONTROLLERREVISION
    assert CONTROLLERREVISION.namespaced and not CONTROLLERREVISION.has_status
    assert [c.name for c in DAEMONSET.columns] == ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available",
                                                   "Node Selector", "Age", "Containers", "Images", "Selector"]


def test_defaults_are_upstreams_rolling_update_one_unavailable_and_ten_revisions():
    obj = created(ds())
    assert obj["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                             "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert obj["spec"]["revisionHistoryLimit"] == 10
    assert obj["metadata"]["labels"] == {"app": "agent"}
    assert obj["metadata"]["annotations"][TEMPLATE_GENERATION] == "1"
    assert obj["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    on_delete = created(ds(updateStrategy={"type": "OnDelete"}))
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert validate_daemonset(obj) == [] and validate_daemonset(on_delete) == []


def test_the_template_generation_is_the_servers_and_follows_template_changes():
    old = created(ds())
    new = copy.deepcopy(old)
    new["metadata"]["annotations"][TEMPLATE_GENERATION] = "41"  # a client cannot set it
    prepare_daemonset_for_update(new, old)
    assert new["metadata"]["annotations"][TEMPLATE_GENERATION] == "1"
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    prepare_daemonset_for_update(new, old)
    assert new["metadata"]["annotations"][TEMPLATE_GENERATION] == "2"


def test_selector_must_match_the_template_and_not_be_empty():
    assert messages(validate_daemonset(created(ds(labels={"app": "other"})))) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match '
        "template `labels`"]
    empty = created(ds())
    empty["spec"]["selector"] = {}
    assert 'spec.selector: Invalid value: {}: empty selector is invalid for daemonset' in messages(
        validate_daemonset(empty))
    missing = created(ds())
    del missing["spec"]["selector"]
    assert messages(validate_daemonset(missing)) == ["spec.selector: Required value"]


def test_restart_policy_deadline_counts_and_strategy_are_checked():
    obj = created(ds(minReadySeconds=-1, revisionHistoryLimit=-2))
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    obj["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 5
    assert messages(validate_daemonset(obj)) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported",
        "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0"]
    both = created(ds(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1,
                                                                                 "maxSurge": "10%"}}))
    assert messages(validate_daemonset(both)) == [
        'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "10%": may not be set when maxUnavailable is '
        "non-zero"]
    neither = created(ds(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}))
    assert messages(validate_daemonset(neither)) == [
        "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"]
    surge = created(ds(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0,
                                                                                  "maxSurge": 1}}))
    assert validate_daemonset(surge) == []
    odd = created(ds(updateStrategy={"type": "Sometimes"}))
    assert messages(validate_daemonset(odd)) == [
        'spec.updateStrategy: Unsupported value: v1.DaemonSetUpdateStrategy{Type:"Sometimes", '
        'RollingUpdate:(*v1.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"']
    assert validate_daemonset({"spec": "nonsense"}) == [{"reason": "FieldValueRequired", "message": "Required value",
                                                         "field": "spec"}]


def test_cells_are_kubectls_columns():
    obj = created(ds())
    obj["metadata"]["creationTimestamp"] = format_time(1000)
    obj["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a", "disk": "ssd"}
    obj["status"] = {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                     "updatedNumberScheduled": 1, "numberAvailable": 2}
    assert daemonset_cells(obj, 1000 + 120) == ["agent", 3, 3, 2, 1, 2, "disk=ssd,zone=a", "2m", "c", "busybox",
                                                "app=agent"]


def test_a_controllerrevision_needs_data_and_keeps_it():
    rev = {"metadata": {"name": "agent-6d4f", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u", "controller": True}]},
        "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1}
    assert validate_controllerrevision(rev) == []
    assert controller_text(rev) == "daemonset.apps/agent" and controller_text({"metadata": {}}) == "<none>"
    assert messages(validate_controllerrevision({"revision": -1})) == [
        "data: Required value: data is mandatory", "revision: Invalid value: -1: must be greater than or equal to 0"]
    renumbered = {**rev, "revision": 3}
    assert validate_controllerrevision_update(renumbered, rev) == []
    changed = {**rev, "data": {"spec": {}}}
    assert messages(validate_controllerrevision_update(changed, rev)) == [
        'data: Invalid value: {"spec":{}}: field is immutable']


# --- through the hub ---------------------------------------------------------------------------

DAEMONSETS = "/apis/apps/v1/namespaces/default/daemonsets"
REVISIONS = "/apis/apps/v1/namespaces/default/controllerrevisions"


@pytest.mark.django_db(transaction=True)
def test_the_hub_creates_a_daemonset_and_refuses_bad_ones_with_a_422_status(api):
    answer = api.post(DAEMONSETS, json.dumps(ds()))
    assert answer.status_code == 201, answer.content
    stored = json.loads(answer.content)
    assert stored["metadata"]["generation"] == 1 and stored["status"] == {  # as Go renders them: no omitempty
        "currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}
    assert stored["metadata"]["annotations"] == {TEMPLATE_GENERATION: "1"}
    bad = api.post(DAEMONSETS, json.dumps(ds("bad", labels={"app": "x"})))
    status = json.loads(bad.content)
    assert bad.status_code == 422 and status["reason"] == "Invalid"
    assert status["message"] == ('DaemonSet.apps "bad" is invalid: spec.template.metadata.labels: Invalid value: '
                                 'map[string]string{"app":"x"}: `selector` does not match template `labels`')
    assert api.get(f"{DAEMONSETS}/bad").status_code == 404
    moved = copy.deepcopy(stored)
    moved["spec"]["selector"] = {"matchLabels": {"app": "agent", "tier": "x"}}
    moved["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    refused = api.put(f"{DAEMONSETS}/agent", json.dumps(moved))
    assert refused.status_code == 422
    assert "spec.selector: Invalid value: v1.LabelSelector{" in json.loads(refused.content)["message"]
    changed = copy.deepcopy(stored)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    updated = json.loads(api.put(f"{DAEMONSETS}/agent", json.dumps(changed)).content)
    assert updated["metadata"]["generation"] == 2
    assert updated["metadata"]["annotations"][TEMPLATE_GENERATION] == "2"


@pytest.mark.django_db(transaction=True)
def test_the_hub_keeps_a_revisions_data_immutable(api):
    rev = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "agent-1"},
           "data": {"spec": {"template": {"metadata": {"labels": {"app": "agent"}}}}}, "revision": 1}
    stored = json.loads(api.post(REVISIONS, json.dumps(rev)).content)
    assert stored["data"] == rev["data"]
    stored["revision"] = 2
    assert api.put(f"{REVISIONS}/agent-1", json.dumps(stored)).status_code == 200
    stored = json.loads(api.get(f"{REVISIONS}/agent-1").content)
    stored["data"] = {"spec": {}}
    refused = api.put(f"{REVISIONS}/agent-1", json.dumps(stored))
    assert refused.status_code == 422
    assert json.loads(refused.content)["message"] == ('ControllerRevision.apps "agent-1" is invalid: data: Invalid '
                                                      'value: {"spec":{}}: field is immutable')
    assert json.loads(api.get(f"{REVISIONS}/agent-1").content)["revision"] == 2


@pytest.mark.django_db(transaction=True)
def test_the_hub_takes_a_daemonset_and_a_revision_as_protobuf(api):
    from tests.api.test_protobuf import body

    answer = api.post(DAEMONSETS, body("apps/v1", "DaemonSet", created(ds("pb"))),
                      content_type="application/vnd.kubernetes.protobuf")
    assert answer.status_code == 201, answer.content
    stored = json.loads(answer.content)
    assert stored["spec"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 0}
    rev = {"metadata": {"name": "pb-1"}, "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1}
    answer = api.post(REVISIONS, body("apps/v1", "ControllerRevision", rev),
                      content_type="application/vnd.kubernetes.protobuf")
    assert answer.status_code == 201, answer.content
    assert json.loads(answer.content)["data"] == rev["data"]
