"""Termination messages through the pod worker: the terminationMessagePath file as the command
left it, and FallbackToLogsOnError."""

from __future__ import annotations

from tests.kubelet.test_pods import Node, manifest, run
from tests.kubelet.test_probes import run_until


def test_the_termination_message_file_becomes_the_message():
    node = Node()
    writer = {"name": "msg", "image": "busybox", "command": ["/bin/sh"],
              "args": ["-c", "sleep 10 && echo Sleep expired > /dev/termination-log"]}

    async def scenario():
        node.submit(manifest(containers=[writer], restartPolicy="Never"))
        await node.reconcile()
        await run_until(node, 11)
        terminated = node.pod()["status"]["containerStatuses"][0]["state"]["terminated"]
        assert terminated["message"] == "Sleep expired\n" and terminated["reason"] == "Completed"

    run(scenario)

    node = Node()
    crasher = {"name": "crash", "image": "busybox", "command": ["sh", "-c", "echo oops; sleep 2; exit 1"],
               "terminationMessagePolicy": "FallbackToLogsOnError"}

    async def fallback():
        node.submit(manifest(containers=[crasher], restartPolicy="Never"))
        await node.reconcile()
        await run_until(node, 3)
        terminated = node.pod()["status"]["containerStatuses"][0]["state"]["terminated"]
        assert terminated["reason"] == "Error" and "oops" in terminated["message"]

    run(fallback)
