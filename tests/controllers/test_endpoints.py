"""The Endpoints controller's reconcile: ready and not-ready addresses, ports, only-when-changed."""

from __future__ import annotations

from control.clock import FakeClock
from control.client.resources import ENDPOINTS, PODS, SERVICES
from control.controllers.endpoints import EndpointsController
from control.kinds.meta import format_time

from .fakes import START, FakeClient, fill, informers, metadata, observe, pod, run


def service(name="web", selector=None, ports=None):
    spec = {"ports": ports if ports is not None else [
        {"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
        {"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP"}]}
    if selector is not False:
        spec["selector"] = selector or {"app": "web"}
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata(name, labels={"team": "a"}), "spec": spec}


def setup(*objs):
    client, shared = FakeClient(), informers()
    services, pods, endpoints = shared.get(SERVICES), shared.get(PODS), shared.get(ENDPOINTS)
    controller = EndpointsController(client, services, pods, endpoints, clock=FakeClock(START))
    for obj in objs:
        fill({"Service": services, "Pod": pods, "Endpoints": endpoints}[obj["kind"]], obj)
    return controller, client


def address(name, ip, node="n1"):
    return {"ip": ip, "nodeName": node, "targetRef": {"kind": "Pod", "namespace": "default", "name": name,
                                                      "uid": f"uid-{name}"}}


PORTS = [{"port": 8080, "protocol": "TCP", "name": "http"}, {"port": 9090, "protocol": "TCP", "name": "metrics"}]


def test_ready_pods_are_addresses_and_others_with_an_ip_not_ready_addresses():
    controller, client = setup(
        service(),
        pod("a", ready=True, ip="10.0.0.2", node="n1", phase="Running"),
        pod("b", ready=False, ip="10.0.0.1", node="n1", phase="Running"),
        pod("no-ip", ready=False, node="n1"),
        pod("going", ready=True, ip="10.0.0.3", node="n1", deleting=format_time(START)),
        pod("done", ready=False, ip="10.0.0.4", node="n1", phase="Succeeded"),
        pod("other", labels={"app": "db"}, ready=True, ip="10.0.0.5", node="n1"))
    run(controller.reconcile("default/web"))
    [create] = client.of("create", "endpoints")
    assert create.body["metadata"] == {"name": "web", "namespace": "default", "labels": {"team": "a"}}
    assert create.body["subsets"] == [{"addresses": [address("a", "10.0.0.2")],
                                       "notReadyAddresses": [address("b", "10.0.0.1")], "ports": PORTS}]


def test_written_only_when_changed_and_updated_when_a_pod_turns_ready():
    a = pod("a", ready=True, ip="10.0.0.2", node="n1")
    b = pod("b", ready=False, ip="10.0.0.1", node="n1")
    current = {"apiVersion": "v1", "kind": "Endpoints", "metadata": metadata("web", labels={"team": "a"}),
               "subsets": [{"addresses": [address("a", "10.0.0.2")], "notReadyAddresses": [address("b", "10.0.0.1")],
                            "ports": PORTS}]}
    controller, client = setup(service(), a, b, current)
    run(controller.reconcile("default/web"))
    assert client.summary() == []
    observe(controller.pods, pod("b", ready=True, ip="10.0.0.1", node="n1"))
    assert len(controller.queue) == 1, "a pod change enqueues the services that select it"
    run(controller.reconcile("default/web"))
    [replace] = client.of("replace", "endpoints")
    assert replace.body["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    assert replace.body["subsets"] == [{"addresses": [address("b", "10.0.0.1"), address("a", "10.0.0.2")], "ports": PORTS}]


def test_a_named_target_port_the_pod_lacks_leaves_it_out_of_that_port():
    bare = pod("bare", ready=True, ip="10.0.0.9", node="n2")
    bare["spec"]["containers"][0]["ports"] = []
    controller, client = setup(service(), bare, pod("a", ready=True, ip="10.0.0.2"))
    run(controller.reconcile("default/web"))
    subsets = client.of("create", "endpoints")[0].body["subsets"]
    assert {"addresses": [address("bare", "10.0.0.9", "n2")], "ports": [PORTS[1]]} in subsets
    assert {"addresses": [{"ip": "10.0.0.2", "targetRef": address("a", "")["targetRef"]}], "ports": PORTS} in subsets


def test_the_endpoints_go_with_the_service_and_selectorless_services_are_left_alone():
    current = {"apiVersion": "v1", "kind": "Endpoints", "metadata": metadata("web"), "subsets": []}
    controller, client = setup(current)
    run(controller.reconcile("default/web"))
    assert client.summary() == [("delete", "endpoints", "web")]
    controller, client = setup(service(selector=False), pod("a", ready=True, ip="10.0.0.2"))
    run(controller.reconcile("default/web"))
    assert client.summary() == []


def test_a_pod_whose_subdomain_names_the_service_is_listed_with_its_hostname():
    member = pod("web-0", ready=True, ip="10.0.0.7", node="n1", phase="Running")
    member["spec"].update(hostname="web-0", subdomain="web")
    stranger = pod("x-0", ready=True, ip="10.0.0.8", node="n1", phase="Running")
    stranger["spec"].update(hostname="x-0", subdomain="other")
    controller, client = setup(service(ports=[]), member, stranger)
    run(controller.reconcile("default/web"))
    addresses = client.of("create", "endpoints")[0].body["subsets"][0]["addresses"]
    assert [a.get("hostname") for a in addresses] == ["web-0", None]
