"""The hub's exec/attach websocket handler, in process against a kubelet exec server on a loopback
port: which paths are streams, the refusals before the upgrade (as handshake answers), the relay
both ways, the kubelet's refusal after it, the idle timeout on a fake clock, the traffic record."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from control.serving import websocket_denial
from control.auth import gate
from control.api import traffic
from control.api.streams import FIRST_MESSAGE_HOLD, choose_protocol, go_duration, internal_error, serve_stream, stream_kind
from control import errors
from control.clock import FakeClock, settle
from tests.conftest import free_port
from tests.kubelet.test_exec import POD, Record, Server, containers
from control.kubelet.exec import ExecServer
from tests.api.client import admin_authorization

pytestmark = pytest.mark.django_db(transaction=True)


def test_which_paths_are_streams():
    found = stream_kind("/api/v1/namespaces/default/pods/web/exec")
    assert found is not None and found[0].plural == "pods" and found[1:] == ("default", "web", "exec")
    assert stream_kind("/api/v1/namespaces/default/pods/web/attach")[3] == "attach"
    for path in ("/api/v1/namespaces/default/pods/web/log", "/api/v1/namespaces/default/pods/web/portforward",
                 "/api/v1/namespaces/default/services/web/exec", "/api/v1/namespaces/default/nothings/web/exec",
                 "/api/v1/pods/web/exec", "/apis/apps/v1/namespaces/default/deployments/web/exec"):
        assert stream_kind(path) is None, path


def test_protocols_and_the_internal_error_status():
    assert choose_protocol(["v5.channel.k8s.io", "v4.channel.k8s.io"]) == "v5.channel.k8s.io"
    assert choose_protocol(["base64.channel.k8s.io", "v4.channel.k8s.io"]) == "v4.channel.k8s.io"
    assert choose_protocol(["v9.channel.k8s.io"]) is None and choose_protocol([]) is None
    assert json.dumps(internal_error("boom"), separators=(",", ":")) == (
        '{"metadata":{},"status":"Failure","message":"Internal error occurred: boom","reason":"InternalError",'
        '"details":{"causes":[{"message":"boom"}]},"code":500}')


class Client:
    """A websocket client as ASGI sees it: a scripted inbox and everything the handler sent."""

    def __init__(self, path: str, *, protocols=("v5.channel.k8s.io",), query: str = ""):
        self.scope = {"type": "websocket", "path": path, "query_string": query.encode(), "subprotocols": list(protocols),
                      "headers": [(b"user-agent", b"kubectl/v1.32.0 (linux/amd64) kubernetes/abc"),
                                  admin_authorization()],
                      "extensions": {websocket_denial.EXTENSION: {}}}
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.inbox.put_nowait({"type": "websocket.connect"})
        self.sent: list[dict] = []

    async def receive(self):
        return await self.inbox.get()

    async def send(self, message):
        self.sent.append(message)

    def type_in(self, data: bytes) -> None:
        self.inbox.put_nowait({"type": "websocket.receive", "bytes": data})

    def channels(self) -> dict[int, bytes]:
        seen: dict[int, bytes] = {}
        for m in self.sent:
            if m["type"] == "websocket.send":
                seen[m["bytes"][0]] = seen.get(m["bytes"][0], b"") + m["bytes"][1:]
        return seen


@pytest.fixture
def cluster(api):
    """A Node whose kubelet endpoint is an exec server on a loopback port, and pod web on it."""
    kubelet = {"found": (POD, Record(), containers())}
    execs = ExecServer(lambda ns, name: kubelet["found"] if name == "web" else None, clock=FakeClock())
    server = Server(execs)
    port = api.runner.run(server.start("127.0.0.1", 0))
    api.add_node_at("n1", "127.0.0.1", port)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"nodeName": "n1", "containers": POD["spec"]["containers"]}}
    assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod)).status_code == 201
    yield api, kubelet
    api.runner.run(server.close())


EXEC = "/api/v1/namespaces/default/pods/web/exec"


def converse(api, ws: Client, *, idle: float = 60, clock=None, script=None, first_hold: float = 0.0) -> Client:
    async def scenario():
        task = asyncio.ensure_future(serve_stream(ws.scope, ws.receive, ws.send, idle=idle, clock=clock or FakeClock(),
                                                  first_hold=first_hold))
        if script is not None:
            await script(ws, task)
        await asyncio.wait_for(task, 10)
    api.runner.run(scenario())
    return ws


def test_exec_relays_output_and_the_final_status(cluster):
    api, _ = cluster
    heard: list[dict] = []
    stop = traffic.listen(heard.append)
    try:
        ws = converse(api, Client(EXEC, query="command=sh&command=-c&command=echo+hi;+exit+3&stdout=1&stderr=1&container=app"))
    finally:
        stop()
    assert ws.sent[0] == {"type": "websocket.accept", "subprotocol": "v5.channel.k8s.io"}
    seen = ws.channels()
    assert seen[1] == b"hi\n" and json.loads(seen[3])["reason"] == "NonZeroExitCode"
    assert ws.sent[-1] == {"type": "websocket.close", "code": 1000}
    assert [(r["who"], r["verb"], r["resource"], r["code"]) for r in heard if r["type"] == "request"] == [
        ("kubectl", "create", "pods/exec", 101)]


def test_the_first_message_waits_until_the_client_can_have_made_its_streams(cluster):
    """client-go's WebSocket executor drops a message for a stream it has not made yet: our kubelet
    answers at once, so the first message to the client waits FIRST_MESSAGE_HOLD after the accept."""
    api, _ = cluster
    clock = FakeClock()

    async def script(ws, task):
        for _ in range(500):  # until the kubelet's answer reached the relay: the hold's timer beside the idle one
            await asyncio.sleep(0.01)
            if clock.pending() >= 2:
                break
        assert clock.pending() >= 2, "the kubelet's answer never waited for the hold"
        await settle()
        assert [m["type"] for m in ws.sent] == ["websocket.accept"], "nothing before the hold is over"
        await clock.advance(FIRST_MESSAGE_HOLD)

    ws = converse(api, Client(EXEC, query="command=echo&command=hi&stdout=1&container=app"), clock=clock, script=script,
                  first_hold=FIRST_MESSAGE_HOLD)
    assert ws.channels()[1] == b"hi\n"
    assert FIRST_MESSAGE_HOLD >= 0.2


def test_stdin_and_the_v5_close_reach_the_shell(cluster):
    api, _ = cluster

    async def script(ws, task):
        ws.type_in(b"\x00echo hello > /tmp/f; cat /tmp/f\n")
        ws.type_in(b"\xff\x00")  # v5 CLOSE of stdin

    ws = converse(api, Client(EXEC, protocols=("v4.channel.k8s.io",), query="command=sh&stdin=1&stdout=1&stderr=1&container=app"),
                  script=script)
    assert ws.sent[0]["subprotocol"] == "v4.channel.k8s.io"
    assert ws.channels() == {1: b"hello\n", 3: b'{"metadata":{},"status":"Success"}'}


@pytest.mark.parametrize("path, query, protocols, status, message", [
    ("/api/v1/namespaces/default/pods/nope/exec", "command=ls&stdout=1", ("v5.channel.k8s.io",), 404,
     'pods "nope" not found'),
    (EXEC, "stdout=1&container=app", ("v5.channel.k8s.io",), 400, "you must specify at least one command for the container"),
    (EXEC, "command=ls&stdout=1&container=ghost", ("v5.channel.k8s.io",), 400, "container ghost is not valid for pod web"),
    (EXEC, "command=ls&stdout=1&container=app", ("v9.channel.k8s.io",), 403,
     "requested protocol(s) are not supported: [v9.channel.k8s.io]; supports [v5.channel.k8s.io v4.channel.k8s.io]"),
])
def test_refusals_are_the_handshakes_answer(cluster, path, query, protocols, status, message):
    api, _ = cluster
    ws = converse(api, Client(path, protocols=protocols, query=query))
    start, body = ws.sent
    assert start["type"] == "websocket.http.response.start" and start["status"] == status
    answer = json.loads(body["body"])
    assert (answer["kind"], answer["code"], answer["message"]) == ("Status", status, message)


def test_a_container_that_is_not_running_ends_the_stream_with_upstreams_error(cluster):
    api, _ = cluster
    ws = converse(api, Client(EXEC, query="command=ls&stdout=1&container=late"))
    assert ws.sent[0]["type"] == "websocket.accept"
    assert json.loads(ws.channels()[3]) == internal_error('unable to upgrade connection: container not found ("late")')
    assert ws.sent[-1]["type"] == "websocket.close"


def test_over_plain_http_the_checks_answer_then_400(cluster):
    api, _ = cluster
    gone = api.post("/api/v1/namespaces/default/pods/nope/exec?command=ls&stdout=1")
    assert gone.status_code == 404
    plain = api.post(f"{EXEC}?command=ls&stdout=1&container=app")
    assert plain.status_code == 400 and "Upgrade request required" in json.loads(plain.content)["message"]


def test_an_idle_stream_ends_after_the_idle_timeout(cluster):
    api, _ = cluster
    clock = FakeClock()

    async def script(ws, task):
        for _ in range(50):  # until the kubelet runs the sleep (its clock never moves)
            await asyncio.sleep(0.01)
            if ws.sent:
                break
        await clock.advance(59)
        await settle()
        assert not task.done(), "not idle for long enough yet"
        await clock.advance(2)

    ws = converse(api, Client(EXEC, query="command=sleep&command=1000&stdout=1&container=app"), idle=60, clock=clock, script=script)
    assert ws.sent[0]["type"] == "websocket.accept" and ws.sent[-1] == {"type": "websocket.close", "code": 1000}
    status = json.loads(ws.channels()[3])  # the command never finished: the error channel says why the stream ended
    assert (status["status"], status["reason"], status["code"]) == ("Failure", "Timeout", 504)
    assert status["message"] == ("stream closed: nothing was sent or received for 1m0s (the streaming connection "
                                 "idle timeout, KK_STREAM_IDLE_SECONDS)")


def test_idle_durations_read_as_the_kubelets_flag():
    assert [go_duration(s) for s in (8, 0.5, 60, 90, 4 * 3600, 3723)] == ["8s", "0.5s", "1m0s", "1m30s", "4h0m0s",
                                                                          "1h2m3s"]



def test_an_unreachable_kubelet_ends_the_stream_with_an_internal_error(cluster):
    api, _ = cluster
    node = json.loads(api.get("/api/v1/nodes/n1").content)
    node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] = free_port()  # nothing listens there
    assert api.put("/api/v1/nodes/n1/status", json.dumps(node)).status_code == 200
    ws = converse(api, Client(EXEC, query="command=ls&stdout=1&container=app"))
    status = json.loads(ws.channels()[3])
    assert (status["reason"], status["code"]) == ("InternalError", 500)
    assert status["message"].startswith("Internal error occurred: error dialing backend: ")
    assert ws.sent[-1]["type"] == "websocket.close"


def test_a_pod_not_yet_on_a_node_is_refused(cluster):
    api, _ = cluster
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending"},
           "spec": {"containers": [{"name": "app", "image": "busybox"}]}}
    assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod)).status_code == 201
    ws = converse(api, Client("/api/v1/namespaces/default/pods/pending/exec", query="command=ls&stdout=1"))
    assert ws.sent[0]["status"] == 400
    assert json.loads(ws.sent[1]["body"])["message"] == "pod pending does not have a host assigned"


def test_the_idle_timeout_is_configurable(monkeypatch):
    from control.api.streams import stream_idle_seconds

    monkeypatch.delenv("KK_STREAM_IDLE_SECONDS", raising=False)
    assert stream_idle_seconds() == 4 * 3600
    monkeypatch.setenv("KK_STREAM_IDLE_SECONDS", "90")
    assert stream_idle_seconds() == 90
    for bad in ("soon", "-1", "0"):
        monkeypatch.setenv("KK_STREAM_IDLE_SECONDS", bad)
        assert stream_idle_seconds() == 4 * 3600


BROWSER = b"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"


def test_the_hubs_own_page_opens_a_shell_as_its_logged_in_user(cluster, settings):
    api, _ = cluster
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
    heard: list[dict] = []
    stop = traffic.listen(heard.append)
    # A browser cannot set Authorization on a WebSocket: the page offers the logged-in user's token
    # as kube-apiserver's bearer subprotocol, and the shell is that user's spoke.
    token = admin_authorization()[1].decode().removeprefix("Bearer ")
    bearer = gate.BEARER_PROTOCOL + base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")
    client = Client(EXEC, query="command=echo&command=hi&stdout=1&container=app",
                    protocols=("v5.channel.k8s.io", bearer))
    client.scope["headers"] = [(b"user-agent", BROWSER), (b"host", b"127.0.0.1:8000"),
                               (b"origin", b"http://127.0.0.1:8000"),
                               (b"sec-websocket-protocol", f"v5.channel.k8s.io, {bearer}".encode())]
    try:
        ws = converse(api, client)
    finally:
        stop()
    assert ws.sent[0] == {"type": "websocket.accept", "subprotocol": "v5.channel.k8s.io"}
    assert ws.channels()[1] == b"hi\n"
    assert [(r["who"], r["resource"], r["code"]) for r in heard if r["type"] == "request"] == [
        ("dashboard/kubernetes-admin", "pods/exec", 101)]


def test_a_foreign_page_is_refused_with_a_403(cluster, settings):
    api, _ = cluster
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
    client = Client(EXEC, query="command=ls&stdout=1&container=app")
    client.scope["headers"] = [(b"user-agent", BROWSER), (b"host", b"127.0.0.1:8000"),
                               (b"origin", b"http://evil.example")]
    start, body = converse(api, client).sent
    assert start["status"] == 403
    assert json.loads(body["body"])["message"] == ("websocket origin 'http://evil.example' is not allowed: "
                                                   "only the hub's own page may open a stream")


class Answered:
    """The `kk.handshake.answered` extension after Daphne answered the handshake 429 itself."""

    def status(self):
        return 429


def test_a_stream_decided_after_the_hub_answered_429_does_not_run(cluster, monkeypatch):
    api, _ = cluster
    from control.api import streams
    dialed: list[tuple] = []
    real_connect = streams.connect_upgraded

    async def connect_upgraded(*args, **kwargs):
        dialed.append(args)
        return await real_connect(*args, **kwargs)

    monkeypatch.setattr(streams, "connect_upgraded", connect_upgraded)
    ws = Client(EXEC, query="command=echo&command=hi&stdout=1&container=app")
    ws.scope["extensions"][websocket_denial.HANDSHAKE_ANSWERED] = Answered()
    heard: list[dict] = []
    stop = traffic.listen(heard.append)
    try:
        converse(api, ws)
    finally:
        stop()
    assert ws.sent == [] and dialed == []  # no accept (Daphne would drop it), the kubelet never asked
    assert [(r["verb"], r["resource"], r["code"]) for r in heard if r["type"] == "request"] == [
        ("create", "pods/exec", 429)]
