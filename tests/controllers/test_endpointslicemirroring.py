"""The EndpointSlice mirroring controller: a selectorless Service's Endpoints mirrored into slices,
written only on change, removed when mirroring no longer applies, no duplicate before the cache
has caught up."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import ENDPOINTS, ENDPOINTSLICES, SERVICES
from control.controllers.endpointslicemirroring import CONTROLLER_NAME, EndpointSliceMirroringController, desired_slices

from .fakes import START, FakeClient, fill, informers, metadata, run


def service(selector=None):
    spec = {"ports": [{"port": 80}]}
    if selector:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata("db"), "spec": spec}


def endpoints(labels=None):
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": metadata("db", labels=labels or {"tier": "data"}),
            "subsets": [{"addresses": [{"ip": "10.244.1.9"}, {"ip": "127.0.0.1"}],
                         "notReadyAddresses": [{"ip": "10.244.1.10", "nodeName": "node-1"}],
                         "ports": [{"name": "sql", "port": 5432}]}]}


def setup(*objs):
    client, shared = FakeClient(), informers()
    services, eps, slices = shared.get(SERVICES), shared.get(ENDPOINTS), shared.get(ENDPOINTSLICES)
    controller = EndpointSliceMirroringController(client, services, eps, slices, clock=FakeClock(START))
    for obj in objs:
        fill({"Service": services, "Endpoints": eps, "EndpointSlice": slices}[obj["kind"]], obj)
    return controller, client, slices


def stored(body, name="db-x"):
    out = {**body, "metadata": {**body["metadata"], "name": name, "resourceVersion": "3"}}
    out["metadata"].pop("generateName")
    return out


def test_a_selectorless_services_endpoints_are_mirrored_once():
    controller, client, slices = setup(service(), endpoints())
    run(controller.reconcile("default/db"))
    [create] = client.of("create", "endpointslices")
    body = create.body
    assert body["metadata"]["labels"] == {"tier": "data", "kubernetes.io/service-name": "db",
                                          "endpointslice.kubernetes.io/managed-by": CONTROLLER_NAME}
    assert body["metadata"]["ownerReferences"][0]["kind"] == "Endpoints"
    assert [(e["addresses"], e["conditions"]["ready"]) for e in body["endpoints"]] == [
        (["10.244.1.9"], True), (["10.244.1.10"], False)], "the loopback address is not a usable endpoint"
    assert body["ports"] == [{"name": "sql", "port": 5432, "protocol": "TCP"}]
    assert run(controller.reconcile("default/db")).outcome == "requeue_after", "the cache has not seen it yet"
    fill(slices, stored(body, "db-00001"))
    run(controller.reconcile("default/db"))
    assert len(client.of("create")) == 1 and not client.of("replace")


def test_a_selector_or_skip_mirror_removes_the_mirror():
    mirrored = stored(desired_slices(service(), endpoints())[0])
    controller, client, _ = setup(service(selector={"app": "db"}), endpoints(), mirrored)
    run(controller.reconcile("default/db"))
    assert client.summary() == [("delete", "endpointslices", "db-x")]
    controller, client, _ = setup(service(), endpoints({"endpointslice.kubernetes.io/skip-mirror": "true"}), mirrored)
    run(controller.reconcile("default/db"))
    assert client.summary() == [("delete", "endpointslices", "db-x")]
