"""The Gateway API as a user meets it: `runcluster` installs the definitions, the aggregated roles
and the GatewayClass `kube-kitchen` at start and runs the gateway controller; with the real kubectl,
two Deployments behind two Services, a Gateway and an HTTPRoute splitting 90/10 are applied; the
Gateway turns Programmed with an address, `kubectl get gateway,httproute` prints upstream's
columns, 1,000 requests sent from this machine to the listener split ≈ 90/10 (each answer names
its pod), a negative weight is refused 422 with kube-apiserver's words, and a route to a Service
of another namespace is RefNotPermitted until a ReferenceGrant allows it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.conftest import KUBECTL, ROOT, start_runcluster, wait_for

pytestmark = pytest.mark.e2e
MANIFESTS = ROOT / "lessons" / "manifests"


class RunCluster:
    def __init__(self):
        self.data = Path(tempfile.mkdtemp(prefix="kk-gateway-"))
        env = {**os.environ}
        env.pop("KK_DATA_DIR", None)
        self.log = self.data / "runcluster.log"
        port, self.process = start_runcluster(["--nodes", "2", "--data", str(self.data), "--pace", "workshop"],
                                              self.log, env=env, timeout=120, start_new_session=True)
        self.url = f"http://127.0.0.1:{port}"
        self.kubeconfig = self.data / "kubeconfig.yaml"
        try:
            out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--server", self.url],
                                 cwd=ROOT, env={**env, "KK_DATA_DIR": str(self.data)}, check=True,
                                 capture_output=True, text=True)
            self.kubeconfig.write_text(out.stdout)
        except BaseException:
            self.stop()
            raise

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                                 str(self.data / "kube-cache"), *args], input=input, capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr}")
        return result

    def json(self, *args: str) -> dict:
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture(scope="module")
def cluster():
    running = RunCluster()
    try:
        yield running
    finally:
        running.stop()


def condition(obj: dict, type_: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), {})


def parent_condition(route: dict, type_: str) -> dict:
    parents = (route.get("status") or {}).get("parents") or []
    return next((c for c in parents[0]["conditions"] if c["type"] == type_), {}) if parents else {}


def test_installed_at_start(cluster):
    established = cluster.kubectl("get", "crd", "-o", "name").stdout.split()
    for plural in ("gatewayclasses", "gateways", "httproutes", "referencegrants"):
        assert f"customresourcedefinition.apiextensions.k8s.io/{plural}.gateway.networking.k8s.io" in established
    wait_for(lambda: condition(cluster.json("get", "gatewayclass", "kube-kitchen"), "Accepted").get("status") == "True",
             timeout=60, what="GatewayClass kube-kitchen Accepted")
    header = cluster.kubectl("get", "gatewayclass").stdout.splitlines()[0].split()
    assert header == ["NAME", "CONTROLLER", "ACCEPTED", "AGE"]
    assert cluster.kubectl("auth", "can-i", "create", "httproutes", "--as", "system:serviceaccount:default:x",
                           check=False).stdout.strip() == "no"


def test_a_canary_split_over_1000_requests_from_this_machine(cluster):
    for name in ("taste-menu.yaml", "taste-gateway.yaml", "taste-route.yaml"):
        cluster.kubectl("apply", "-f", str(MANIFESTS / name))

    def programmed():
        gateway = cluster.json("get", "gateway", "front-door")
        return gateway if condition(gateway, "Programmed").get("status") == "True" else None

    wait_for(programmed, timeout=60, what="Gateway front-door Programmed")
    gateway = programmed()
    address = gateway["status"]["addresses"][0]["value"]
    listener = gateway["metadata"]["annotations"]["kubekitchen.dev/listeners"]
    assert listener.startswith(f"http={address}:")
    where = listener.split("=", 1)[1]

    def resolved():
        route = cluster.json("get", "httproute", "menu")
        return all(parent_condition(route, t).get("status") == "True" for t in ("Accepted", "ResolvedRefs"))

    wait_for(resolved, timeout=60, what="HTTPRoute menu Accepted and ResolvedRefs")
    table = cluster.kubectl("get", "gateway,httproute").stdout
    assert "NAME" in table and "CLASS" in table and "ADDRESS" in table and "PROGRAMMED" in table, table
    assert "HOSTNAMES" in table, table
    row = next(line.split() for line in table.splitlines() if line.startswith("gateway.gateway.networking.k8s.io/front-door"))
    assert row[1:4] == ["kube-kitchen", address, "True"], table

    def ready_pods() -> int:
        pods = cluster.json("get", "pods", "-l", "app=menu")["items"]
        return sum(1 for p in pods if condition(p, "Ready").get("status") == "True")

    wait_for(lambda: ready_pods() == 4, timeout=90, what="the 4 menu pods Ready")

    def all_answer() -> bool:  # the EndpointSlices have reached the controller: no 503 left
        with httpx.Client(base_url=f"http://{where}", timeout=5) as http:
            return all(http.get("/").status_code == 200 for _ in range(20))

    wait_for(all_answer, timeout=60, what="the gateway answering 200")
    versions: Counter[str] = Counter()
    pods: Counter[str] = Counter()
    took: list[float] = []
    with httpx.Client(base_url=f"http://{where}", timeout=5) as http:
        for _ in range(1000):
            began = time.perf_counter()
            response = http.get("/")
            took.append(time.perf_counter() - began)
            assert response.status_code == 200, response.text
            pod = response.json()["pod"]
            pods[pod] += 1
            versions[pod.rsplit("-", 2)[0]] += 1
    took.sort()
    print(f"\nmeasured split over 1000 requests: {dict(versions)}; by pod: {dict(pods)}; "
          f"p50 {took[499] * 1000:.1f} ms, p99 {took[989] * 1000:.1f} ms, total {sum(took):.2f} s")
    assert sum(versions.values()) == 1000
    assert 860 <= versions["menu-v1"] <= 940 and versions["menu-v1"] + versions["menu-v2"] == 1000, versions
    assert len([p for p in pods if p.startswith("menu-v1-")]) == 3  # spread over the three v1 pods
    with httpx.Client(base_url=f"http://{where}", timeout=5) as http:
        assert http.get("/", headers={"Host": "anything.example"}).status_code == 200  # no hostnames: every host


def test_a_negative_weight_is_refused(cluster):
    route = (MANIFESTS / "taste-route.yaml").read_text().replace("weight: 10", "weight: -1")
    result = cluster.kubectl("apply", "-f", "-", input=route, check=False)
    assert result.returncode != 0
    field = "spec.rules[0].backendRefs[1].weight"
    assert f"{field}: Invalid value: -1: {field} in body should be greater than or equal to 0" in result.stderr, \
        result.stderr


GUEST_ROUTE = """
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: guest, namespace: guests}
spec:
  parentRefs: [{name: front-door, namespace: default}]
  rules:
  - backendRefs: [{name: menu-v1, namespace: default, port: 80}]
"""
GRANT = """
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: guests-may-eat, namespace: default}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: guests}]
  to: [{group: "", kind: Service}]
"""


def test_a_route_of_another_namespace_needs_a_reference_grant(cluster):
    cluster.kubectl("create", "namespace", "guests")
    cluster.kubectl("patch", "gateway", "front-door", "--type", "json", "-p",
                    '[{"op": "replace", "path": "/spec/listeners/0/allowedRoutes", '
                    '"value": {"namespaces": {"from": "All"}}}]')
    cluster.kubectl("apply", "-f", "-", input=GUEST_ROUTE)

    def reason() -> str:
        return parent_condition(cluster.json("get", "httproute", "guest", "-n", "guests"), "ResolvedRefs").get("reason", "")

    wait_for(lambda: reason() == "RefNotPermitted", timeout=60, what="ResolvedRefs False RefNotPermitted")
    assert parent_condition(cluster.json("get", "httproute", "guest", "-n", "guests"), "Accepted")["status"] == "True"
    cluster.kubectl("apply", "-f", "-", input=GRANT)
    wait_for(lambda: reason() == "ResolvedRefs", timeout=60, what="ResolvedRefs True once granted")


SOUP_ROUTE = """
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: soup}
spec:
  parentRefs: [{name: front-door}]
  hostnames: [soup.example]
  rules:
  - matches: [{path: {type: PathPrefix, value: /soup}}]
    backendRefs: [{name: menu-v2, port: 80}]
"""


def test_a_pods_wget_and_curl_reach_the_gateway_with_host_and_path(cluster):
    """From a pod's shell, as from this machine: the Gateway's address is node-1's and its ports are
    announced on node-1 for kube-proxy (`kubekitchen.dev/gateway-listeners`)."""
    gateway = cluster.json("get", "gateway", "front-door")
    address = gateway["status"]["addresses"][0]["value"]
    where = gateway["metadata"]["annotations"]["kubekitchen.dev/listeners"].split("=", 1)[1]
    assert where.startswith(f"{address}:")
    node = cluster.json("get", "node", "node-1")
    assert address == next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    port = where.rsplit(":", 1)[1]
    assert f"http={port}" in node["metadata"]["annotations"]["kubekitchen.dev/gateway-listeners"].split(",")
    cluster.kubectl("run", "guest", "--image=busybox", "--restart=Never", "--", "sleep", "3600")
    cluster.kubectl("apply", "-f", "-", input=SOUP_ROUTE)
    wait_for(lambda: condition(cluster.json("get", "pod", "guest"), "Ready").get("status") == "True", timeout=90,
             what="the busybox pod Ready")

    def wget(*args: str) -> str:
        return cluster.kubectl("exec", "guest", "--", "wget", "-qO-", *args, check=False).stdout

    wait_for(lambda: wget(f"http://{where}/").startswith("{"), timeout=30,
             what="kube-proxy to know the gateway's ports")
    seen = Counter(json.loads(wget(f"http://{where}/"))["pod"].rsplit("-", 2)[0] for _ in range(20))
    assert set(seen) <= {"menu-v1", "menu-v2"} and sum(seen.values()) == 20, seen

    def soup(*args: str) -> dict | None:
        out = wget("--header", "Host: soup.example", *args, f"http://{where}/soup?bowl=1")
        return json.loads(out) if out.startswith("{") else None

    wait_for(lambda: (soup() or {}).get("pod", "").startswith("menu-v2-"), timeout=30,
             what="the soup route (Host and path) to reach menu-v2")
    for _ in range(10):  # the more specific hostname wins over the catch-all canary, every time
        answer = soup()
        assert answer and answer["pod"].startswith("menu-v2-"), answer
    out = cluster.kubectl("exec", "guest", "--", "curl", "-s", "-H", "Host: soup.example",
                          f"http://{where}/soup").stdout
    assert json.loads(out)["pod"].startswith("menu-v2-"), out
    # no rule for /cake on soup.example's route, and the catch-all route still answers other hosts
    assert json.loads(wget(f"http://{where}/cake"))["pod"].startswith("menu-v")


def test_events_say_what_changed_once(cluster):
    def events(namespace: str) -> list[tuple[str, str, str, str, int]]:
        items = cluster.json("get", "events", "-n", namespace)["items"]
        return [(e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["reason"], e.get("count", 1))
                for e in items if (e.get("source") or {}).get("component") == "gateway-controller"]

    wait_for(lambda: any(e[:4] == ("Gateway", "front-door", "Normal", "Programmed") for e in events("default")),
             timeout=30, what="the Programmed event")
    assert any(e[:4] == ("HTTPRoute", "menu", "Normal", "Accepted") for e in events("default"))
    guests = events("guests")
    assert any(e[:4] == ("HTTPRoute", "guest", "Warning", "RefNotPermitted") for e in guests), guests
    assert any(e[:4] == ("HTTPRoute", "guest", "Normal", "ResolvedRefs") for e in guests), guests
    programmed = [e for e in events("default") if e[:4] == ("Gateway", "front-door", "Normal", "Programmed")]
    assert len(programmed) == 1 and programmed[0][4] == 1, programmed  # said once, not at every resync
