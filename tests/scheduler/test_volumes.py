"""VolumeBinding: claims that are missing, being deleted or unbound with an Immediate class keep a
pod unschedulable with upstream's message; a WaitForFirstConsumer claim gets the chosen node and
the binding waits for it to be bound."""

from __future__ import annotations

import asyncio

from control.clock import settle
from control.client.runner import DONE
from control.scheduler.volumes import SELECTED_NODE, UNBOUND_IMMEDIATE, check_claims, prefilter_message
from tests.scheduler.fake import Harness
from tests.scheduler.objects import next_rv, node, pod


def storage_class(name: str, mode: str = "Immediate", default: bool = False) -> dict:
    annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
    return {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1",
            "metadata": {"name": name, "uid": f"uid-sc-{name}", "resourceVersion": next_rv(), "annotations": annotations},
            "provisioner": "kubernetes.io/host-path", "volumeBindingMode": mode}


def claim(name: str, *, bound: bool = False, class_name: str | None = None, deleting: bool = False) -> dict:
    meta = {"name": name, "namespace": "default", "uid": f"uid-pvc-{name}", "resourceVersion": next_rv()}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if class_name is not None:
        spec["storageClassName"] = class_name
    if bound:
        spec["volumeName"] = f"pvc-{name}"
    return {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": meta, "spec": spec,
            "status": {"phase": "Bound" if bound else "Pending"}}


def with_claim(name: str, claim_name: str) -> dict:
    return pod(name, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}])


def check(p: dict, claims: list[dict], classes: list[dict]):
    table = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in claims}
    return check_claims(p, lambda ns, name: table.get((ns, name)), lambda: classes)


def test_what_each_claim_allows():
    immediate, later = storage_class("standard", default=True), storage_class("local", "WaitForFirstConsumer")
    assert check(with_claim("a", "data"), [], [immediate]).unresolvable == 'persistentvolumeclaim "data" not found'
    assert check(with_claim("a", "data"), [claim("data", deleting=True)], [immediate]).unresolvable == \
        'persistentvolumeclaim "data" is being deleted'
    assert check(with_claim("a", "data"), [claim("data")], [immediate]).unresolvable == UNBOUND_IMMEDIATE
    assert check(with_claim("a", "data"), [claim("data", bound=True)], [immediate]).unresolvable is None
    delayed = check(with_claim("a", "data"), [claim("data", class_name="local")], [immediate, later])
    assert delayed.unresolvable is None and [c["metadata"]["name"] for c in delayed.delayed] == ["data"]
    # no class named: the default one decides
    assert check(with_claim("a", "data"), [claim("data")], [storage_class("local", "WaitForFirstConsumer",
                                                                          default=True)]).delayed
    ephemeral = pod("e", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}])
    assert check(ephemeral, [], [immediate]).unresolvable == \
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "e-scratch"'
    assert check(pod("plain"), [], []).unresolvable is None


def test_an_unbound_immediate_claim_keeps_the_pod_pending_until_the_binder_binds_it():
    h = Harness()
    pending = claim("data-db-0")
    h.add(node("n1"), storage_class("standard", default=True), pending, with_claim("db-0", "data-db-0"))

    async def scenario():
        first = await h.scheduler.reconcile("default/db-0")
        h.modify(claim("data-db-0", bound=True))  # the volume binder bound it: the pod is queued again
        assert "default/db-0" in h.queued()
        second = await h.scheduler.reconcile("default/db-0")
        return first, second

    first, second = h.run(scenario())
    assert first != DONE and second == DONE
    failed = [e for e in h.client.events if e["reason"] == "FailedScheduling"]
    assert failed[0]["message"] == ("0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                                    "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    assert failed[0]["message"] == prefilter_message(1, UNBOUND_IMMEDIATE)
    assert h.client.binds == [("default/db-0", "n1")]


def test_a_wait_for_first_consumer_claim_is_given_the_node_and_the_binding_waits_for_it():
    h = Harness()
    h.add(node("n1"), storage_class("local", "WaitForFirstConsumer", default=True), claim("data-db-0"),
          with_claim("db-0", "data-db-0"))

    async def scenario():
        placing = asyncio.ensure_future(h.scheduler.reconcile("default/db-0"))
        await settle()
        assert h.client.claim_patches == [("default/data-db-0", {"metadata": {"annotations": {SELECTED_NODE: "n1"}}})]
        assert h.client.binds == [], "not bound before its claim is"
        h.modify(claim("data-db-0", bound=True))
        return await placing

    assert h.run(scenario()) == DONE
    assert h.client.binds == [("default/db-0", "n1")]


def test_a_claim_never_bound_gives_the_node_back_after_the_timeout():
    h = Harness(volume_bind_timeout=600)
    h.add(node("n1"), storage_class("local", "WaitForFirstConsumer", default=True), claim("data-db-0"),
          with_claim("db-0", "data-db-0"))

    async def scenario():
        placing = asyncio.ensure_future(h.scheduler.reconcile("default/db-0"))
        await settle()
        await h.clock.advance(601)
        return await placing

    result = h.run(scenario())
    assert result != DONE and h.client.binds == []
    assert not h.scheduler.cache.is_assumed("default/db-0"), "the node's room is given back"
    assert any(e["reason"] == "FailedScheduling" for e in h.client.events)
