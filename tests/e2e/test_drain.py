"""Draining a node as a user does it, with the real kubectl against the whole cluster: `kubectl
drain` cordons the node and evicts its pods through the pods/eviction subresource, which refuses
(429) while a PodDisruptionBudget would be broken, so drain keeps retrying and gives up at its
timeout; with a budget that allows it, the pods are evicted, their Deployment replaces them on the
other node, and `kubectl uncordon` makes the node schedulable again. The Eviction bodies kubectl
sends are captured through a recording proxy and checked against the saved fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from control import config
from tests.conftest import Cluster, ready_cluster, wait_for
from tests.recording_proxy import RecordingProxy

pytestmark = pytest.mark.e2e

FIXTURE = Path(__file__).parent.parent / "api" / "fixtures" / "eviction" / "drain.json"
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


class Proxied:
    """kubectl pointed at the cluster through the recorder."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.recorder = RecordingProxy(cluster.port, cluster.auth)
        self.kubeconfig = cluster.dir / "kubeconfig-recorded"
        self.kubeconfig.write_text(cluster.kubeconfig_for(self.recorder.url))

    @property
    def evictions(self) -> list[tuple[str, bytes]]:
        """(content type, body) of each eviction kubectl POSTed."""
        return [(r.content_type, r.body) for r in self.recorder.requests
                if r.method == "POST" and r.path.endswith("/eviction")]

    def kubectl(self, *args: str, timeout: float = 90):
        import subprocess

        from tests.conftest import KUBECTL
        return subprocess.run([KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                               str(self.cluster.dir / "kube-cache"), *args], capture_output=True, text=True,
                              timeout=timeout)

    def close(self) -> None:
        self.recorder.close()


@pytest.fixture(scope="module")
def cluster():
    yield from ready_cluster(2)


@pytest.fixture
def proxied(cluster):
    proxy = Proxied(cluster)
    yield proxy
    proxy.close()


def get_json(cluster: Cluster, *args: str) -> dict:
    return json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)


def ready_web_pods(cluster: Cluster) -> list[dict]:
    return [p for p in get_json(cluster, "pods", "-l", "app=web")["items"]
            if not p["metadata"].get("deletionTimestamp")
            and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])]


def budget_settled(cluster: Cluster, allowed: int) -> bool:
    pdb = get_json(cluster, "pdb", "web-pdb")
    status = pdb.get("status") or {}
    return status.get("observedGeneration") == pdb["metadata"]["generation"] and \
        status.get("disruptionsAllowed") == allowed and status.get("expectedPods") == 2


def eviction_bodies(proxy: Proxied) -> list[dict]:
    bodies = []
    for content_type, raw in proxy.evictions:
        assert content_type == "application/json", content_type  # kubectl 1.32 drain sends JSON here
        bodies.append(json.loads(raw))
    return bodies


def test_drain_refuses_to_break_the_budget_and_gives_up_at_its_timeout(cluster, proxied):
    cluster.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
    pods = wait_for(lambda: len(ready_web_pods(cluster)) == 2 and ready_web_pods(cluster), what="2 ready web pods")
    cluster.kubectl("create", "pdb", "web-pdb", "--selector=app=web", "--min-available=2")
    wait_for(lambda: budget_settled(cluster, 0), what="the budget allowing no disruption")
    table = cluster.kubectl("get", "pdb").stdout.splitlines()
    assert table[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    assert table[1].split()[:4] == ["web-pdb", "2", "N/A", "0"]
    node, victim = pods[0]["spec"]["nodeName"], pods[0]["metadata"]["name"]
    try:
        drained = proxied.kubectl("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=5s")
        assert drained.returncode != 0
        assert f"node/{node} cordoned" in drained.stdout
        assert f'error when evicting pods/"{victim}" -n "default" (will retry after 5s): {VIOLATION}' in drained.stderr
        assert f'unable to drain node "{node}"' in drained.stderr and "global timeout reached: 5s" in drained.stderr
        assert get_json(cluster, "node", node)["spec"].get("unschedulable") is True
        assert victim in {p["metadata"]["name"] for p in ready_web_pods(cluster)}, "the pod was left alone"
        bodies = eviction_bodies(proxied)
        assert bodies and all(b == {"kind": "Eviction", "apiVersion": "policy/v1", "metadata": {
            "name": victim, "namespace": "default", "creationTimestamp": None}, "deleteOptions": {}} for b in bodies)
        if config.given("KK_UPDATE_PROTOBUF_FIXTURES") == "1":
            FIXTURE.write_bytes(proxied.evictions[0][1])
        assert set(json.loads(FIXTURE.read_text())) == set(bodies[0])  # the saved capture has the same shape
    finally:
        cluster.kubectl("uncordon", node)
    assert not get_json(cluster, "node", node)["spec"].get("unschedulable")


def test_drain_waits_for_the_budget_then_moves_the_pods_and_uncordon_brings_the_node_back(cluster, proxied):
    if not cluster.kubectl("get", "deployment", "web", check=False).returncode == 0:
        pytest.skip("needs the Deployment of the test above")
    cluster.kubectl("patch", "pdb", "web-pdb", "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    wait_for(lambda: budget_settled(cluster, 1), what="the budget allowing one disruption")
    # both pods on one node, so the second eviction must wait for the first one's replacement
    node, other = "node-1", "node-2"
    cluster.kubectl("cordon", other)
    cluster.kubectl("rollout", "restart", "deployment/web")
    wait_for(lambda: [p["spec"]["nodeName"] for p in ready_web_pods(cluster)] == [node, node] and
             len(get_json(cluster, "pods", "-l", "app=web")["items"]) == 2, timeout=60, what="both pods on node-1")
    cluster.kubectl("uncordon", other)
    wait_for(lambda: budget_settled(cluster, 1), what="the budget allowing one disruption again")
    try:
        drained = proxied.kubectl("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=90s",
                                  timeout=120)
        assert drained.returncode == 0, drained.stderr
        assert f"node/{node} drained" in drained.stdout
        assert drained.stdout.count("evicted") == 2
        assert VIOLATION in drained.stderr, "the second eviction waited for the budget"
        moved = wait_for(lambda: len(ready_web_pods(cluster)) == 2 and ready_web_pods(cluster), timeout=60,
                         what="two ready web pods again")
        assert {p["spec"]["nodeName"] for p in moved} == {other}
        assert len(eviction_bodies(proxied)) >= 3  # two allowed, at least one refused in between
    finally:
        cluster.kubectl("uncordon", node)
    assert "SchedulingDisabled" not in next(line for line in cluster.kubectl("get", "nodes").stdout.splitlines()
                                            if line.startswith(node))


def test_the_official_python_client_reads_budgets_and_is_refused_an_eviction(cluster):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    cluster.kubectl("create", "deployment", "solo", "--image=nginx", "--replicas=1")
    wait_for(lambda: any(p["status"].get("phase") == "Running" and any(
        c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])
        for p in get_json(cluster, "pods", "-l", "app=solo")["items"]), what="the solo pod ready")
    with cluster.python_client() as api:
        policy, core = client.PolicyV1Api(api), client.CoreV1Api(api)
        policy.create_namespaced_pod_disruption_budget("default", client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="solo-pdb"),
            spec=client.V1PodDisruptionBudgetSpec(max_unavailable=0, selector=client.V1LabelSelector(
                match_labels={"app": "solo"}))))
        settled = wait_for(lambda: (policy.read_namespaced_pod_disruption_budget("solo-pdb", "default").status
                                    or client.V1PodDisruptionBudgetStatus(current_healthy=0, desired_healthy=0,
                                                                          disruptions_allowed=0, expected_pods=0)
                                    ).expected_pods == 1 and
                           policy.read_namespaced_pod_disruption_budget("solo-pdb", "default"),
                           what="the budget's expected pods from the Deployment's scale")
        assert settled.status.desired_healthy == 1 and settled.status.disruptions_allowed == 0
        assert settled.status.conditions[0].reason == "InsufficientPods"
        name = core.list_namespaced_pod("default", label_selector="app=solo").items[0].metadata.name
        try:
            core.create_namespaced_pod_eviction(name, "default", client.V1Eviction(
                metadata=client.V1ObjectMeta(name=name, namespace="default")))
        except ApiException as exc:
            assert exc.status == 429
            assert json.loads(exc.body)["details"]["causes"][0]["message"] == \
                "The disruption budget solo-pdb needs 1 healthy pods and has 1 currently"
        else:
            raise AssertionError("the eviction should have been refused")
