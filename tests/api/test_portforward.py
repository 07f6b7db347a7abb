"""The hub's portforward websocket, in process against a kubelet port-forward server on a loopback
port: SPDY/3.1 in WebSocket messages (kubectl) and the v4 channels (the Python client), the refusals
before the upgrade, a refused port that leaves the tunnel serving, bad SPDY, the idle timeout."""

from __future__ import annotations

import asyncio
import json

import pytest

from control.api import spdy, traffic
from control.api.portforward import choose_protocol, is_portforward_path, parse_ports, serve_portforward
from control import errors
from control.clock import FakeClock, settle
from control.kubelet.portforward import PortForwardServer, refused_message
from tests.api.test_streams import Client
from tests.kubelet.test_portforward import Server, found

pytestmark = pytest.mark.django_db(transaction=True)
PF = "/api/v1/namespaces/default/pods/web/portforward"
SPDY = ("SPDY/3.1+portforward.k8s.io",)
GET = b"GET / HTTP/1.1\r\nhost: web\r\nconnection: close\r\n\r\n"


@pytest.fixture
def cluster(api):
    """A Node whose kubelet endpoint is a port-forward server on a loopback port, and pod web on it."""
    forwards = PortForwardServer(lambda ns, name: found() if name == "web" else None, node="n1", clock=FakeClock())
    server = Server(forwards)
    port = api.runner.run(server.start("127.0.0.1", 0))
    api.add_node_at("n1", "127.0.0.1", port)
    for name, node_name in (("web", "n1"), ("pending", None)):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
               "spec": {"nodeName": node_name, "containers": [{"name": "app", "image": "nginx"}]}}
        assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod)).status_code == 201
    yield api
    api.runner.run(server.close())


class SpdyClient(Client):
    """kubectl's side of the tunnel: its own compression contexts, frames in, frames seen."""

    def __init__(self, path: str = PF, **kwargs):
        super().__init__(path, protocols=kwargs.pop("protocols", SPDY), **kwargs)
        self.writer, self.parser, self.seen, self.read = spdy.FrameWriter(), spdy.FrameParser(), [], 0

    def frames(self, *frames: spdy.Frame) -> None:
        wire = b"".join(self.writer.encode(f) for f in frames)
        for i in range(0, len(wire), 7):  # cut anywhere, as Go's framer writes field by field
            self.type_in(wire[i:i + 7])

    def open_pair(self, request: int, port: int, first_id: int) -> None:
        headers = {"port": [str(port)], "requestid": [str(request)]}
        self.frames(spdy.SynStream(first_id, {**headers, "streamtype": ["error"]}),
                    spdy.SynStream(first_id + 2, {**headers, "streamtype": ["data"]}))

    def take(self) -> list[spdy.Frame]:
        for message in self.sent[self.read:]:
            if message["type"] == "websocket.send":
                self.seen += self.parser.feed(message["bytes"])
        self.read = len(self.sent)
        return self.seen

    def stream(self, stream_id: int) -> tuple[bytes, bool]:
        """(data received, finished) of one stream."""
        frames = [f for f in self.take() if isinstance(f, spdy.Data) and f.stream_id == stream_id]
        return b"".join(f.data for f in frames), any(f.fin for f in frames)

    async def until(self, predicate, what: str) -> None:
        for _ in range(500):
            if predicate():
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"never saw {what}: {self.take()}")

    def leave(self) -> None:
        self.inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})


def converse(api, ws: Client, *, idle: float = 60, clock=None, script=None) -> Client:
    async def scenario():
        task = asyncio.ensure_future(serve_portforward(ws.scope, ws.receive, ws.send, idle=idle,
                                                       clock=clock or FakeClock()))
        if script is not None:
            await script(ws, task)
        await asyncio.wait_for(task, 10)
    api.runner.run(scenario())
    return ws


def test_which_paths_and_protocols():
    assert is_portforward_path(PF) and is_portforward_path("/api/v1/namespaces/x/pods/y/portforward")
    for path in ("/api/v1/namespaces/default/pods/web/exec", "/api/v1/namespaces/default/services/web/portforward",
                 "/apis/apps/v1/namespaces/default/deployments/web/portforward"):
        assert not is_portforward_path(path), path
    assert choose_protocol(["SPDY/3.1+portforward.k8s.io"]) == "SPDY/3.1+portforward.k8s.io"
    assert choose_protocol(["v5.channel.k8s.io", "v4.channel.k8s.io"]) == "v4.channel.k8s.io"
    assert choose_protocol([]) == "" and choose_protocol(["v5.channel.k8s.io"]) is None
    assert parse_ports({"ports": ["80,8080"], "port": ["9"]}) == [80, 8080, 9]
    for query, message in (({}, 'query parameter "port" is required'), ({"ports": ["x"]}, 'unable to parse "x" as a port'),
                           ({"ports": ["0"]}, 'port "0" must be > 0'), ({"ports": [""]}, 'query parameter "port" cannot be empty')):
        with pytest.raises(errors.BadRequest) as caught:
            parse_ports(query)
        assert str(caught.value) == message


def test_kubectls_spdy_tunnel_forwards_a_connection_and_answers_pings(cluster):
    heard: list[dict] = []

    async def script(ws: SpdyClient, task):
        ws.frames(spdy.Ping(1))
        ws.open_pair(0, 80, 1)
        ws.frames(spdy.Data(3, GET), spdy.Data(3, flags=spdy.FLAG_FIN), spdy.Data(1, flags=spdy.FLAG_FIN))
        await ws.until(lambda: ws.stream(3)[1] and ws.stream(1)[1], "both streams finished")
        ws.leave()

    stop = traffic.listen(heard.append)
    try:
        ws = converse(cluster, SpdyClient(), script=script)
    finally:
        stop()
    assert ws.sent[0] == {"type": "websocket.accept", "subprotocol": "SPDY/3.1+portforward.k8s.io"}
    frames = ws.take()
    assert frames[:3] == [spdy.Ping(1), spdy.SynReply(1), spdy.SynReply(3)]
    data, _ = ws.stream(3)
    assert data.startswith(b"HTTP/1.1 200 OK\r\n") and b"Welcome to nginx!" in data
    assert ws.stream(1) == (b"", True), "nothing on the error stream"
    assert ws.sent[-1] == {"type": "websocket.close", "code": 1000}
    assert [(r["verb"], r["resource"], r["code"]) for r in heard if r["type"] == "request"] == [
        ("create", "pods/portforward", 101)]


def test_a_refused_port_writes_the_error_stream_and_the_tunnel_goes_on(cluster):
    async def script(ws: SpdyClient, task):
        ws.open_pair(0, 81, 1)
        await ws.until(lambda: ws.stream(3)[1], "the refused pair finished")
        ws.open_pair(1, 80, 5)
        ws.frames(spdy.Data(7, GET))
        await ws.until(lambda: ws.stream(7)[1], "the second pair finished")
        ws.leave()

    ws = converse(cluster, SpdyClient(), script=script)
    assert ws.stream(1) == (refused_message(81, "u1").encode(), True) and ws.stream(3) == (b"", True)
    assert b"Welcome to nginx!" in ws.stream(7)[0] and ws.stream(5) == (b"", True)


def test_streams_without_a_valid_port_or_type_are_reset_and_bad_spdy_ends_the_tunnel(cluster):
    async def script(ws: SpdyClient, task):
        ws.frames(spdy.SynStream(1, {"streamtype": ["error"]}), spdy.SynStream(3, {"port": ["80"], "streamtype": ["x"]}))
        await ws.until(lambda: len(ws.take()) == 2, "two resets")
        ws.type_in(b"\x80\x02\x00\x01\x00\x00\x00\x00")  # a SPDY/2 control frame

    ws = converse(cluster, SpdyClient(), script=script)
    assert ws.take() == [spdy.RstStream(1, spdy.CANCEL), spdy.RstStream(3, spdy.CANCEL),
                         spdy.GoAway(0, spdy.GOAWAY_PROTOCOL_ERROR)]
    assert ws.sent[-1]["type"] == "websocket.close"


def test_the_python_clients_v4_channels(cluster):
    async def script(ws: Client, task):
        for _ in range(500):
            if len(ws.sent) >= 5:
                break
            await asyncio.sleep(0.01)
        ws.type_in(b"\x00" + GET)

    ws = converse(cluster, Client(PF, protocols=("v5.channel.k8s.io", "v4.channel.k8s.io"), query="ports=80,81"),
                  script=script)
    assert ws.sent[0] == {"type": "websocket.accept", "subprotocol": "v4.channel.k8s.io"}
    messages = [m["bytes"] for m in ws.sent if m["type"] == "websocket.send"]
    assert messages[:4] == [b"\x00\x50\x00", b"\x01\x50\x00", b"\x02\x51\x00", b"\x03\x51\x00"]  # ports, LE
    seen = {}
    for m in messages[4:]:
        seen[m[0]] = seen.get(m[0], b"") + m[1:]
    assert seen[3] == refused_message(81, "u1").encode() and 1 not in seen and 2 not in seen
    assert seen[0].startswith(b"HTTP/1.1 200 OK") and b"Welcome to nginx!" in seen[0]
    assert ws.sent[-1] == {"type": "websocket.close", "code": 1000}, "all connections ended: the socket closes"


@pytest.mark.parametrize("path, query, protocols, status, message", [
    ("/api/v1/namespaces/default/pods/nope/portforward", "", SPDY, 404, 'pods "nope" not found'),
    ("/api/v1/namespaces/default/pods/pending/portforward", "", SPDY, 400, "pod pending does not have a host assigned"),
    (PF, "", ("v4.channel.k8s.io",), 400, 'query parameter "port" is required'),
    (PF, "ports=80", ("v9.channel.k8s.io",), 403, "requested protocol(s) are not supported: [v9.channel.k8s.io]; "
     "supports [SPDY/3.1+portforward.k8s.io v4.channel.k8s.io]"),
])
def test_refusals_are_the_handshakes_answer(cluster, path, query, protocols, status, message):
    ws = converse(cluster, Client(path, protocols=protocols, query=query))
    start, body = ws.sent
    assert start["type"] == "websocket.http.response.start" and start["status"] == status
    answer = json.loads(body["body"])
    assert (answer["kind"], answer["code"], answer["message"]) == ("Status", status, message)


def test_over_plain_http_the_checks_answer_then_400(cluster):
    assert cluster.post("/api/v1/namespaces/default/pods/nope/portforward").status_code == 404
    plain = cluster.post(PF)
    assert plain.status_code == 400 and "Upgrade request required" in json.loads(plain.content)["message"]


def test_an_idle_tunnel_ends_after_the_idle_timeout(cluster):
    clock = FakeClock()

    async def script(ws: SpdyClient, task):
        ws.open_pair(0, 80, 1)  # a kept-alive connection that says nothing
        await ws.until(lambda: len(ws.take()) == 2, "the replies")
        await clock.advance(59)
        await settle()
        assert not task.done(), "not idle for long enough yet"
        await clock.advance(2)

    ws = converse(cluster, SpdyClient(), idle=60, clock=clock, script=script)
    assert ws.sent[-1] == {"type": "websocket.close", "code": 1000}


def test_pings_alone_do_not_keep_an_idle_tunnel_open(cluster):
    clock = FakeClock()  # kubectl over SPDY pings every 5 s; an abandoned forward must still end

    async def script(ws: SpdyClient, task):
        ws.open_pair(0, 80, 1)
        await ws.until(lambda: len(ws.take()) == 2, "the replies")
        for n in range(12):
            ws.frames(spdy.Ping(2 * n + 1))
            await ws.until(lambda: spdy.Ping(2 * n + 1) in ws.take(), "the ping's echo")
            await clock.advance(5)
        await settle()

    ws = converse(cluster, SpdyClient(), idle=60, clock=clock, script=script)
    assert ws.sent[-1] == {"type": "websocket.close", "code": 1000}


def test_bytes_from_the_pod_count_as_traffic():
    from control.api.portforward_relays import Channels, ForwardTarget

    clock, sent = FakeClock(), []

    async def send(message):
        sent.append(message)

    async def scenario():
        relay = Channels(ForwardTarget("default", "web", "127.0.0.1", 1), [80], None, send)
        relay.clock = clock
        await clock.advance(50)
        await relay._relay(0, b"downloading")  # what the pod sends toward the client
        return relay.last_activity

    assert asyncio.run(scenario()) == clock.monotonic() and sent[-1]["bytes"] == b"\x00downloading"


def test_a_request_whose_second_stream_never_comes_is_dropped_after_the_creation_timeout(cluster):
    clock = FakeClock()

    async def script(ws: SpdyClient, task):
        ws.frames(spdy.SynStream(1, {"port": ["80"], "requestid": ["0"], "streamtype": ["error"]}))
        await ws.until(lambda: ws.take() == [spdy.SynReply(1)], "the reply")
        await clock.advance(29)
        await settle()
        assert ws.stream(1) == (b"", False), "not yet"
        await clock.advance(2)
        await ws.until(lambda: ws.stream(1)[1], "the error stream finished")
        ws.leave()

    ws = converse(cluster, SpdyClient(), idle=3600, clock=clock, script=script)
    message, _ = ws.stream(1)
    assert message.startswith(b"(conn=") and message.endswith(b", request=0) timed out waiting for streams")
