"""A pod's volumes and mounts are validated as kube-apiserver does: mounts naming no volume, paths
that would climb out of a volume, duplicates; through the hub they are a 422 with the causes."""

from __future__ import annotations

import json

import pytest

from control.kinds.pod_volumes import mount_name_causes, volume_causes
from tests.api.conftest import api  # noqa: F401  (the hub fixture)


def spec(mounts, volumes):
    return {"containers": [{"name": "app", "image": "busybox", "volumeMounts": mounts}], "volumes": volumes}


def messages(causes):
    return [(c["field"], c["message"]) for c in causes]


def test_a_template_may_mount_what_a_claim_template_provides():
    mounts = [{"name": "data", "mountPath": "/data"}]
    assert volume_causes(spec(mounts, []), "spec.template.spec") == []


def test_a_sound_spec_has_no_causes():
    volumes = [{"name": "config", "configMap": {"name": "app", "items": [{"key": "k", "path": "dir/k"}]}},
               {"name": "scratch", "emptyDir": {}}]
    mounts = [{"name": "config", "mountPath": "/etc/config"},
              {"name": "scratch", "mountPath": "/cache", "subPath": "a/b"}]
    assert volume_causes(spec(mounts, volumes)) == [] and mount_name_causes(spec(mounts, volumes)) == []


def test_mounts_must_name_a_volume_and_stay_inside_it():
    mounts = [{"name": "nope", "mountPath": "/x"}, {"name": "v"}, {"name": "v", "mountPath": "/y", "subPath": "/etc"},
              {"name": "v", "mountPath": "/z", "subPath": "a/../../b", "subPathExpr": "$(X)"}]
    assert messages(mount_name_causes(spec(mounts, [{"name": "v", "emptyDir": {}}]))) == [
        ("spec.containers[0].volumeMounts[0].name", 'Not found: "nope"')]
    assert messages(volume_causes(spec(mounts, [{"name": "v", "emptyDir": {}}]))) == [
        ("spec.containers[0].volumeMounts[1].mountPath", "Required value"),
        ("spec.containers[0].volumeMounts[2].subPath", 'Invalid value: "/etc": must be a relative path'),
        ("spec.containers[0].volumeMounts[3].subPath", "Invalid value: \"a/../../b\": must not contain '..'"),
        ("spec.containers[0].volumeMounts[3].subPathExpr",
         'Invalid value: "$(X)": subPathExpr and subPath are mutually exclusive')]


def test_volume_names_and_item_paths():
    volumes = [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}, {"emptyDir": {}},
               {"name": "s", "secret": {"secretName": "db", "items": [{"key": "k", "path": "../k"}, {"key": "j"}]}},
               {"name": "p", "projected": {"sources": [{"configMap": {"name": "c", "items": [{"key": "k", "path": "/k"}]}},
                                                       {"serviceAccountToken": {"path": "../token"}}]}}]
    assert messages(volume_causes(spec([], volumes), "spec.template.spec")) == [
        ("spec.template.spec.volumes[1].name", 'Duplicate value: "v"'),
        ("spec.template.spec.volumes[2].name", "Required value"),
        ("spec.template.spec.volumes[3].secret.items[0].path", "Invalid value: \"../k\": must not contain '..'"),
        ("spec.template.spec.volumes[3].secret.items[1].path", "Required value"),
        ("spec.template.spec.volumes[4].projected.sources[1].serviceAccountToken.path",
         "Invalid value: \"../token\": must not contain '..'"),
        ("spec.template.spec.volumes[4].projected.sources[0].configMap.items[0].path",
         'Invalid value: "/k": must be a relative path')]


@pytest.mark.django_db(transaction=True)
def test_the_hub_refuses_a_bad_mount_with_422_and_stores_nothing(api):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": spec([{"name": "data", "mountPath": "/data", "subPath": "../../etc"}], [])}
    answer = api.post("/api/v1/namespaces/default/pods", json.dumps(pod))
    status = json.loads(answer.content)
    assert answer.status_code == 422 and status["reason"] == "Invalid"
    fields = [c["field"] for c in status["details"]["causes"]]
    assert "spec.containers[0].volumeMounts[0].name" in fields and "spec.containers[0].volumeMounts[0].subPath" in fields
    assert api.get("/api/v1/namespaces/default/pods/web").status_code == 404
