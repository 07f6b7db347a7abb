"""The EndpointSlice controller's reconcile: conditions, labels and owner, 100 a slice, no rewrite
when nothing changed, endpoints staying in their slice, the placeholder, and waiting for its own
writes to reach the cache."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import ENDPOINTSLICES, PODS, SERVICES
from control.controllers.endpointslice import (
    CONTROLLER_NAME, MAX_ENDPOINTS_PER_SLICE, EndpointSliceController, plan_slices,
)
from control.controllers.garbagecollector import WATCHED, GarbageCollector, item_key
from control.kinds.meta import format_time

from .fakes import START, FakeClient, fill, informers, metadata, pod, run


def service(name="web", selector=None, ports=None, **spec):
    spec = {"ports": ports if ports is not None else [{"name": "http", "port": 80, "targetPort": "http",
                                                       "protocol": "TCP"}], **spec}
    if selector is not False:
        spec["selector"] = selector or {"app": "web"}
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata(name, labels={"team": "a"}), "spec": spec}


def setup(*objs):
    client, shared = FakeClient(), informers()
    services, pods, slices = shared.get(SERVICES), shared.get(PODS), shared.get(ENDPOINTSLICES)
    controller = EndpointSliceController(client, services, pods, slices, clock=FakeClock(START))
    for obj in objs:
        fill({"Service": services, "Pod": pods, "EndpointSlice": slices}[obj["kind"]], obj)
    return controller, client, slices


def as_stored(body, name, generation=1):
    """What the hub answers for a created slice: named, with a generation."""
    out = {**body, "metadata": {**body["metadata"], "name": name, "generation": generation,
                                "resourceVersion": "5", "uid": f"uid-{name}"}}
    out["metadata"].pop("generateName")
    return out


PORTS = [{"name": "http", "port": 8080, "protocol": "TCP"}]


def test_a_slice_with_conditions_labels_owner_and_the_services_ports():
    controller, client, _ = setup(
        service(),
        pod("a", ready=True, ip="10.0.0.2", node="n1", phase="Running"),
        pod("b", ready=False, ip="10.0.0.1", node="n1", phase="Running"),
        pod("going", ready=True, ip="10.0.0.3", node="n2", deleting=format_time(START)),
        pod("no-ip", ready=True, node="n1"),
        pod("other", labels={"app": "db"}, ready=True, ip="10.0.0.5", node="n1"))
    run(controller.reconcile("default/web"))
    [create] = client.of("create", "endpointslices")
    body = create.body
    assert body["metadata"]["generateName"] == "web-"
    assert body["metadata"]["labels"] == {"team": "a", "kubernetes.io/service-name": "web",
                                          "endpointslice.kubernetes.io/managed-by": CONTROLLER_NAME}
    assert body["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "web",
                                                    "uid": "uid-web", "controller": True, "blockOwnerDeletion": True}]
    assert body["addressType"] == "IPv4" and body["ports"] == PORTS
    shown = {e["targetRef"]["name"]: (e["addresses"], e["conditions"], e["nodeName"]) for e in body["endpoints"]}
    assert shown == {
        "a": (["10.0.0.2"], {"ready": True, "serving": True, "terminating": False}, "n1"),
        "b": (["10.0.0.1"], {"ready": False, "serving": False, "terminating": False}, "n1"),
        "going": (["10.0.0.3"], {"ready": False, "serving": True, "terminating": True}, "n2")}
    assert body["endpoints"][0]["targetRef"] == {"kind": "Pod", "namespace": "default", "name": "b", "uid": "uid-b"}


def test_nothing_is_written_when_nothing_changed_and_a_ready_change_is_an_update():
    svc = service()
    a, b = pod("a", ready=True, ip="10.0.0.2", node="n1"), pod("b", ready=False, ip="10.0.0.1", node="n1")
    creates, _, _ = plan_slices(svc, [a, b], [])
    current = as_stored(creates[0], "web-x1y2z")
    controller, client, _ = setup(svc, a, b, current)
    run(controller.reconcile("default/web"))
    assert client.summary() == []
    controller, client, _ = setup(svc, a, pod("b", ready=True, ip="10.0.0.1", node="n1"), current)
    run(controller.reconcile("default/web"))
    [update] = client.of("replace", "endpointslices")
    assert update.name == "web-x1y2z"
    assert all(e["conditions"]["ready"] for e in update.body["endpoints"])


def test_more_than_100_endpoints_are_split_and_stay_in_their_slices():
    svc = service()
    pods = [pod(f"p{i:03d}", ready=True, ip=f"10.1.{i // 200}.{i % 200 + 1}", node="n1") for i in range(250)]
    creates, updates, deletes = plan_slices(svc, pods, [])
    assert [len(c["endpoints"]) for c in creates] == [100, 100, 50] and not updates and not deletes
    stored = [as_stored(c, f"web-{i}") for i, c in enumerate(creates)]
    # one pod of the first slice goes and a new one comes: only the slices that change are written
    gone = stored[0]["endpoints"][0]["targetRef"]["name"]
    left = [p for p in pods if p["metadata"]["name"] != gone] + [pod("new", ready=True, ip="10.9.0.1", node="n1")]
    creates, updates, deletes = plan_slices(svc, left, stored)
    assert not creates and not deletes
    assert [u["metadata"]["name"] for u in updates] == ["web-0"]
    names = [e["targetRef"]["name"] for e in updates[0]["endpoints"]]
    assert gone not in names and "new" in names and len(names) == MAX_ENDPOINTS_PER_SLICE


def test_no_endpoints_keeps_one_placeholder_and_extra_slices_go():
    svc = service()
    creates, _, _ = plan_slices(svc, [], [])
    assert len(creates) == 1 and creates[0]["endpoints"] == [] and "ports" not in creates[0]
    a = pod("a", ready=True, ip="10.0.0.2", node="n1")
    made = [as_stored(c, f"web-{i}") for i, c in enumerate(plan_slices(svc, [a], [])[0])]
    creates, updates, deletes = plan_slices(svc, [], made)
    assert not creates and not deletes and updates[0]["endpoints"] == [] and "ports" not in updates[0]
    placeholder = as_stored(plan_slices(svc, [], [])[0][0], "web-p")
    creates, updates, deletes = plan_slices(svc, [a], [placeholder])
    assert len(creates) == 1 and [d["metadata"]["name"] for d in deletes] == ["web-p"]


def test_a_finished_pod_and_a_wrong_family_are_left_out_and_publish_not_ready_makes_all_ready():
    svc = service(publishNotReadyAddresses=True)
    done = pod("done", ready=False, ip="10.0.0.9", node="n1", phase="Succeeded")
    done["spec"]["restartPolicy"] = "Never"
    six = pod("six", ready=True, ip="fd00::1", node="n1")
    waiting = pod("waiting", ready=False, ip="10.0.0.4", node="n1")
    [created], _, _ = plan_slices(svc, [done, six, waiting], [])
    assert [(e["targetRef"]["name"], e["conditions"]["ready"]) for e in created["endpoints"]] == [("waiting", True)]


def test_a_service_without_selector_is_left_alone():
    controller, client, _ = setup(service(selector=False), pod("a", ready=True, ip="10.0.0.2", node="n1"))
    run(controller.reconcile("default/web"))
    assert client.summary() == []


def test_its_own_writes_not_yet_in_the_cache_postpone_the_next_reconcile():
    controller, client, slices = setup(service(), pod("a", ready=True, ip="10.0.0.2", node="n1"))
    run(controller.reconcile("default/web"))
    assert len(client.of("create", "endpointslices")) == 1
    result = run(controller.reconcile("default/web"))  # the informer has not seen the created slice yet
    assert result.outcome == "requeue_after" and len(client.of("create", "endpointslices")) == 1
    [create] = client.of("create", "endpointslices")
    fill(slices, as_stored(create.body, "web-00001", generation=0))
    run(controller.reconcile("default/web"))
    assert len(client.of("create", "endpointslices")) == 1 and not client.of("replace", "endpointslices")


def test_the_garbage_collector_deletes_a_gone_services_slices():
    svc = service()
    [body], _, _ = plan_slices(svc, [], [])
    slice_ = as_stored(body, "web-p")
    client, shared = FakeClient(), informers()
    collector = GarbageCollector(client, {r: shared.get(r) for r in WATCHED}, clock=FakeClock(START))
    fill(collector.informers[ENDPOINTSLICES], slice_)
    client.store(ENDPOINTSLICES, slice_)
    run(collector.reconcile(item_key(ENDPOINTSLICES, slice_)))
    assert client.summary() == [("delete", "endpointslices", "web-p")]
