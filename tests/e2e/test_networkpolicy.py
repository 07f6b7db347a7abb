"""NetworkPolicy as a user meets it with the real kubectl and a whole cluster (hub, controller-
manager, scheduler, a kubelet and a kube-proxy per node): kubernetes.io's examples applied,
listed and described; then the declare-network-policy task: a client's `wget --spider
--timeout=1 nginx` answers, times out after a default deny, and answers again after an allow
that names the client's label; the nginx pods stay Ready throughout (the kubelet's probes are
the node's own traffic). A bad port is refused with upstream's 422."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import Cluster, wait_for

pytestmark = pytest.mark.e2e

# kubernetes.io's service/networking/networkpolicy.yaml
EXAMPLE = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: test-network-policy
  namespace: default
spec:
  podSelector:
    matchLabels:
      role: db
  policyTypes:
  - Ingress
  - Egress
  ingress:
  - from:
    - ipBlock:
        cidr: 172.17.0.0/16
        except:
        - 172.17.1.0/24
    - namespaceSelector:
        matchLabels:
          project: myproject
    - podSelector:
        matchLabels:
          role: frontend
    ports:
    - protocol: TCP
      port: 6379
  egress:
  - to:
    - ipBlock:
        cidr: 10.0.0.0/24
    ports:
    - protocol: TCP
      port: 5978
"""

# kubernetes.io's service/networking/network-policy-default-deny-all.yaml
DEFAULT_DENY_ALL = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-all
spec:
  podSelector: {}
  policyTypes:
  - Ingress
  - Egress
"""

DEFAULT_DENY_INGRESS = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny-ingress
spec:
  podSelector: {}
  policyTypes:
  - Ingress
"""

# kubernetes.io's service/networking/nginx-policy.yaml (the declare-network-policy task)
ACCESS_NGINX = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: access-nginx
spec:
  podSelector:
    matchLabels:
      app: nginx
  ingress:
  - from:
    - podSelector:
        matchLabels:
          access: "true"
"""

NGINX = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
spec:
  replicas: 2
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: nginx
        ports: [{containerPort: 80}]
        readinessProbe:
          httpGet: {path: /, port: 80}
          periodSeconds: 1
"""


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=2).start()
    try:
        for i in (1, 2):
            running.start_spoke("kube-proxy", node=f"node-{i}")
        running.kubectl("create", "namespace", "np")
        running.kubectl("apply", "-n", "np", "-f", "-", input=NGINX)
        running.kubectl("expose", "-n", "np", "deployment", "nginx", "--port=80")
        running.kubectl("run", "client", "-n", "np", "--image=busybox", "--labels=access=true", "--", "sleep", "3600")
        running.kubectl("run", "stranger", "-n", "np", "--image=busybox", "--", "sleep", "3600")
        wait_for(lambda: ready(running) == 2 and running_pods(running) >= 4, timeout=90,
                 what="2 ready nginx pods, a client and a stranger")
        yield running
    finally:
        running.stop()


def ready(cluster: Cluster) -> int:
    pods = json.loads(cluster.kubectl("get", "pods", "-n", "np", "-l", "app=nginx", "-o", "json").stdout)["items"]
    return sum(any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])
               for p in pods)


def running_pods(cluster: Cluster) -> int:
    pods = json.loads(cluster.kubectl("get", "pods", "-n", "np", "-o", "json").stdout)["items"]
    return sum(p["status"].get("phase") == "Running" for p in pods)


def spider(cluster: Cluster, pod: str):
    return cluster.kubectl("exec", "-n", "np", pod, "--", "wget", "--spider", "--timeout=1", "nginx", check=False)


def test_kubernetes_io_examples_apply_list_and_describe(cluster):
    assert cluster.kubectl("apply", "-f", "-", input=EXAMPLE).stdout.strip() == \
        "networkpolicy.networking.k8s.io/test-network-policy created"
    listed = cluster.kubectl("get", "netpol").stdout.splitlines()
    assert listed[0].split() == ["NAME", "POD-SELECTOR", "AGE"]
    assert listed[1].split()[:2] == ["test-network-policy", "role=db"]
    described = cluster.kubectl("describe", "netpol", "test-network-policy").stdout
    for text in ("PodSelector:     role=db", "172.17.0.0/16", "172.17.1.0/24", "NamespaceSelector: project=myproject",
                 "PodSelector: role=frontend", "To Port: 6379/TCP", "To Port: 5978/TCP",
                 "Policy Types: Ingress, Egress"):
        assert text in described, described
    deny = cluster.kubectl("apply", "-n", "default", "-f", "-", input=DEFAULT_DENY_ALL)
    assert deny.stdout.strip() == "networkpolicy.networking.k8s.io/default-deny-all created"
    cluster.kubectl("delete", "netpol", "default-deny-all", "test-network-policy", "-n", "default")


def test_a_port_out_of_range_is_refused_as_upstream(cluster):
    bad = ACCESS_NGINX.replace('          access: "true"\n', '          access: "true"\n    ports:\n    - port: 70000\n')
    refused = cluster.kubectl("apply", "-n", "np", "-f", "-", input=bad, check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith('The NetworkPolicy "access-nginx" is invalid: spec.ingress[0].ports[0].port: '
                                           'Invalid value: 70000: must be between 1 and 65535, inclusive')


def test_deny_then_allow_as_the_declare_network_policy_task(cluster):
    answered = spider(cluster, "client")
    assert answered.returncode == 0 and "remote file exists" in answered.stderr, answered.stderr
    cluster.kubectl("apply", "-n", "np", "-f", "-", input=DEFAULT_DENY_INGRESS)
    started = time.monotonic()
    dropped = wait_for(lambda: (r := spider(cluster, "client")).returncode == 1 and r, timeout=20,
                       what="the client's wget to time out")
    assert "wget: download timed out" in dropped.stderr and time.monotonic() - started >= 1
    time.sleep(3)
    assert ready(cluster) == 2, "the kubelet's probes are the node's own traffic: still allowed"
    cluster.kubectl("apply", "-n", "np", "-f", "-", input=ACCESS_NGINX)
    again = wait_for(lambda: (r := spider(cluster, "client")).returncode == 0 and r, timeout=20,
                     what="the labelled client to reach nginx again")
    assert "remote file exists" in again.stderr
    stranger = spider(cluster, "stranger")
    assert stranger.returncode == 1 and "download timed out" in stranger.stderr
    curl = cluster.kubectl("exec", "-n", "np", "stranger", "--", "curl", "-sS", "--connect-timeout", "1", "nginx",
                           check=False)
    assert curl.returncode == 28 and "curl: (28) Failed to connect to nginx port 80 after" in curl.stderr
    shown = cluster.kubectl("get", "netpol", "-n", "np").stdout
    assert "access-nginx" in shown and "app=nginx" in shown and "default-deny-ingress" in shown


# kubernetes.io's lesson of every egress deny: the pod can no longer even ask the cluster DNS
DENY_EGRESS = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: client-egress
spec:
  podSelector: {matchLabels: {access: "true"}}
  policyTypes: [Egress]
"""

ALLOW_DNS = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-dns
spec:
  podSelector: {matchLabels: {access: "true"}}
  policyTypes: [Egress]
  egress:
  - ports:
    - {protocol: UDP, port: 53}
    - {protocol: TCP, port: 53}
"""


def test_an_egress_deny_stops_dns_until_dns_is_allowed(cluster):
    cluster.kubectl("apply", "-n", "np", "-f", "-", input=DENY_EGRESS)

    def lookup():
        return cluster.kubectl("exec", "-n", "np", "client", "--", "nslookup", "-timeout=1", "-retry=1", "nginx",
                               check=False)
    silent = wait_for(lambda: (r := lookup()).returncode == 1 and "no servers could be reached" in r.stdout and r,
                      timeout=20, what="the client's DNS query to be dropped")
    assert silent.stdout == ";; connection timed out; no servers could be reached\n"
    cluster.kubectl("apply", "-n", "np", "-f", "-", input=ALLOW_DNS)
    found = wait_for(lambda: (r := lookup()).returncode == 0 and r, timeout=20, what="DNS allowed again")
    assert "Name:\tnginx.np.svc.cluster.local" in found.stdout
    blocked = spider(cluster, "client")
    assert blocked.returncode == 1 and "download timed out" in blocked.stderr, "port 80 is still no way out"
    cluster.kubectl("delete", "netpol", "-n", "np", "client-egress", "allow-dns")


# A pod whose own command is the client (kubernetes.io's busybox examples as a loop): its log is
# what wget printed, the answers first, then the timeouts once an egress deny selects it.
LOOPER = """apiVersion: v1
kind: Pod
metadata:
  name: looper
  labels: {access: "true", role: looper}
spec:
  containers:
  - name: looper
    image: busybox
    command: ["sh", "-c", "while true; do wget -qO- --timeout=2 http://nginx; sleep 1; done"]
"""

LOOPER_DENY = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: looper-egress
spec:
  podSelector: {matchLabels: {role: looper}}
  policyTypes: [Egress]
  egress:
  - ports:
    - {protocol: UDP, port: 53}
"""


def test_a_pods_own_wget_loop_logs_answers_then_timeouts_after_a_deny(cluster):
    cluster.kubectl("apply", "-n", "np", "-f", "-", input=LOOPER)

    def log() -> str:
        return cluster.kubectl("logs", "-n", "np", "looper", check=False).stdout
    wait_for(lambda: log().count("<title>Welcome to nginx!</title>") >= 2, timeout=60,
             what="the looper's log to show nginx's answers")
    cluster.kubectl("apply", "-n", "np", "-f", "-", input=LOOPER_DENY)
    wait_for(lambda: log().count("wget: download timed out") >= 2, timeout=30,
             what="the looper's log to show its wget timing out")
    lines = log().splitlines()
    last_answer = max(i for i, line in enumerate(lines) if "Welcome to nginx!" in line)
    first_timeout = lines.index("wget: download timed out")
    assert last_answer < first_timeout, lines
    assert set(lines[first_timeout:]) == {"wget: download timed out"}, lines[first_timeout:]
    cluster.kubectl("delete", "netpol", "-n", "np", "looper-egress")
    cluster.kubectl("delete", "pod", "-n", "np", "looper", "--grace-period=0", "--force", check=False)
