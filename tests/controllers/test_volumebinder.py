"""The persistent-volume binder against a fake hub: provisioning, binding both ways, choosing an
existing volume, WaitForFirstConsumer, the Events of claims nothing can satisfy, the default
class, Lost claims and Released/Deleted volumes."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS, STORAGECLASSES
from control.controllers.volumebinder import VolumeBinder
from control.kinds.storageclasses import default_storage_class

from .fakes import START, FakeClient, fill, informers, metadata, pod, run


class Recorder:
    def __init__(self):
        self.events = []

    async def record(self, obj, type_, reason, message):
        self.events.append((obj["metadata"]["name"], type_, reason, message))


def storage_class(name="standard", mode="Immediate", provisioner="kubernetes.io/host-path", reclaim="Delete",
                  default=True):
    sc = default_storage_class("uid-sc-" + name, "2026-01-01T00:00:00Z")
    sc["metadata"].update(name=name, resourceVersion="3")
    if not default:
        sc["metadata"]["annotations"] = {}
    sc.update(provisioner=provisioner, volumeBindingMode=mode, reclaimPolicy=reclaim)
    return sc


def pvc(name="data", cls="standard", size="1Gi", modes=("ReadWriteOnce",), volume="", phase="Pending", **meta):
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, "volumeMode": "Filesystem"}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata(name, **meta), "spec": spec,
            "status": {"phase": phase}}


def pv(name, size="1Gi", cls="standard", claim=None, phase="Available", reclaim="Retain"):
    spec = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}, "hostPath": {"path": "/d"},
            "persistentVolumeReclaimPolicy": reclaim, "storageClassName": cls, "volumeMode": "Filesystem"}
    if claim is not None:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim["metadata"]["name"],
                            "uid": claim["metadata"]["uid"]}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": metadata(name, namespace=None), "spec": spec,
            "status": {"phase": phase}}


def setup(*objs):
    clock = FakeClock(START)
    client, shared, recorder = FakeClient(), informers(clock), Recorder()
    caches = {"PersistentVolumeClaim": shared.get(PERSISTENTVOLUMECLAIMS), "PersistentVolume": shared.get(PERSISTENTVOLUMES),
              "StorageClass": shared.get(STORAGECLASSES), "Pod": shared.get(PODS)}
    binder = VolumeBinder(client, caches["PersistentVolumeClaim"], caches["PersistentVolume"], caches["StorageClass"],
                          caches["Pod"], clock=clock, recorder=recorder)
    for obj in objs:
        fill(caches[obj["kind"]], obj)
    return binder, client, recorder


def test_an_immediate_class_provisions_a_volume_pre_bound_to_the_claim():
    claim = pvc()
    binder, client, recorder = setup(storage_class(), claim)
    run(binder.reconcile("claim:default/data"))
    created = client.of("create", "persistentvolumes")[0].body
    assert created["metadata"]["name"] == "pvc-uid-data"
    assert created["metadata"]["annotations"] == {"pv.kubernetes.io/provisioned-by": "kubernetes.io/host-path"}
    spec = created["spec"]
    assert spec["capacity"] == {"storage": "1Gi"} and spec["accessModes"] == ["ReadWriteOnce"]
    assert spec["claimRef"]["uid"] == "uid-data" and spec["persistentVolumeReclaimPolicy"] == "Delete"
    assert spec["storageClassName"] == "standard" and spec["hostPath"]["path"].endswith("/pvc-uid-data")
    assert recorder.events == [("data", "Normal", "ProvisioningSucceeded",
                                "Successfully provisioned volume pvc-uid-data using kubernetes.io/host-path")]


def test_binding_is_written_both_ways():
    claim = pvc()
    volume = pv("pvc-uid-data", claim=claim, phase="Pending", reclaim="Delete")
    volume["metadata"]["annotations"] = {"pv.kubernetes.io/provisioned-by": "kubernetes.io/host-path"}
    binder, client, _ = setup(storage_class(), claim, volume)
    run(binder.reconcile("claim:default/data"))
    assert client.of("replace", "persistentvolumes") == [], "already pre-bound: only its phase changes"
    assert client.of("replace/status", "persistentvolumes")[0].body["status"]["phase"] == "Bound"
    body = client.of("replace", "persistentvolumeclaims")[0].body
    assert body["spec"]["volumeName"] == "pvc-uid-data"
    assert body["metadata"]["annotations"] == {
        "pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
        "volume.kubernetes.io/storage-provisioner": "kubernetes.io/host-path",
        "volume.beta.kubernetes.io/storage-provisioner": "kubernetes.io/host-path"}
    status = client.of("replace/status", "persistentvolumeclaims")[0].body["status"]
    assert status == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}


def test_the_smallest_fitting_available_volume_is_chosen_before_provisioning():
    claim = pvc(size="2Gi")
    binder, client, _ = setup(storage_class(), claim, pv("small", "1Gi"), pv("big", "10Gi"), pv("right", "5Gi"),
                              pv("other-class", "2Gi", cls="fast"), pv("taken", "2Gi", phase="Bound",
                                                                        claim=pvc("x", uid="uid-x")))
    run(binder.reconcile("claim:default/data"))
    assert client.of("create", "persistentvolumes") == []
    bound = client.of("replace", "persistentvolumes")[0].body
    assert bound["metadata"]["name"] == "right" and bound["spec"]["claimRef"]["uid"] == "uid-data"
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"


def test_wait_for_first_consumer_waits_for_a_scheduled_pod_and_pins_the_volume_to_its_node():
    claim = pvc()
    binder, client, recorder = setup(storage_class(mode="WaitForFirstConsumer"), claim)
    run(binder.reconcile("claim:default/data"))
    assert client.of("create", "persistentvolumes") == []
    assert recorder.events == [("data", "Normal", "WaitForFirstConsumer",
                                "waiting for first consumer to be created before binding")]
    user = pod("web-0", node="node-2")
    user["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    binder, client, _ = setup(storage_class(mode="WaitForFirstConsumer"), claim, user)
    run(binder.reconcile("claim:default/data"))
    affinity = client.of("create", "persistentvolumes")[0].body["spec"]["nodeAffinity"]
    assert affinity["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["node-2"]


def test_claims_nothing_can_satisfy_stay_pending_with_upstreams_events():
    cases = [
        (pvc(cls=""), (), ("Normal", "FailedBinding",
                           "no persistent volumes available for this claim and no storage class is set")),
        (pvc(cls="fast"), (), ("Warning", "ProvisioningFailed", 'storageclass.storage.k8s.io "fast" not found')),
        (pvc(cls="ebs"), (storage_class("ebs", provisioner="ebs.csi.aws.com", default=False),),
         ("Normal", "ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner "
          "'ebs.csi.aws.com' or manually by the system administrator. If volume creation is delayed, please verify "
          "that the provisioner is running and correctly registered.")),
        (pvc(modes=("ReadWriteMany",)), (storage_class(),),
         ("Warning", "ProvisioningFailed", 'Failed to provision volume with StorageClass "standard": invalid '
          "AccessModes [ReadWriteMany]: only AccessModes [ReadWriteOnce ReadWriteOncePod] are supported")),
    ]
    for claim, extra, event in cases:
        binder, client, recorder = setup(claim, *extra)
        run(binder.reconcile("claim:default/data"))
        assert client.summary() == [], event
        assert recorder.events == [("data", *event)]


def test_a_claim_without_a_class_gets_the_default_one():
    binder, client, _ = setup(storage_class("other", default=False), storage_class(), pvc(cls=None))
    run(binder.reconcile("claim:default/data"))
    assert client.of("replace", "persistentvolumeclaims")[0].body["spec"]["storageClassName"] == "standard"


def test_a_bound_claim_whose_volume_is_gone_is_lost():
    claim = pvc(volume="pvc-gone", phase="Bound")
    binder, client, recorder = setup(claim)
    run(binder.reconcile("claim:default/data"))
    assert client.of("replace/status", "persistentvolumeclaims")[0].body["status"]["phase"] == "Lost"
    assert recorder.events[0][2] == "ClaimLost"


def test_a_volume_whose_claim_is_gone_is_released_and_deleted_or_retained():
    gone = pvc()
    binder, client, _ = setup(pv("keep", claim=gone, phase="Bound", reclaim="Retain"))
    run(binder.reconcile("volume:keep"))
    assert client.of("replace/status", "persistentvolumes")[0].body["status"]["phase"] == "Released"
    assert client.of("delete", "persistentvolumes") == []
    binder, client, _ = setup(pv("drop", claim=gone, phase="Bound", reclaim="Delete"))
    run(binder.reconcile("volume:drop"))
    assert [a.name for a in client.of("delete", "persistentvolumes")] == ["drop"]


def test_a_volume_whose_claim_lives_on_is_not_released_on_a_lagging_cache():
    claim = pvc()
    binder, client, _ = setup(pv("v", claim=claim, phase="Bound", reclaim="Delete"))
    client.store(PERSISTENTVOLUMECLAIMS, claim)
    run(binder.reconcile("volume:v"))
    assert client.summary() == []


def test_a_free_volume_becomes_available():
    binder, client, _ = setup(pv("new", phase="Pending"))
    run(binder.reconcile("volume:new"))
    assert client.of("replace/status", "persistentvolumes")[0].body["status"]["phase"] == "Available"
