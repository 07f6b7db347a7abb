"""kopf, the operator framework from PyPI, runs a handler against the hub end to end: it discovers
the Order kind, watches it, patches the status subresource on create and on update, posts events,
and holds the slip with its finalizer until its delete handler has run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from control.restaurant.install import install_crds
from control.restaurant.manifests import ORDERS, order
from tests.conftest import ROOT, Hub, wait_for

pytestmark = pytest.mark.e2e
HANDLER = Path(__file__).with_name("kopf_handler.py")


@pytest.fixture()
def kopf_operator():
    hub = Hub().start()
    process = None
    try:
        install_crds(hub.url, token=hub.token)
        env = {**os.environ, "KUBECONFIG": str(hub.kubeconfig)}
        log = (hub.dir / "kopf.log").open("wb")
        process = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", "default",
                                    "--verbose", str(HANDLER)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        yield hub, process
    finally:
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        hub.stop()


def status_of(client: httpx.Client, name: str) -> dict:
    return client.get(ORDERS.path("default", name)).json().get("status") or {}


def test_kopf_handles_create_and_update_through_the_hub(kopf_operator):
    hub, process = kopf_operator
    log = hub.dir / "kopf.log"
    with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as client:
        created = client.post(ORDERS.path("default"), json=order("kopf-table", count=2))
        assert created.status_code == 201, created.text
        wait_for(lambda: status_of(client, "kopf-table").get("cooked") == 2, timeout=30,
                 what=f"kopf's create handler (log: {log})")
        assert status_of(client, "kopf-table")["phase"] == "Cooked"
        annotations = client.get(ORDERS.path("default", "kopf-table")).json()["metadata"].get("annotations") or {}
        assert "kopf.zalando.org/last-handled-configuration" in annotations
        client.patch(ORDERS.path("default", "kopf-table"), content=json.dumps({"spec": {"count": 3}}),
                     headers={"Content-Type": "application/merge-patch+json"})
        wait_for(lambda: status_of(client, "kopf-table").get("cooked") == 3, timeout=30,
                 what=f"kopf's update handler (log: {log})")
        def kopf_events():
            items = client.get("/api/v1/namespaces/default/events").json()["items"]
            reasons = {e.get("reason") for e in items if e.get("involvedObject", {}).get("name") == "kopf-table"}
            return reasons >= {"Cooked", "Recounted"}
        wait_for(kopf_events, timeout=15, what="kopf's events about the order")
        finalizers = client.get(ORDERS.path("default", "kopf-table")).json()["metadata"].get("finalizers") or []
        assert "kopf.zalando.org/KopfFinalizerMarker" in finalizers  # kopf holds the slip for its delete handler
        assert client.delete(ORDERS.path("default", "kopf-table")).status_code in (200, 202)
        wait_for(lambda: client.get(ORDERS.path("default", "kopf-table")).status_code == 404, timeout=30,
                 what=f"kopf's delete handler released the slip (log: {log})")
    assert process.poll() is None, log.read_text()[-3000:]
    text = log.read_text()
    assert "Handler 'cook' succeeded" in text and "Handler 'recount/spec.count' succeeded" in text
    assert "Handler 'clear_table' succeeded" in text
    assert "Traceback" not in text, text[-3000:]
