"""The control plane as pods, as a CKA candidate meets it: `runcluster` (the supervisor, its
static pods, kubeadm's kube-proxy DaemonSet) driven with the real kubectl. kube-system lists the
four static pods and the node's kube-proxy Running; the
scheduler's log is its own; a misspelt command in its manifest leaves it in CrashLoopBackOff and
new pods Pending, and the fixed file heals both; a manifest that is not YAML costs an event and
nothing else; a deleted mirror pod comes back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import KUBECTL, ROOT, start_runcluster, wait_for
from tests.e2e.test_runcluster import kill_cluster

pytestmark = pytest.mark.e2e
STATIC = ("etcd-node-1", "kube-apiserver-node-1", "kube-controller-manager-node-1", "kube-scheduler-node-1")


class Kitchen:
    def __init__(self):
        self.data = Path(tempfile.mkdtemp(prefix="kk-cp-"))
        self.kubeconfig = self.data / "kubeconfig.yaml"
        env = {**os.environ}
        env.pop("KK_DATA_DIR", None)
        self.log = self.data / "runcluster.log"
        self.port, self.process = start_runcluster(["--nodes", "1", "--data", str(self.data), "--pace", "workshop"],
                                                   self.log, env=env, timeout=120, start_new_session=True)
        self.marker = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.marker}"
        out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--server", self.url], cwd=ROOT,
                             env={**env, "KK_DATA_DIR": str(self.data)}, check=True, capture_output=True, text=True)
        self.kubeconfig.write_text(out.stdout)

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                                 str(self.data / "kube-cache"), *args], capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr}")
        return result

    def pod(self, namespace: str, name: str) -> dict:
        result = self.kubectl("get", "pod", "-n", namespace, name, "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else {}

    def manifest(self, component: str) -> Path:
        return self.data / "manifests" / f"{component}.yaml"


def container(pod: dict) -> dict:
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return statuses[0]


def running(pod: dict) -> bool:
    return bool(container(pod).get("ready")) and "running" in (container(pod).get("state") or {})


@pytest.fixture(scope="module")
def kitchen():
    started = Kitchen()
    try:
        yield started
    finally:
        started.process.send_signal(signal.SIGINT)
        try:
            started.process.wait(timeout=30)
        finally:
            kill_cluster(started.process, started.process.pid, started.marker, started.data)


def test_kube_system_lists_the_control_plane_running_with_its_own_logs(kitchen):
    wait_for(lambda: all(running(kitchen.pod("kube-system", name)) for name in STATIC), timeout=120, interval=1,
             what="the four static pods Running")
    def proxies_running() -> list:
        found = json.loads(kitchen.kubectl("get", "pods", "-n", "kube-system", "-l", "k8s-app=kube-proxy",
                                           "-o", "json").stdout)["items"]
        return found if found and all(running(p) for p in found) else []

    # the DaemonSet's pod is listed before it runs: wait for Running, not only for its name
    wait_for(proxies_running, timeout=60, what="the kube-proxy DaemonSet's pod Running")
    listing = kitchen.kubectl("get", "pods", "-n", "kube-system").stdout
    print(kitchen.kubectl("get", "pods", "-A", "-o", "wide").stdout)
    for name in STATIC:
        assert any(line.split()[:3] == [name, "1/1", "Running"] for line in listing.splitlines()), listing
    pod = kitchen.pod("kube-system", "kube-scheduler-node-1")
    annotations = pod["metadata"]["annotations"]
    assert annotations["kubernetes.io/config.source"] == "file"
    assert annotations["kubernetes.io/config.mirror"] == annotations["kubernetes.io/config.hash"]
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "Node"
    proxies = json.loads(kitchen.kubectl("get", "pods", "-n", "kube-system", "-l", "k8s-app=kube-proxy",
                                         "-o", "json").stdout)["items"]
    assert [p["spec"]["nodeName"] for p in proxies] == ["node-1"] and running(proxies[0])
    assert proxies[0]["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    log = wait_for(lambda: "Starting Kubernetes scheduler" in (text := kitchen.kubectl(
        "logs", "-n", "kube-system", "kube-scheduler-node-1").stdout) and text, timeout=30, what="the scheduler's log")
    assert "--kubeconfig=/etc/kubernetes/scheduler.conf" in log


def test_a_broken_scheduler_manifest_leaves_pods_pending_and_the_fixed_file_heals_it(kitchen):
    wait_for(lambda: running(kitchen.pod("kube-system", "kube-scheduler-node-1")), timeout=120, what="scheduler")
    path = kitchen.manifest("kube-scheduler")
    healthy = path.read_text()
    path.write_text(healthy.replace("- kube-scheduler\n", "- kube-schedulerr\n", 1))
    wait_for(lambda: (container(kitchen.pod("kube-system", "kube-scheduler-node-1")).get("state") or {})
             .get("waiting", {}).get("reason") == "CrashLoopBackOff", timeout=30, what="CrashLoopBackOff")
    listing = kitchen.kubectl("get", "pods", "-n", "kube-system", "kube-scheduler-node-1").stdout
    assert "CrashLoopBackOff" in listing and "0/1" in listing
    described = kitchen.kubectl("describe", "pod", "-n", "kube-system", "kube-scheduler-node-1").stdout
    assert 'exec: "kube-schedulerr": executable file not found in $PATH' in described
    kitchen.kubectl("run", "late-guest", "--image", "nginx")
    time.sleep(5)  # the scheduler would have placed it within a second
    guest = kitchen.pod("default", "late-guest")
    assert guest["status"]["phase"] == "Pending" and not guest["spec"].get("nodeName")
    path.write_text(healthy)
    wait_for(lambda: running(kitchen.pod("kube-system", "kube-scheduler-node-1")), timeout=60, what="healed")
    wait_for(lambda: kitchen.pod("default", "late-guest")["spec"].get("nodeName") == "node-1", timeout=60,
             what="the waiting pod placed")


def test_a_manifest_that_is_not_yaml_is_an_event_and_nothing_else(kitchen):
    (kitchen.data / "manifests" / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [oops\n")
    wait_for(lambda: "FailedToReadStaticPodManifest" in kitchen.kubectl("get", "events", "-n", "default").stdout,
             timeout=30, what="the kubelet's event")
    assert all(running(kitchen.pod("kube-system", name)) for name in STATIC)
    assert kitchen.process.poll() is None
    assert "Could not process manifest file" in kitchen.log.read_text()


def test_a_deleted_mirror_pod_is_made_again(kitchen):
    before = kitchen.pod("kube-system", "etcd-node-1")["metadata"]["uid"]
    kitchen.kubectl("delete", "pod", "-n", "kube-system", "etcd-node-1", "--wait=false")
    wait_for(lambda: (pod := kitchen.pod("kube-system", "etcd-node-1")) and pod["metadata"]["uid"] != before
             and running(pod), timeout=30, what="etcd's mirror pod again")
