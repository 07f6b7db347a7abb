"""Draining a node (dashboard.drain): cordon, evict all but DaemonSet and mirror pods through the
eviction subresource, retry the ones a budget blocks with a back-off, wait for them to leave, and
stop at the timeout. A fake client holds the node's pods and answers evictions; a fake clock moves
only when the test says."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Awaitable, Callable

import pytest
from django.utils import translation

from control import errors
from control.clock import FakeClock
from dashboard.drain import Drains, Progress, drain, stays


def sync(test: Callable[[], Awaitable[None]]) -> Callable[[], None]:
    """An async test run on a loop of its own."""
    @functools.wraps(test)
    def run_it() -> None:
        asyncio.run(test())
    return run_it


def pod(name: str, *, owner: str = "", mirror: bool = False, namespace: str = "default") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "x", "controller": True}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    return {"metadata": meta, "spec": {"nodeName": "node-1"}}


def budget_refusal(budget: str) -> errors.TooManyRequests:
    return errors.TooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", details={
        "causes": [{"reason": "DisruptionBudget",
                    "message": f"The disruption budget {budget} needs 3 healthy pods and has 3 currently"}]})


class FakeHub:
    """The node's pods; an eviction removes its pod once `linger` more lists have seen it."""

    def __init__(self, pods: list[dict[str, Any]], *, linger: int = 0):
        self.pods = {p["metadata"]["name"]: p for p in pods}
        self.calls: list[tuple[str, str]] = []
        self.refuse: dict[str, list[errors.ApiError]] = {}  # pod -> errors to answer, in turn
        self.leaving: dict[str, int] = {}
        self.linger = linger

    async def patch(self, resource: Any, name: str, patch: Any, namespace: str | None = None) -> Any:
        self.calls.append(("PATCH", f"{resource.plural}/{name} {patch}"))
        return {}

    async def list(self, resource: Any, namespace: str | None = None, *, field_selector: str = "") -> Any:
        assert field_selector == "spec.nodeName=node-1"
        self.calls.append(("LIST", resource.plural))
        for name in list(self.leaving):
            self.leaving[name] -= 1
            if self.leaving[name] < 0:
                del self.leaving[name], self.pods[name]
        return {"items": list(self.pods.values())}

    async def request(self, method: str, path: str, *, body: Any = None) -> Any:
        name = path.split("/")[-2]
        self.calls.append((method, path))
        assert body == {"apiVersion": "policy/v1", "kind": "Eviction",
                        "metadata": {"name": name, "namespace": "default"}}
        if self.refuse.get(name):
            refusal = self.refuse[name].pop(0)
            if isinstance(refusal, errors.NotFound):
                self.pods.pop(name)  # it went on its own meanwhile
            raise refusal
        if name not in self.pods:
            raise errors.NotFound(f'pods "{name}" not found')
        self.leaving[name] = self.linger
        return {"kind": "Status", "status": "Success", "code": 201}


async def run(hub: FakeHub, clock: FakeClock, progress: Progress, *, timeout: float = 120.0, step: float = 0.5) -> None:
    task = asyncio.create_task(drain(hub, progress, clock=clock, timeout=timeout))
    while not task.done():
        await asyncio.sleep(0)
        if clock.pending():
            await clock.advance(step)
    await task


def evictions(hub: FakeHub) -> list[str]:
    return [path.split("/")[-2] for method, path in hub.calls if method == "POST"]


def test_daemonset_and_mirror_pods_stay_everything_else_is_evicted():
    assert stays(pod("a", owner="DaemonSet")) and stays(pod("m", mirror=True))
    assert not stays(pod("b", owner="ReplicaSet")) and not stays(pod("bare"))


@sync
async def test_it_cordons_first_then_evicts_every_pod_but_daemonset_and_mirror_pods():
    hub = FakeHub([pod("web-1", owner="ReplicaSet"), pod("bread-x", owner="DaemonSet"), pod("static", mirror=True),
                   pod("bare")])
    progress = Progress("node-1")
    await run(hub, FakeClock(), progress)

    assert hub.calls[0] == ("PATCH", "nodes/node-1 {'spec': {'unschedulable': True}}")
    assert hub.calls[1] == ("LIST", "pods")
    assert evictions(hub) == ["web-1", "bare"]
    assert ("POST", "/api/v1/namespaces/default/pods/web-1/eviction") in hub.calls
    assert progress.state == "done" and progress.evicted == ["default/web-1", "default/bare"]
    assert progress.left == ["default/bread-x", "default/static"]
    with translation.override("en"):
        assert progress.line() == "node/node-1 drained: 2 pods evicted · 2 DaemonSet pods left in place"


@sync
async def test_a_blocked_eviction_names_its_budget_and_is_retried_with_a_growing_delay():
    hub = FakeHub([pod("tables-0", owner="StatefulSet"), pod("web-1", owner="ReplicaSet")])
    hub.refuse["tables-0"] = [budget_refusal("tables-pdb"), budget_refusal("tables-pdb"), budget_refusal("tables-pdb")]
    clock, progress = FakeClock(), Progress("node-1")
    task = asyncio.create_task(drain(hub, progress, clock=clock))
    for _ in range(5):
        await asyncio.sleep(0)
    assert progress.state == "evicting" and progress.blocked == {"default/tables-0": "tables-pdb"}
    assert progress.evicted == ["default/web-1"], "a blocked pod holds up no other"
    with translation.override("en"):
        assert progress.line() == "Draining node-1: 1 of 2 evicted · tables-0 blocked by budget tables-pdb, retrying"
    moments = []
    while not task.done():
        await asyncio.sleep(0)
        if clock.pending():
            await clock.advance(0.5)
            if evictions(hub).count("tables-0") > len(moments) + 1:
                moments.append(clock.monotonic())
    await task
    start = 1_800_000_000.0
    assert [round(m - start, 1) for m in moments] == [1.0, 3.0, 7.0], "1 s, then 2 s, then 4 s later"
    assert evictions(hub) == ["tables-0", "web-1", "tables-0", "tables-0", "tables-0"]
    assert progress.state == "done" and progress.blocked == {}


@sync
async def test_it_waits_until_the_evicted_pods_have_left_the_node():
    hub = FakeHub([pod("web-1", owner="ReplicaSet")], linger=2)
    progress = Progress("node-1")
    task = asyncio.create_task(drain(hub, progress, clock=(clock := FakeClock())))
    for _ in range(6):
        await asyncio.sleep(0)
    assert progress.state == "waiting" and progress.remaining == 1
    with translation.override("en"):
        assert progress.line() == "Draining node-1: 1 of 1 evicted, waiting for 1 to leave"
    while not task.done():
        await asyncio.sleep(0)
        if clock.pending():
            await clock.advance(1.0)
    assert progress.state == "done" and progress.remaining == 0


@sync
async def test_a_budget_that_never_allows_it_stops_the_drain_at_the_timeout():
    hub = FakeHub([pod("tables-0", owner="StatefulSet")])
    hub.refuse["tables-0"] = [budget_refusal("tables-pdb")] * 100
    progress = Progress("node-1")
    await run(hub, FakeClock(), progress, timeout=30.0)
    assert progress.state == "timed-out" and not progress.ok
    assert len(evictions(hub)) == 8  # at 0, 1, 3, 7, 12, 17, 22, 27 s: the next one would be past 30 s
    with translation.override("en"):
        assert progress.line() == ("Draining node-1 gave up after 30 s: 0 of 1 evicted · "
                                   "still blocked by budget tables-pdb")
    with translation.override("ko"):
        assert "tables-pdb" in progress.line() and "중단 예산" in progress.line()


@sync
async def test_another_refusal_is_kept_on_its_pod_and_a_gone_pod_counts_as_evicted():
    hub = FakeHub([pod("a"), pod("b")])
    hub.refuse["a"] = [errors.Forbidden('pods "a" is forbidden: no')]
    hub.refuse["b"] = [errors.NotFound('pods "b" not found')]
    progress = Progress("node-1")
    await run(hub, FakeClock(), progress)
    assert progress.failed == {"default/a": 'pods "a" is forbidden: no'}
    assert progress.evicted == ["default/b"] and progress.state == "done" and not progress.ok


@sync
async def test_a_refused_cordon_fails_the_drain_with_the_hubs_message():
    hub = FakeHub([pod("a")])

    async def refuse(*args: Any, **kwargs: Any) -> Any:
        raise errors.NotFound('nodes "node-1" not found')

    hub.patch = refuse  # type: ignore[method-assign]
    progress = Progress("node-1")
    await run(hub, FakeClock(), progress)
    assert progress.state == "failed" and progress.error == 'nodes "node-1" not found'
    assert evictions(hub) == []


@sync
async def test_one_drain_per_node_at_a_time():
    hub = FakeHub([pod("tables-0", owner="StatefulSet")])
    hub.refuse["tables-0"] = [budget_refusal("tables-pdb")] * 100
    clock = FakeClock()
    drains = Drains(clock=clock, timeout=10.0)
    first = drains.start(hub, "node-1")
    await asyncio.sleep(0)
    assert drains.start(hub, "node-1") is first and drains.get("node-1") is first
    while not first.finished:
        await asyncio.sleep(0)
        if clock.pending():
            await clock.advance(1.0)
    assert drains.start(hub, "node-1") is not first, "a finished drain can be started again"
    for task in list(drains.tasks):
        task.cancel()
    await asyncio.sleep(0)


@sync
async def test_a_drains_progress_is_its_users_alone():
    from dashboard import hub as dashboard_hub

    hub = FakeHub([pod("tables-0", owner="StatefulSet")])
    hub.refuse["tables-0"] = [budget_refusal("tables-pdb")] * 100
    drains = Drains(clock=FakeClock(), timeout=10.0)
    with dashboard_hub.acting_as(dashboard_hub.Identity("alice", "tok-alice")):
        mine = drains.start(hub, "node-1")
        assert drains.get("node-1") is mine
    with dashboard_hub.acting_as(dashboard_hub.Identity("bob", "tok-bob")):
        assert drains.get("node-1") is None, "bob cannot read alice's drain"
        assert drains.start(hub, "node-1") is not mine
    assert drains.get("node-1") is None and drains.get("node-1", owner="alice") is mine
    for task in list(drains.tasks):
        task.cancel()
    await asyncio.sleep(0)


def test_every_line_has_its_restaurant_wording_in_english_and_korean():
    cases = [
        (Progress("node-1"), "Clearing stove node-1: closing it to new dishes…", "화구 node-1 비우는 중"),
        (Progress("node-1", state="evicting", pods=["default/tables-0", "default/web-1"], evicted=["default/web-1"],
                  blocked={"default/tables-0": "tables-pdb"}),
         "Clearing stove node-1: 1 of 2 dishes moved off · tables-0 held back by staffing rule tables-pdb, trying again",
         "최소 인원 규칙 tables-pdb"),
        (Progress("node-1", state="waiting", pods=["default/a"], evicted=["default/a"], remaining=1),
         "Clearing stove node-1: 1 of 1 dishes moved off, waiting for 1 to leave", "1개가 떠나기를 기다리는 중"),
        (Progress("node-1", state="done", pods=["default/a"], evicted=["default/a"], left=["default/bread-x"]),
         "Stove node-1 cleared: 1 dish moved off · 1 bread basket left on the stove", "빵 바구니 1개"),
        (Progress("node-1", state="timed-out", pods=["default/a"], blocked={"default/a": "pdb"}, timeout=30),
         "Clearing stove node-1 gave up after 30 s: 0 of 1 dishes moved off · still held back by staffing rule pdb",
         "30초 후 중단"),
        (Progress("node-1", state="failed", error='nodes "node-1" not found'),
         'Clearing stove node-1 failed: nodes "node-1" not found', "화구 node-1 비우기 실패"),
    ]
    for progress, english, korean in cases:
        with translation.override("en"):
            assert progress.line(kitchen=True) == english
            assert "stove" not in progress.line().lower(), "the Kubernetes line keeps kubectl's words"
        with translation.override("ko"):
            assert korean in progress.line(kitchen=True)
    plural = Progress("node-1", state="done", pods=["default/a", "default/b"], evicted=["default/a", "default/b"],
                      left=["default/x", "default/y"])
    with translation.override("en"):
        assert plural.line(kitchen=True) == "Stove node-1 cleared: 2 dishes moved off · 2 bread baskets left on the stove"


@pytest.fixture(autouse=True)
def _english():
    with translation.override("en"):
        yield


# --- the views: the button's answer polls the drain's line until it ends ---------------------------

def test_the_drain_line_polls_while_it_runs_and_stops_when_it_ends(monkeypatch):
    from django.test import Client

    from dashboard import views

    drains = Drains()
    monkeypatch.setattr(views, "DRAINS", drains)
    client = Client()
    assert client.get("/drain/node-1/").status_code == 404
    drains.progress[("", "node-1")] = Progress("node-1", state="evicting", pods=["default/tables-0"],
                                         blocked={"default/tables-0": "tables-pdb"})
    running = client.get("/drain/node-1/").content.decode()
    assert 'hx-get="/drain/node-1/"' in running and 'hx-trigger="every 1s"' in running
    assert "tables-0 blocked by budget tables-pdb, retrying" in running
    drains.progress[("", "node-1")].state = "done"
    drains.progress[("", "node-1")].evicted, drains.progress[("", "node-1")].blocked = ["default/tables-0"], {}
    assert '<span class="words-kitchen" title="' in running, "both wordings: the page's mode shows one"
    assert "tables-0 held back by staffing rule tables-pdb, trying again" in running
    done = client.get("/drain/node-1/", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "hx-get" not in done and "node/node-1 드레인 완료: 파드 1개 축출" in done
    assert "화구 node-1 비움: 요리 1개 옮김" in done
