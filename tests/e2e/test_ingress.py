"""Ingress and IngressClass as a user sees them with the real kubectl (v1.32): kubernetes.io's
`service/networking/minimal-ingress.yaml` applied and listed, `kubectl create ingress` (protobuf)
given the default `kitchen` class, `kubectl describe`, upstream's 422 for a relative path, and
`kubectl apply --prune` / `kubectl diff --prune`, whose default prune list names Ingress."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

# kubernetes.io's service/networking/minimal-ingress.yaml, as the page shows it
MINIMAL_INGRESS = """apiVersion: networking.k8s.io/v1
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
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels: {{app: x}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: web, image: nginx}}]
"""


@pytest.fixture
def ns(hub) -> str:
    name = f"ing-{uuid.uuid4().hex[:8]}"
    hub.kubectl("create", "namespace", name)
    return name


def test_minimal_ingress_from_kubernetes_io(hub, ns):
    applied = hub.kubectl("apply", "-n", ns, "-f", "-", input=MINIMAL_INGRESS)
    assert applied.stdout.strip() == "ingress.networking.k8s.io/minimal-ingress created"
    listed = hub.kubectl("get", "ingress", "-n", ns).stdout.splitlines()
    assert listed[0].split() == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert listed[1].split()[:4] == ["minimal-ingress", "nginx-example", "*", "80"]
    described = hub.kubectl("describe", "ingress", "minimal-ingress", "-n", ns).stdout
    assert "Ingress Class:    nginx-example" in described
    assert "/testpath   test:80" in described.replace("  (<error: services \"test\" not found>)", "")


def test_create_ingress_gets_the_default_class(hub, ns):
    classes = hub.kubectl("get", "ingressclass").stdout.splitlines()
    assert classes[0].split() == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert any(line.split()[:3] == ["kitchen", "kubekitchen.dev/ingress", "<none>"] for line in classes[1:])
    made = hub.kubectl("create", "ingress", "menu", "-n", ns, "--rule=menu.example/soup*=soup:80",
                       "--rule=menu.example/bread=bread:http,tls=menu-tls")
    assert made.stdout.strip() == "ingress.networking.k8s.io/menu created"
    ing = json.loads(hub.kubectl("get", "ing", "menu", "-n", ns, "-o", "json").stdout)
    assert ing["spec"]["ingressClassName"] == "kitchen"
    paths = ing["spec"]["rules"][0]["http"]["paths"]
    assert [(p["path"], p["pathType"]) for p in paths] == [("/soup", "Prefix"), ("/bread", "Exact")]
    assert paths[1]["backend"]["service"]["port"] == {"name": "http"}
    row = hub.kubectl("get", "ing", "menu", "-n", ns, "--no-headers").stdout.split()
    assert row[:3] == ["menu", "kitchen", "menu.example"] and " ".join(row[3:5]) == "80, 443"


def test_a_relative_path_is_refused_as_upstream(hub, ns):
    bad = MINIMAL_INGRESS.replace("path: /testpath", "path: testpath")
    refused = hub.kubectl("apply", "-n", ns, "-f", "-", input=bad, check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith(
        'The Ingress "minimal-ingress" is invalid: spec.rules[0].http.paths[0].path: Invalid value: "testpath": '
        "must be an absolute path")


def test_apply_and_diff_with_prune(hub, ns, tmp_path: Path):
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "a.yaml").write_text(DEPLOYMENT.format(name="a"))
    (folder / "b.yaml").write_text(DEPLOYMENT.format(name="b"))
    first = hub.kubectl("apply", "-n", ns, "--prune", "-l", "app=x", "-f", str(folder))
    assert sorted(first.stdout.splitlines()) == ["deployment.apps/a created", "deployment.apps/b created"]
    (folder / "b.yaml").unlink()
    diff = hub.kubectl("diff", "-n", ns, "--prune", "-l", "app=x", "-f", str(folder), check=False)
    assert diff.returncode == 1 and "error" not in diff.stderr.lower(), diff.stderr
    pruned = hub.kubectl("apply", "-n", ns, "--prune", "-l", "app=x", "-f", str(folder))
    assert sorted(pruned.stdout.splitlines()) == ["deployment.apps/a unchanged", "deployment.apps/b pruned"]
