"""`runcluster` as a user starts it: hub plus spokes, with the spokes' desired states in the hub."""

from __future__ import annotations

import os
import signal
import subprocess
import shutil
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import pytest

from control.auth.tokenfile import admin_token, bearer
from tests.conftest import ROOT, free_server_port, wait_for

pytestmark = pytest.mark.e2e


def command_lines() -> dict[int, list[str]]:
    """Every living process's arguments, by pid (psutil: the same on Linux and macOS)."""
    found = {}
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["status"] != psutil.STATUS_ZOMBIE and process.info["cmdline"]:
            found[process.pid] = process.info["cmdline"]
    return found


def spoke_running(url: str, name: str) -> bool:
    return any("runcomponent" in words and name in words and url in words for words in command_lines().values())


def test_runcluster_serves_and_the_supervisor_follows_the_configmap(tmp_path):
    port = free_server_port()
    url = f"http://127.0.0.1:{port}"
    data = str(tmp_path / "data")
    log = tmp_path / "runcluster.log"
    process = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "runcluster", "--addr", f"127.0.0.1:{port}",
                                "--nodes", "1", "--data", data, "--pace", "workshop"], cwd=ROOT,
                               env={**os.environ}, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=url, timeout=5, headers=bearer(admin_token(data))) as client:
            def node_ready():
                try:
                    node = client.get("/api/v1/nodes/node-1").json()
                except httpx.HTTPError:
                    return False
                return node.get("kind") == "Node" and any(
                    c.get("type") == "Ready" and c.get("status") == "True"
                    for c in node.get("status", {}).get("conditions", []))

            wait_for(node_ready, timeout=30, what="node-1 Ready")
            assert Path(data, "cluster.sqlite3").exists()
            spokes = client.get("/api/v1/namespaces/kube-system/configmaps/kubekitchen-spokes").json()["data"]
            assert {"controller-manager", "scheduler", "kubelet.node-1", "line-cook", "garnish-cook"} <= set(spokes)
            assert set(spokes.values()) == {"running"}
            assert spoke_running(url, "scheduler")
            patch = {"data": {"scheduler": "stopped"}}
            client.patch("/api/v1/namespaces/kube-system/configmaps/kubekitchen-spokes", json=patch,
                         headers={"Content-Type": "application/merge-patch+json"})
            wait_for(lambda: not spoke_running(url, "scheduler"), timeout=15, what="the scheduler stopped")
            patch = {"data": {"scheduler": "running"}}
            client.patch("/api/v1/namespaces/kube-system/configmaps/kubekitchen-spokes", json=patch,
                         headers={"Content-Type": "application/merge-patch+json"})
            wait_for(lambda: spoke_running(url, "scheduler"), timeout=15, what="the scheduler started again")
        # the start-up's kubectl line, run as printed, by a shell: the real kubectl as the admin, over HTTPS
        printed = next(line for line in log.read_text().splitlines() if line.startswith("  kubectl:"))
        command = printed.removeprefix("  kubectl:").split("  (")[0].strip()
        assert command == f"kubectl --kubeconfig {Path(data, 'admin.kubeconfig')} get pods"
        assert Path(data, "admin.kubeconfig").stat().st_mode & 0o777 == 0o600
        ran = subprocess.run(["bash", "-c", command.replace("kubectl", shutil.which("kubectl"), 1) + " -A -o name"],
                             capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        assert "pod/" in ran.stdout  # the kitchen's own pods, seen as the cluster admin
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert "Kube Kitchen is up" in log.read_text()
    assert not spoke_running(url, "scheduler") and not spoke_running(url, "kubelet")


# --- stopping stops everything ------------------------------------------------------------------

def processes_mentioning(marker: str) -> set[int]:
    """Every live process whose command line contains `marker` (the cluster's unique address)."""
    return {pid for pid, words in command_lines().items() if any(marker in word for word in words)}


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                living.add(pid)
        except psutil.NoSuchProcess:
            pass
    return living


class StartedCluster:
    """`runcluster` in its own process group (as a terminal would start it), one node, workshop pace."""

    def __init__(self):
        self.port = free_server_port()
        self.marker = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.marker}"
        self.data = tempfile.mkdtemp(prefix="kk-stop-")
        self.log = Path(self.data, "runcluster.log")
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "runcluster", "--addr", self.marker, "--nodes", "1",
             "--data", self.data, "--pace", "workshop"], cwd=ROOT, env={**os.environ},
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
        self.group = self.process.pid  # a new session: its pid is the group's id

    def children(self) -> set[int]:
        return processes_mentioning(self.marker) - {self.process.pid}

    def wait_for_every_spoke(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while missing := [name for name in SPOKES if not spoke_running(self.url, name)]:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"spokes not running after {timeout:.0f} s: {missing}; runcluster "
                                     f"exit code {self.process.poll()}; its output:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)

    def hub_pid(self) -> int:
        for pid in self.children():
            if "runhub" in command_lines().get(pid, []):
                return pid
        raise AssertionError("no hub process")

    def kill_everything(self) -> None:
        """Whatever happened: nothing of this cluster survives the test."""
        kill_cluster(self.process, self.group, self.marker, self.data)


def kill_cluster(process: subprocess.Popen, group: int, marker: str, data: str | Path) -> None:
    """SIGKILL to the cluster's process group and to every process naming its address, then its
    data folder removed: nothing of a test's cluster survives the test, whatever happened."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for pid in processes_mentioning(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if process.poll() is None:
        process.wait(timeout=10)
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def started_cluster():
    cluster = StartedCluster()
    try:
        yield cluster
    finally:
        cluster.kill_everything()


def node_ready(url: str, data: str) -> bool:
    try:
        node = httpx.get(f"{url}/api/v1/nodes/node-1", timeout=2, headers=bearer(admin_token(data))).json()
    except (httpx.HTTPError, ValueError):
        return False
    return node.get("kind") == "Node" and any(c.get("type") == "Ready" and c.get("status") == "True"
                                              for c in (node.get("status") or {}).get("conditions") or [])


SPOKES = ("controller-manager", "scheduler", "line-cook", "garnish-cook", "kubelet", "kube-proxy")


@pytest.mark.parametrize("how", ["SIGINT to runcluster", "SIGTERM to runcluster", "SIGINT to the group",
                                 "SIGTERM to the group", "the hub killed", "runcluster killed"])
def test_stopping_runcluster_leaves_no_process_behind(started_cluster, how):
    cluster = started_cluster
    cluster.wait_for_every_spoke()
    wait_for(lambda: "Kube Kitchen is up" in cluster.log.read_text(), timeout=10, what="runcluster up")
    wait_for(lambda: node_ready(cluster.url, cluster.data), timeout=30, what="node-1 Ready")
    before = cluster.children()
    assert len(before) >= len(SPOKES) + 1, before

    if how == "SIGINT to runcluster":
        cluster.process.send_signal(signal.SIGINT)
    elif how == "SIGTERM to runcluster":
        cluster.process.send_signal(signal.SIGTERM)
    elif how == "SIGINT to the group":
        os.killpg(cluster.group, signal.SIGINT)
    elif how == "SIGTERM to the group":
        os.killpg(cluster.group, signal.SIGTERM)
    elif how == "the hub killed":
        os.kill(cluster.hub_pid(), signal.SIGKILL)
    else:
        cluster.process.kill()

    wait_for(lambda: not alive(before) and not cluster.children(), timeout=15, interval=0.2,
             what=f"every process of the cluster gone after {how}")
    code = cluster.process.wait(timeout=5)
    if how.startswith("SIG"):
        assert code == 0, cluster.log.read_text()[-3000:]
