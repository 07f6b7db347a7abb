"""Inter-pod affinity, anti-affinity and topology spreading (filters with upstream's reasons, and
scores), node affinity and taint scores, scheduling gates, and the FailedScheduling text they make."""

from __future__ import annotations

from control.scheduler.cache import SchedulerCache
from control.scheduler.demand import pod_requests
from control.scheduler.filter import failure_message, node_reasons
from control.scheduler.interpod import (
    AFFINITY_MISMATCH, ANTI_AFFINITY_MISMATCH, EXISTING_ANTI_AFFINITY, SPREAD_MISMATCH, SPREAD_MISSING_LABEL,
    ClusterFilters,
)
from control.scheduler.score import pick_node, scores
from tests.scheduler.fake import Harness
from tests.scheduler.objects import node, pod

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def labelled(name, labels, **kw):
    out = pod(name, **kw)
    out["metadata"]["labels"] = labels
    return out


def term(labels, key=HOST):
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def affinity(kind, *terms, preferred=None):
    body = {}
    if terms:
        body["requiredDuringSchedulingIgnoredDuringExecution"] = list(terms)
    if preferred:
        body["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "podAffinityTerm": t} for w, t in preferred]
    return {kind: body}


def cluster(*pods, nodes=None):
    cache = SchedulerCache()
    for n in nodes or [node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "a"}), node("n3", labels={ZONE: "b"})]:
        cache.set_node(n)
    for p in pods:
        cache.pod_observed(p)
    return cache


def reasons_for(p, cache):
    infos = cache.nodes()
    others = ClusterFilters(p, infos, cache.anti_affinity)
    return {info.name: node_reasons(p, pod_requests(p), info, others.reason) for info in infos}


def test_required_pod_affinity_needs_a_matching_pod_in_the_domain_and_says_so():
    web = labelled("web", {"app": "web"}, node_name="n1", phase="Running")
    cache = cluster(web)
    cache_pod = labelled("cache", {"app": "cache"}, affinity=affinity("podAffinity", term({"app": "web"})))
    assert reasons_for(cache_pod, cache) == {"n1": [], "n2": [AFFINITY_MISMATCH], "n3": [AFFINITY_MISMATCH]}
    zonal = labelled("z", {"app": "cache"}, affinity=affinity("podAffinity", term({"app": "web"}, ZONE)))
    assert reasons_for(zonal, cache) == {"n1": [], "n2": [], "n3": [AFFINITY_MISMATCH]}
    lonely = labelled("lonely", {"app": "x"}, affinity=affinity("podAffinity", term({"app": "db"})))
    found = reasons_for(lonely, cache)
    assert all(r == [AFFINITY_MISMATCH] for r in found.values()), "no pod matches: nowhere"
    message = failure_message(3, found)
    assert message == ("0/3 nodes are available: 3 node(s) didn't match pod affinity rules. preemption: 0/3 nodes "
                       "are available: 3 Preemption is not helpful for scheduling.")
    first = labelled("first", {"app": "db"}, affinity=affinity("podAffinity", term({"app": "db"})))
    assert all(r == [] for r in reasons_for(first, cache).values()), "the first of a group matches itself"


def test_required_anti_affinity_both_ways():
    web = labelled("web", {"app": "web"}, node_name="n1", phase="Running",
                   affinity=affinity("podAntiAffinity", term({"app": "web"})))
    cache = cluster(web)
    assert set(cache.anti_affinity) == {"default/web"}
    second = labelled("web2", {"app": "web"})
    assert reasons_for(second, cache) == {"n1": [EXISTING_ANTI_AFFINITY], "n2": [], "n3": []}
    other_ns = labelled("web3", {"app": "web"}, namespace="other")
    assert reasons_for(other_ns, cache)["n1"] == [], "terms look in their own namespace by default"
    picky = labelled("picky", {"app": "api"}, affinity=affinity("podAntiAffinity", term({"app": "web"}, ZONE)))
    assert reasons_for(picky, cache) == {"n1": [ANTI_AFFINITY_MISMATCH], "n2": [ANTI_AFFINITY_MISMATCH], "n3": []}
    message = failure_message(3, {"n1": [EXISTING_ANTI_AFFINITY], "n2": ["node(s) had untolerated taint {k: v}"]})
    assert message == ("0/3 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, 1 node(s) "
                       "had untolerated taint {k: v}. preemption: 0/3 nodes are available: 1 No preemption victims "
                       "found for incoming pod, 1 Preemption is not helpful for scheduling.")


def test_topology_spread_do_not_schedule_keeps_the_skew():
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    running = [labelled(f"w{i}", {"app": "web"}, node_name=n, phase="Running") for i, n in enumerate(["n1", "n2"])]
    cache = cluster(*running, nodes=[node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "a"}),
                                     node("n3", labels={ZONE: "b"}), node("n4")])
    new = labelled("w9", {"app": "web"}, topologySpreadConstraints=spread)
    assert reasons_for(new, cache) == {"n1": [SPREAD_MISMATCH], "n2": [SPREAD_MISMATCH], "n3": [],
                                       "n4": [SPREAD_MISSING_LABEL]}
    loose = labelled("w8", {"app": "web"}, topologySpreadConstraints=[{**spread[0], "maxSkew": 3}])
    assert reasons_for(loose, cache)["n1"] == [], "2 + itself − 0 ≤ 3"
    soft = labelled("w7", {"app": "web"}, topologySpreadConstraints=[{**spread[0], "whenUnsatisfiable":
                                                                       "ScheduleAnyway"}])
    assert all(r == [] for n, r in reasons_for(soft, cache).items() if n != "n4")
    feasible = [i for i in cache.nodes() if i.name != "n4"]
    assert pick_node(soft, pod_requests(soft, nonzero=True), feasible, cache.nodes()).name == "n3"


def test_preferred_affinity_node_affinity_and_prefer_no_schedule_steer_the_score():
    web = labelled("web", {"app": "web"}, node_name="n2", phase="Running")
    cache = cluster(web)
    near = labelled("near", {"app": "c"}, affinity=affinity("podAffinity", preferred=[(100, term({"app": "web"}))]))
    assert pick_node(near, pod_requests(near, nonzero=True), cache.nodes(), cache.nodes()).name == "n2"
    far = labelled("far", {"app": "c"}, affinity=affinity("podAntiAffinity", preferred=[(100, term({"app": "web"},
                                                                                                    ZONE))]))
    assert pick_node(far, pod_requests(far, nonzero=True), cache.nodes(), cache.nodes()).name == "n3"
    ssd = pod("ssd", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["b"]}]}}]}})
    scored = scores(ssd, pod_requests(ssd, nonzero=True), cache.nodes())
    assert scored["n3"] > scored["n1"]
    tainted = cluster(nodes=[node("n1", taints=[{"key": "old", "effect": "PreferNoSchedule"}]), node("n2")])
    plain = pod("plain")
    assert pick_node(plain, pod_requests(plain, nonzero=True), tainted.nodes()).name == "n2"


def test_a_gated_pod_waits_and_is_placed_once_its_gates_are_removed():
    h = Harness()
    h.add(node("n1"))
    gated = pod("gated", schedulingGates=[{"name": "example.com/wait"}])
    h.add(gated)
    assert h.queued() == [], "a gated pod is not even attempted"
    h.run(h.drain())
    assert h.client.binds == []
    opened = dict(gated, spec={k: v for k, v in gated["spec"].items() if k != "schedulingGates"})
    h.modify(opened)
    h.run(h.drain())
    assert h.client.binds == [("default/gated", "n1")]


def test_an_affinity_pod_waits_for_its_partner_and_follows_it():
    h = Harness()
    h.add(node("n1"), node("n2"))
    h.add(labelled("cache", {"app": "cache"}, affinity=affinity("podAffinity", term({"app": "web"}))))
    h.run(h.drain())
    assert h.client.binds == []
    failed = [e for e in h.client.events if e["reason"] == "FailedScheduling"]
    assert failed[0]["message"] == ("0/2 nodes are available: 2 node(s) didn't match pod affinity rules. preemption: "
                                    "0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    h.add(labelled("web", {"app": "web"}, node_name="n2", phase="Running"))
    assert "default/cache" in h.queued(), "a pod landing on a node retries the pods waiting on pods"
    h.run(h.drain())
    assert h.client.binds == [("default/cache", "n2")]
