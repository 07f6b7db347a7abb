"""kube-proxy's pod and namespace informers start only with the first NetworkPolicy (fake informers:
real `Informer`s with no hub, fed by hand, counted as they are made): nothing watched without a
policy; a decision made while they are cold waits for their first list (never a verdict from an
empty cache), or is refused 503 past PEER_SYNC_SECONDS; the last policy gone, they stop after the
linger and the view forgets its pods; a policy back starts them anew."""

from __future__ import annotations

import asyncio
import itertools

from control.client.informer import Informer
from control.client.reflector import Listing
from control.client.resources import NAMESPACES, NETWORKPOLICIES, PODS
from control.clock import settle
from control.proxy.peers import LINGER_SECONDS
from control.proxy.proxy import PEER_SYNC_SECONDS, UNSYNCED
from control.proxy.send import SendPlan
from tests.proxy.test_policy import namespace, pod, policy
from tests.proxy.test_send import fake_kubelet, node, proxy_with
from tests.proxy.test_table import endpoints, service

VERSIONS = itertools.count(500)


class Made:
    """The peer informers a proxy made: real informers on no hub, never run (the test lists for them)."""

    def __init__(self, proxy):
        self.made: list[Informer] = []
        self.spawned: list[Informer] = []
        proxy.peers.make = self.make
        proxy.peers.spawn = self.spawn

    def make(self, resource):
        informer = Informer(None, resource)
        self.made.append(informer)
        return informer

    def spawn(self, informer):
        self.spawned.append(informer)
        return asyncio.Event().wait()  # runs until cancelled, as a watch does

    def list(self, proxy, resource, *objects):
        proxy.peers.informers[resource].replace(Listing(list(objects), str(next(VERSIONS))))


def give_policy(proxy, obj, kind="ADDED"):
    obj["metadata"]["resourceVersion"] = str(next(VERSIONS))
    proxy.informers.get(NETWORKPOLICIES).apply({"type": kind, "object": obj})


def cluster():
    routed = node()
    routed["spec"] = {"podCIDR": "10.244.0.0/16"}
    proxy = proxy_with(service(), endpoints(), routed)
    return proxy, Made(proxy), fake_kubelet(proxy)


PEERS = (pod("web-a", "10.244.1.2", {"app": "web"}), pod("web-b", "10.244.2.2", {"app": "web"}),
         pod("client", "10.244.1.9", {"app": "client"}), pod("other", "10.244.1.8", {"app": "other"}))
ALLOW_CLIENT = policy("allow-client", podSelector={"matchLabels": {"app": "web"}}, policyTypes=["Ingress"],
                      ingress=[{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}]}])


async def send(proxy, source):
    return [line async for line in proxy.send(SendPlan.parse({"target": "web", "count": "1", "source": source}))]


def test_without_a_policy_no_pod_or_namespace_is_watched_and_traffic_is_not_held():
    proxy, made, calls = cluster()

    async def scenario():
        supervisor = asyncio.ensure_future(proxy.peers.run())
        await settle()
        assert made.made == [] and not proxy.peers.running and proxy.peers.ready
        assert {i.resource for i in proxy.informers.all()}.isdisjoint({PODS, NAMESPACES})
        lines = await send(proxy, "10.244.1.9")
        assert lines[0]["code"] == 200 and len(calls) == 1 and "allowedBy" not in lines[0]
        supervisor.cancel()

    asyncio.run(scenario())


def test_the_first_policy_starts_them_and_a_decision_waits_for_their_first_list():
    proxy, made, calls = cluster()

    async def scenario():
        supervisor = asyncio.ensure_future(proxy.peers.run())
        give_policy(proxy, ALLOW_CLIENT)
        await settle()
        assert [i.resource for i in made.made] == [PODS, NAMESPACES] and made.spawned == made.made
        assert not proxy.peers.ready
        allowed = asyncio.ensure_future(send(proxy, "10.244.1.9"))  # allowed by the policy, once pods are known
        denied = asyncio.ensure_future(send(proxy, "10.244.1.8"))  # dropped by it, once pods are known
        await settle()
        assert not allowed.done() and not denied.done() and calls == [], "nothing decided on a cold cache"
        version = proxy.policies.version
        made.list(proxy, PODS, *PEERS)
        await settle()
        assert not allowed.done(), "namespaces not listed yet"
        made.list(proxy, NAMESPACES, namespace("default"))
        await settle()
        assert proxy.peers.ready and proxy.policies.version == version + 1
        assert (await allowed)[0]["allowedBy"] == ["default/allow-client"] and len(calls) == 1
        line = (await denied)[0]
        assert line["code"] == 0 and line["dropped"]["policies"] == ["default/allow-client"] and len(calls) == 1
        supervisor.cancel()
        await settle()
        assert all(task.done() for task in proxy.peers.tasks) or not proxy.peers.tasks

    asyncio.run(scenario())


def test_a_decision_that_cannot_wait_longer_is_refused_not_guessed():
    proxy, made, calls = cluster()

    async def scenario():
        supervisor = asyncio.ensure_future(proxy.peers.run())
        give_policy(proxy, policy("deny-all", policyTypes=["Ingress"]))
        await settle()
        waiting = asyncio.ensure_future(send(proxy, "10.244.1.9"))
        decided = asyncio.ensure_future(proxy.decide(SendPlan.parse({"target": "web", "source": "10.244.1.9"}), "TCP"))
        await settle()
        await proxy.clock.advance(PEER_SYNC_SECONDS - 0.5)
        assert not waiting.done() and not decided.done()
        await proxy.clock.advance(0.5)
        line = (await waiting)[0]
        assert line["code"] == 503 and line["error"] == UNSYNCED and "dropped" not in line and calls == []
        assert (await decided) == {"allowed": False, "error": UNSYNCED, "policyVersion": proxy.policies.version}
        supervisor.cancel()

    asyncio.run(scenario())


def test_the_last_policy_gone_they_stop_after_the_linger_and_start_anew_for_the_next():
    proxy, made, calls = cluster()

    async def scenario():
        supervisor = asyncio.ensure_future(proxy.peers.run())
        deny = policy("deny-all", policyTypes=["Ingress"])
        give_policy(proxy, deny)
        await settle()
        made.list(proxy, PODS, *PEERS)
        made.list(proxy, NAMESPACES, namespace("default"))
        await settle()
        assert (await send(proxy, "10.244.1.9"))[0]["code"] == 0
        give_policy(proxy, deny, "DELETED")
        await settle()
        await proxy.clock.advance(LINGER_SECONDS / 2)
        give_policy(proxy, policy("deny-all", policyTypes=["Ingress"]))  # back within the linger: kept
        await settle()
        give_policy(proxy, deny, "DELETED")
        await settle()
        await proxy.clock.advance(LINGER_SECONDS - 1)
        assert proxy.peers.running and len(made.made) == 2
        assert (await send(proxy, "10.244.1.9"))[0]["code"] == 200, "no policy: nothing isolates anyone"
        await proxy.clock.advance(2)
        assert not proxy.peers.running and proxy.policies.pods == {} and proxy.policies.namespaces == {}
        spawned = list(proxy.peers.tasks)
        assert spawned == []
        give_policy(proxy, policy("deny-all", policyTypes=["Ingress"]))
        await settle()
        assert len(made.made) == 4 and proxy.peers.starts == 2 and not proxy.peers.ready
        made.list(proxy, PODS, *PEERS)
        made.list(proxy, NAMESPACES, namespace("default"))
        await settle()
        assert (await send(proxy, "10.244.1.9"))[0]["code"] == 0
        supervisor.cancel()
        await settle()

    asyncio.run(scenario())
