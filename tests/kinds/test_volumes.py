"""core/v1 PersistentVolume and PersistentVolumeClaim, storage.k8s.io/v1 StorageClass and apps/v1
ControllerRevision as kinds: defaults, validation with Kubernetes' messages, immutability, the
protection finalizers, the default class, kubectl's columns; and through the hub."""

from __future__ import annotations

import copy
import json

import pytest

from control.kinds.controllerrevisions import (
    CONTROLLERREVISION, controllerrevision_cells, validate_controllerrevision, validate_controllerrevision_update,
)
from control.kinds.storageclasses import (
    STORAGECLASS, storageclass_cells, storageclass_defaults, validate_storageclass, validate_storageclass_update,
)
from control.kinds.volumes import (
    PERSISTENTVOLUME, PERSISTENTVOLUMECLAIM, pv_cells, pv_defaults, pvc_cells, pvc_defaults, validate_pv,
    validate_pv_update, validate_pvc, validate_pvc_update,
)
from tests.api.conftest import api  # noqa: F401

T0 = 1767225600  # 2026-01-01T00:00:00Z


def messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


def pv(**spec):
    body = {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-1", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "5Gi"}, "hostPath": {"path": "/d"},
                     **spec}}
    pv_defaults(body)
    return body


def pvc(**spec):
    body = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}
    pvc_defaults(body)
    return body


def test_volume_defaults_and_validation():
    volume = pv()
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain" and volume["status"] == {"phase": "Pending"}
    assert validate_pv(volume) == []
    bad = pv(accessModes=["ReadWriteSometimes"], capacity={"memory": "1Gi"}, persistentVolumeReclaimPolicy="Keep",
             nfs={"server": "x", "path": "/"})
    assert messages(validate_pv(bad)) == [
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
        '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        'spec.capacity: Unsupported value: []string{"memory"}: supported values: "storage"',
        "spec.nfs: Forbidden: may not specify more than 1 volume type",
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", '
        '"Retain"']
    none = pv()
    del none["spec"]["hostPath"]
    assert messages(validate_pv(none)) == ["spec: Required value: must specify a volume type"]
    moved = copy.deepcopy(volume)
    moved["spec"]["hostPath"] = {"path": "/elsewhere"}
    assert messages(validate_pv_update(moved, volume)) == [
        "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation"]


def test_claim_validation():
    assert validate_pvc(pvc()) == []
    assert messages(validate_pvc(pvc(accessModes=[], resources={"requests": {"storage": "0"}}))) == [
        "spec.accessModes: Required value: at least 1 access mode is required",
        'spec.resources.requests[storage]: Invalid value: "0": must be greater than zero']
    assert messages(validate_pvc(pvc(resources={}))) == ["spec.resources[storage]: Required value"]


def test_a_claim_spec_is_immutable_except_storage_requests_of_a_bound_claim():
    old = pvc(storageClassName="standard")
    grown = copy.deepcopy(old)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    refused = messages(validate_pvc_update(grown, old))
    assert refused[0].startswith("spec: Forbidden: spec is immutable after creation except resources.requests and "
                                 "volumeAttributesClassName for bound claims\n")
    old["status"]["phase"] = grown["status"]["phase"] = "Bound"
    assert validate_pvc_update(grown, old) == []
    shrunk = copy.deepcopy(old)
    shrunk["spec"]["resources"]["requests"]["storage"] = "500Mi"
    assert messages(validate_pvc_update(shrunk, old)) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"]
    bound = copy.deepcopy(old)
    bound["spec"]["volumeName"] = "pvc-1"
    assert validate_pvc_update(bound, old) == [], "the binder sets volumeName once"
    rebound = copy.deepcopy(bound)
    rebound["spec"]["volumeName"] = "pvc-2"
    assert validate_pvc_update(rebound, bound)
    classless = pvc()
    classed = copy.deepcopy(classless)
    classed["spec"]["storageClassName"] = "standard"
    assert validate_pvc_update(classed, classless) == [], "a default class may be given later"


def test_columns_as_kubectl_prints_them():
    assert [c.name for c in PERSISTENTVOLUME.columns] == [
        "Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
        "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]
    volume = pv(claimRef={"namespace": "default", "name": "data"}, storageClassName="standard")
    volume["status"]["phase"] = "Bound"
    assert pv_cells(volume, T0 + 60) == ["pv-1", "5Gi", "RWO", "Retain", "Bound", "default/data", "standard",
                                         "<unset>", "", "60s", "Filesystem"]
    assert [c.name for c in PERSISTENTVOLUMECLAIM.columns] == [
        "Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age",
        "VolumeMode"]
    claim = pvc(storageClassName="standard", volumeName="pv-1")
    claim["status"] = {"phase": "Bound", "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"]}
    assert pvc_cells(claim, T0 + 60) == ["data", "Bound", "pv-1", "5Gi", "RWO", "standard", "<unset>", "60s",
                                         "Filesystem"]
    assert pvc_cells(pvc(), T0)[1:5] == ["Pending", "", "", ""]


def test_storage_class_defaults_validation_immutability_and_columns():
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "example.com/disk",
          "metadata": {"name": "fast", "creationTimestamp": "2026-01-01T00:00:00Z",
                       "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}}
    storageclass_defaults(sc)
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Delete", "Immediate")
    assert validate_storageclass(sc) == []
    assert messages(validate_storageclass({"reclaimPolicy": "Recycle", "volumeBindingMode": "Later"})) == [
        "provisioner: Required value",
        'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"']
    changed = dict(sc, provisioner="other.com/disk", parameters={"type": "ssd"}, volumeBindingMode="WaitForFirstConsumer")
    assert messages(validate_storageclass_update(changed, sc)) == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable']
    assert STORAGECLASS.short_names == ("sc",) and not STORAGECLASS.namespaced
    assert storageclass_cells(sc, T0 + 5) == ["fast (default)", "example.com/disk", "Delete", "Immediate", False, "5s"]


def test_controller_revisions():
    rev = {"metadata": {"name": "web-abc", "creationTimestamp": "2026-01-01T00:00:00Z",
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                                             "uid": "u", "controller": True}]},
           "data": {"spec": {}}, "revision": 2}
    assert validate_controllerrevision(rev) == []
    assert messages(validate_controllerrevision({"revision": -1})) == [
        "data: Required value: data is mandatory", "revision: Invalid value: -1: must be greater than or equal to 0"]
    assert messages(validate_controllerrevision_update(dict(rev, data={"x": 1}), rev)) == [
        'data: Invalid value: {"x":1}: field is immutable']
    assert controllerrevision_cells(rev, T0 + 1) == ["web-abc", "statefulset.apps/web", 2, "1s"]
    assert [c.name for c in CONTROLLERREVISION.columns] == ["Name", "Controller", "Revision", "Age"]


# --- through the hub ---------------------------------------------------------------------------

CLAIMS = "/api/v1/namespaces/default/persistentvolumeclaims"


@pytest.mark.django_db(transaction=True)
def test_the_hub_gives_claims_the_default_class_and_the_protection_finalizer(api):
    classes = json.loads(api.get("/apis/storage.k8s.io/v1/storageclasses").content)["items"]
    assert [(c["metadata"]["name"], c["metadata"]["annotations"]) for c in classes] == [
        ("standard", {"storageclass.kubernetes.io/is-default-class": "true"})]
    created = api.post(CLAIMS, json.dumps(pvc()))
    assert created.status_code == 201, created.content
    stored = json.loads(created.content)
    assert stored["spec"]["storageClassName"] == "standard"
    assert stored["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert stored["status"] == {"phase": "Pending"}
    explicit = pvc(storageClassName="")
    explicit["metadata"]["name"] = "none"
    assert json.loads(api.post(CLAIMS, json.dumps(explicit)).content)["spec"]["storageClassName"] == ""
    changed = copy.deepcopy(stored)
    changed["spec"]["accessModes"] = ["ReadWriteMany"]
    refused = api.put(f"{CLAIMS}/data", json.dumps(changed))
    assert refused.status_code == 422
    assert "spec is immutable after creation" in json.loads(refused.content)["message"]
    assert json.loads(api.get(f"{CLAIMS}/data").content)["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert api.delete(f"{CLAIMS}/data").status_code == 200
    held = json.loads(api.get(f"{CLAIMS}/data").content)
    assert held["metadata"]["deletionTimestamp"], "the finalizer holds it until no pod uses it"
    volume = api.post("/api/v1/persistentvolumes", json.dumps(pv()))
    assert json.loads(volume.content)["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    bad = api.post("/api/v1/persistentvolumes", json.dumps(dict(pv(), metadata={"name": "bad"}, spec={})))
    assert bad.status_code == 422 and api.get("/api/v1/persistentvolumes/bad").status_code == 404
