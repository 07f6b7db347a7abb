"""`runcluster` as a user starts it: hub plus spokes, with the spokes' desired states in the hub."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, free_port, wait_for

pytestmark = pytest.mark.e2e


def spoke_running(url: str, name: str) -> bool:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"runcomponent" in words and name.encode() in words and url.encode() in words:
            return True
    return False


def test_runcluster_serves_and_the_supervisor_follows_the_configmap():
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data = tempfile.mkdtemp(prefix="kk-runcluster-")
    process = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "runcluster", "--addr", f"127.0.0.1:{port}",
                                "--nodes", "1", "--data", data, "--pace", "workshop"], cwd=ROOT,
                               env={**os.environ}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=url, timeout=5) as client:
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
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=30)[0].decode()
    assert "Kube Kitchen is up" in output
    assert not spoke_running(url, "scheduler") and not spoke_running(url, "kubelet")
