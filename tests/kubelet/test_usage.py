"""The simulated CPU model and the Summary API answer, on fake time."""

from __future__ import annotations

from control.clock import FakeClock
from control.kubelet.behaviour import Script, script_for
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import advance, new_container
from control.kubelet.usage import (BASE_MEMORY, NANO_PER_MILLICORE, SYSTEM_MEMORY, SYSTEM_MILLICORES, PodView,
                                   UsageMeter, container_millicores, summary)

T0 = 1_800_000_000.0
BACKOFF = BackoffPolicy(10, 300, 600)
M = NANO_PER_MILLICORE


def running(name="app", uid="uid-1", at=T0):
    c, _ = advance(new_container(name, "nginx", uid, T0, 0), Script(), "Always", at, BACKOFF)
    return c


def pod(annotations=None, uid="uid-1", containers=("app",)):
    return {"metadata": {"name": "web", "namespace": "default", "uid": uid, "annotations": annotations or {}},
            "spec": {"containers": [{"name": n, "image": "nginx"} for n in containers]}}


def view(p, containers):
    scripts = {c["name"]: script_for(p, c) for c in p["spec"]["containers"]}
    return PodView(p, T0, tuple(containers), scripts)


def test_knobs_are_read_from_annotations_container_specific_first():
    p = pod({"kubekitchen.dev/cpu": "300m", "kubekitchen.dev/cpu.side": "0.05", "kubekitchen.dev/cpu-per-request": "2m"},
            containers=("app", "side"))
    app, side = (script_for(p, c) for c in p["spec"]["containers"])
    assert (app.cpu, side.cpu, app.cpu_per_request) == (300.0, 50.0, 2.0)
    assert script_for(pod(), pod()["spec"]["containers"][0]).cpu_per_request == 10.0
    bad = pod({"kubekitchen.dev/cpu": "lots", "kubekitchen.dev/cpu-per-request": "-1"})
    assert (script_for(bad, bad["spec"]["containers"][0]).cpu, script_for(bad, bad["spec"]["containers"][0]).cpu_per_request) == (0.0, 10.0)
    assert container_millicores(Script(cpu=300), rate=5) == 1 + 300 + 10 * 5


def test_the_rate_follows_requests_over_the_trailing_window():
    clock, meter = FakeClock(T0), UsageMeter(window=10)
    for i in range(50):  # 50 requests over 5 s
        meter.record_request("uid-1", clock.now() + i * 0.1)
    assert meter.rate("uid-1", T0 + 5) == 5.0
    assert abs(meter.rate("uid-1", T0 + 12) - 2.9) < 1e-9, "requests older than 10 s have left the window"
    assert meter.rate("uid-1", T0 + 20) == 0.0 and meter.rate("other", T0) == 0.0
    assert meter.effective_requests("uid-1", T0 + 20) == 50


def test_container_usage_idle_knob_and_requests_and_a_cumulative_that_only_grows():
    clock, meter = FakeClock(T0), UsageMeter(window=10)
    c = running()
    idle = meter.container_usage("uid-1", c, Script(), T0 + 10)
    assert idle.nano_cores == 1 * M and idle.core_nanoseconds == 10 * M, "1m for 10 s"
    assert idle.working_set == BASE_MEMORY
    for i in range(100):
        meter.record_request("uid-1", T0 + 10.05 + i * 0.1)
    busy = meter.container_usage("uid-1", c, Script(cpu=100), T0 + 20)
    assert busy.nano_cores == (1 + 100 + 10 * 10) * M and busy.working_set == BASE_MEMORY + 2**20
    seen = [busy.core_nanoseconds]
    for t in (25, 30, 31, 60):
        seen.append(meter.container_usage("uid-1", c, Script(cpu=0), T0 + t).core_nanoseconds)
    assert seen == sorted(seen), "cumulative CPU never decreases, even when the knob is lowered"
    # 1m x 60 s idle + 100m knob from 20 s to 25 s + 100 requests x 10 m·s each
    assert abs(seen[-1] - (60 * M + 100 * 5 * M + 100 * 10 * M)) < M / 10


def test_a_restarted_container_starts_its_cumulative_again():
    meter = UsageMeter(window=3)
    first = running()
    assert meter.container_usage("uid-1", first, Script(), T0 + 5).core_nanoseconds == 5 * M
    script = Script(exit_after=6, exit_code=1)
    again, _ = advance(first, script, "Always", T0 + 19, BackoffPolicy(1, 1, 600))
    assert again.current.number == 2 and again.current.started_at == T0 + 14
    assert meter.container_usage("uid-1", again, Script(), T0 + 19).core_nanoseconds == 5 * M


def test_summary_lists_running_containers_and_adds_the_system_share():
    meter = UsageMeter(window=10)
    busy, quiet = pod({"kubekitchen.dev/cpu": "200m"}), pod(uid="uid-2")
    quiet["metadata"]["name"] = "quiet"
    creating = new_container("app", "nginx", "uid-2", T0, 100)  # still ContainerCreating
    for i in range(20):
        meter.record_request("uid-1", T0 + 5 + i * 0.1)
    answer = summary(meter, node="node-1", node_started_at=T0, now=T0 + 10,
                     pods=[view(busy, [running()]), view(quiet, [creating])])
    assert [p["podRef"] for p in answer["pods"]] == [{"name": "web", "namespace": "default", "uid": "uid-1"}]
    entry = answer["pods"][0]
    assert entry["cpu"]["usageNanoCores"] == (1 + 200 + 10 * 2) * M
    assert entry["containers"][0]["name"] == "app" and entry["containers"][0]["memory"]["workingSetBytes"] > BASE_MEMORY
    node = answer["node"]
    assert node["nodeName"] == "node-1" and node["cpu"]["usageNanoCores"] == int(SYSTEM_MILLICORES * M) + entry["cpu"]["usageNanoCores"]
    assert node["memory"]["workingSetBytes"] == SYSTEM_MEMORY + entry["memory"]["workingSetBytes"]
    assert set(node["cpu"]) == {"time", "usageNanoCores", "usageCoreNanoSeconds"}
    assert node["startTime"].endswith("Z") and entry["startTime"].endswith("Z")
    summary(meter, node="node-1", node_started_at=T0, now=T0 + 11, pods=[])
    assert meter.rate("uid-1", T0 + 11) == 0.0, "a pod that is gone is forgotten"
