"""A watcher that stops reading must slow neither the writers nor the other watchers."""

from __future__ import annotations

import json
import socket
import threading
import time

import httpx
import pytest

from tests.conftest import Hub

pytestmark = pytest.mark.e2e


def test_a_stuck_watcher_does_not_slow_writers_or_other_watchers():
    hub = Hub().start()
    stuck = socket.create_connection(("127.0.0.1", hub.port))
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as client:
            rv = client.get("/api/v1/namespaces/default/configmaps").json()["metadata"]["resourceVersion"]
            stuck.sendall(f"GET /api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv} HTTP/1.1\r\n"
                          f"Host: 127.0.0.1\r\n\r\n".encode())  # ... and never read a byte
            received: list[str] = []

            def healthy_watcher():
                with httpx.stream("GET", f"{hub.url}/api/v1/namespaces/default/configmaps", headers=hub.auth,
                                  params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "60"}, timeout=70) as r:
                    for line in r.iter_lines():
                        if line:
                            received.append(json.loads(line)["object"]["metadata"]["name"])
                            if len(received) == 300:
                                return

            reader = threading.Thread(target=healthy_watcher)
            reader.start()
            payload = "x" * 20_000  # 300 × 20 kB: far more than the stuck socket's buffers hold
            started = time.monotonic()
            for i in range(300):
                body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"big-{i}"}, "data": {"x": payload}}
                assert client.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
            writing = time.monotonic() - started
            reader.join(timeout=30)
            assert received == [f"big-{i}" for i in range(300)]
            assert writing < 20, f"300 writes took {writing:.1f} s"
            assert client.get("/healthz").status_code == 200
    finally:
        stuck.close()
        hub.stop()
