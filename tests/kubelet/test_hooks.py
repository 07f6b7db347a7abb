"""postStart and preStop exec hooks through the pod worker: files written, FailedPostStartHook
kills the run, FailedPreStopHook is told."""

from __future__ import annotations

from tests.kubelet.test_pods import Node, manifest, run
from tests.kubelet.test_probes import run_until, said


def test_post_start_hooks_write_files_and_a_failing_one_kills_the_run():
    node = Node()
    app = {"name": "app", "image": "nginx", "lifecycle": {"postStart": {"exec": {"command": [
        "/bin/sh", "-c", "echo Hello from the postStart handler > /usr/share/message"]}}}}

    async def scenario():
        node.submit(manifest(containers=[app]))
        await node.reconcile()
        await run_until(node, 1)
        c = node.worker.records["default/web"].containers[0]
        fs = node.worker.runtime.files(node.pod(), "app", c.current.container_id, "")
        assert fs.read("/usr/share/message") == b"Hello from the postStart handler\n"
        assert not said(node, "FailedPostStartHook")

    run(scenario)

    node = Node()
    bad = {"name": "app", "image": "nginx", "lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", "exit 1"]}}}}

    async def failing():
        node.submit(manifest(containers=[bad]))
        await node.reconcile()
        await run_until(node, 1)
        message = said(node, "FailedPostStartHook")[0]
        assert message.startswith("Exec lifecycle hook ([sh -c exit 1]) for Container \"app\" in Pod \"web_default(")
        assert "failed - error: command 'sh -c exit 1' exited with 1: , message: \"\"" in message
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["lastState"]["terminated"]["exitCode"] == 137 or "terminated" in status["state"]

    run(failing)


def test_a_failing_pre_stop_hook_is_told_and_the_pod_still_goes():
    from control.kinds.meta import format_time

    node = Node()
    app = {"name": "app", "image": "nginx", "lifecycle": {"preStop": {"exec": {"command": ["cat", "/nope"]}}}}

    async def scenario():
        node.submit(manifest(containers=[app]))
        await node.reconcile()
        await run_until(node, 1)
        pod = node.pod()
        pod["metadata"]["deletionTimestamp"] = format_time(node.clock.now())
        pod["metadata"]["deletionGracePeriodSeconds"] = 30
        node.submit(pod)
        await node.reconcile()
        message = said(node, "FailedPreStopHook")[0]
        assert "command 'cat /nope' exited with 1: cat: can't open '/nope': No such file or directory" in message
        await run_until(node, 2)
        assert node.pod() is None

    run(scenario)
