"""kube-proxy as its node's NetworkPolicy agent, with informer events fed by hand and a fake
kubelet: the view it keeps (pods by IP, namespaces, policies), the decided lines of /send (the
exact shape the dashboard draws), the cluster DNS's /decide, and the node's own traffic."""

from __future__ import annotations

import asyncio
import json

import itertools

from control.client.reflector import Listing
from control.client.resources import NAMESPACES, NETWORKPOLICIES, PODS, SERVICES
from control.proxy.policy import DROPPED, PolicyView
from tests.proxy.test_send import collect, fake_kubelet, node, proxy_with
from tests.proxy.test_server import request
from tests.proxy.test_table import endpoints, service


def pod(name, ip, labels, namespace="default", host_ip="127.0.1.1", **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "ports": [
                {"name": "http", "containerPort": 8080}]}], **spec},
            "status": {"phase": "Running", "podIP": ip, "hostIP": host_ip}}


def namespace(name, **labels):
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}}}


def policy(name, namespace="default", **spec):
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"podSelector": {}, **spec}}


VERSIONS = itertools.count(100)


def peers_of(proxy):
    """The proxy's pod and namespace informers, started by hand (nothing spawned: no hub) and synced empty."""
    if not proxy.peers.running:
        proxy.peers.spawn = lambda informer: None
        proxy.peers.start()
        for informer in proxy.peers.informers.values():
            informer.replace(Listing([], "1"))
    return proxy.peers.informers


def give(proxy, obj, kind="ADDED"):
    obj["metadata"]["resourceVersion"] = str(next(VERSIONS))
    resource = {"Pod": PODS, "Namespace": NAMESPACES, "NetworkPolicy": NETWORKPOLICIES, "Service": SERVICES,
                "EndpointSlice": proxy.slices.resource}[obj["kind"]]
    informer = peers_of(proxy)[resource] if resource in (PODS, NAMESPACES) else proxy.informers.get(resource)
    informer.apply({"type": kind, "object": obj})


def kitchen():
    """web-a and web-b behind Service web in default, a client pod in default and one in other."""
    routed = node()
    routed["spec"] = {"podCIDR": "10.244.0.0/16"}  # every pod IP of the test goes to node-1's kubelet
    proxy = proxy_with(service(), endpoints(), routed)
    for obj in (namespace("default"), namespace("other", team="blue"),
                pod("web-a", "10.244.1.2", {"app": "web"}), pod("web-b", "10.244.2.2", {"app": "web"}),
                pod("client", "10.244.1.9", {"app": "client"}),
                pod("visitor", "10.244.2.9", {"app": "client"}, namespace="other", host_ip="127.0.1.2")):
        give(proxy, obj)
    return proxy


def test_default_deny_drops_with_the_line_shape_the_dashboard_draws_and_forwards_nothing():
    proxy = kitchen()
    calls = fake_kubelet(proxy)
    give(proxy, policy("default-deny-ingress", policyTypes=["Ingress"]))
    lines = collect(proxy, target="web", count=1, source="10.244.1.9")
    line = lines[0]
    assert line["code"] == 0 and line["error"] == DROPPED == "connection timed out (dropped by NetworkPolicy)"
    assert line["dropped"] == {"direction": "ingress", "policies": ["default/default-deny-ingress"],
                               "from": "default/client", "to": "default/web-a", "port": 8080, "protocol": "TCP"}
    assert line["service"] == "default/web" and line["pod"] == "web-a" and line["seq"] == 0
    assert lines[-1] == {"done": True, "sent": 1, "answered": {}, "failed": 1}
    assert calls == [], "a dropped connection never reaches the kubelet"


def test_an_allow_lets_the_chosen_endpoint_answer_and_names_the_policy():
    proxy = kitchen()
    fake_kubelet(proxy)
    give(proxy, policy("default-deny-ingress", policyTypes=["Ingress"]))
    give(proxy, policy("allow-clients", podSelector={"matchLabels": {"app": "web"}}, ingress=[{"from": [
        {"podSelector": {"matchLabels": {"app": "client"}}}], "ports": [{"port": "http"}]}]))
    lines = collect(proxy, target="10.96.0.12", count=2, interval=0, source="10.244.1.9")
    assert [(line["code"], line["pod"]) for line in lines[:2]] == [(200, "web-a"), (200, "web-b")]
    assert lines[0]["allowedBy"] == ["default/allow-clients"] and "dropped" not in lines[0]
    # the visitor from namespace other is no client of this namespace: dropped
    visitor = collect(proxy, target="web.default", count=1, source="10.244.2.9")[0]
    assert visitor["dropped"]["from"] == "other/visitor" and visitor["dropped"]["direction"] == "ingress"
    give(proxy, policy("allow-clients", podSelector={"matchLabels": {"app": "web"}}, ingress=[{"from": [
        {"namespaceSelector": {"matchLabels": {"team": "blue"}}}]}]), "MODIFIED")
    assert collect(proxy, target="web", count=1, source="10.244.2.9")[0]["code"] == 200


def test_egress_deny_drops_at_the_source_and_pod_ips_are_decided_too():
    proxy = kitchen()
    fake_kubelet(proxy)
    give(proxy, policy("no-way-out", namespace="other", policyTypes=["Egress"]))
    line = collect(proxy, target="10.244.1.2", port=8080, count=1, source="10.244.2.9")[0]
    assert line["dropped"] == {"direction": "egress", "policies": ["other/no-way-out"], "from": "other/visitor",
                               "to": "default/web-a", "port": 8080, "protocol": "TCP"}
    assert (line["pod"], line["podNamespace"], line["service"]) == ("web-a", "default", "")
    assert collect(proxy, target="10.244.1.2", port=8080, count=1, source="10.244.1.9")[0]["code"] == 200


def test_the_node_reaches_its_own_pods_but_not_others_behind_a_deny():
    proxy = kitchen()
    proxy.policies.node_ip = "127.0.1.1"
    fake_kubelet(proxy)
    give(proxy, policy("deny", policyTypes=["Ingress"]))
    # no source: the node itself; web-a and web-b both say hostIP 127.0.1.1: allowed, round robin
    assert [line["code"] for line in collect(proxy, target="web", count=2, interval=0)[:2]] == [200, 200]
    give(proxy, pod("web-b", "10.244.2.2", {"app": "web"}, host_ip="127.0.1.2"), "MODIFIED")
    codes = [line["code"] for line in collect(proxy, target="web", count=2, interval=0)[:2]]
    assert sorted(codes) == [0, 200]


def test_the_view_forgets_finished_and_host_network_pods():
    view = PolicyView("127.0.1.1")
    view.pod_changed(pod("a", "10.244.1.5", {}))
    assert view.peer("10.244.1.5").shown == "default/a"
    view.pod_changed({**pod("a", "10.244.1.5", {}), "status": {"phase": "Succeeded", "podIP": "10.244.1.5"}})
    assert not view.peer("10.244.1.5").is_pod
    view.pod_changed(pod("h", "127.0.1.1", {}, hostNetwork=True))
    assert not view.peer("127.0.1.1").is_pod
    view.pod_changed(pod("b", "10.244.1.6", {}))
    view.pod_changed(pod("c", "10.244.1.6", {}))  # the address went to another pod
    view.pod_deleted(pod("b", "10.244.1.6", {}))
    assert view.peer("10.244.1.6").shown == "default/c"
    version = view.version
    view.policy_changed(policy("p"))
    view.policy_deleted(policy("p"))
    assert view.version == version + 2


def test_decide_answers_for_the_cluster_dns_without_sending():
    proxy = kitchen()
    calls = fake_kubelet(proxy)
    dns_ports = [{"name": "dns", "port": 53, "targetPort": 53, "protocol": "UDP"},
                 {"name": "dns-tcp", "port": 53, "targetPort": 53, "protocol": "TCP"}]
    for obj in (service("kube-dns", "10.96.0.10", ports=dns_ports),
                endpoints(name="kube-dns", ready=[("10.244.1.3", "coredns-1")],
                          ports=[{"name": "dns", "port": 53, "protocol": "UDP"},
                                 {"name": "dns-tcp", "port": 53, "protocol": "TCP"}])):
        give(proxy, obj)
    give(proxy, pod("coredns-1", "10.244.1.3", {"k8s-app": "kube-dns"}))
    give(proxy, policy("deny-out", policyTypes=["Egress"]))

    async def scenario():
        port = await proxy.server.start("127.0.0.1", 0)
        try:
            status, _, body = await request(port, "GET", "/decide?target=10.96.0.10&port=53&protocol=UDP"
                                                         "&source=10.244.1.9")
            answer = json.loads(body)
            assert status == 200 and answer["allowed"] is False and answer["endpoint"] == "10.244.1.3:53"
            assert answer["dropped"]["protocol"] == "UDP" and answer["dropped"]["direction"] == "egress"
            give(proxy, policy("allow-dns", policyTypes=["Egress"], egress=[{"ports": [{"port": 53,
                                                                                         "protocol": "UDP"}]}]))
            answer = json.loads((await request(port, "GET", "/decide?target=10.96.0.10&port=53&protocol=UDP"
                                                            "&source=10.244.1.9"))[2])
            assert answer["allowed"] is True and answer["allowedBy"] == ["default/allow-dns"]
            waited = json.loads((await request(port, "GET", f"/decide?target=10.96.0.10&port=53&protocol=UDP&wait="
                                                            f"{answer['policyVersion']}&timeoutSeconds=0.05"))[2])
            assert waited["policyVersion"] == answer["policyVersion"]
            for target in ("/decide?target=web&protocol=ICMP", "/decide?target=web&source=nope"):
                assert (await request(port, "GET", target))[0] == 400
            assert json.loads((await request(port, "GET", "/decide?target=nothing"))[2])["error"].startswith("NXDOMAIN")
        finally:
            await proxy.close()

    asyncio.run(scenario())
    assert calls == []
