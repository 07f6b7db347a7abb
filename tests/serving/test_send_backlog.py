"""control.serving.send_backlog and control.serving.http2 on Twisted's real H2Connection (in memory, no sockets): a
stream's unsent bytes include what flow control holds back for it; abort resets that stream only; a
stream out of window does not keep the sending loop spinning."""

from __future__ import annotations

import h2.config
import h2.connection
import h2.events
from twisted.internet.testing import MemoryReactorClock, StringTransport
from twisted.web import http
from twisted.web._http2 import H2Connection

from control.serving import http2
from control.serving.send_backlog import Backlog

http2.install()


def turns(reactor: MemoryReactorClock, count: int) -> int:
    """Run `count` reactor turns (each runs the calls due now, not those they schedule for later
    turns); the number of calls run. A loop that reschedules itself runs once per turn."""
    ran = 0
    for _ in range(count):
        due = [call for call in reactor.calls if call.getTime() <= reactor.seconds()]
        for call in due:
            reactor.calls.remove(call)
            call.called = 1
            call.func(*call.args, **call.kw)
            ran += 1
    return ran


class Captured(http.Request):
    made: list["Captured"] = []
    lost: list["Captured"] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        Captured.made.append(self)

    def process(self) -> None:
        self.setResponseCode(200)

    def connectionLost(self, reason) -> None:
        Captured.lost.append(self)
        super().connectionLost(reason)


def served_streams(count: int):
    """A server H2Connection with `count` open GET streams (the client grants no window beyond 64 KiB)."""
    Captured.made, Captured.lost = [], []
    reactor = MemoryReactorClock()
    server, transport = H2Connection(reactor), StringTransport()
    server.requestFactory = Captured
    server.site = None
    server.timeOut = None
    server.callLater = reactor.callLater
    server.makeConnection(transport)
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    for stream_id in range(1, 2 * count, 2):
        client.send_headers(stream_id, [(":method", "GET"), (":scheme", "https"), (":authority", "hub"),
                                        (":path", "/watch")], end_stream=True)
    server.dataReceived(client.data_to_send())
    turns(reactor, 5)
    return reactor, server, transport, client


def test_bytes_held_back_by_flow_control_count_as_unsent():
    reactor, server, transport, client = served_streams(1)
    (request,) = Captured.made
    backlog = Backlog(request)
    before = backlog.unsent()
    for _ in range(8):
        request.write(b"x" * 16_384)  # 128 KiB: twice the stream's window
    turns(reactor, 20)
    assert backlog.unsent() - before >= 128 * 1024 - 65_535


def test_a_stream_out_of_window_lets_the_sending_loop_sleep_until_the_client_reads():
    reactor, server, transport, client = served_streams(1)
    (request,) = Captured.made
    request.write(b"x" * 100_000)  # more than the 64 KiB window
    turns(reactor, 20)
    assert turns(reactor, 50) == 0  # nothing left to do: no call rescheduled turn after turn
    received = sum(len(e.data) for e in client.receive_data(transport.value()) if isinstance(e, h2.events.DataReceived))
    assert received == 65_535
    transport.clear()
    client.increment_flow_control_window(received)  # the client reads: the connection's window ...
    client.increment_flow_control_window(received, stream_id=1)  # ... and the stream's
    server.dataReceived(client.data_to_send())
    turns(reactor, 20)
    more = sum(len(e.data) for e in client.receive_data(transport.value()) if isinstance(e, h2.events.DataReceived))
    assert more == 100_000 - 65_535


def test_abort_resets_only_that_stream_and_tells_its_request():
    reactor, server, transport, client = served_streams(2)
    stuck, other = Captured.made
    stuck.write(b"x" * 100_000)
    turns(reactor, 10)
    received = sum(len(e.data) for e in client.receive_data(transport.value()) if isinstance(e, h2.events.DataReceived))
    transport.clear()
    client.increment_flow_control_window(received)  # the connection is read; stream 1 is not
    server.dataReceived(client.data_to_send())
    Backlog(stuck).abort()
    assert Captured.lost == [stuck]
    assert stuck.channel is None  # the application's later writes go nowhere (Daphne checks this)
    events = client.receive_data(transport.value())
    assert [e.stream_id for e in events if isinstance(e, h2.events.StreamReset)] == [1]
    assert 1 not in server.streams and 3 in server.streams and not transport.disconnecting
    Backlog(stuck).abort()  # again: nothing left to reset
    other.write(b"still served")
    other.finish()
    turns(reactor, 10)
    later = client.receive_data(transport.value())
    assert any(isinstance(e, h2.events.DataReceived) and e.stream_id == 3 for e in later)
