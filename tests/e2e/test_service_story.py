"""The Service story with the whole cluster running (hub, controller-manager, scheduler, and per
node a kubelet and a kube-proxy, each its own process): a Deployment behind a Service, its name
resolved, traffic from a node spread over the ready pods, moved off a deleted pod without one
request to an endpoint already gone from its EndpointSlice, and off a pod whose readiness fails; then
what kubectl shows for ClusterIP, NodePort and LoadBalancer Services; a shell in a pod
(`kubectl exec`) resolving the name and reaching a pod through its node's kube-proxy; and a workshop
attendee walking lesson 10 through the dashboard's buttons (her traffic is her Service's proxy),
refused another namespace's Service."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import subprocess
import sys
import threading
from collections import Counter

import httpx
import pytest

from control import workshop
from control.auth import tokenfile
from control.kinds.network import NODE_PORT_RANGE, load_balancer_pool, service_cidr
from dashboard import discovery, hub, lesson_checks, lessons
from dashboard.lesson_scope import Scope, scoped_action
from tests.conftest import ROOT, Cluster, wait_for

SLICE_OF_WEB = "kubernetes.io/service-name=web"

pytestmark = pytest.mark.e2e

MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - {name: http, containerPort: 8080}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
"""


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=3).start()
    try:
        for i in range(1, 4):
            running.start_spoke("kube-proxy", node=f"node-{i}")
        wait_for(lambda: all(rules(running, f"node-{i}") is not None for i in range(1, 4)), timeout=60,
                 what="every node's kube-proxy answering through the hub")
        running.kubectl("apply", "-f", "-", input=MANIFEST)
        wait_for(lambda: len(ready_addresses(endpoints(running))) == 3, timeout=60, what="3 ready endpoints")
        yield running
    finally:
        running.stop()


def endpoints(cluster: Cluster) -> dict:
    """The Service's one EndpointSlice (what kube-proxy follows), {} while there is not exactly one."""
    listed = httpx.get(f"{cluster.url}/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
                       headers=cluster.auth, params={"labelSelector": SLICE_OF_WEB}, timeout=10).json()
    items = listed.get("items") or []
    return items[0] if len(items) == 1 else {}


def ready_addresses(eps: dict) -> dict[str, str]:
    """ip:port -> pod name, of the ready endpoints of a slice."""
    out = {}
    for endpoint in eps.get("endpoints") or []:
        if (endpoint.get("conditions") or {}).get("ready"):
            for port in eps.get("ports") or []:
                out[f"{endpoint['addresses'][0]}:{port['port']}"] = endpoint["targetRef"]["name"]
    return out


def rules(cluster: Cluster, node: str) -> dict | None:
    response = httpx.get(f"{cluster.url}/kubekitchen/proxyrules", headers=cluster.auth, params={"node": node}, timeout=10)
    return response.json() if response.status_code == 200 else None


def proxy_sees(cluster: Cluster, node: str, eps: dict) -> bool:
    table = rules(cluster, node) or {}
    rule = next((s for s in table.get("services") or [] if s["service"] == "default/web"), None)
    return rule is not None and rule["endpointsResourceVersion"] == eps["metadata"]["resourceVersion"]


def send(cluster: Cluster, node: str, count: int, interval: int, during=None) -> list[dict]:
    """The answered lines of one traffic run; `during(lines)` is called after each line."""
    lines = []
    params = {"node": node, "target": "web", "count": str(count), "interval": str(interval)}
    with httpx.stream("POST", f"{cluster.url}/kubekitchen/traffic", headers=cluster.auth, params=params,
                      timeout=httpx.Timeout(10, read=60)) as response:
        assert response.status_code == 200, response.read()
        for text in response.iter_lines():
            line = json.loads(text)
            if line.get("done"):
                break
            lines.append(line)
            if during:
                during(lines)
    return lines


def manage(cluster: Cluster, *args: str) -> str:
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args, "--server", cluster.url], cwd=ROOT,
                          env=cluster.env, check=True, capture_output=True, text=True, timeout=60).stdout


def test_the_name_resolves_to_the_cluster_ip(cluster):
    svc = json.loads(cluster.kubectl("get", "svc", "web", "-o", "json").stdout)
    assert ipaddress.ip_address(svc["spec"]["clusterIP"]) in service_cidr()
    out = manage(cluster, "resolve", "web")
    assert "Name:    web.default.svc.cluster.local" in out and f"Address: {svc['spec']['clusterIP']}" in out


def test_a_shell_in_a_pod_resolves_the_name_and_reaches_a_ready_pod(cluster):
    svc = json.loads(cluster.kubectl("get", "svc", "web", "-o", "json").stdout)
    pod = sorted(ready_addresses(endpoints(cluster)).values())[0]
    found = cluster.kubectl("exec", pod, "--", "nslookup", "web").stdout
    assert f"Name:\tweb.default.svc.cluster.local\nAddress: {svc['spec']['clusterIP']}\n" in found
    wait_for(lambda: proxy_sees(cluster, "node-1", endpoints(cluster)) and proxy_sees(cluster, "node-2", endpoints(cluster))
             and proxy_sees(cluster, "node-3", endpoints(cluster)), what="every kube-proxy to see the endpoints")
    for target in ("http://web", f"{svc['spec']['clusterIP']}:80"):
        page = cluster.kubectl("exec", pod, "--", "wget", "-qO-", target).stdout
        assert "<title>Welcome to nginx!</title>" in page, page  # what port-forward + curl shows for nginx
        head = cluster.kubectl("exec", pod, "--", "curl", "-si", target).stdout  # text: \r\n read as \n
        answered = next(line.split(": ", 1)[1] for line in head.splitlines() if line.startswith("x-kubekitchen-pod"))
        assert answered.split("/")[1] in ready_addresses(endpoints(cluster)).values(), head
    # A pod IP goes straight to that pod (routed to the kubelet of the node whose podCIDR holds it).
    other = sorted(ready_addresses(endpoints(cluster)).items())[-1]
    head = cluster.kubectl("exec", pod, "--", "curl", "-si", f"http://{other[0]}/").stdout
    assert head.startswith("HTTP/1.1 200 OK") and f"x-kubekitchen-pod: default/{other[1]}" in head, head
    assert "Welcome to nginx!" in head
    missing = cluster.kubectl("exec", pod, "--", "curl", "-sS", "nope", check=False)
    assert missing.returncode == 6 and "curl: (6) Could not resolve host: nope" in missing.stderr


def test_traffic_from_a_node_spreads_over_every_ready_pod(cluster):
    eps = endpoints(cluster)
    wait_for(lambda: proxy_sees(cluster, "node-1", eps), what="node-1's kube-proxy to see the endpoints")
    out = manage(cluster, "traffic", "web", "--from", "node-1", "-n", "30", "--interval", "5")
    summary = out.splitlines()[-4:]
    assert summary[0] == "30 sent, 30 answered, 0 failed", out
    assert sorted(line.split()[0] for line in summary[1:]) == sorted(ready_addresses(eps).values())
    assert all(int(line.split()[1]) == 10 for line in summary[1:]), "round robin: an equal share each"


def test_a_deleted_pods_traffic_moves_without_one_request_to_a_removed_endpoint(cluster):
    before = endpoints(cluster)
    wait_for(lambda: proxy_sees(cluster, "node-2", before), what="node-2's kube-proxy to see the endpoints")
    history = {before["metadata"]["resourceVersion"]: ready_addresses(before)}
    watch = httpx.stream("GET", f"{cluster.url}/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
                         headers=cluster.auth,
                         params={"watch": "1", "labelSelector": SLICE_OF_WEB, "timeoutSeconds": "60",
                                 "resourceVersion": before["metadata"]["resourceVersion"]},
                         timeout=httpx.Timeout(10, read=70))
    stream = watch.__enter__()

    def follow():
        try:
            for text in stream.iter_lines():
                event = json.loads(text)
                history[event["object"]["metadata"]["resourceVersion"]] = ready_addresses(event["object"])
        except (httpx.HTTPError, RuntimeError):
            pass  # closed by the test

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    victim = sorted(ready_addresses(before).values())[0]
    deleted = []

    def delete_after_ten(lines):
        if len(lines) == 10 and not deleted:
            cluster.kubectl("delete", "pod", victim, "--wait=false")
            deleted.append(len(lines))

    lines = send(cluster, "node-2", count=120, interval=50, during=delete_after_ten)
    wait_for(lambda: all(line["endpointsResourceVersion"] in history for line in lines), timeout=10,
             what="the watch to deliver every EndpointSlice version the lines name")
    watch.__exit__(None, None, None)
    assert [line["code"] for line in lines] == [200] * len(lines), [l for l in lines if l["code"] != 200][:3]
    for line in lines:
        ready = history[line["endpointsResourceVersion"]]
        assert line["endpoint"] in ready and ready[line["endpoint"]] == line["pod"], (line, ready)
    versions = [int(line["endpointsResourceVersion"]) for line in lines]
    assert versions == sorted(versions), "kube-proxy's view only moves forward"
    answered_before = Counter(line["pod"] for line in lines[:10])
    answered_after = Counter(line["pod"] for line in lines[-30:])
    assert victim in answered_before and victim not in answered_after
    assert len(answered_after) >= 2, answered_after


def test_a_pod_whose_readiness_fails_gets_no_more_traffic(cluster):
    eps = endpoints(cluster)
    wait_for(lambda: len(ready_addresses(eps := endpoints(cluster))) == 3, timeout=60, what="3 ready endpoints again")
    eps = endpoints(cluster)
    tired = sorted(ready_addresses(eps).values())[-1]
    cluster.kubectl("annotate", "pod", tired, "kubekitchen.dev/unready=true")
    later = wait_for(lambda: (e := endpoints(cluster)) and tired not in ready_addresses(e).values() and e,
                     timeout=30, what=f"{tired} out of the ready addresses")
    assert tired in [e["targetRef"]["name"] for e in later["endpoints"] if not e["conditions"]["ready"]]
    wait_for(lambda: proxy_sees(cluster, "node-3", later), what="node-3's kube-proxy to see it")
    lines = send(cluster, "node-3", count=20, interval=5)
    answered = Counter(line["pod"] for line in lines)
    assert tired not in answered and len(answered) == 2 and sum(answered.values()) == 20
    cluster.kubectl("annotate", "pod", tired, "kubekitchen.dev/unready-")
    wait_for(lambda: tired in ready_addresses(endpoints(cluster)).values(), timeout=30, what=f"{tired} ready again")


def test_kubectl_shows_service_types_and_expose_allocates_node_ports_and_a_load_balancer_ip(cluster):
    table = cluster.kubectl("get", "svc", "web").stdout.splitlines()
    assert table[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert table[1].split()[1:5] == ["ClusterIP", json.loads(cluster.kubectl("get", "svc", "web", "-o", "json").stdout)
                                     ["spec"]["clusterIP"], "<none>", "80/TCP"]
    cluster.kubectl("expose", "deployment", "web", "--type=NodePort", "--name=web-np", "--port=80", "--target-port=8080")
    row = cluster.kubectl("get", "svc", "web-np", "--no-headers").stdout.split()
    assert row[1] == "NodePort" and row[3] == "<none>"
    port, node_port = row[4].removesuffix("/TCP").split(":")
    assert port == "80" and int(node_port) in NODE_PORT_RANGE
    cluster.kubectl("expose", "deployment", "web", "--type=LoadBalancer", "--name=web-lb", "--port=80",
                    "--target-port=8080")
    row = wait_for(lambda: (r := cluster.kubectl("get", "svc", "web-lb", "--no-headers").stdout.split())[3] != "<pending>"
                   and r, timeout=30, what="an external IP for web-lb")
    assert row[1] == "LoadBalancer" and ipaddress.ip_address(row[3]) in load_balancer_pool()
    node_ports = {row[4].removesuffix("/TCP").split(":")[1], node_port}
    assert len(node_ports) == 2, "no node port is handed out twice"
    cluster.kubectl("delete", "svc", "web-lb")
    cluster.kubectl("expose", "deployment", "web", "--type=LoadBalancer", "--name=web-lb2", "--port=80",
                    "--target-port=8080")
    again = wait_for(lambda: (r := cluster.kubectl("get", "svc", "web-lb2", "--no-headers").stdout.split())[3] != "<pending>"
                     and r, timeout=30, what="an external IP for web-lb2")
    assert again[3] == row[3], "the deleted Service's address was free again (the lowest free one)"



def test_an_attendee_walks_lesson_10_and_gets_403_for_another_namespaces_service(cluster):
    """Lesson 10 as the dashboard runs it for attendee-1 (its buttons scoped to her namespace, with her
    token): the pasta pods and Service land there and both traffic buttons answer 200 (her runs are
    her Service's proxy); her traffic to another namespace's Service is Kubernetes' 403 for
    services/proxy, by name or by DNS name, and to an address the path's own 403."""
    workshop.provision(cluster.url, cluster.dir, ["attendee-1"])
    identity = hub.Identity("attendee-1", tokenfile.token_of(cluster.dir, "attendee-1", (workshop.ATTENDEES,)))
    scope = Scope(namespace="attendee-1", own_namespaces=False, kubeconfig_namespace="attendee-1")
    steps = [scoped_action(step.action, scope) for step in lessons.load_all().get("10-service").steps if step.action]
    assert [action.do or "apply" for action in steps] == ["apply", "apply", "traffic", "traffic"]

    async def walk() -> list[lesson_checks.Done]:
        with hub.acting_as(identity):
            client = hub.client(cluster.url)
            try:
                done = [await lesson_checks.run_action(client, action, discovery.resource_for, scope)
                        for action in steps[:2]]
                for action in steps[2:]:
                    for _ in range(240):  # until a kube-proxy sees the ready pasta pods (an e2e poll)
                        answer = await lesson_checks.run_action(client, action, discovery.resource_for, scope)
                        if answer.ok or answer.code == 403:
                            break
                        await asyncio.sleep(0.5)
                    done.append(answer)
                return done
            finally:
                await hub.close_clients()

    done = asyncio.run(walk())
    assert [d.ok for d in done] == [True] * 4, [(d.code, d.message) for d in done]
    assert done[2].message.startswith("20 request(s) to pasta: pasta-"), done[2].message
    assert done[3].message.startswith("10 request(s) to pasta.attendee-1.svc.cluster.local: pasta-"), done[3].message
    mine = {"Authorization": f"Bearer {identity.token}"}
    for query in ({"target": "web", "namespace": "default"}, {"target": "web.default.svc.cluster.local"}):
        refused = httpx.post(f"{cluster.url}/kubekitchen/traffic", headers=mine, timeout=10,
                             params={"node": "node-1", **query})
        assert refused.status_code == 403, refused.text
        assert refused.json()["message"] == ('services "web" is forbidden: User "attendee-1" cannot create resource '
                                             '"services/proxy" in API group "" in the namespace "default"')
    address = json.loads(cluster.kubectl("get", "svc", "web", "-o", "json").stdout)["spec"]["clusterIP"]
    refused = httpx.post(f"{cluster.url}/kubekitchen/traffic", headers=mine, timeout=10,
                         params={"node": "node-1", "target": address, "namespace": "attendee-1"})
    assert refused.status_code == 403, refused.text
    assert refused.json()["message"] == 'forbidden: User "attendee-1" cannot post path "/kubekitchen/traffic"'
