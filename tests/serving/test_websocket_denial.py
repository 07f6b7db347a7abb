"""control.serving.websocket_denial on Daphne's own WebSocket protocol, over a fake transport and with
the timers called by hand (no waiting): an upgrade the application has not decided when the decision
bound passes is answered 429 with Retry-After and a Status, never reset (issue 20: `kubectl exec` on
a busy hub got `Connection reset by peer` from autobahn's 5 s opening-handshake abort); an upgrade
decided in time, or refused by the application, is answered as before."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from twisted.internet.error import ConnectionDone
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure

from control.serving import websocket_denial
from tests.serving import fakeserver

UPGRADE = (b"GET /api/v1/namespaces/a/pods/web-1/exec?command=echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n")
DECISION = 7.5


class FakeServer(fakeserver.FakeServer):
    """Daphne's Server as its WebSocket protocol uses it."""
    root_path = ""
    proxy_forwarded_address_header = None
    websocket_timeout = -1
    websocket_connect_timeout = 20  # Daphne's default

    def create_application(self, protocol, scope):
        websocket_denial.advertise(protocol, scope)  # what the installed Server.create_application adds
        return super().create_application(protocol, scope)

    def log_action(self, *args):
        pass


class Transport(StringTransport):
    """A TCP transport as autobahn uses it: unregistering no producer is harmless there; `aborted`
    says whether the connection was reset (abortConnection) rather than closed."""
    aborted = False

    def unregisterProducer(self):  # noqa: N802
        self.producer = None


@pytest.fixture
def upgraded():
    """The protocol Daphne builds for an upgrade (Daphne's factory options: a 5 s opening-handshake
    timeout), the whole request received, the application not yet decided."""
    from daphne.ws_protocol import WebSocketFactory

    websocket_denial.install(decision=DECISION)
    server = FakeServer()
    factory = WebSocketFactory(server, server="kube-kitchen")
    factory.setProtocolOptions(openHandshakeTimeout=5, allowNullOrigin=True)
    protocol = factory.buildProtocol(None)
    protocol._raw_query_string = b"command=echo"  # Daphne's HTTP side passes it at the hand-over
    transport = Transport()
    protocol.makeConnection(transport)
    protocol.dataReceived(UPGRADE)
    assert server.queue == [{"type": "websocket.connect"}] and transport.value() == b""
    yield server, protocol, transport
    if protocol.openHandshakeTimeoutCall is not None:
        protocol.openHandshakeTimeoutCall.cancel()
    websocket_denial.install(decision=settings.KK_WEBSOCKET_DECISION_TIMEOUT)


def answer(transport: StringTransport) -> tuple[bytes, dict[bytes, bytes], bytes]:
    head, _, body = transport.value().partition(b"\r\n\r\n")
    status_line, *lines = head.split(b"\r\n")
    return status_line, {k.lower(): v for k, v in (line.split(b": ", 1) for line in lines)}, body


def test_the_decision_bound_replaces_daphnes_five_seconds(upgraded):
    _, protocol, _ = upgraded
    assert protocol.openHandshakeTimeout == DECISION
    assert protocol.openHandshakeTimeoutCall is not None  # armed


def test_an_undecided_upgrade_is_answered_429_with_retry_after_not_reset(upgraded):
    server, protocol, transport = upgraded
    protocol.onOpenHandshakeTimeout()  # what the armed timer calls when the bound passes
    status_line, headers, body = answer(transport)
    assert status_line == b"HTTP/1.1 429 Too Many Requests"
    assert headers[b"retry-after"] == b"1" and headers[b"content-type"] == b"application/json"
    assert int(headers[b"content-length"]) == len(body)
    status = json.loads(body)
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 429, "TooManyRequests")
    assert status["message"] == "Too many requests, please try again later."
    assert transport.disconnecting and not transport.aborted  # closed after the answer: no TCP reset
    assert server.disconnected == [protocol]  # Daphne drops the application's late accept
    assert server.scope["extensions"][websocket_denial.HANDSHAKE_ANSWERED].status() == 429  # and it may know


def test_the_scope_says_the_handshake_is_unanswered_while_the_application_decides(upgraded):
    server, _, _ = upgraded
    answered = server.scope["extensions"][websocket_denial.HANDSHAKE_ANSWERED]
    assert answered.status() is None and websocket_denial.EXTENSION in server.scope["extensions"]


def test_daphnes_connect_timeout_does_not_answer_its_bodyless_403(upgraded):
    _, protocol, transport = upgraded
    protocol.socket_opened -= 60  # past FakeServer.websocket_connect_timeout
    protocol.check_timeouts()
    assert transport.value() == b"" and not transport.disconnecting


def test_an_upgrade_decided_in_time_is_accepted_and_the_bound_disarmed(upgraded):
    _, protocol, transport = upgraded
    protocol.handle_reply({"type": "websocket.accept", "subprotocol": "v5.channel.k8s.io"})
    assert transport.value().startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
    assert protocol.openHandshakeTimeoutCall is None
    protocol.onOpenHandshakeTimeout()  # a timer that fired anyway changes nothing on an open socket
    assert not transport.disconnecting


def test_the_applications_own_refusal_is_written_as_given(upgraded):
    _, protocol, transport = upgraded
    protocol.handle_reply({"type": "websocket.http.response.start", "status": 404,
                           "headers": [(b"content-type", b"application/json")]})
    protocol.handle_reply({"type": "websocket.http.response.body", "body": b'{"kind":"Status","code":404}'})
    status_line, headers, body = answer(transport)
    assert status_line == b"HTTP/1.1 404 Not Found" and body == b'{"kind":"Status","code":404}'
    assert b"retry-after" not in headers and transport.disconnecting and not transport.aborted


def test_a_send_after_the_client_closed_is_dropped_and_the_application_told_it_left(upgraded):
    server, protocol, transport = upgraded
    protocol.handle_reply({"type": "websocket.accept"})
    protocol.handle_reply({"type": "websocket.send", "text": "before"})
    assert protocol.state == protocol.STATE_OPEN and b"before" in transport.value()
    transport.clear()
    protocol.dataReceived(_masked_close())  # the browser closed its tab: a Close frame
    assert protocol.state in (protocol.STATE_CLOSING, protocol.STATE_CLOSED)
    transport.clear()
    protocol.handle_reply({"type": "websocket.send", "text": "after"})  # autobahn raised Disconnected here
    protocol.handle_reply({"type": "websocket.send", "bytes": b"after"})
    assert b"after" not in transport.value()
    protocol.connectionLost(Failure(ConnectionDone()))
    assert server.queue[-1]["type"] == "websocket.disconnect"


def test_a_send_on_a_connection_not_yet_accepted_is_still_refused(upgraded):
    _, protocol, _ = upgraded
    with pytest.raises(ValueError):  # Daphne's own check: an application bug, not a client gone
        protocol.handle_reply({"type": "websocket.send", "text": "too soon"})


def _masked_close(code: int = 1001) -> bytes:
    """A client's Close frame (clients mask every frame, RFC 6455 5.3)."""
    payload, mask = code.to_bytes(2, "big"), b"\x01\x02\x03\x04"
    return bytes([0x88, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


@pytest.mark.e2e
def test_a_real_hub_answers_an_exec_it_cannot_decide_in_time_with_429_not_a_reset():
    """The whole wiring (setting, install, Daphne, autobahn's timer) on a real hub whose bound has
    passed before any decision can be made: a millisecond, rounded down by autobahn's batched timer
    to an instant already past, fires on the reactor's next turn, while the exec's decision needs the
    database thread. Without the bound the hub answered this exec 404 (the pod does not exist)."""
    import socket

    from tests.conftest import Hub

    hub = Hub(env={"KK_WEBSOCKET_DECISION_TIMEOUT": "0.001"}).start()
    try:
        with socket.create_connection(("127.0.0.1", hub.port), timeout=30) as sock:
            sock.sendall(UPGRADE.replace(b"/namespaces/a/", b"/namespaces/default/").replace(
                b"\r\n\r\n", f"\r\nAuthorization: Bearer {hub.token}\r\n\r\n".encode()))
            received = b""
            while chunk := sock.recv(65536):  # a reset would raise ConnectionResetError here
                received += chunk
    finally:
        hub.stop()
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 429 Too Many Requests\r\n") and b"\r\nretry-after: 1" in head.lower()
    assert json.loads(body)["reason"] == "TooManyRequests"
