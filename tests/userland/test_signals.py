"""`kill` in the simulated container, on a FakeClock: `kill 1` from exec ends the container's main
process with 128 + the signal and the kubelet restarts it as the restartPolicy says; other PIDs and
bad signals answer as busybox does."""

from __future__ import annotations

from control.kubelet.behaviour import script_for
from control.kubelet.filesystem import Filesystem
from control.kubelet.loads import Loads, StressHandle
from control.userland.shell import Shell, Streams
from control.userland.signals import parse_signal
from tests.kubelet.test_pods import Node, manifest, run


def shell_in(node: Node, handle: bool = True) -> tuple[Shell, str]:
    live, _, containers = node.worker.current("default", "web")
    run_id = containers[0].current.container_id
    shell = Shell(Filesystem.for_container(pod_name="web", namespace="default", pod_ip="10.0.0.1"),
                  clock=node.clock, hostname="web")
    if handle:
        shell.resources = StressHandle(node.worker.runtime.loads, run_id, "default/web",
                                       script_for(live, live["spec"]["containers"][0]))
    return shell, run_id


def test_signal_names_and_numbers():
    assert [parse_signal(s) for s in ("9", "KILL", "sigkill", "TERM", "15", "INT")] == [9, 9, 9, 15, 15, 2]
    assert parse_signal("FOO") is None and parse_signal("0") is None and parse_signal("99") is None


def test_kill_1_ends_the_container_and_the_kubelet_restarts_it():
    node = Node()

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        shell, run_id = shell_in(node)
        poked = []
        node.worker.runtime.loads.poke = poked.append
        out, err = bytearray(), bytearray()
        assert await shell.run_argv(["kill", "1"], Streams(out.extend, err.extend)) == 0
        assert (out, err, poked) == (b"", b"", ["default/web"])
        await node.reconcile()
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["lastState"]["terminated"]["exitCode"] == 143, "SIGTERM: 128 + 15"
        assert status["lastState"]["terminated"]["reason"] == "Error"
        assert node.worker.runtime.loads.signalled == {}, "the signal is spent with its run"
        await node.reconcile()
        assert node.pod()["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 143

    run(scenario)


def test_kill_9_is_137():
    node = Node()

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        shell, _ = shell_in(node)
        assert await shell.run_argv(["sh", "-c", "kill -9 1"], Streams(lambda b: None, lambda b: None)) == 0
        await node.reconcile()
        assert node.pod()["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 137

    run(scenario)


def test_other_pids_bad_signals_and_no_container_are_busybox_errors():
    node = Node()

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        shell, _ = shell_in(node)
        outside, _ = shell_in(node, handle=False)
        for sh, argv, message in ((shell, ["kill", "42"], "sh: can't kill pid 42: No such process\n"),
                                  (shell, ["kill", "-FOO", "1"], "sh: kill: bad signal name 'FOO'\n"),
                                  (shell, ["kill", "x"], "sh: kill: invalid number 'x'\n"),
                                  (shell, ["kill"], "sh: kill: Usage: kill [-s SIG | -SIG] PID...\n"),
                                  (outside, ["kill", "1"], "sh: can't kill pid 1: No such process\n")):
            err = bytearray()
            assert await sh.run_argv(argv, Streams(lambda b: None, err.extend)) == 1, argv
            assert err.decode() == message
        await node.reconcile()
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["restartCount"] == 0 and "running" in status["state"], "nothing was killed"

    run(scenario)


def test_a_signal_for_a_run_that_is_gone_is_forgotten():
    loads = Loads()
    loads.signal("run-1", "ns/p", 143)
    loads.signal("run-1", "ns/p", 137)
    assert loads.signalled == {"run-1": 143}, "the first signal ends the process"
    loads.forget({"run-1"})
    assert loads.signalled == {}


def test_kill_1_in_the_containers_own_command_ends_it_like_an_exec_kill_1():
    node = Node()

    async def scenario():
        spec = {"containers": [{"name": "app", "image": "busybox", "command": ["sh", "-c", "sleep 5; kill 1"]}]}
        node.submit(manifest(**spec))
        await node.reconcile()
        assert node.pod()["status"]["containerStatuses"][0]["state"].get("running") is not None
        await node.clock.advance(6)
        await node.reconcile()
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["lastState"]["terminated"]["exitCode"] == 143, status
        assert status["lastState"]["terminated"]["reason"] == "Error"

    run(scenario)
