"""control.serving.timeouts on a real hub: a client that sends half a request line, or trickles its
headers, or sends nothing, is disconnected within the bounds; a quiet watch is not cut by them."""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from twisted.internet.testing import MemoryReactorClock, StringTransport
from twisted.web import http as http_server

from tests.conftest import Hub

pytestmark = pytest.mark.e2e
HEADER, IDLE = 1.0, 2.0


@pytest.fixture(scope="module")
def bounded_hub():
    hub = Hub(env={"KK_HTTP_HEADER_TIMEOUT": str(HEADER), "KK_HTTP_IDLE_TIMEOUT": str(IDLE)}).start()
    yield hub
    hub.stop()


def closed_after(sock: socket.socket, trickle: bytes = b"", limit: float = 10.0) -> float:
    """Seconds until the hub closes `sock` (it reads b"" or is reset), sending a byte of `trickle`
    every 0.2 s meanwhile."""
    started = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - started < limit:
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - started
        except socket.timeout:
            if trickle:
                try:
                    sock.sendall(trickle[:1])
                except OSError:
                    return time.monotonic() - started
                trickle = trickle[1:]
        except OSError:
            return time.monotonic() - started
    raise AssertionError(f"the hub kept the connection open for {limit} s")


def test_half_a_request_line_is_closed_within_the_header_bound(bounded_hub):
    with socket.create_connection(("127.0.0.1", bounded_hub.port)) as sock:
        sock.sendall(b"GET /api/v1/namesp")
        assert closed_after(sock) < HEADER + 1.5


def test_headers_trickled_byte_by_byte_are_cut_by_the_header_bound(bounded_hub):
    with socket.create_connection(("127.0.0.1", bounded_hub.port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        # one byte every 0.2 s keeps an idle timer alive forever; the header bound still holds
        assert closed_after(sock, trickle=b"X-Slow: " + b"a" * 200) < HEADER + 1.5


def test_a_silent_connection_is_closed_within_the_idle_bound(bounded_hub):
    with socket.create_connection(("127.0.0.1", bounded_hub.port)) as sock:
        assert IDLE - 0.5 < closed_after(sock) < IDLE + 1.5


def test_a_quiet_watch_outlives_both_bounds_and_the_connection_serves_again(bounded_hub):
    with httpx.Client(base_url=bounded_hub.url, headers=bounded_hub.auth, timeout=15) as client:
        started = time.monotonic()
        with client.stream("GET", "/api/v1/namespaces/default/configmaps",
                           params={"watch": "1", "resourceVersion": "0", "timeoutSeconds": "4"}) as answer:
            assert answer.status_code == 200
            for _ in answer.iter_bytes():
                pass
        assert time.monotonic() - started >= 3.5  # ended by its own timeoutSeconds, not cut
        assert client.get("/healthz").status_code == 200


# --- the same bounds on the HTTPS port's HTTP/2 connections (ALPN h2) ---------------------------

def h2_socket(hub: Hub):
    import ssl

    context = ssl.create_default_context(cafile=str(hub.dir / "keys" / "ca.crt"))
    context.set_alpn_protocols(["h2"])
    sock = context.wrap_socket(socket.create_connection(("127.0.0.1", hub.secure_port)), server_hostname="127.0.0.1")
    assert sock.selected_alpn_protocol() == "h2"
    return sock


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def test_a_silent_http2_connection_is_closed_within_the_idle_bound(bounded_hub):
    with h2_socket(bounded_hub) as sock:
        sock.sendall(PREFACE + EMPTY_SETTINGS)
        assert IDLE - 0.5 < closed_after(sock) < IDLE + 1.5


def test_an_http2_frame_trickled_byte_by_byte_is_cut_by_the_header_bound(bounded_hub):
    with h2_socket(bounded_hub) as sock:
        sock.sendall(PREFACE + EMPTY_SETTINGS)
        # a HEADERS frame announcing 200 bytes on stream 1, its bytes sent one every 0.2 s
        trickle = b"\x00\x00\xc8\x01\x04\x00\x00\x00\x01" + b"\x00" * 200
        assert closed_after(sock, trickle=trickle) < HEADER + 1.5


def test_a_quiet_http2_watch_outlives_both_bounds(bounded_hub):
    import ssl

    verify = ssl.create_default_context(cafile=str(bounded_hub.dir / "keys" / "ca.crt"))
    with httpx.Client(base_url=f"https://127.0.0.1:{bounded_hub.secure_port}", headers=bounded_hub.auth,
                      verify=verify, http2=True, timeout=15) as client:
        started = time.monotonic()
        with client.stream("GET", "/api/v1/namespaces/default/configmaps",
                           params={"watch": "1", "resourceVersion": "0", "timeoutSeconds": "4"}) as answer:
            assert answer.http_version == "HTTP/2" and answer.status_code == 200
            for _ in answer.iter_bytes():
                pass
        assert time.monotonic() - started >= 3.5  # ended by its own timeoutSeconds, not cut
        assert client.get("/healthz").http_version == "HTTP/2"


# --- the header timer on Twisted's own HTTPChannel, in memory (no hub, fake clock) ----------------

class Answered(http_server.Request):
    def process(self) -> None:
        self.setResponseCode(200)
        self.finish()


def channel_on_clock(monkeypatch) -> tuple[http_server.HTTPChannel, MemoryReactorClock, StringTransport]:
    from control.serving import timeouts

    timeouts.install(header=timeouts._bounds.get("header", HEADER), idle=timeouts._bounds.get("idle", IDLE))
    monkeypatch.setitem(timeouts._bounds, "header", HEADER)
    clock, transport = MemoryReactorClock(), StringTransport()
    channel = http_server.HTTPChannel()
    channel.requestFactory = Answered
    made = channel.timers_made = []

    def call_later(*args, **kwargs):
        made.append(args[0])
        return clock.callLater(*args, **kwargs)

    channel.callLater = call_later
    channel.timeOut = None  # the idle timer is Twisted's own; only the header timer is counted here
    channel.makeConnection(transport)
    return channel, clock, transport


def test_a_request_whose_headers_come_in_one_read_needs_no_header_timer(monkeypatch):
    channel, clock, transport = channel_on_clock(monkeypatch)
    for _ in range(3):  # kept alive: each request alike
        channel.dataReceived(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        assert channel.timers_made == []
    assert transport.value().count(b"HTTP/1.1 200") == 3


def test_headers_split_over_reads_are_timed_from_their_first_byte(monkeypatch):
    channel, clock, transport = channel_on_clock(monkeypatch)
    channel.dataReceived(b"GET /version HTTP/1.1\r\nHo")
    assert len(clock.getDelayedCalls()) == 1
    channel.dataReceived(b"st: x\r\n\r\n")
    assert [c for c in clock.getDelayedCalls() if c.active()] == []
    channel.dataReceived(b"GET /version HTTP/1.1\r\n")  # the next request's headers begin ...
    clock.advance(HEADER + 0.1)  # ... and never end
    assert transport.disconnecting


def test_a_body_slower_than_the_header_bound_is_not_cut_by_it(monkeypatch):
    channel, clock, transport = channel_on_clock(monkeypatch)
    channel.dataReceived(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab")
    clock.advance(HEADER + 0.1)
    channel.dataReceived(b"c")
    clock.advance(HEADER + 0.1)
    assert [c for c in clock.getDelayedCalls() if c.active()] == []
    channel.dataReceived(b"d")
    clock.advance(HEADER + 0.1)
    assert not transport.disconnecting
    assert b"HTTP/1.1 200" in transport.value()
