"""A watcher that stops reading must slow neither the writers nor the other watchers."""

from __future__ import annotations

import json
import select
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


def _rss(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _drain(sock: socket.socket) -> tuple[int, bool]:
    """(bytes the socket still yields, whether it ended by EOF or reset within 20 s)."""
    sock.settimeout(20)
    total = 0
    try:
        while chunk := sock.recv(1 << 16):
            total += len(chunk)
    except (ConnectionResetError, socket.timeout) as exc:
        return total, not isinstance(exc, socket.timeout)
    return total, True


def _hung_up(sock: socket.socket, within: float) -> bool:
    """Whether the hub closes or resets the connection within `within` seconds, without reading
    from it (reading would let a hub that is still behind in pumping see the client catch up)."""
    poller = select.poll()
    poller.register(sock, select.POLLRDHUP)  # POLLHUP and POLLERR are always reported
    deadline = time.monotonic() + within
    while (left := deadline - time.monotonic()) > 0:
        for _, events in poller.poll(left * 1000):
            if events & (select.POLLHUP | select.POLLERR | select.POLLRDHUP):
                return True
    return False


def test_ten_watchers_that_never_read_are_dropped_and_hub_memory_stays_bounded():
    hub = Hub(env={"KK_WATCH_MAX_BACKLOG_BYTES": str(64 * 1024), "KK_WATCH_STALL_SECONDS": "0.5"}).start()
    stuck: list[socket.socket] = []
    try:
        with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as client:
            rv = client.get("/api/v1/namespaces/default/configmaps").json()["metadata"]["resourceVersion"]
            for _ in range(10):
                sock = socket.create_connection(("127.0.0.1", hub.port))
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                # Tables with the object, encoded for each watcher (plain events share one encoding)
                sock.sendall(f"GET /api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}"
                             f"&includeObject=Object HTTP/1.1\r\n"
                             f"Host: 127.0.0.1\r\nAuthorization: Bearer {hub.token}\r\n"
                             f"Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n\r\n".encode())
                stuck.append(sock)
            assert client.get("/healthz").status_code == 200
            before = _rss(hub.process.pid)
            payload = "x" * 50_000  # 150 × 50 kB = 7.5 MB of events for each watcher, 75 MB for ten
            for i in range(150):
                body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"big-{i}"}, "data": {"x": payload}}
                assert client.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
            grown = _rss(hub.process.pid) - before
            # the feed keeps the changes (~15 MB); ten unbounded watchers would add ~75 MB more
            assert grown < 45_000_000, f"the hub grew by {grown / 1e6:.0f} MB"
            # a loaded machine may still be pumping the backlog when the writes end: wait for each drop
            assert all(_hung_up(sock, within=60) for sock in stuck), "a watcher that never read was kept"
            for sock in stuck:
                received, ended = _drain(sock)
                assert ended and received < 7_500_000, (received, ended)
            # a watcher that reads is served throughout, and a new watch after the drop works
            listed = client.get("/api/v1/namespaces/default/configmaps").json()
            assert len(listed["items"]) == 150
    finally:
        for sock in stuck:
            sock.close()
        hub.stop()
