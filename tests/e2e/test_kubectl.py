"""The real kubectl (v1.32, validation on) against a real hub: what a user types, what they see.

Only what the API server itself does is checked (there are no controllers yet: deployments get
no pods, pods stay Pending). Every test works in its own namespace, created with kubectl.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
import yaml

pytestmark = pytest.mark.e2e

KUBECTL = "/usr/bin/kubectl"


# --- helpers ----------------------------------------------------------------------------------

def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def ns(hub) -> str:
    """A fresh namespace, created declaratively (kubectl create -f -)."""
    name = unique("kc")
    manifest = f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"
    result = hub.kubectl("create", "-f", "-", input=manifest)
    assert result.stdout.strip() == f"namespace/{name} created"
    return name


def deployment(name: str, ns: str, *, replicas: int = 2, image: str = "nginx:1.25", labels: dict | None = None,
               template_labels: dict | None = None, containers: list | None = None) -> dict:
    labels = labels or {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(template_labels or labels)},
                "spec": {"containers": containers or [{"name": "web", "image": image}]},
            },
        },
    }


def pod(name: str, ns: str, labels: dict | None = None, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}], **spec}}


def write(tmp_path: Path, name: str, *objects: dict) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


def create(hub, *objects: dict) -> None:
    hub.kubectl("create", "-f", "-", input=yaml.safe_dump_all(objects))


def get_json(hub, *args: str) -> dict:
    return json.loads(hub.kubectl("get", *args, "-o", "json").stdout)


def table(text: str) -> list[list[str]]:
    """kubectl's column output split into cells (columns are separated by 2+ spaces)."""
    return [re.split(r"\s{2,}", line.strip()) for line in text.strip().splitlines()]


def bind(hub, ns: str, name: str, node: str = "node-1") -> None:
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": ns},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
    response = httpx.post(f"{hub.url}/api/v1/namespaces/{ns}/pods/{name}/binding", headers=hub.auth, json=body, timeout=10)
    assert response.status_code == 201, response.text


def failed(result: subprocess.CompletedProcess) -> str:
    assert result.returncode != 0, f"expected kubectl to fail:\n{result.stdout}\n{result.stderr}"
    return result.stderr


class Background:
    """A kubectl process whose output lines are collected as they are printed."""

    def __init__(self, hub, *args: str):
        cmd = [KUBECTL, "--kubeconfig", str(hub.kubeconfig), "--cache-dir", str(hub.dir / "kube-cache"), *args]
        self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))

    def wait_for(self, predicate, timeout: float = 10) -> list[str]:
        deadline = time.monotonic() + timeout
        while not predicate(self.lines):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"kubectl printed only:\n" + "\n".join(self.lines))
            try:
                self.lines.append(self._queue.get(timeout=min(remaining, 0.2)))
            except queue.Empty:
                if self.process.poll() is not None and self._queue.empty():
                    stderr = self.process.stderr.read() if self.process.stderr else ""
                    raise AssertionError(f"kubectl exited ({self.process.returncode}):\n"
                                         + "\n".join(self.lines) + "\n" + stderr)
        return self.lines

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# --- cluster information ----------------------------------------------------------------------

def test_version(hub):
    out = json.loads(hub.kubectl("version", "-o", "json").stdout)
    server = out["serverVersion"]
    assert (server["major"], server["minor"], server["gitVersion"]) == ("1", "32", "v1.32.0")
    assert server["platform"] == "linux/amd64"
    plain = hub.kubectl("version").stdout
    assert "Server Version: v1.32.0" in plain


def test_api_resources(hub):
    rows = table(hub.kubectl("api-resources").stdout)
    assert rows[0] == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    # metrics.k8s.io also has "nodes" and "pods" (NodeMetrics, PodMetrics), as with metrics-server
    metrics = {row[0]: row for row in rows[1:] if row[1] == "metrics.k8s.io/v1beta1"}
    assert metrics["pods"] == ["pods", "metrics.k8s.io/v1beta1", "true", "PodMetrics"]
    by_name = {row[0]: row for row in rows[1:] if row[1] != "metrics.k8s.io/v1beta1"}
    assert by_name["pods"] == ["pods", "po", "v1", "true", "Pod"]
    assert by_name["deployments"] == ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    assert by_name["replicasets"] == ["replicasets", "rs", "apps/v1", "true", "ReplicaSet"]
    assert by_name["replicationcontrollers"] == ["replicationcontrollers", "rc", "v1", "true", "ReplicationController"]
    assert by_name["namespaces"] == ["namespaces", "ns", "v1", "false", "Namespace"]
    assert by_name["nodes"] == ["nodes", "no", "v1", "false", "Node"]
    assert by_name["services"][1:] == ["svc", "v1", "true", "Service"]
    cluster_scoped = {row[0] for row in table(hub.kubectl("api-resources", "--namespaced=false").stdout)[1:]}
    assert {"namespaces", "nodes"} <= cluster_scoped and "pods" not in cluster_scoped
    names = hub.kubectl("api-resources", "-o", "name").stdout.split()
    assert {"pods", "deployments.apps", "replicasets.apps", "replicationcontrollers", "leases.coordination.k8s.io"} <= set(names)


def test_explain(hub):
    out = hub.kubectl("explain", "pods.spec.containers").stdout
    assert "KIND:       Pod" in out and "VERSION:    v1" in out
    assert "FIELD: containers <[]Container>" in out
    assert "image\t<string>" in out
    out = hub.kubectl("explain", "deployment.spec.replicas").stdout
    assert "GROUP:      apps" in out and "KIND:       Deployment" in out
    assert "FIELD: replicas <integer>" in out
    result = hub.kubectl("explain", "pods.spec.nonsense", check=False)
    assert "field \"nonsense\" does not exist" in failed(result)


# --- create / apply ---------------------------------------------------------------------------

def test_create_namespace_imperatively(hub):
    # kubectl's typed client sends this POST as application/vnd.kubernetes.protobuf.
    name = unique("imp")
    result = hub.kubectl("create", "namespace", name, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"namespace/{name} created"
    assert get_json(hub, "namespace", name)["status"]["phase"] == "Active"


def test_apply_creates_then_configures(hub, ns, tmp_path):
    path = write(tmp_path, "web.yaml", deployment("web", ns, replicas=2, image="nginx:1.25"))
    assert hub.kubectl("apply", "-f", str(path)).stdout.strip() == "deployment.apps/web created"
    live = get_json(hub, "deployment", "web", "-n", ns)
    assert live["spec"]["replicas"] == 2 and live["metadata"]["generation"] == 1
    last_applied = json.loads(live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last_applied["spec"]["replicas"] == 2

    assert hub.kubectl("apply", "-f", str(path)).stdout.strip() == "deployment.apps/web unchanged"

    path = write(tmp_path, "web.yaml", deployment("web", ns, replicas=3, image="nginx:1.26"))
    assert hub.kubectl("apply", "-f", str(path)).stdout.strip() == "deployment.apps/web configured"
    live = get_json(hub, "deployment", "web", "-n", ns)
    assert live["spec"]["replicas"] == 3
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert live["metadata"]["generation"] == 2
    shown = hub.kubectl("get", "deployment", "web", "-n", ns, "-o",
                        "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}").stdout
    assert shown == "3 nginx:1.26"

    # A field dropped from the file is removed from the live object (three-way merge).
    changed = deployment("web", ns, replicas=3, image="nginx:1.26", labels={"app": "web"})
    changed["metadata"]["labels"]["team"] = "a"
    hub.kubectl("apply", "-f", str(write(tmp_path, "web.yaml", changed)))
    assert get_json(hub, "deployment", "web", "-n", ns)["metadata"]["labels"] == {"app": "web", "team": "a"}
    hub.kubectl("apply", "-f", str(write(tmp_path, "web.yaml", deployment("web", ns, replicas=3, image="nginx:1.26"))))
    assert get_json(hub, "deployment", "web", "-n", ns)["metadata"]["labels"] == {"app": "web"}


def test_create_then_already_exists(hub, ns, tmp_path):
    path = write(tmp_path, "things.yaml", deployment("api", ns), pod("solo", ns))
    out = hub.kubectl("create", "-f", str(path)).stdout.splitlines()
    assert out == ["deployment.apps/api created", "pod/solo created"]
    created = get_json(hub, "pod", "solo", "-n", ns)
    assert created["status"]["phase"] == "Pending"
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]

    again = hub.kubectl("create", "-f", str(path), check=False)
    stderr = failed(again)
    assert (f'Error from server (AlreadyExists): error when creating "{path}": '
            f'deployments.apps "api" already exists') in stderr
    assert f'Error from server (AlreadyExists): error when creating "{path}": pods "solo" already exists' in stderr
    assert get_json(hub, "pod", "solo", "-n", ns)["metadata"]["uid"] == created["metadata"]["uid"]


# --- get --------------------------------------------------------------------------------------

def test_get_table_formats_and_selectors(hub, ns):
    create(hub, pod("alpha", ns, {"app": "db", "tier": "back"}), pod("beta", ns, {"app": "web", "tier": "front"}),
           pod("gamma", ns, {"app": "web"}), deployment("site", ns, replicas=3))

    rows = table(hub.kubectl("get", "pods", "-n", ns).stdout)
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [r[:4] for r in rows[1:]] == [[n, "0/1", "Pending", "0"] for n in ("alpha", "beta", "gamma")]

    wide = table(hub.kubectl("get", "pods", "-n", ns, "-o", "wide").stdout)
    assert wide[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
    assert wide[1][5:] == ["<none>", "<none>", "<none>", "<none>"]

    rows = table(hub.kubectl("get", "deployments", "-n", ns).stdout)
    assert rows[0] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert rows[1][:4] == ["site", "0/3", "0", "0"]
    wide = table(hub.kubectl("get", "deploy", "-n", ns, "-o", "wide").stdout)
    assert wide[0][5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1][5:] == ["web", "nginx:1.25", "app=site"]

    listed = yaml.safe_load(hub.kubectl("get", "pods", "-n", ns, "-o", "yaml").stdout)
    assert listed["kind"] == "List" and [p["metadata"]["name"] for p in listed["items"]] == ["alpha", "beta", "gamma"]
    one = yaml.safe_load(hub.kubectl("get", "pod", "alpha", "-n", ns, "-o", "yaml").stdout)
    assert (one["kind"], one["apiVersion"], one["metadata"]["namespace"]) == ("Pod", "v1", ns)
    assert one["metadata"]["labels"] == {"app": "db", "tier": "back"}
    assert get_json(hub, "pod", "beta", "-n", ns)["metadata"]["labels"]["tier"] == "front"

    assert hub.kubectl("get", "pods", "-n", ns, "-o", "name").stdout.split() == ["pod/alpha", "pod/beta", "pod/gamma"]
    assert hub.kubectl("get", "all", "-n", ns, "-o", "name").stdout.split() == [
        "pod/alpha", "pod/beta", "pod/gamma", "deployment.apps/site"]
    names = hub.kubectl("get", "pods", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}").stdout
    assert names == "alpha beta gamma"
    assert hub.kubectl("get", "pod", "alpha", "-n", ns, "-o", "jsonpath={.status.phase}").stdout == "Pending"
    custom = table(hub.kubectl("get", "pods", "-n", ns, "-o", "custom-columns=N:.metadata.name,APP:.metadata.labels.app").stdout)
    assert custom == [["N", "APP"], ["alpha", "db"], ["beta", "web"], ["gamma", "web"]]

    def selected(*args: str) -> list[str]:
        out = hub.kubectl("get", "pods", "-n", ns, "-o", "name", *args).stdout.split()
        return [n.removeprefix("pod/") for n in out]

    assert selected("-l", "app=web") == ["beta", "gamma"]
    assert selected("-l", "app!=web") == ["alpha"]
    assert selected("-l", "app in (db,web),tier") == ["alpha", "beta"]
    assert selected("-l", "!tier") == ["gamma"]
    assert selected("-l", "tier notin (back)") == ["beta", "gamma"]
    assert selected("--field-selector", "metadata.name=beta") == ["beta"]
    assert selected("--field-selector", "status.phase=Pending,metadata.name!=beta") == ["alpha", "gamma"]
    none = hub.kubectl("get", "pods", "-n", ns, "-l", "app=nothing")
    assert none.stdout == "" and f"No resources found in {ns} namespace." in none.stderr

    everywhere = table(hub.kubectl("get", "pods", "-A").stdout)
    assert everywhere[0][:2] == ["NAMESPACE", "NAME"]
    assert [r[:3] for r in everywhere if r[0] == ns] == [[ns, "alpha", "0/1"], [ns, "beta", "0/1"], [ns, "gamma", "0/1"]]
    everywhere = table(hub.kubectl("get", "pods", "-A", "-l", "app=db").stdout)
    assert [ns, "alpha"] in [r[:2] for r in everywhere]

    labelled = table(hub.kubectl("get", "pods", "-n", ns, "--show-labels").stdout)
    assert labelled[0][-1] == "LABELS"
    assert [(r[0], r[-1]) for r in labelled[1:]] == [("alpha", "app=db,tier=back"), ("beta", "app=web,tier=front"),
                                                     ("gamma", "app=web")]
    columns = table(hub.kubectl("get", "pods", "-n", ns, "-L", "tier").stdout)
    assert columns[0][-1] == "TIER" and [r[-1] for r in columns[1:3]] == ["back", "front"]

    missing = hub.kubectl("get", "pod", "nope", "-n", ns, check=False)
    assert 'Error from server (NotFound): pods "nope" not found' in failed(missing)


def test_get_watch_prints_changes(hub, ns):
    create(hub, pod("before", ns, {"app": "w"}))
    events = Background(hub, "get", "pods", "-n", ns, "-w", "--output-watch-events")
    plain = Background(hub, "get", "pods", "-n", ns, "-w")
    named = Background(hub, "get", "pod", "before", "-n", ns, "-w")
    try:
        events.wait_for(lambda lines: any(" before " in line for line in lines))
        plain.wait_for(lambda lines: any(line.startswith("before ") for line in lines))
        named.wait_for(lambda lines: any(line.startswith("before ") for line in lines))
        create(hub, pod("during", ns, {"app": "w"}))
        hub.kubectl("label", "pod", "during", "-n", ns, "stage=2")
        hub.kubectl("label", "pod", "before", "-n", ns, "stage=2")
        hub.kubectl("delete", "pod", "during", "-n", ns)

        def about(name: str, lines: list[str]) -> list[list[str]]:
            return [row for row in table("\n".join(lines)) if name in row]

        lines = events.wait_for(lambda ls: any(r[0] == "DELETED" for r in about("during", ls)))
        rows = table("\n".join(lines))
        assert rows[0] == ["EVENT", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert [r[:2] for r in rows[1:]] == [["ADDED", "before"], ["ADDED", "during"], ["MODIFIED", "during"],
                                             ["MODIFIED", "before"], ["DELETED", "during"]]
        assert all(r[2:4] == ["0/1", "Pending"] for r in rows[1:])

        lines = plain.wait_for(lambda ls: len(ls) >= 6)
        rows = table("\n".join(lines))
        assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert [r[0] for r in rows[1:]] == ["before", "during", "during", "before", "during"]

        # `get NAME -w` prints the object once, then only its own changes.
        lines = named.wait_for(lambda ls: len(ls) >= 3)
        assert [r[0] for r in table("\n".join(lines))] == ["NAME", "before", "before"]
    finally:
        for process in (events, plain, named):
            process.stop()


def test_describe(hub, ns):
    create(hub, pod("desc", ns, {"app": "db", "tier": "back"}), deployment("dd", ns, replicas=4))
    hub.kubectl("annotate", "pod", "desc", "-n", ns, "owner=kitchen")
    out = hub.kubectl("describe", "pod", "desc", "-n", ns).stdout
    fields = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in out.splitlines()
              if ":" in line and not line.startswith(" ")}
    assert fields["Name"] == "desc" and fields["Namespace"] == ns
    assert fields["Status"] == "Pending" and fields["Node"] == "<none>"
    assert fields["Labels"] == "app=db" and "tier=back" in out
    assert fields["Annotations"] == "owner: kitchen"
    assert "Containers:\n  main:\n    Image:        busybox:1.36" in out

    out = hub.kubectl("describe", "deployment", "dd", "-n", ns).stdout
    assert "Name:                   dd" in out
    assert "Selector:               app=dd" in out
    assert "Replicas:               4 desired | 0 updated | 0 total | 0 available | 0 unavailable" in out
    assert "StrategyType:           RollingUpdate" in out
    assert "RollingUpdateStrategy:  25% max unavailable, 25% max surge" in out

    described = hub.kubectl("describe", "pods", "-n", ns, "-l", "app=db").stdout
    # "Service Account:" (every pod has one) sets the width of the labels, as on a real cluster
    assert described.startswith("Name:             desc\n") and "\nService Account:  default\n" in described


# --- delete -----------------------------------------------------------------------------------

def test_delete_returns(hub, ns, tmp_path):
    path = write(tmp_path, "gone.yaml", deployment("gone", ns), pod("loose", ns, {"app": "x"}))
    hub.kubectl("create", "-f", str(path))
    create(hub, pod("p1", ns, {"batch": "b"}), pod("p2", ns, {"batch": "b"}), pod("keep", ns))

    started = time.monotonic()
    result = hub.kubectl("delete", "deployment", "gone", "-n", ns, timeout=20)
    assert result.stdout.strip() == 'deployment.apps "gone" deleted'
    result = hub.kubectl("delete", "pod", "loose", "-n", ns, timeout=20)
    assert result.stdout.strip() == 'pod "loose" deleted'
    result = hub.kubectl("delete", "pods", "-n", ns, "-l", "batch=b", timeout=20)
    assert sorted(result.stdout.splitlines()) == ['pod "p1" deleted', 'pod "p2" deleted']
    assert time.monotonic() - started < 15
    assert hub.kubectl("get", "pods", "-n", ns, "-o", "name").stdout.split() == ["pod/keep"]
    assert "NotFound" in failed(hub.kubectl("get", "deployment", "gone", "-n", ns, check=False))

    again = hub.kubectl("delete", "-f", str(path), check=False)
    assert 'Error from server (NotFound): error when deleting' in failed(again)
    assert hub.kubectl("delete", "-f", str(path), "--ignore-not-found").returncode == 0


def test_delete_bound_pod_is_graceful(hub, ns):
    create(hub, pod("bound", ns))
    bind(hub, ns, "bound")
    assert hub.kubectl("get", "pod", "bound", "-n", ns, "-o", "jsonpath={.spec.nodeName}").stdout == "node-1"

    result = hub.kubectl("delete", "pod", "bound", "-n", ns, "--wait=false", timeout=20)
    assert result.stdout.strip() == 'pod "bound" deleted'
    live = get_json(hub, "pod", "bound", "-n", ns)
    assert live["metadata"]["deletionTimestamp"] and live["metadata"]["deletionGracePeriodSeconds"] == 30
    assert table(hub.kubectl("get", "pod", "bound", "-n", ns).stdout)[1][2] == "Terminating"

    result = hub.kubectl("delete", "pod", "bound", "-n", ns, "--grace-period=0", "--force", timeout=20)
    assert result.stdout.strip() == 'pod "bound" force deleted'
    assert "NotFound" in failed(hub.kubectl("get", "pod", "bound", "-n", ns, check=False))


# --- patch, scale, label, annotate, replace ----------------------------------------------------

def test_patch_strategic_merge_json(hub, ns):
    create(hub, deployment("pt", ns, containers=[{"name": "web", "image": "nginx:1.25"},
                                                  {"name": "side", "image": "envoy:1"}]))
    out = hub.kubectl("patch", "deployment", "pt", "-n", ns, "-p",
                      '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}').stdout
    assert out.strip() == "deployment.apps/pt patched"
    containers = get_json(hub, "deployment", "pt", "-n", ns)["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("web", "nginx:1.27"), ("side", "envoy:1")]

    hub.kubectl("patch", "deployment", "pt", "-n", ns, "--type", "merge",
                "-p", '{"metadata":{"labels":{"m":"1","app":null}}}')
    live = get_json(hub, "deployment", "pt", "-n", ns)
    assert live["metadata"]["labels"] == {"m": "1"}

    # A merge patch replaces lists whole.
    hub.kubectl("patch", "deployment", "pt", "-n", ns, "--type=merge",
                "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"busybox"}]}}}}')
    containers = get_json(hub, "deployment", "pt", "-n", ns)["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["only"]

    hub.kubectl("patch", "deployment", "pt", "-n", ns, "--type", "json",
                "-p", '[{"op":"replace","path":"/spec/replicas","value":7},'
                      '{"op":"add","path":"/metadata/annotations","value":{"j":"yes"}}]')
    live = get_json(hub, "deployment", "pt", "-n", ns)
    assert live["spec"]["replicas"] == 7 and live["metadata"]["annotations"]["j"] == "yes"
    assert live["metadata"]["generation"] == 4

    noop = hub.kubectl("patch", "deployment", "pt", "-n", ns, "--type", "merge", "-p", '{"spec":{"replicas":7}}')
    assert noop.stdout.strip() == "deployment.apps/pt patched (no change)"

    bad = hub.kubectl("patch", "deployment", "pt", "-n", ns, "--type", "json",
                      "-p", '[{"op":"test","path":"/spec/replicas","value":1}]', check=False)
    assert "The request is invalid: the server rejected our request due to an error in our request" in failed(bad)
    assert get_json(hub, "deployment", "pt", "-n", ns)["spec"]["replicas"] == 7


def test_scale(hub, ns):
    create(hub, deployment("sc", ns, replicas=1))
    assert hub.kubectl("scale", "deployment", "sc", "-n", ns, "--replicas=4").stdout.strip() == "deployment.apps/sc scaled"
    live = get_json(hub, "deployment", "sc", "-n", ns)
    assert live["spec"]["replicas"] == 4 and live["metadata"]["generation"] == 2
    result = hub.kubectl("scale", "deployment", "sc", "-n", ns, "--current-replicas=2", "--replicas=5", check=False)
    assert "Expected replicas to be 2, was 4" in failed(result)
    assert get_json(hub, "deployment", "sc", "-n", ns)["spec"]["replicas"] == 4
    hub.kubectl("scale", "deploy/sc", "-n", ns, "--current-replicas=4", "--replicas=0")
    assert get_json(hub, "deployment", "sc", "-n", ns)["spec"]["replicas"] == 0


def test_label_and_annotate(hub, ns):
    create(hub, pod("lab", ns, {"app": "one"}))
    assert hub.kubectl("label", "pod", "lab", "-n", ns, "color=red").stdout.strip() == "pod/lab labeled"
    refused = hub.kubectl("label", "pod", "lab", "-n", ns, "color=blue", check=False)
    assert "'color' already has a value (red), and --overwrite is false" in failed(refused)
    hub.kubectl("label", "pod", "lab", "-n", ns, "color=blue", "--overwrite")
    assert get_json(hub, "pod", "lab", "-n", ns)["metadata"]["labels"] == {"app": "one", "color": "blue"}
    assert hub.kubectl("label", "pod", "lab", "-n", ns, "color-").stdout.strip() == "pod/lab unlabeled"
    assert get_json(hub, "pod", "lab", "-n", ns)["metadata"]["labels"] == {"app": "one"}

    invalid = hub.kubectl("label", "pod", "lab", "-n", ns, "bad key=x", check=False)
    assert failed(invalid)

    assert hub.kubectl("annotate", "pod", "lab", "-n", ns, "note=hello world").stdout.strip() == "pod/lab annotated"
    hub.kubectl("annotate", "pod", "lab", "-n", ns, "note=bye", "--overwrite")
    assert get_json(hub, "pod", "lab", "-n", ns)["metadata"]["annotations"] == {"note": "bye"}
    hub.kubectl("annotate", "pod", "lab", "-n", ns, "note-")
    assert not get_json(hub, "pod", "lab", "-n", ns)["metadata"].get("annotations")

    create(hub, pod("lab2", ns, {"app": "two"}))
    hub.kubectl("label", "pods", "--all", "-n", ns, "wave=1")
    assert hub.kubectl("get", "pods", "-n", ns, "-l", "wave=1", "-o", "name").stdout.split() == ["pod/lab", "pod/lab2"]


def test_replace_and_stale_replace_conflict(hub, ns, tmp_path):
    create(hub, deployment("rp", ns))
    old = hub.kubectl("get", "deployment", "rp", "-n", ns, "-o", "yaml").stdout
    stale = tmp_path / "stale.yaml"
    stale.write_text(old)
    hub.kubectl("label", "deployment", "rp", "-n", ns, "bump=1")
    rv_after_label = get_json(hub, "deployment", "rp", "-n", ns)["metadata"]["resourceVersion"]

    result = hub.kubectl("replace", "-f", str(stale), check=False)
    assert (f'Error from server (Conflict): error when replacing "{stale}": Operation cannot be fulfilled on '
            f'deployments.apps "rp": the object has been modified; please apply your changes to the latest '
            f'version and try again') in failed(result)
    live = get_json(hub, "deployment", "rp", "-n", ns)
    assert live["metadata"]["resourceVersion"] == rv_after_label and live["metadata"]["labels"]["bump"] == "1"

    fresh = yaml.safe_load(hub.kubectl("get", "deployment", "rp", "-n", ns, "-o", "yaml").stdout)
    fresh["spec"]["replicas"] = 6
    path = write(tmp_path, "fresh.yaml", fresh)
    assert hub.kubectl("replace", "-f", str(path)).stdout.strip() == "deployment.apps/rp replaced"
    assert get_json(hub, "deployment", "rp", "-n", ns)["spec"]["replicas"] == 6


# --- dry run ----------------------------------------------------------------------------------

def test_dry_run_server_create_apply_label(hub, ns, tmp_path):
    out = hub.kubectl("create", "--dry-run=server", "-f", "-", input=yaml.safe_dump(pod("ghost", ns)), ).stdout
    assert out.strip() == "pod/ghost created (server dry run)"
    assert "NotFound" in failed(hub.kubectl("get", "pod", "ghost", "-n", ns, check=False))
    shown = json.loads(hub.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-",
                                   input=yaml.safe_dump(pod("ghost", ns))).stdout)
    assert shown["metadata"]["uid"] and shown["status"]["phase"] == "Pending"
    hub.kubectl("create", "-f", "-", input=yaml.safe_dump(pod("real", ns)))
    taken = hub.kubectl("create", "--dry-run=server", "-f", "-", input=yaml.safe_dump(pod("real", ns)), check=False)
    assert 'Error from server (AlreadyExists): error when creating "STDIN": pods "real" already exists' in failed(taken)

    path = write(tmp_path, "dr.yaml", deployment("dr", ns, replicas=2))
    out = hub.kubectl("apply", "--dry-run=server", "-f", str(path)).stdout
    assert out.strip() == "deployment.apps/dr created (server dry run)"
    assert "NotFound" in failed(hub.kubectl("get", "deployment", "dr", "-n", ns, check=False))

    hub.kubectl("apply", "-f", str(path))
    before = get_json(hub, "deployment", "dr", "-n", ns)
    path = write(tmp_path, "dr.yaml", deployment("dr", ns, replicas=9))
    out = hub.kubectl("apply", "--dry-run=server", "-f", str(path)).stdout
    assert out.strip() == "deployment.apps/dr configured (server dry run)"
    out = hub.kubectl("label", "deployment", "dr", "-n", ns, "dry=run", "--dry-run=server").stdout
    assert out.strip() == "deployment.apps/dr labeled (server dry run)"
    after = get_json(hub, "deployment", "dr", "-n", ns)
    assert after["spec"]["replicas"] == 2 and "dry" not in after["metadata"]["labels"]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_dry_run_server_scale(hub, ns):
    create(hub, deployment("dsc", ns, replicas=2))
    before = get_json(hub, "deployment", "dsc", "-n", ns)
    out = hub.kubectl("scale", "deployment", "dsc", "-n", ns, "--replicas=9", "--dry-run=server").stdout
    assert out.strip() == "deployment.apps/dsc scaled (server dry run)"
    after = get_json(hub, "deployment", "dsc", "-n", ns)
    assert after["spec"]["replicas"] == 2
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_dry_run_server_delete(hub, ns):
    # kubectl sends dryRun in the DeleteOptions body: {"propagationPolicy":"Background","dryRun":["All"]}
    create(hub, pod("stay", ns), deployment("stay", ns))
    assert hub.kubectl("delete", "pod", "stay", "-n", ns, "--dry-run=server").stdout.strip() == \
        'pod "stay" deleted (server dry run)'
    assert hub.kubectl("delete", "deployment", "stay", "-n", ns, "--dry-run=server").stdout.strip() == \
        'deployment.apps "stay" deleted (server dry run)'
    assert hub.kubectl("get", "pod,deployment", "-n", ns, "-o", "name").stdout.split() == \
        ["pod/stay", "deployment.apps/stay"]


# --- errors -----------------------------------------------------------------------------------

def test_invalid_manifest_prints_422(hub, ns, tmp_path):
    bad = deployment("mismatch", ns, labels={"app": "one"}, template_labels={"app": "two"})
    path = write(tmp_path, "bad.yaml", bad)
    for verb in ("apply", "create"):
        stderr = failed(hub.kubectl(verb, "-f", str(path), check=False))
        assert 'The Deployment "mismatch" is invalid: spec.template.metadata.labels: Invalid value: ' in stderr
        assert "`selector` does not match template `labels`" in stderr
    nocontainers = pod("empty", ns)
    nocontainers["spec"]["containers"] = []
    stderr = failed(hub.kubectl("create", "-f", str(write(tmp_path, "empty.yaml", nocontainers)), check=False))
    assert 'The Pod "empty" is invalid: spec.containers: Required value' in stderr
    assert hub.kubectl("get", "deploy,pods", "-n", ns, "-o", "name").stdout == ""


def test_unknown_field_is_refused_strictly(hub, ns, tmp_path):
    manifest = pod("strict", ns)
    manifest["spec"]["bogusField"] = 1
    manifest["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    path = write(tmp_path, "strict.yaml", manifest)
    expected = (f'Error from server (BadRequest): error when creating "{path}": Pod in version "v1" cannot be '
                f'handled as a Pod: strict decoding error: unknown field "spec.bogusField", unknown field '
                f'"spec.containers[0].imagePullPolcy"')
    for verb in ("create", "apply"):
        stderr = failed(hub.kubectl(verb, "-f", str(path), check=False))
        assert 'strict decoding error: unknown field "spec.bogusField"' in stderr
        assert expected in stderr
    assert "NotFound" in failed(hub.kubectl("get", "pod", "strict", "-n", ns, check=False))


def test_unknown_field_dropped_without_validation(hub, ns, tmp_path):
    # --validate=false: kubectl sends fieldValidation=Ignore and the server drops the unknown fields.
    manifest = pod("strict", ns)
    manifest["spec"]["bogusField"] = 1
    manifest["spec"]["containers"][0]["imagePullPolcy"] = "Always"
    path = write(tmp_path, "strict.yaml", manifest)
    assert hub.kubectl("create", "--validate=false", "-f", str(path)).stdout.strip() == "pod/strict created"
    live = get_json(hub, "pod", "strict", "-n", ns)
    assert "bogusField" not in live["spec"] and "imagePullPolcy" not in live["spec"]["containers"][0]
