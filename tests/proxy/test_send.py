"""Sending traffic through kube-proxy's table, with informer events fed by hand and a fake kubelet:
name resolution, the answered lines, and the promise that a request only ever goes to an
endpoint of the latest Endpoints kube-proxy has seen."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control.clock import FakeClock
from control.kinds.network import kubelet_endpoint
from control.proxy.proxy import KubeProxy
from control.proxy.send import SendPlan, serve_path
from control.proxy.table import Endpoint
from tests.proxy.test_table import endpoints, service

PODS = [(f"10.244.1.{i}", f"web-{i}") for i in range(2, 8)]


def node(name="node-1", ip="127.0.1.1", port=10250):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "resourceVersion": "1"},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}


def proxy_with(*objects, balance="round-robin"):
    proxy = KubeProxy(object(), "node-1", balance=balance, clock=FakeClock())
    for obj in objects:
        feed(proxy, obj)
    return proxy


def feed(proxy, obj, kind="ADDED"):
    informer = {"Service": proxy.services, "EndpointSlice": proxy.slices, "Node": proxy.nodes}[obj["kind"]]
    informer.apply({"type": kind, "object": obj})


def collect(proxy, **query):
    async def run():
        return [line async for line in proxy.send(SendPlan.parse({k: str(v) for k, v in query.items()}))]
    return asyncio.run(run())


def fake_kubelet(proxy, during=None):
    calls = []

    async def forward(node_name, endpoint, namespace):
        calls.append((node_name, endpoint, namespace))
        if during:
            during(len(calls))
        return 200, {"pod": endpoint.pod}

    proxy.forward = forward
    return calls


def test_requests_spread_round_robin_and_lines_say_who_answered():
    proxy = proxy_with(service(), endpoints(rv="7"), node())
    calls = fake_kubelet(proxy)
    lines = collect(proxy, target="web", count=4, interval=0)
    assert [line["pod"] for line in lines[:4]] == ["web-a", "web-b", "web-a", "web-b"]
    first = lines[0]
    assert {k: first[k] for k in ("seq", "from", "target", "service", "clusterIP", "endpoint", "podNode", "code",
                                  "endpointsResourceVersion")} == {
        "seq": 0, "from": "node-1", "target": "web", "service": "default/web", "clusterIP": "10.96.0.12",
        "endpoint": "10.244.1.2:8080", "podNode": "node-1", "code": 200, "endpointsResourceVersion": "7"}
    assert lines[-1] == {"done": True, "sent": 4, "answered": {"web-a": 2, "web-b": 2}, "failed": 0}
    assert calls[0][0] == "node-1" and calls[0][2] == "default"


@pytest.mark.parametrize("target", ["web", "web.default", "web.default.svc", "web.default.svc.cluster.local.",
                                    "10.96.0.12"])
def test_names_and_the_cluster_ip_reach_the_service(target):
    proxy = proxy_with(service(), endpoints(), node())
    fake_kubelet(proxy)
    assert collect(proxy, target=target, namespace="default")[0]["code"] == 200


def test_unroutable_requests_are_answered_503_with_the_reason():
    alias = service(name="alias", ip=None, type="ExternalName", externalName="web.default.svc.cluster.local")
    outside = service(name="out", ip=None, type="ExternalName", externalName="example.com")
    proxy = proxy_with(service(), endpoints(ready=()), service(name="web2", ip="10.96.0.13"), alias, outside, node())
    fake_kubelet(proxy)
    cases = {"nope": "NXDOMAIN", "web": "no ready endpoints", "10.96.9.9": "no Service has the address",
             "out": "outside the cluster", "alias": "no ready endpoints", "web2": "no ready endpoints"}
    for target, reason in cases.items():
        line = collect(proxy, target=target)[0]
        assert line["code"] == 503 and reason in line["error"], (target, line)
    assert collect(proxy, target="web", port=81)[0]["error"] == "default/web has no port 81"
    assert collect(proxy, target="web", count=2, interval=0)[-1] == {"done": True, "sent": 2, "answered": {}, "failed": 2}


def test_headless_services_send_to_ready_pods_and_unknown_nodes_fail_cleanly():
    proxy = proxy_with(service(ip="None"), endpoints())
    lines = collect(proxy, target="web")
    assert lines[0]["code"] == 503 and 'node "node-1"' in lines[0]["error"], "no Node seen yet"
    feed(proxy, node())
    fake_kubelet(proxy)
    assert collect(proxy, target="web")[0]["pod"] == "web-b", "round robin went on from the failed try"


def test_bad_parameters_are_refused():
    for query in ({}, {"target": "web", "count": "0"}, {"target": "web", "count": "x"}, {"target": "web", "port": "0"},
                  {"target": "web", "interval": "-1"}, {"target": "web", "count": "1.5"}):
        with pytest.raises(ValueError):
            SendPlan.parse(query)
    assert SendPlan.parse({"target": "web", "interval": "250", "port": "80"}).interval == 0.25


def test_kubelet_endpoint_and_serve_path():
    assert kubelet_endpoint(node()) == ("127.0.1.1", 10250)
    assert kubelet_endpoint({"status": {}}) is None and kubelet_endpoint(None) is None
    assert serve_path(Endpoint("10.244.1.2", 8080, "web-a", "node-1"), "default", "node-2") == \
        "/serve/default/web-a?port=8080&from=node-2"


def test_an_endpoint_removed_while_a_request_is_in_flight_gets_no_further_request():
    proxy = proxy_with(service(), endpoints(rv="7"), node())

    def remove_web_a(call):
        if call == 1:  # web-a turns not ready while the first request is being answered
            feed(proxy, endpoints(rv="8", ready=[("10.244.2.2", "web-b")], not_ready=[("10.244.1.2", "web-a")]),
                 "MODIFIED")

    fake_kubelet(proxy, remove_web_a)
    lines = collect(proxy, target="web", count=5, interval=0)
    assert [(line["pod"], line["endpointsResourceVersion"]) for line in lines[:5]] == [
        ("web-a", "7"), ("web-b", "8"), ("web-b", "8"), ("web-b", "8"), ("web-b", "8")]


@settings(max_examples=60, deadline=None)
@given(updates=st.lists(st.sets(st.sampled_from(PODS), max_size=4), min_size=1, max_size=12),
       when=st.lists(st.integers(min_value=1, max_value=30), min_size=12, max_size=12),
       balance=st.sampled_from(["round-robin", "random"]))
def test_every_request_goes_to_an_endpoint_of_the_latest_endpoints_seen(updates, when, balance):
    """Endpoints updates land at arbitrary moments between requests; each request's pod must be
    ready in the latest Endpoints applied before it was picked, and its line must carry that
    Endpoints' resourceVersion."""
    proxy = proxy_with(service(), endpoints(rv="1", ready=PODS[:2]), node(), balance=balance)
    latest = {"rv": "1", "ready": set(PODS[:2])}
    schedule = {}
    for i, (ready, at) in enumerate(zip(updates, when)):
        schedule.setdefault(at, []).append((str(i + 2), sorted(ready)))
    seen = []

    def maybe_update(call):
        seen.append((latest["rv"], {pod for _, pod in latest["ready"]}))
        for rv, ready in schedule.get(call, []):
            feed(proxy, endpoints(rv=rv, ready=ready), "MODIFIED")
            latest.update(rv=rv, ready=set(ready))

    fake_kubelet(proxy, maybe_update)
    lines = collect(proxy, target="web", count=30, interval=0)
    sent = [line for line in lines[:-1] if line["code"] == 200]
    assert len(sent) == len(seen)
    for line, (rv, ready) in zip(sent, seen):
        assert line["endpointsResourceVersion"] == rv and line["pod"] in ready
    for line in lines[:-1]:
        if line["code"] != 200:
            assert line["error"] == "default/web has no ready endpoints"


class PatchingHub:
    def __init__(self, fail=0):
        self.patches, self.fail = [], fail

    async def patch(self, resource, name, body, namespace=None):
        if self.fail:
            self.fail -= 1
            from control import errors
            raise errors.ServiceUnavailable("busy")
        self.patches.append((resource.plural, name, body))
        return {}


def test_kube_proxy_listens_on_its_node_address_and_records_its_port_again_when_lost():
    clock = FakeClock()
    hub = PatchingHub(fail=1)
    proxy = KubeProxy(hub, "node-1", clock=clock, port=0)

    async def scenario():
        listening = asyncio.ensure_future(proxy.listen())
        await asyncio.sleep(0.01)
        assert not listening.done(), "it waits for the kubelet to register the Node"
        feed(proxy, node(ip="127.0.0.1"))
        await asyncio.sleep(0.05)
        await clock.advance(0.2)  # the first patch failed: it tries again after 0.2 s
        port = await asyncio.wait_for(listening, 2)
        assert proxy.address == "127.0.0.1" and hub.patches == [
            ("nodes", "node-1", {"metadata": {"annotations": {"kubekitchen.dev/kube-proxy-port": str(port)}}})]
        again = node(ip="127.0.0.1")
        again["metadata"]["resourceVersion"] = "2"  # registered again, without the annotation
        feed(proxy, again, "MODIFIED")
        await asyncio.sleep(0.01)
        assert len(hub.patches) == 2
        shown = node(ip="127.0.0.1")
        shown["metadata"].update(resourceVersion="3", annotations={"kubekitchen.dev/kube-proxy-port": str(port)})
        feed(proxy, shown, "MODIFIED")
        await asyncio.sleep(0.01)
        assert len(hub.patches) == 2, "nothing to record when the Node shows the port"
        await proxy.close()

    asyncio.run(scenario())


def test_requests_are_paced_and_timed_on_the_proxy_clock():
    proxy = proxy_with(service(), endpoints(rv="7"), node())
    clock = proxy.clock = FakeClock(1000.0)
    sent_at = []

    async def forward(node_name, endpoint, namespace):
        sent_at.append(clock.monotonic())
        clock.t += 0.003  # the kubelet takes 3 ms of fake time to answer
        return 200, {"pod": endpoint.pod}

    proxy.forward = forward

    async def run():
        lines = []

        async def consume():
            async for line in proxy.send(SendPlan.parse({"target": "web", "count": "3", "interval": "500"})):
                lines.append(line)

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0)
        assert len(sent_at) == 1  # the second waits for 0.5 s of the proxy's clock, not the machine's
        await clock.advance(0.5)
        await clock.advance(0.5)
        await task
        return lines

    lines = asyncio.run(run())
    assert sent_at == pytest.approx([1000.0, 1000.5, 1001.0])
    assert [line["ms"] for line in lines[:3]] == pytest.approx([3.0, 3.0, 3.0])


def podded(name="node-2", cidr="10.244.2.0/24"):
    obj = node(name, ip="127.0.1.2")
    obj["spec"] = {"podCIDR": cidr, "podCIDRs": [cidr]}
    return obj


def test_a_pod_ip_goes_to_the_kubelet_of_the_node_whose_pod_cidr_holds_it():
    proxy = proxy_with(service(), endpoints(), node(), podded())
    calls = []

    async def forward(node_name, endpoint, namespace):
        calls.append((node_name, endpoint, namespace))
        return 200, {"pod": "solo", "namespace": "other", "server": "nginx"}

    proxy.forward = forward
    line = collect(proxy, target="10.244.2.9", namespace="default")[0]
    assert calls == [("node-2", Endpoint("10.244.2.9", 80, "", "node-2"), "default")]
    assert {k: line[k] for k in ("service", "clusterIP", "endpoint", "pod", "podNamespace", "podNode", "code",
                                 "server")} == {
        "service": "", "clusterIP": "", "endpoint": "10.244.2.9:80", "pod": "solo", "podNamespace": "other",
        "podNode": "node-2", "code": 200, "server": "nginx"}
    assert collect(proxy, target="10.244.2.9", port=8080)[0]["endpoint"] == "10.244.2.9:8080"
    assert serve_path(calls[0][1], "default", "node-1") == "/serveIP/10.244.2.9?port=80&from=node-1"
    outside = collect(proxy, target="10.9.9.9")[0]
    assert outside["code"] == 503 and "no Service has the address" in outside["error"], "no node routes it"
    assert collect(proxy, target="10.96.0.12")[0]["service"] == "default/web", "a ClusterIP is still a Service"


def in_namespace(obj, namespace):
    moved = {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}
    if obj["kind"] == "EndpointSlice":
        moved["endpoints"] = [{**e, "targetRef": {**e["targetRef"], "namespace": namespace}} for e in obj["endpoints"]]
    return moved


def test_a_run_confined_to_its_namespace_reaches_only_services_there():
    """namespaceOnly (a person's run, authorized as the Service's proxy): a name of the namespace
    is sent; an address, a DNS name of another namespace, and an ExternalName pointing out are not."""
    out = service(name="out", ip=None, type="ExternalName", externalName="web.default.svc.cluster.local")
    front_door = node("node-2", ip="10.0.0.2")
    front_door["metadata"]["annotations"] = {"kubekitchen.dev/ingress-controller-ports": "http=80"}
    proxy = proxy_with(service(), endpoints(), in_namespace(service(name="shop", ip="10.96.0.20"), "alice"),
                       in_namespace(endpoints(name="shop"), "alice"), in_namespace(out, "alice"),
                       node(), front_door)
    calls = fake_kubelet(proxy)
    for target in ("shop", "shop.alice.svc.cluster.local"):
        line = collect(proxy, target=target, namespace="alice", namespaceOnly="true")[0]
        assert (line["code"], line["service"]) == (200, "alice/shop"), line
    assert len(calls) == 2
    for target, reason in (("out", "leads outside namespace alice"), ("web.default", "leads outside namespace alice"),
                           ("10.96.0.12", "is an address"), ("10.96.0.20", "is an address"),
                           ("10.0.0.2", "is an address")):  # a node's address: never its host listener
        line = collect(proxy, target=target, namespace="alice", namespaceOnly="true", port=80)[0]
        assert line["code"] == 503 and reason in line["error"] and line["service"] == "", (target, line)
    assert len(calls) == 2, "nothing more was forwarded"
    assert collect(proxy, target="out", namespace="alice")[0]["service"] == "default/web"  # a node's run follows it
