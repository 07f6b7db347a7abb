"""Scoring: least allocated, spread of siblings, deterministic but varied tie-breaking."""

from __future__ import annotations

from collections import Counter

from control.scheduler.demand import NodeInfo, Requests, node_allocatable, pod_requests
from control.kinds.meta import controller_uid
from control.scheduler.score import least_allocated, pick_node, scores, spread
from tests.scheduler.objects import node, pod


def info(name: str, *, cpu: int = 0, memory: int = 0, owners: dict | None = None, **kw) -> NodeInfo:
    obj = node(name, **kw)
    return NodeInfo(name, obj, node_allocatable(obj), Requests(cpu, memory), Requests(cpu, memory), 0, dict(owners or {}))


def test_least_allocated_is_the_mean_free_fraction_after_placing():
    obj = node("n", cpu="4", memory="8Gi")
    n = NodeInfo("n", obj, node_allocatable(obj), Requests(), Requests(1000, 2 * 2**30))
    # after a 1-core/2Gi pod: cpu 2/4 used -> 50 free, memory 4/8 used -> 50 free
    assert least_allocated(Requests(1000, 2 * 2**30), n) == 50
    assert least_allocated(Requests(0, 0), n) == 75
    empty = NodeInfo("z", node("z"), node_allocatable(node("z", cpu="0", memory="0")))
    assert least_allocated(Requests(100, 100), empty) == 0


def test_spread_favours_nodes_with_fewer_siblings():
    a, b, c = info("a", owners={"rs": 2}), info("b", owners={"rs": 1}), info("c")
    assert [spread("rs", x, 2) for x in (a, b, c)] == [0, 50, 100]
    assert spread("", a, 2) == 100
    p = pod("p", owner="web")
    assert controller_uid(p) == "uid-rs-web"
    assert controller_uid(pod("q")) == ""


def test_spread_outweighs_small_differences_in_free_resources():
    p = pod("p", cpu="100m", owner="web")
    busy = info("busy", cpu=2000)  # half its CPU in use, but no sibling
    crowded = info("crowded", owners={"uid-rs-web": 1})
    assert pick_node(p, pod_requests(p, nonzero=True), [crowded, busy]).name == "busy"


def test_the_roomier_node_wins():
    p = pod("p", cpu="500m")
    chosen = pick_node(p, pod_requests(p, nonzero=True), [info("a", cpu=3000), info("b", cpu=1000), info("c", cpu=2000)])
    assert chosen.name == "b"


def test_ties_are_deterministic_but_not_always_the_first_node():
    nodes = [info("a"), info("b"), info("c")]
    picks = [pick_node(pod(f"p-{i}"), Requests(100, 100), nodes).name for i in range(60)]
    assert picks == [pick_node(pod(f"p-{i}"), Requests(100, 100), list(reversed(nodes))).name for i in range(60)]
    assert set(Counter(picks)) == {"a", "b", "c"}
    assert len(set(scores(pod("x"), Requests(100, 100), nodes).values())) == 1
