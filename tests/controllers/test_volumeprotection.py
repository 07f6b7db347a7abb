"""The pvc-protection and pv-protection controllers against a fake hub: a claim in use keeps its
finalizer until its pods are gone; a Bound volume keeps its finalizer until released."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS
from control.controllers.pvcprotection import PVCProtection
from control.controllers.pvprotection import PVProtection
from control.kinds.meta import format_time

from .fakes import START, FakeClient, fill, informers, metadata, pod, run

GONE = format_time(START)


def claim(deleting=True):
    extra = {"deletionTimestamp": GONE} if deleting else {}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": metadata("data-web-0", finalizers=["kubernetes.io/pvc-protection"], **extra), "spec": {}}


def user(phase="Running"):
    p = pod("web-0", phase=phase)
    p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}]
    return p


def pvc_setup(*objs, live=()):
    client, shared = FakeClient(), informers(FakeClock(START))
    claims, pods = shared.get(PERSISTENTVOLUMECLAIMS), shared.get(PODS)
    controller = PVCProtection(client, claims, pods, clock=FakeClock(START))
    for obj in objs:
        fill(claims if obj["kind"] == "PersistentVolumeClaim" else pods, obj)
    for obj in live:
        client.store(PODS, obj)
    return controller, client


def test_a_claim_used_by_a_pod_keeps_its_finalizer():
    controller, client = pvc_setup(claim(), user())
    run(controller.reconcile("default/data-web-0"))
    assert client.of("patch") == []


def test_the_cache_is_confirmed_by_a_live_list_before_the_finalizer_goes():
    controller, client = pvc_setup(claim(), live=[user()])
    run(controller.reconcile("default/data-web-0"))
    assert client.of("patch") == [] and client.of("list", "pods")


def test_a_claim_no_running_pod_uses_loses_its_finalizer():
    controller, client = pvc_setup(claim(), user(phase="Succeeded"))
    run(controller.reconcile("default/data-web-0"))
    patch = client.of("patch", "persistentvolumeclaims")[0].body
    assert patch["metadata"]["finalizers"] is None and patch["metadata"]["resourceVersion"]


def test_a_claim_not_being_deleted_is_left_alone():
    controller, client = pvc_setup(claim(deleting=False))
    run(controller.reconcile("default/data-web-0"))
    assert client.actions == []


def volume(phase):
    return {"apiVersion": "v1", "kind": "PersistentVolume", "status": {"phase": phase},
            "metadata": metadata("pv-1", namespace=None, deletionTimestamp=GONE,
                                 finalizers=["kubernetes.io/pv-protection", "other"])}


def test_a_bound_volume_keeps_its_finalizer_and_a_released_one_loses_it():
    for phase, patched in (("Bound", False), ("Released", True)):
        client, shared = FakeClient(), informers(FakeClock(START))
        volumes = shared.get(PERSISTENTVOLUMES)
        controller = PVProtection(client, volumes, clock=FakeClock(START))
        fill(volumes, volume(phase))
        run(controller.reconcile("pv-1"))
        patches = client.of("patch", "persistentvolumes")
        assert bool(patches) == patched
        if patched:
            assert patches[0].body["metadata"]["finalizers"] == ["other"]
