"""Probes on the fake clock through the pod worker: the kubernetes.io liveness-exec example
restarts its container after ~35 s (the file its command removes at 30 s), readiness drives the
Ready condition, a startup probe gates the others, httpGet/tcpSocket check the simulated server."""

from __future__ import annotations

from control.kinds.meta import parse_time
from control.kubelet.probes import listening_ports, network_check
from tests.kubelet.test_pods import Node, manifest, run

LIVENESS = {"name": "liveness", "image": "registry.k8s.io/busybox",
            "args": ["/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"],
            "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 5,
                              "periodSeconds": 5}}


def said(node, reason):
    """The messages of the Events told with this reason, in order."""
    return [message for _, _, why, message in node.events.told if why == reason]


async def run_until(node, seconds, step=1.0):
    for _ in range(int(seconds / step)):
        node.clock.t += step
        await node.reconcile()





def test_the_liveness_exec_example_restarts_the_container_after_about_35_seconds():
    node = Node()

    async def scenario():
        node.submit(manifest(containers=[LIVENESS]))
        await node.reconcile()
        await run_until(node, 34)
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["restartCount"] == 0 and "running" in status["state"]
        unhealthy = said(node, "Unhealthy")
        assert unhealthy[:1] == [
            "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory"]
        await run_until(node, 10)
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["lastState"]["terminated"]["exitCode"] == 137
        assert status["lastState"]["terminated"]["reason"] == "Error"
        terminated = status["lastState"]["terminated"]  # probes failed at 30, 35 and 40 s: killed at 40 s
        assert parse_time(terminated["finishedAt"]) - parse_time(terminated["startedAt"]) == 40
        assert len(said(node, "Unhealthy")) == 3
        killing = said(node, "Killing")
        assert killing == ["Container liveness failed liveness probe, will be restarted"]
        await run_until(node, 5)  # the back-off (2 s here) is over: a fresh run, a fresh file
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["restartCount"] == 1 and "running" in status["state"]

    run(scenario)


def test_readiness_drives_the_ready_condition_and_a_startup_probe_gates_it():
    node = Node()
    app = {"name": "app", "image": "busybox", "command": ["sh", "-c", "sleep 8; touch /tmp/ready; sleep 3600"],
           "readinessProbe": {"exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 2},
           "startupProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1, "failureThreshold": 100}}

    async def scenario():
        node.submit(manifest(containers=[app]))
        await node.reconcile()
        await run_until(node, 12)
        status = node.pod()["status"]
        assert status["containerStatuses"][0]["started"] is False  # busybox listens on no port
        assert status["containerStatuses"][0]["ready"] is False
        assert said(node, "Unhealthy")[0].startswith(
            "Startup probe failed: dial tcp 10.244.1.")
        assert not [m for m in said(node, "Unhealthy") if m.startswith("Readiness")]  # gated by startup

    run(scenario)

    node = Node()
    app = dict(app, image="nginx", ports=[{"containerPort": 8080}])

    async def ready_scenario():
        node.submit(manifest(containers=[app]))
        await node.reconcile()
        await run_until(node, 4)
        status = node.pod()["status"]
        assert status["containerStatuses"][0]["started"] is True
        assert status["containerStatuses"][0]["ready"] is False
        assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "False"
        await run_until(node, 8)
        status = node.pod()["status"]
        assert status["containerStatuses"][0]["ready"] is True
        assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "True"

    run(ready_scenario)


def test_http_and_tcp_probes_against_the_simulated_server():
    nginx = {"name": "web", "image": "nginx:1.25", "ports": [{"name": "http", "containerPort": 8080}]}
    assert listening_ports(nginx) == {80, 8080}
    assert listening_ports({"image": "busybox", "ports": [{"containerPort": 80}]}) == set()
    assert network_check(nginx, {"httpGet": {"path": "/healthz", "port": "http"}}, "10.0.0.5", 0, 1) == (True, "")
    assert network_check(nginx, {"httpGet": {"path": "/healthz", "port": 9000}}, "10.0.0.5", 0, 1) == (
        False, 'Get "http://10.0.0.5:9000/healthz": dial tcp 10.0.0.5:9000: connect: connection refused')
    assert network_check(nginx, {"tcpSocket": {"port": 81}}, "10.0.0.5", 0, 1) == (
        False, "dial tcp 10.0.0.5:81: connect: connection refused")
    assert network_check(nginx, {"grpc": {"port": 80}}, "10.0.0.5", 0, 1) == (True, "")
    agnhost = {"image": "registry.k8s.io/e2e-test-images/agnhost:2.40", "args": ["liveness"]}
    probe = {"httpGet": {"path": "/healthz", "port": 8080}}
    assert network_check(agnhost, probe, "10.0.0.5", 0, 9)[0] is True
    assert network_check(agnhost, probe, "10.0.0.5", 0, 11) == (False, "HTTP probe failed with statuscode: 500")


def test_a_failed_liveness_probe_under_restart_policy_never_fails_the_pod():
    node = Node()
    probe = {"tcpSocket": {"port": 81}, "periodSeconds": 1, "failureThreshold": 2}
    container = {"name": "app", "image": "nginx", "livenessProbe": probe}

    async def scenario():
        node.submit(manifest(containers=[container], restartPolicy="Never"))
        await node.reconcile()
        await run_until(node, 5)
        status = node.pod()["status"]
        assert status["phase"] == "Failed"
        assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137

    run(scenario)


def test_listening_ports_come_from_the_image_catalogue_when_the_default_command_runs():
    assert listening_ports({"image": "hashicorp/http-echo:1.0"}) == {5678}
    assert listening_ports({"image": "gcr.io/google-samples/hello-app:2.0"}) == {8080}
    assert listening_ports({"image": "python:3.12"}) == set(), "a tool image serves nothing"
    assert listening_ports({"image": "registry.k8s.io/e2e-test-images/agnhost:2.53", "args": ["pause"]}) == set()
    assert listening_ports({"image": "nginx:1.27", "command": ["nginx"], "ports": [{"containerPort": 81}]}) == {80, 81}
