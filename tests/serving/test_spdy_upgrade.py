"""SPDY over a plain HTTP Upgrade under Daphne: which requests are taken over, and the connection
after the hand-over as the application sees it (websocket messages) and as the client sees it
(101 with the SPDY headers, raw bytes, a refusal as an HTTP answer). The real kubectl is in
tests/e2e/test_kubectl_portforward.py."""

from __future__ import annotations

import json

from twisted.internet.testing import StringTransport
from twisted.web.http_headers import Headers

from control.serving.spdy_upgrade import SpdyUpgradeProtocol, wants_spdy_portforward
from tests.serving.fakeserver import FakeServer


def test_only_an_spdy_upgrade_offering_portforward_is_taken_over():
    kubectl = Headers({b"Upgrade": [b"SPDY/3.1"], b"Connection": [b"Upgrade"],
                       b"X-Stream-Protocol-Version": [b"portforward.k8s.io"]})
    assert wants_spdy_portforward(kubectl) == ["SPDY/3.1+portforward.k8s.io"]
    assert wants_spdy_portforward(Headers({b"Upgrade": [b"spdy/3.1"], b"X-Stream-Protocol-Version": [
        b"portforward.k8s.io, v2"]})) == ["SPDY/3.1+portforward.k8s.io", "SPDY/3.1+v2"]
    exec_over_spdy = Headers({b"Upgrade": [b"SPDY/3.1"], b"X-Stream-Protocol-Version": [b"v4.channel.k8s.io"]})
    assert wants_spdy_portforward(exec_over_spdy) is None
    assert wants_spdy_portforward(Headers({b"Upgrade": [b"websocket"]})) is None
    assert wants_spdy_portforward(Headers({})) is None




def connected() -> tuple[FakeServer, SpdyUpgradeProtocol, StringTransport]:
    server, transport = FakeServer(), StringTransport()
    protocol = SpdyUpgradeProtocol(server, {"type": "websocket", "subprotocols": ["SPDY/3.1+portforward.k8s.io"]})
    protocol.makeConnection(transport)
    return server, protocol, transport


def test_accepted_the_connection_carries_raw_bytes_both_ways():
    server, protocol, transport = connected()
    assert server.connected == [protocol] and server.queue == [{"type": "websocket.connect"}]
    protocol.handle_reply({"type": "websocket.accept", "subprotocol": "SPDY/3.1+portforward.k8s.io"})
    assert transport.value() == (b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
                                 b"X-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n")
    transport.clear()
    protocol.dataReceived(b"\x80\x03\x00\x06")
    protocol.handle_reply({"type": "websocket.send", "bytes": b"\x80\x03\x00\x06\x00\x00\x00\x04"})
    assert server.queue[-1] == {"type": "websocket.receive", "bytes": b"\x80\x03\x00\x06"}
    assert transport.value() == b"\x80\x03\x00\x06\x00\x00\x00\x04"
    protocol.handle_reply({"type": "websocket.close", "code": 1000})
    assert transport.disconnecting
    protocol.connectionLost()
    assert server.queue[-1]["type"] == "websocket.disconnect" and server.disconnected == [protocol]


def test_a_refusal_is_an_http_answer_then_the_close():
    _, protocol, transport = connected()
    body = json.dumps({"kind": "Status", "code": 404}).encode()
    protocol.handle_reply({"type": "websocket.http.response.start", "status": 404,
                           "headers": [(b"content-type", b"application/json")]})
    protocol.handle_reply({"type": "websocket.http.response.body", "body": body})
    assert transport.value() == (b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\nContent-Length: "
                                 + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
    assert transport.disconnecting


class HttpChannel:
    """Twisted's HTTPChannel as the hand-over meets it: the connection's registered producer."""

    def __init__(self, transport: StringTransport):
        self.transport, self._networkProducer = transport, transport
        transport.registerProducer(self, True)

    def pauseProducing(self):
        pass

    def resumeProducing(self):
        pass


def test_the_hand_over_leaves_no_http_producer_on_the_connection():
    # Left registered, Twisted's TLS never sends its close_notify: kubectl over https would not see the close
    from types import SimpleNamespace

    from control.serving.spdy_upgrade import hand_over

    server, transport = FakeServer(), StringTransport()
    channel = HttpChannel(transport)
    request = SimpleNamespace(path=b"/api/v1/namespaces/default/pods/web/portforward", uri=b"/api/v1/x?a=1",
                              client=SimpleNamespace(host="127.0.0.1", port=5), host=SimpleNamespace(host="h", port=1),
                              requestHeaders=Headers({b"Upgrade": [b"SPDY/3.1"]}), server=server, channel=channel,
                              transport=transport)
    assert transport.producer is channel
    hand_over(request, ["SPDY/3.1+portforward.k8s.io"])
    assert transport.producer is None and isinstance(transport.protocol, SpdyUpgradeProtocol)
    assert server.scope["path"] == "/api/v1/namespaces/default/pods/web/portforward"
    transport.protocol.handle_reply({"type": "websocket.close", "code": 1000})
    assert transport.disconnecting
