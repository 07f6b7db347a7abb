"""apps/v1 StatefulSet as a kind: upstream's defaults, validation, the fields an update may
change (upstream's Forbidden message), kubectl's columns; and through the hub (422, store
unchanged, scale subresource)."""

from __future__ import annotations

import copy
import json

import pytest

from control.kinds import by_kind
from control.kinds.statefulsets import (
    STATEFULSET, statefulset_cells, statefulset_defaults, validate_statefulset, validate_statefulset_update,
)
from tests.api.conftest import api  # noqa: F401

FORBIDDEN = ("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
             "'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
             "'minReadySeconds' are forbidden")


def sts(name: str = "web", **spec) -> dict:
    body = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"serviceName": "web", "replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"],
                                                        "resources": {"requests": {"storage": "1Gi"}}}}],
                     **spec}}
    return body


def defaulted(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    statefulset_defaults(obj)
    return obj


def messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_registered_with_status_and_scale():
    assert by_kind("apps/v1", "StatefulSet") is STATEFULSET
    assert STATEFULSET.subresources == ("status", "scale") and STATEFULSET.short_names == ("sts",)
    assert STATEFULSET.scale.selector(sts()) == "app=web"


def test_upstream_defaults():
    spec = defaulted(sts())["spec"]
    assert spec["podManagementPolicy"] == "OrderedReady" and spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    claim = spec["volumeClaimTemplates"][0]
    assert (claim["apiVersion"], claim["kind"], claim["status"]) == ("v1", "PersistentVolumeClaim", {"phase": "Pending"})
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    on_delete = defaulted(sts(updateStrategy={"type": "OnDelete"}))["spec"]["updateStrategy"]
    assert on_delete == {"type": "OnDelete"}
    assert validate_statefulset(defaulted(sts())) == []


def test_validation_messages():
    bad = defaulted(sts(replicas=-1, podManagementPolicy="Random", selector={"matchLabels": {"app": "db"}},
                        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": -2}},
                        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep", "whenScaled": "Retain"}))
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    bad["spec"]["volumeClaimTemplates"][0]["spec"]["resources"] = {}
    assert messages(validate_statefulset(bad)) == [
        "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        "spec.updateStrategy.rollingUpdate.partition: Invalid value: -2: must be greater than or equal to 0",
        'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: '
        '"Retain", "Delete"',
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match '
        "template `labels`",
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.volumeClaimTemplates[0].spec.resources[storage]: Required value",
    ]
    empty = defaulted(sts(selector={}))
    assert "empty selector is invalid for statefulset" in messages(validate_statefulset(empty))[0]
    assert messages(validate_statefulset(defaulted(sts(updateStrategy={"type": "Sideways"})))) == [
        "spec.updateStrategy: Invalid value: \"Sideways\": must be 'RollingUpdate' or 'OnDelete'"]


@pytest.mark.parametrize("odd", [None, 3, "x", [], {"spec": None}, {"spec": {"template": 1, "selector": "x"}},
                                 {"spec": {"volumeClaimTemplates": [1], "updateStrategy": 2}}])
def test_odd_input_gives_causes_never_an_exception(odd):
    obj = odd if isinstance(odd, dict) else {"spec": odd}
    statefulset_defaults(obj)
    assert validate_statefulset(obj)


@pytest.mark.parametrize("field,value", [("serviceName", "other"), ("podManagementPolicy", "Parallel"),
                                         ("selector", {"matchLabels": {"app": "web", "x": "y"}}),
                                         ("volumeClaimTemplates", [])])
def test_fields_other_than_the_mutable_ones_are_forbidden(field, value):
    old = defaulted(sts())
    new = copy.deepcopy(old)
    new["spec"][field] = value
    assert messages(validate_statefulset_update(new, old)) == [FORBIDDEN]


def test_replicas_template_strategy_and_the_others_may_change():
    old = defaulted(sts())
    new = copy.deepcopy(old)
    new["spec"].update(replicas=5, minReadySeconds=3, revisionHistoryLimit=2, ordinals={"start": 1},
                       updateStrategy={"type": "OnDelete"},
                       persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Delete"})
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    assert validate_statefulset_update(new, old) == []


def test_columns_as_kubectl_prints_them():
    assert [c.name for c in STATEFULSET.columns] == ["Name", "Ready", "Age", "Containers", "Images"]
    obj = defaulted(sts())
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    obj["status"] = {"readyReplicas": 2}
    assert statefulset_cells(obj, 1767225600 + 120) == ["web", "2/3", "2m", "c", "nginx"]


# --- through the hub ---------------------------------------------------------------------------

SETS = "/apis/apps/v1/namespaces/default/statefulsets"


@pytest.mark.django_db(transaction=True)
def test_the_hub_refuses_an_immutable_change_with_a_422_and_keeps_the_store(api):
    created = api.post(SETS, json.dumps(sts()))
    assert created.status_code == 201, created.content
    stored = json.loads(created.content)
    assert stored["metadata"]["generation"] == 1 and stored["status"] == {"replicas": 0, "availableReplicas": 0}
    changed = copy.deepcopy(stored)
    changed["spec"]["serviceName"] = "other"
    refused = api.put(f"{SETS}/web", json.dumps(changed))
    status = json.loads(refused.content)
    assert refused.status_code == 422 and status["reason"] == "Invalid"
    assert status["message"] == f'StatefulSet.apps "web" is invalid: {FORBIDDEN}'
    assert status["details"]["causes"] == [{"reason": "FieldValueForbidden", "message": FORBIDDEN[len("spec: "):],
                                            "field": "spec"}]
    assert json.loads(api.get(f"{SETS}/web").content)["spec"]["serviceName"] == "web"
    scale = json.loads(api.get(f"{SETS}/web/scale").content)
    assert scale["spec"]["replicas"] == 3 and scale["status"]["selector"] == "app=web"
    scale["spec"]["replicas"] = 5
    assert api.put(f"{SETS}/web/scale", json.dumps(scale)).status_code == 200
    assert json.loads(api.get(f"{SETS}/web").content)["spec"]["replicas"] == 5


def test_claim_template_causes_name_their_template():
    bad = defaulted(sts())
    bad["spec"]["volumeClaimTemplates"][0]["spec"].update(volumeMode="Tape", storageClassName="Fast_Disks")
    bad["spec"]["volumeClaimTemplates"][0]["metadata"] = {}
    found = [c["field"] for c in validate_statefulset(bad)]
    assert found == ["spec.volumeClaimTemplates[0].metadata.name", "spec.volumeClaimTemplates[0].spec.volumeMode",
                     "spec.volumeClaimTemplates[0].spec.storageClassName"]
