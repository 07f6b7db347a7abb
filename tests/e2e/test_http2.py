"""HTTP/2 on the hub's HTTPS port, as kube-apiserver speaks it: ALPN offers `h2` and `http/1.1`; a GET
and a watch travel as HTTP/2 streams (each watch event its own DATA frame, delivered as it happens);
an HTTP/1.1-only client is still served; the real kubectl gets, watches and execs over it; a stuck
HTTP/2 watcher loses its stream (not the connection), and the serving timeouts hold for HTTP/2."""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import threading
import time
from functools import partial

import h2.config
import h2.connection
import h2.events
import httpx
import pytest

from tests.conftest import KUBECTL, Hub, hub_with_kubelet, wait_for

pytestmark = pytest.mark.e2e

NODE = "node-1"
eventually = partial(wait_for, timeout=20)


@pytest.fixture(scope="module")
def hub():
    with hub_with_kubelet(NODE, {"KK_PACE": "workshop", "KK_START_DELAY": "0.1"}, scheduler=True) as server:
        yield server


def secure(hub: Hub) -> str:
    return f"https://127.0.0.1:{hub.secure_port}"


def ca(hub: Hub) -> str:
    return str(hub.dir / "keys" / "ca.crt")


def tls_socket(hub: Hub, protocols: list[str]) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=ca(hub))
    context.set_alpn_protocols(protocols)
    return context.wrap_socket(socket.create_connection(("127.0.0.1", hub.secure_port)), server_hostname="127.0.0.1")


def configmap(name: str, value: str = "v") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": value}}


def test_alpn_offers_h2_and_http11_and_prefers_h2(hub):
    for offered, chosen in ((["h2", "http/1.1"], "h2"), (["http/1.1"], "http/1.1")):
        with tls_socket(hub, offered) as sock:
            assert sock.selected_alpn_protocol() == chosen


def test_a_get_and_a_create_over_http2(hub):
    with httpx.Client(base_url=secure(hub), headers=hub.auth, verify=ssl.create_default_context(cafile=ca(hub)), http2=True, timeout=10) as client:
        listed = client.get("/api/v1/namespaces")
        assert listed.http_version == "HTTP/2" and listed.status_code == 200
        assert "default" in [n["metadata"]["name"] for n in listed.json()["items"]]
        made = client.post("/api/v1/namespaces/default/configmaps", json=configmap("over-h2"))
        assert made.http_version == "HTTP/2" and made.status_code == 201
        missing = client.get("/api/v1/namespaces/default/configmaps/nope")
        assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"


def test_an_http11_only_client_is_still_served(hub):
    with httpx.Client(base_url=secure(hub), headers=hub.auth, verify=ssl.create_default_context(cafile=ca(hub)), http2=False, timeout=10) as client:
        answer = client.get("/api/v1/namespaces/default/configmaps")
        assert answer.http_version == "HTTP/1.1" and answer.status_code == 200


def test_watch_events_arrive_one_by_one_over_http2(hub):
    """Each event is read before the next object is created: nothing waits for the stream to end."""
    with httpx.Client(base_url=secure(hub), headers=hub.auth, verify=ssl.create_default_context(cafile=ca(hub)), http2=True, timeout=15) as client:
        rv = client.get("/api/v1/namespaces/default/configmaps").json()["metadata"]["resourceVersion"]
        with client.stream("GET", "/api/v1/namespaces/default/configmaps",
                           params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "30"}) as stream:
            assert stream.http_version == "HTTP/2" and stream.status_code == 200
            lines = stream.iter_lines()
            for i in range(3):
                with httpx.Client(base_url=secure(hub), headers=hub.auth, verify=ssl.create_default_context(cafile=ca(hub)), http2=True) as writer:
                    assert writer.post("/api/v1/namespaces/default/configmaps",
                                       json=configmap(f"step-{i}")).status_code == 201
                event = json.loads(next(line for line in lines if line))
                assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", f"step-{i}")


def h2_client(hub: Hub) -> tuple[ssl.SSLSocket, h2.connection.H2Connection]:
    sock = tls_socket(hub, ["h2"])
    assert sock.selected_alpn_protocol() == "h2"
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def request_headers(hub: Hub, path: str) -> list[tuple[str, str]]:
    return [(":method", "GET"), (":scheme", "https"), (":authority", f"127.0.0.1:{hub.secure_port}"),
            (":path", path), ("authorization", hub.auth["Authorization"])]


def frames_until(sock: ssl.SSLSocket, conn: h2.connection.H2Connection, done, *, acknowledge: bool = True,
                 limit: float = 20.0) -> list:
    """h2 events read from the socket until done(events) holds."""
    events: list = []
    sock.settimeout(limit)
    deadline = time.monotonic() + limit
    while not done(events):
        assert time.monotonic() < deadline, f"not done after {limit} s: {events[-5:]}"
        data = sock.recv(65536)
        assert data, f"connection closed: {events[-5:]}"
        for event in conn.receive_data(data):
            events.append(event)
            if acknowledge and isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        sock.sendall(conn.data_to_send())
    return events


def test_each_watch_event_is_one_data_frame(hub):
    with httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10) as client:
        rv = client.get("/api/v1/namespaces/default/configmaps").json()["metadata"]["resourceVersion"]
        sock, conn = h2_client(hub)
        with sock:
            conn.send_headers(1, request_headers(
                hub, f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}"), end_stream=True)
            sock.sendall(conn.data_to_send())
            head = frames_until(sock, conn, lambda ev: any(isinstance(e, h2.events.ResponseReceived) for e in ev))
            status = next(e for e in head if isinstance(e, h2.events.ResponseReceived)).headers
            assert (":status", "200") in status
            data = []
            for name in ("frame-a", "frame-b"):  # one change at a time (changes committed together share a write)
                assert client.post("/api/v1/namespaces/default/configmaps", json=configmap(name)).status_code == 201
                got = frames_until(sock, conn, lambda ev: any(isinstance(e, h2.events.DataReceived) for e in ev))
                data += [e.data for e in got if isinstance(e, h2.events.DataReceived)]
            assert [json.loads(d)["object"]["metadata"]["name"] for d in data] == ["frame-a", "frame-b"]
            assert all(d.endswith(b"\n") and d.count(b"\n") == 1 for d in data)  # one event, one frame


def test_a_stuck_http2_watcher_loses_its_stream_not_the_connection():
    """The client reads the socket but grants no flow-control window on its watch: the hub stops
    queueing for that stream and resets it; the same connection still answers a new request."""
    stuck_hub = Hub(env={"KK_WATCH_MAX_BACKLOG_BYTES": str(64 * 1024), "KK_WATCH_STALL_SECONDS": "0.5"}).start()
    try:
        with httpx.Client(base_url=stuck_hub.url, headers=stuck_hub.auth, timeout=10) as client:
            rv = client.get("/api/v1/namespaces/default/configmaps").json()["metadata"]["resourceVersion"]
            sock, conn = h2_client(stuck_hub)
            with sock:
                conn.send_headers(1, request_headers(
                    stuck_hub, f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}"), end_stream=True)
                sock.sendall(conn.data_to_send())
                writes = threading.Thread(target=lambda: [
                    client.post("/api/v1/namespaces/default/configmaps", json=configmap(f"big-{i}", "x" * 50_000))
                    for i in range(40)])
                writes.start()
                # 40 × 50 kB far exceeds the 64 KiB window the client never refills
                events = frames_until(sock, conn, lambda ev: any(isinstance(e, h2.events.StreamReset) for e in ev),
                                      acknowledge=False, limit=60)
                writes.join(timeout=60)
                received = sum(len(e.data) for e in events if isinstance(e, h2.events.DataReceived))
                assert received <= 65_535
                if received:  # give back the connection's window the reset stream used, as any client does
                    conn.increment_flow_control_window(received)
                conn.send_headers(3, request_headers(stuck_hub, "/api/v1/namespaces/default/configmaps/big-0"),
                                  end_stream=True)
                sock.sendall(conn.data_to_send())
                answer = frames_until(sock, conn, lambda ev: any(isinstance(e, h2.events.StreamEnded)
                                                                 and e.stream_id == 3 for e in ev))
                assert (":status", "200") in next(e for e in answer if isinstance(e, h2.events.ResponseReceived)).headers
            assert client.get("/healthz").status_code == 200
    finally:
        stuck_hub.stop()


def kubectl_h2(hub: Hub, *args: str, **kwargs) -> subprocess.CompletedProcess:
    """kubectl through `manage.py kubeconfig` (the HTTPS address and its CA), with Go's HTTP/2 client
    telling on stderr which protocol it spoke."""
    return subprocess.run([KUBECTL, "--kubeconfig", str(hub.kubeconfig), "--cache-dir", str(hub.dir / "kube-cache"),
                           *args], capture_output=True, text=True, env={**os.environ, "GODEBUG": "http2debug=1"},
                          **kwargs)


def pod(name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "busybox:1.36"}]}})


def test_kubectl_gets_watches_and_execs_with_h2_on(hub):
    assert "https://127.0.0.1:" in hub.kubeconfig.read_text()
    got = kubectl_h2(hub, "get", "namespaces", timeout=60)
    assert got.returncode == 0 and "default" in got.stdout
    assert "http2: Transport creating client conn" in got.stderr  # Go chose HTTP/2 (ALPN h2)
    hub.kubectl("apply", "-f", "-", input=pod("h2-box"))
    watch = subprocess.Popen([KUBECTL, "--kubeconfig", str(hub.kubeconfig), "--cache-dir", str(hub.dir / "kube-cache"),
                              "get", "pods", "-w", "--request-timeout=60s"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env={**os.environ, "GODEBUG": "http2debug=1"})
    try:
        seen = []
        for line in watch.stdout:  # the list first: once h2-box is printed, the watch is open
            seen.append(line)
            if line.startswith("h2-box "):
                break
        hub.kubectl("apply", "-f", "-", input=pod("h2-later"))  # created while kubectl watches
        for line in watch.stdout:
            seen.append(line)
            if line.startswith("h2-later "):
                break
        assert any(line.startswith("h2-later ") for line in seen), seen
    finally:
        watch.kill()
        _, err = watch.communicate(timeout=10)
    assert "http2: Transport creating client conn" in err
    eventually(lambda: " Running " in hub.kubectl("get", "pod", "h2-box").stdout, what="h2-box Running")
    shell = kubectl_h2(hub, "exec", "h2-box", "--", "echo", "over h2", timeout=60)
    assert shell.returncode == 0 and shell.stdout == "over h2\n", shell.stderr[-2000:]


def test_the_dashboard_opened_on_the_https_port_logs_in_and_reads_the_hub(hub):
    """The page calls the hub where it was served, here over HTTPS: it trusts the cluster CA
    (before: 'cannot reach the hub ...: CERTIFICATE_VERIFY_FAILED' at login)."""
    from control import roster

    with httpx.Client(base_url=secure(hub), verify=ca(hub), http2=True, follow_redirects=True, timeout=20) as browser:
        landed = browser.get(f"/?code={roster.instructor_code(hub.dir)}")
        assert landed.status_code == 200, landed.text[-500:]
        assert landed.url.path == "/" and "kubernetes-admin" in landed.text


def test_the_http11_wire_view_reaches_an_https_hub_over_tls(hub):
    import asyncio

    from dashboard import wire

    received: list[bytes] = []

    async def forward(data: bytes) -> None:
        received.append(data)
        if b"\r\n\r\n" in b"".join(received):
            raise EOFError  # the status line and headers are all this test needs

    async def watch() -> None:
        with pytest.raises(EOFError):
            await wire.relay("127.0.0.1", hub.secure_port, forward, token=hub.token,
                             ca=(hub.dir / "keys" / "ca.crt").read_bytes())

    asyncio.run(watch())
    head = b"".join(received)
    assert head.startswith(b"HTTP/1.1 200") and b"transfer-encoding: chunked" in head.lower()
