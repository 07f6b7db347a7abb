"""Resources on the simulated runtime, on a FakeClock: stress and the memory knob set a container's
use, above `limits.memory` it is OOMKilled (137) and restarted per policy, CPU is throttled at
`limits.cpu`, and a `stress` run by exec is enforced by the OOM killer."""

from __future__ import annotations

import asyncio

from control.clock import settle
from control.kubelet.behaviour import script_for
from control.kubelet.containers import Run
from control.kubelet.filesystem import Filesystem
from control.kubelet.loads import Loads, StressHandle
from control.kubelet.resources import BASE_MEMORY, command_stress
from control.userland.stress import parse_stress
from control.userland.shell import Shell, Streams
from control.kubelet.usage import NANO_PER_MILLICORE, PodView, UsageMeter, pod_summary
from tests.kubelet.test_pods import Node, manifest, run

MI = 2**20


def container(limits=None, **fields):
    return {"name": "app", "image": "polinux/stress", **fields,
            **({"resources": {"limits": limits, "requests": limits}} if limits else {})}


def script(limits=None, annotations=None, **fields):
    c = container(limits, **fields)
    return script_for({"metadata": {"annotations": annotations or {}}, "spec": {"containers": [c]}}, c)


def test_stress_options_as_stress_reads_them():
    assert parse_stress(["--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"]).memory == 250 * MI
    assert parse_stress(["--vm", "2", "--vm-bytes=1g"]).memory == 2 * 2**30
    assert parse_stress(["--vm", "1"]).memory == 256 * MI, "stress's default"
    assert parse_stress(["--cpu", "2", "--timeout", "30s"]) == parse_stress(["-c", "2", "-t", "30"])
    assert parse_stress(["-cpus", "2"]).cpu == 2000
    assert command_stress({"image": "busybox", "command": ["sh", "-c", "stress --vm-bytes 200M; sleep 1"]}).memory \
        == 200 * MI
    assert command_stress({"image": "vish/stress", "args": ["-cpus", "2"]}).cpu == 2000
    assert command_stress({"image": "nginx", "command": ["nginx"]}).memory == 0


def test_memory_over_the_limit_is_oom_killed_under_it_is_not():
    fits = script({"memory": "200Mi"}, command=["stress"], args=["--vm", "1", "--vm-bytes", "150M", "--vm-hang", "1"])
    assert not fits.exits and fits.memory == 150 * MI and fits.memory_limit == 200 * MI
    over = script({"memory": "100Mi"}, command=["stress"], args=["--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"])
    assert (over.exit_after, over.exit_code, over.oom) == (1.0, 137, True)
    knob = script({"memory": "64Mi"}, {"kubekitchen.dev/memory": "100Mi"})
    assert knob.oom and knob.exit_code == 137
    assert not script({"memory": "64Mi"}, {"kubekitchen.dev/memory": "100Mi", "kubekitchen.dev/crash-after": "5"}).oom
    assert not script(None, {"kubekitchen.dev/memory": "5Gi"}).exits, "without a limit nothing is killed"
    assert Run(0, "x", 0.0, 1.0, 137, oom_killed=True).reason == "OOMKilled"


def test_an_oom_pod_shows_oom_killed_then_crash_loops_and_restarts():
    node = Node()

    async def scenario():
        pod = manifest()
        pod["spec"]["containers"] = [container({"memory": "100Mi"}, command=["stress"],
                                               args=["--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"])]
        node.submit(pod)
        await node.reconcile()
        assert "running" in node.state()
        await node.clock.advance(1.0)
        await node.reconcile()
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        assert (status["lastState"]["terminated"]["reason"], status["lastState"]["terminated"]["exitCode"]) == \
            ("OOMKilled", 137)
        assert node.pod()["status"]["qosClass"] == "Burstable", "a memory limit alone is not Guaranteed"
        await node.clock.advance(2.0)
        await node.reconcile()
        assert node.pod()["status"]["containerStatuses"][0]["restartCount"] == 1

    run(scenario)


def test_restart_policy_never_leaves_an_oom_killed_pod_failed():
    node = Node()

    async def scenario():
        pod = manifest(restartPolicy="Never")
        pod["spec"]["containers"] = [container({"memory": "64Mi"}, args=["--vm", "1", "--vm-bytes", "128M"])]
        node.submit(pod)
        await node.reconcile()
        await node.clock.advance(1.0)
        await node.reconcile()
        assert node.pod()["status"]["phase"] == "Failed"
        assert node.state()["terminated"]["reason"] == "OOMKilled"

    run(scenario)


def test_cpu_is_throttled_at_the_limit_and_memory_use_shows_in_the_summary():
    node = Node()

    async def scenario():
        pod = manifest()
        pod["spec"]["containers"] = [container({"cpu": "1", "memory": "512Mi"}, command=["stress"],
                                               args=["--cpu", "2", "--vm", "1", "--vm-bytes", "100M"])]
        node.submit(pod)
        await node.reconcile()
        found = node.worker.current("default", "web")
        live, record, containers = found
        meter = UsageMeter(10.0)
        await node.clock.advance(10)
        summary = pod_summary(meter, PodView(live, record.started_at, containers,
                                             {"app": script_for(live, live["spec"]["containers"][0])}), node.clock.now())
        entry = summary["containers"][0]
        assert entry["cpu"]["usageNanoCores"] == 1000 * NANO_PER_MILLICORE, "2 cores of stress throttled at 1"
        assert entry["memory"]["workingSetBytes"] == BASE_MEMORY + 100 * MI

    run(scenario)


def test_stress_run_by_exec_is_killed_by_the_oom_killer_when_over_the_limit():
    node = Node()

    async def scenario():
        pod = manifest()
        pod["spec"]["containers"] = [{"name": "app", "image": "nginx:1.27",
                                      "resources": {"limits": {"memory": "128Mi"}}}]
        node.submit(pod)
        await node.reconcile()
        live, record, containers = node.worker.current("default", "web")
        run_id = containers[0].current.container_id
        loads = node.worker.runtime.loads
        poked = []
        loads.poke = poked.append
        shell = Shell(Filesystem.for_container(pod_name="web", namespace="default", pod_ip="10.0.0.1"),
                      clock=node.clock, hostname="web")
        shell.resources = StressHandle(loads, run_id, "default/web", script_for(live, live["spec"]["containers"][0]))
        out, err = bytearray(), bytearray()
        # Within the limit: it holds its use for its timeout, then lets go.
        task = asyncio.ensure_future(shell.run_argv(["sh", "-c", "stress --vm 1 --vm-bytes 64M -t 5"],
                                                    Streams(out.extend, err.extend)))
        await settle()
        assert loads.of(run_id).memory == 64 * MI and poked == ["default/web"]
        await node.reconcile()
        assert "running" in node.state(), "within its limit it runs on"
        await node.clock.advance(5)
        assert await task == 0 and loads.of(run_id).memory == 0
        assert "successful run completed in 5s" in out.decode()
        # Over the limit: the exec ends with 137 and the container is OOMKilled.
        code = await shell.run_argv(["sh", "-c", "stress --vm 1 --vm-bytes 200M"], Streams(out.extend, err.extend))
        assert code == 137 and "got signal 9" in err.decode()
        await node.reconcile()
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["lastState"]["terminated"]["reason"] == "OOMKilled"
        assert status["lastState"]["terminated"]["exitCode"] == 137
        assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        assert loads.of(run_id).memory == 0, "the killed run's load is gone"

    run(scenario)


def test_loads_are_per_run_and_released():
    loads = Loads()
    first = loads.hold("run-1", "ns/p", parse_stress(["--vm-bytes", "10M"]))
    loads.hold("run-1", "ns/p", parse_stress(["--cpu", "1"]))
    assert (loads.of("run-1").memory, loads.of("run-1").cpu) == (10 * MI, 1000)
    loads.release("run-1", "ns/p", first)
    assert loads.of("run-1").memory == 0 and loads.of("run-2").cpu == 0
