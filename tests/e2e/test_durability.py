"""A write acknowledged to a client survives `kill -9` of the server."""

from __future__ import annotations

import signal

import httpx
import pytest

from tests.conftest import Hub

pytestmark = pytest.mark.e2e


def test_acknowledged_writes_survive_kill_9():
    hub = Hub().start()
    try:
        acknowledged = []
        with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as client:
            for i in range(60):
                body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"order-{i}"}, "data": {"n": str(i)}}
                response = client.post("/api/v1/namespaces/default/configmaps", json=body)
                assert response.status_code == 201
                acknowledged.append((f"order-{i}", response.json()["metadata"]["resourceVersion"]))
        hub.process.send_signal(signal.SIGKILL)
        hub.process.wait(timeout=10)
        hub.start()
        with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as client:
            listed = client.get("/api/v1/namespaces/default/configmaps").json()
            stored = {(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in listed["items"]}
            assert set(acknowledged) <= stored
            # the log survived too: a watch from before the writes replays every one of them, in order
            first_rv = int(acknowledged[0][1]) - 1
            with client.stream("GET", "/api/v1/namespaces/default/configmaps",
                               params={"watch": "1", "resourceVersion": str(first_rv), "timeoutSeconds": "1"}) as stream:
                import json
                events = [json.loads(line) for line in stream.iter_lines() if line]
            names = [e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"]
            assert names == [name for name, _ in acknowledged]
    finally:
        hub.stop()
