"""servicelb: LoadBalancer Services get an address from the pool, never a shared one, and give it
back when they go or change type."""

from __future__ import annotations

import ipaddress

from control.clock import FakeClock
from control.client.resources import SERVICES
from control.controllers.servicelb import ServiceLBController

from .fakes import START, FakeClient, fill, informers, metadata, observe, run, vanish

POOL = ipaddress.ip_network("172.18.255.0/29")  # hosts .1 - .6


class Recorder:
    def __init__(self):
        self.events = []

    async def record(self, obj, type_, reason, message):
        self.events.append((obj["metadata"]["name"], type_, reason, message))


def service(name: str, type_: str = "LoadBalancer", ingress: list[str] | None = None, created: float = START - 60,
            **spec) -> dict:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": metadata(name, created=created),
           "spec": {"type": type_, "clusterIP": "10.96.0.10", "ports": [{"port": 80, "nodePort": 30080}], **spec},
           "status": {"loadBalancer": {}}}
    if ingress:
        svc["status"]["loadBalancer"]["ingress"] = [{"ip": ip, "ipMode": "VIP"} for ip in ingress]
    return svc


def setup(*svcs):
    client, shared, recorder = FakeClient(), informers(), Recorder()
    services = shared.get(SERVICES)
    controller = ServiceLBController(client, services, clock=FakeClock(START), recorder=recorder, pool=POOL)
    fill(services, *svcs)
    return controller, client, recorder


def queued(controller) -> set[str]:
    keys = set()
    while len(controller.queue):
        key = run(controller.queue.get())
        controller.queue.done(key)
        keys.add(key)
    return keys


def written(client) -> list[tuple[str, dict]]:
    return [(a.name, a.body["status"]["loadBalancer"]) for a in client.of("replace/status", "services")]


def test_a_load_balancer_gets_the_lowest_free_address_through_the_status_subresource():
    taken = service("old", ingress=["172.18.255.1"])
    controller, client, recorder = setup(taken, service("web"))
    run(controller.reconcile("default/web"))
    [(name, status)] = written(client)
    assert (name, status) == ("web", {"ingress": [{"ip": "172.18.255.2", "ipMode": "VIP"}]})
    body = client.of("replace/status")[0].body
    assert body["metadata"]["resourceVersion"], "written with its resourceVersion (optimistic concurrency)"
    assert recorder.events == [("web", "Normal", "IPAllocated", 'Assigned IP ["172.18.255.2"]')]


def test_choices_made_before_the_cache_catches_up_are_never_repeated():
    controller, client, _ = setup(service("a"), service("b"), service("c"))
    for key in ("default/a", "default/b", "default/c"):
        run(controller.reconcile(key))
    ips = [status["ingress"][0]["ip"] for _, status in written(client)]
    assert ips == ["172.18.255.1", "172.18.255.2", "172.18.255.3"]
    run(controller.reconcile("default/a"))
    assert len(written(client)) == 3, "an address already written is not written again"


def test_an_address_already_held_is_kept_and_nothing_is_written():
    controller, client, _ = setup(service("web", ingress=["172.18.255.5"]))
    run(controller.reconcile("default/web"))
    assert client.summary() == []


def test_when_two_claim_one_address_the_older_keeps_it():
    older = service("older", ingress=["172.18.255.1"], created=START - 100)
    newer = service("newer", ingress=["172.18.255.1"], created=START - 10)
    controller, client, _ = setup(older, newer)
    run(controller.reconcile("default/older"))
    run(controller.reconcile("default/newer"))
    assert written(client) == [("newer", {"ingress": [{"ip": "172.18.255.2", "ipMode": "VIP"}]})]


def test_a_requested_load_balancer_ip_in_the_pool_is_honoured_when_free():
    controller, client, _ = setup(service("web", loadBalancerIP="172.18.255.4"),
                                  service("other", ingress=["172.18.255.5"]), service("late", loadBalancerIP="172.18.255.5"))
    run(controller.reconcile("default/web"))
    run(controller.reconcile("default/late"))
    assert [s["ingress"][0]["ip"] for _, s in written(client)] == ["172.18.255.4", "172.18.255.1"]


def test_changing_type_clears_the_status_and_frees_the_address_for_a_waiting_service():
    pool_of_one = ipaddress.ip_network("172.18.255.8/30")  # hosts .9 and .10
    holder_a = service("a", ingress=["172.18.255.9"])
    holder_b = service("b", ingress=["172.18.255.10"])
    client, shared, recorder = FakeClient(), informers(), Recorder()
    services = shared.get(SERVICES)
    controller = ServiceLBController(client, services, clock=FakeClock(START), recorder=recorder, pool=pool_of_one)
    fill(services, holder_a, holder_b, service("waiting"))
    run(controller.reconcile("default/waiting"))
    assert written(client) == [] and recorder.events[-1][:3] == ("waiting", "Warning", "AllocationFailed")
    observe(services, service("a", "ClusterIP", ingress=["172.18.255.9"]))
    run(controller.reconcile("default/a"))
    assert written(client) == [("a", {})]
    assert "default/waiting" in queued(controller), "the freed address wakes the Service waiting for one"
    observe(services, service("a", "ClusterIP"))
    run(controller.reconcile("default/waiting"))
    assert written(client)[-1] == ("waiting", {"ingress": [{"ip": "172.18.255.9", "ipMode": "VIP"}]})


def test_a_deleted_services_address_goes_to_the_next_one():
    pool_of_one = ipaddress.ip_network("172.18.255.8/31")  # /31: both addresses usable
    client, shared, _ = FakeClient(), informers(), Recorder()
    services = shared.get(SERVICES)
    controller = ServiceLBController(client, services, clock=FakeClock(START), pool=pool_of_one)
    fill(services, service("a", ingress=["172.18.255.8"]), service("b", ingress=["172.18.255.9"]), service("c"))
    run(controller.reconcile("default/c"))
    assert written(client) == []
    vanish(services, service("a", ingress=["172.18.255.8"]))
    keys = set()
    while len(controller.queue):
        key = run(controller.queue.get())
        keys.add(key)
        run(controller.reconcile(key))
        controller.queue.done(key)
    assert {"default/a", "default/c"} <= keys, "the freed address wakes the Services waiting for one"
    assert written(client) == [("c", {"ingress": [{"ip": "172.18.255.8", "ipMode": "VIP"}]})]


def test_other_service_types_are_left_alone():
    controller, client, _ = setup(service("plain", "ClusterIP"), service("np", "NodePort"))
    observe(controller.services, service("plain", "ClusterIP"))
    assert len(controller.queue) == 0
    run(controller.reconcile("default/np"))
    assert client.summary() == []
