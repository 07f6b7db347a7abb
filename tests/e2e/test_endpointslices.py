"""EndpointSlices with the whole cluster running and the real kubectl: a Deployment behind a
Service gets a slice listing its pods' IPs, the slice follows a scale, kubectl finds it by the
`kubernetes.io/service-name` label and lists the kind among the API resources, traffic through
kube-proxy (which reads the slices) reaches the pods, and the slices go with their Service."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, Cluster, wait_for
from tests.e2e.test_service_story import MANIFEST  # a Deployment of 3 nginx pods behind Service web

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=2).start()
    try:
        for i in (1, 2):
            running.start_spoke("kube-proxy", node=f"node-{i}")
        running.kubectl("apply", "-f", "-", input=MANIFEST)
        yield running
    finally:
        running.stop()


def pod_ips(cluster: Cluster) -> dict[str, str]:
    pods = json.loads(cluster.kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    return {p["status"]["podIP"]: p["metadata"]["name"] for p in pods
            if p["status"].get("podIP") and not p["metadata"].get("deletionTimestamp")
            and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])}


def slices(cluster: Cluster) -> list[dict]:
    return json.loads(cluster.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=web",
                                      "-o", "json").stdout)["items"]


def ready_ips(cluster: Cluster) -> dict[str, str]:
    return {e["addresses"][0]: e["targetRef"]["name"] for s in slices(cluster) for e in s.get("endpoints") or []
            if e["conditions"].get("ready")}


def follows(cluster: Cluster, count: int) -> bool:
    ips = pod_ips(cluster)
    return len(ips) == count and ready_ips(cluster) == ips


def test_the_slice_lists_the_pods_and_kubectl_shows_it(cluster):
    wait_for(lambda: follows(cluster, 3), timeout=60, what="a slice with the 3 ready pods")
    [slice_] = slices(cluster)
    assert slice_["metadata"]["name"].startswith("web-") and slice_["addressType"] == "IPv4"
    assert slice_["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
    owner = slice_["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Service", "web", True)
    assert slice_["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    table = cluster.kubectl("get", "endpointslices").stdout.splitlines()
    assert table[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    row = next(line.split() for line in table[1:] if line.startswith(slice_["metadata"]["name"]))
    assert row[1:3] == ["IPv4", "8080"] and set(row[3].split(",")) == set(pod_ips(cluster))
    resources = cluster.kubectl("api-resources").stdout
    assert any(line.split()[:1] == ["endpointslices"] and "discovery.k8s.io/v1" in line and "EndpointSlice" in line
               for line in resources.splitlines()), resources


def test_the_slice_follows_a_scale_and_traffic_reaches_the_pods(cluster):
    cluster.kubectl("scale", "deployment", "web", "--replicas=5")
    wait_for(lambda: follows(cluster, 5), timeout=60, what="the slice to list the 5 ready pods")
    out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "traffic", "web", "--from", "node-1", "-n", "50",
                          "--interval", "5", "--server", cluster.url], cwd=ROOT, env=cluster.env, check=True,
                         capture_output=True, text=True, timeout=60).stdout
    summary = out.splitlines()[-6:]
    assert summary[0] == "50 sent, 50 answered, 0 failed", out
    assert sorted(line.split()[0] for line in summary[1:]) == sorted(pod_ips(cluster).values())
    cluster.kubectl("scale", "deployment", "web", "--replicas=1")
    wait_for(lambda: follows(cluster, 1), timeout=60, what="the slice to list the 1 pod left")
    assert len(slices(cluster)) == 1


def test_a_selectorless_services_endpoints_are_mirrored_and_routed(cluster):
    ip = sorted(pod_ips(cluster))[0]
    node = json.loads(cluster.kubectl("get", "pod", pod_ips(cluster)[ip], "-o", "json").stdout)["spec"]["nodeName"]
    manual = ("apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec:\n  ports: [{port: 80, targetPort: 8080}]\n"
              "---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: db}\n"
              f"subsets: [{{addresses: [{{ip: {ip}, nodeName: {node}}}], ports: [{{port: 8080}}]}}]\n")
    cluster.kubectl("apply", "-f", "-", input=manual)
    mirrored = wait_for(lambda: json.loads(cluster.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=db",
                                                           "-o", "json").stdout)["items"], timeout=30,
                        what="the mirrored slice")
    assert mirrored[0]["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == \
        "endpointslicemirroring-controller.k8s.io"
    assert [e["addresses"] for e in mirrored[0]["endpoints"]] == [[ip]]
    out = wait_for(lambda: (o := subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "traffic", "db", "--from", "node-1", "-n", "5", "--interval", "5",
         "--server", cluster.url], cwd=ROOT, env=cluster.env, capture_output=True, text=True, timeout=60).stdout)
        and o.count(" 200 ") == 5 and o, timeout=30, what="traffic to the mirrored endpoint")
    # an address without targetRef names no pod: every line shows the 200 and the address it went to
    assert out.count(f"({ip}:8080, ") == 5, out


def test_the_slices_go_with_their_service(cluster):
    cluster.kubectl("delete", "service", "web")
    wait_for(lambda: slices(cluster) == [], timeout=30, what="the garbage collector to delete the slices")
