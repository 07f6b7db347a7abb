"""Init containers through the pod worker on the fake clock: they run in order before the app
containers (Init:0/2, Init:1/2, then Running, as kubectl's STATUS column shows), a failing one
crash-loops under Always and fails the pod under Never (Init:Error), a sidecar keeps running."""

from __future__ import annotations

from control.kinds.pods import pod_cells, pod_display_status
from control.kubelet.logs import LogRequest, render_log
from tests.kubelet.test_pods import Node, manifest, run

INITS = [{"name": "init-one", "image": "busybox", "command": ["sh", "-c", "sleep 2"]},
         {"name": "init-two", "image": "busybox", "command": ["sh", "-c", "echo two; sleep 3"]}]
APP = {"name": "app", "image": "nginx:1.25"}


async def tick(node, seconds, step=0.5):
    for _ in range(int(seconds / step)):
        node.clock.t += step
        await node.reconcile()


def test_init_containers_run_in_order_then_the_app_starts():
    node = Node()

    async def scenario():
        node.submit(manifest(initContainers=INITS, containers=[APP]))
        await node.reconcile()
        pod = node.pod()
        assert pod_display_status(pod) == "Init:0/2" and pod["status"]["phase"] == "Pending"
        assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
        conditions = {c["type"]: c for c in pod["status"]["conditions"]}
        assert conditions["Initialized"]["status"] == "False"
        assert conditions["Initialized"]["reason"] == "ContainersNotInitialized"
        assert conditions["Initialized"]["message"] == "containers with incomplete status: [init-one init-two]"
        await tick(node, 2.5)
        pod = node.pod()
        first, second = pod["status"]["initContainerStatuses"]
        assert first["state"]["terminated"]["reason"] == "Completed" and first["ready"] is True
        assert "running" in second["state"]
        assert pod_display_status(pod) == "Init:1/2"
        assert "running" not in pod["status"]["containerStatuses"][0]["state"]
        await tick(node, 3.5)
        pod = node.pod()
        assert pod["status"]["phase"] == "Running" and pod_display_status(pod) == "Running"
        app_started = pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
        finished = pod["status"]["initContainerStatuses"][1]["state"]["terminated"]["finishedAt"]
        assert app_started >= finished
        assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Initialized"] == "True"

    run(scenario)


def test_a_failing_init_container_crash_loops_and_the_app_never_starts():
    node = Node()
    failing = [{"name": "init", "image": "busybox", "command": ["sh", "-c", "sleep 1; exit 1"]}]

    async def scenario():
        node.submit(manifest(initContainers=failing, containers=[APP]))
        await node.reconcile()
        await tick(node, 1.5)
        pod = node.pod()
        assert pod_display_status(pod) == "Init:CrashLoopBackOff"
        assert pod["status"]["phase"] == "Pending"
        await tick(node, 10)
        pod = node.pod()
        assert pod["status"]["initContainerStatuses"][0]["restartCount"] >= 2
        assert pod_cells(pod, node.clock.now())[3] == pod["status"]["initContainerStatuses"][0]["restartCount"]
        assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}

    run(scenario)


def test_under_restart_policy_never_a_failed_init_container_fails_the_pod():
    node = Node()
    failing = [{"name": "init", "image": "busybox", "command": ["sh", "-c", "sleep 1; exit 3"]}]

    async def scenario():
        node.submit(manifest(initContainers=failing, containers=[APP], restartPolicy="Never"))
        await node.reconcile()
        await tick(node, 3)
        pod = node.pod()
        assert pod["status"]["phase"] == "Failed"
        assert pod_display_status(pod) == "Init:Error"
        assert pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 3

    run(scenario)


def test_a_sidecar_starts_and_keeps_running_beside_the_app():
    node = Node()
    sidecar = {"name": "proxy", "image": "nginx", "restartPolicy": "Always"}

    async def scenario():
        node.submit(manifest(initContainers=[sidecar], containers=[APP]))
        await node.reconcile()
        await tick(node, 2)
        pod = node.pod()
        assert pod["status"]["phase"] == "Running"
        assert "running" in pod["status"]["initContainerStatuses"][0]["state"]
        assert "running" in pod["status"]["containerStatuses"][0]["state"]
        assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "True"
        assert pod_cells(pod, node.clock.now())[1:3] == ["2/2", "Running"]

    run(scenario)


def test_the_logs_of_an_init_container_are_there():
    node = Node()

    async def scenario():
        node.submit(manifest(initContainers=INITS, containers=[APP]))
        await node.reconcile()
        await tick(node, 3)
        target = node.worker.log_target("default", "web", "init-two")
        assert target is not None
        text = render_log(target, LogRequest("default", "web", "init-two"), node.clock.now(), 2)
        assert text == "two\n", "what its command printed"

    run(scenario)



def test_a_restarted_kubelet_adopts_completed_init_containers():
    node = Node()

    async def scenario():
        node.submit(manifest(initContainers=INITS, containers=[APP]))
        await node.reconcile()
        await tick(node, 6)
        assert node.pod()["status"]["phase"] == "Running"
        node.worker.records.clear()  # the kubelet restarts: it knows only what the pod's status says
        await node.reconcile()
        pod = node.pod()
        assert pod["status"]["phase"] == "Running" and pod_display_status(pod) == "Running"
        assert [s["state"]["terminated"]["reason"] for s in pod["status"]["initContainerStatuses"]] == [
            "Completed", "Completed"]
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 0

    run(scenario)
