"""The front door with the whole cluster running and the real kubectl: kubernetes.io's
minimal-ingress (`service/networking/minimal-ingress.yaml` as it is: class nginx-example, path
/testpath, Prefix, to Service test port 80; served once an IngressClass nginx-example names this
controller) and a second Ingress by host, applied with a Deployment and Service each; a request from
the host with the Host header reaches a pod of the right Service (its answer names it), an unknown
path is ingress-nginx's 404, HTTPS answers with the Secret's certificate for its host (SNI) and the
fake one otherwise, `kubectl get ingress` shows the ADDRESS the controller wrote, and a pod's
`curl -H 'Host: menu.example'` reaches the front door too (through kube-proxy's host listeners)."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import urllib.error
import urllib.request

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from control.frontdoor.tls import FAKE_NAME, fake_certificate
from tests.conftest import Cluster, free_server_port, wait_for

pytestmark = pytest.mark.e2e
HTTP_PORT = free_server_port()

MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: test}
spec:
  replicas: 2
  selector: {matchLabels: {app: test}}
  template:
    metadata: {labels: {app: test}}
    spec:
      containers: [{name: app, image: hashicorp/http-echo, ports: [{containerPort: 5678}]}]
---
apiVersion: v1
kind: Service
metadata: {name: test}
spec:
  selector: {app: test}
  ports: [{name: http, port: 80, targetPort: 5678}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: soup}
spec:
  replicas: 1
  selector: {matchLabels: {app: soup}}
  template:
    metadata: {labels: {app: soup}}
    spec:
      containers: [{name: app, image: hashicorp/http-echo, ports: [{containerPort: 5678}]}]
---
apiVersion: v1
kind: Service
metadata: {name: soup}
spec:
  selector: {app: soup}
  ports: [{name: web, port: 8000, targetPort: 5678}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: minimal-ingress
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /
spec:
  ingressClassName: nginx-example
  rules:
  - http:
      paths:
      - path: /testpath
        pathType: Prefix
        backend:
          service:
            name: test
            port:
              number: 80
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: menu}
spec:
  rules:
  - host: menu.example
    http:
      paths:
      - {path: /soup, pathType: Prefix, backend: {service: {name: soup, port: {name: web}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: secure-menu}
spec:
  tls: [{hosts: [secure.example], secretName: menu-tls}]
  rules:
  - host: secure.example
    http:
      paths:
      - {path: /soup, pathType: Prefix, backend: {service: {name: soup, port: {name: web}}}}
"""


def tls_secret() -> str:
    cert, key = fake_certificate()
    return json.dumps({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                       "metadata": {"name": "menu-tls"},
                       "data": {"tls.crt": base64.b64encode(cert).decode(), "tls.key": base64.b64encode(key).decode()}})


@pytest.fixture(scope="module")
def cluster():
    ports = {"KK_INGRESS_HTTP_PORT": str(HTTP_PORT), "KK_INGRESS_HTTPS_PORT": str(free_server_port())}
    running = Cluster(nodes=2, env=ports).start()
    try:
        running.start_spoke("ingress-controller")
        for node in ("node-1", "node-2"):
            running.start_spoke("kube-proxy", node=node)
        running.kubectl("apply", "-f", "-", input=tls_secret())
        running.kubectl("apply", "-f", "-", input=MANIFESTS)
        yield running
    finally:
        running.stop()


def address(cluster: Cluster, name: str) -> tuple[str, int, int] | None:
    ing = json.loads(cluster.kubectl("get", "ingress", name, "-o", "json").stdout)
    [entry] = (ing.get("status", {}).get("loadBalancer", {}).get("ingress") or [None])
    if not entry:
        return None
    ports = [p["port"] for p in entry.get("ports") or []] or [80, 443]
    return entry["ip"], ports[0], ports[1]


def get(url: str, host: str) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


NGINX_EXAMPLE = """
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx-example}
spec: {controller: kubekitchen.dev/ingress}
"""


def test_kubectl_shows_the_address_the_controller_wrote(cluster):
    wait_for(lambda: address(cluster, "menu"), timeout=60, what="the menu ingress's load balancer status")
    # minimal-ingress names the class nginx-example, which no controller has yet: nobody serves it
    assert address(cluster, "minimal-ingress") is None
    cluster.kubectl("apply", "-f", "-", input=NGINX_EXAMPLE)  # the class, handled by this controller
    wait_for(lambda: address(cluster, "minimal-ingress"), timeout=30, what="minimal-ingress's status")
    ip, port, _ = address(cluster, "minimal-ingress")
    table = cluster.kubectl("get", "ingress").stdout
    assert "minimal-ingress" in table and ip in table and "nginx-example" in table, table
    assert "kitchen" in table  # menu named no class: the default one was filled in
    assert port == HTTP_PORT
    events = cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=menu").stdout
    assert "Scheduled for sync" in events, events


def ready(cluster: Cluster, service: str, count: int) -> bool:
    slices = json.loads(cluster.kubectl("get", "endpointslices", "-l", f"kubernetes.io/service-name={service}",
                                        "-o", "json").stdout)["items"]
    return sum(1 for s in slices for e in s.get("endpoints") or [] if e["conditions"].get("ready")) == count


def test_a_request_from_the_host_reaches_the_right_pods(cluster):
    cluster.kubectl("apply", "-f", "-", input=NGINX_EXAMPLE)
    wait_for(lambda: address(cluster, "minimal-ingress") and ready(cluster, "test", 2) and ready(cluster, "soup", 1),
             timeout=90, what="ready endpoints and the address")
    ip, port, _ = address(cluster, "menu")
    seen = set()
    for _ in range(4):
        code, body, headers = get(f"http://{ip}:{port}/testpath/x", "anything.example")
        assert code == 200, body
        line = json.loads(body)
        assert line["pod"].startswith("test-") and line["namespace"] == "default"
        seen.add(line["pod"])
    assert len(seen) == 2  # round robin over both ready pods
    code, body, headers = get(f"http://{ip}:{port}/soup", "menu.example")
    assert code == 200 and json.loads(body)["pod"].startswith("soup-"), body
    assert headers["x-kubekitchen-pod"].startswith("default/soup-")
    code, body, _ = get(f"http://{ip}:{port}/salad", "menu.example")
    assert code == 404 and b"404 Not Found" in body and b"nginx" in body


def test_https_answers_with_the_hosts_certificate(cluster):
    wait_for(lambda: address(cluster, "menu"), timeout=60, what="the address")
    ip, _, port = address(cluster, "menu")

    def subject(name: str | None) -> str:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        with socket.create_connection((ip, port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname=name) as tls:
                der = tls.getpeercert(binary_form=True)
                tls.sendall(b"GET /soup HTTP/1.1\r\nHost: secure.example\r\nConnection: close\r\n\r\n")
                answer = b""
                while chunk := tls.recv(65536):
                    answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        return x509.load_der_x509_certificate(der)

    secret = json.loads(cluster.kubectl("get", "secret", "menu-tls", "-o", "json").stdout)
    wanted = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"])).serial_number
    assert subject("secure.example").serial_number == wanted
    other = subject("other.example")  # no Secret for that name: the controller's own fake certificate
    assert other.serial_number != wanted
    assert other.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == FAKE_NAME
    ip, http_port, https_port = address(cluster, "secure-menu")
    plain = http.client.HTTPConnection(ip, http_port, timeout=10)  # plain HTTP: ssl-redirect, as ingress-nginx
    plain.request("GET", "/soup?x=1", headers={"Host": "secure.example"})
    answer = plain.getresponse()
    assert answer.status == 308 and answer.getheader("location") == f"https://secure.example:{https_port}/soup?x=1"
    plain.close()


def test_a_pods_curl_with_the_host_header_reaches_the_front_door(cluster):
    wait_for(lambda: address(cluster, "menu") and ready(cluster, "test", 2) and ready(cluster, "soup", 1),
             timeout=90, what="ready endpoints and the address")
    ip, port, _ = address(cluster, "menu")
    pods = json.loads(cluster.kubectl("get", "pods", "-l", "app=test", "-o", "json").stdout)["items"]
    name = pods[0]["metadata"]["name"]

    def curl() -> str:
        return cluster.kubectl("exec", name, "--", "curl", "-s", "-H", "Host: menu.example",
                               f"http://{ip}:{port}/soup", check=False).stdout

    wait_for(lambda: curl().startswith("{"), timeout=30, what="kube-proxy to know the front door's ports")
    assert json.loads(curl())["pod"].startswith("soup-")
    out = cluster.kubectl("exec", name, "--", "curl", "-s", "-H", "Host: menu.example", f"http://{ip}:{port}/cake").stdout
    assert "404 Not Found" in out and "nginx" in out
    _, _, https_port = address(cluster, "secure-menu")
    out = cluster.kubectl("exec", name, "--", "curl", "-sk", "-H", "Host: secure.example",
                          f"https://{ip}:{https_port}/soup").stdout
    assert json.loads(out)["pod"].startswith("soup-")  # HTTPS from a pod too (SNI: the Host)


BEHIND_A_WALL = """
apiVersion: v1
kind: Pod
metadata: {name: pantry, labels: {app: pantry}}
spec:
  nodeName: node-2
  containers: [{name: app, image: hashicorp/http-echo, ports: [{containerPort: 5678}]}]
---
apiVersion: v1
kind: Service
metadata: {name: pantry}
spec:
  selector: {app: pantry}
  ports: [{port: 80, targetPort: 5678}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: pantry}
spec:
  rules:
  - host: pantry.example
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: pantry, port: {number: 80}}}}]
"""

PANTRY_DENY = """
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: pantry-closed}
spec:
  podSelector: {matchLabels: {app: pantry}}
  policyTypes: [Ingress]
"""


def test_a_network_policy_drops_the_front_doors_requests_to_a_pod_on_another_node(cluster):
    cluster.kubectl("apply", "-f", "-", input=BEHIND_A_WALL)
    wait_for(lambda: address(cluster, "pantry") and ready(cluster, "pantry", 1), timeout=90, what="the pantry")
    ip, port, _ = address(cluster, "pantry")
    code, body, _ = get(f"http://{ip}:{port}/", "pantry.example")
    assert code == 200 and json.loads(body)["pod"] == "pantry"
    cluster.kubectl("apply", "-f", "-", input=PANTRY_DENY)
    # node-1's kube-proxy (its network agent) learns of the policy and drops node-1's packets to
    # node-2's pod: the front door's connection hangs its connect timeout, then answers 504
    wait_for(lambda: get(f"http://{ip}:{port}/", "pantry.example")[0] == 504, timeout=60, interval=1,
             what="the front door's 504 once the policy is in")
    cluster.kubectl("delete", "netpol", "pantry-closed")
    wait_for(lambda: get(f"http://{ip}:{port}/", "pantry.example")[0] == 200, timeout=30, interval=1,
             what="the pantry reachable again")
