"""The supervisor against a scripted hub (an httpx MockTransport) on fake time: it follows its
ConfigMap like client-go's reflector (list revision, bookmarks, 410 → one relist after a back-off),
restarts crashed spokes at most once per `restart_after`, and starts nothing once stopping."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from control.client.reflector import Backoff
from control.supervisor import NAME, Supervisor


class FakeTime:
    """A `control.clock.Clock` whose sleeping moves time at once; nothing really waits."""

    def __init__(self):
        self.t = 0.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    def monotonic(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds

    def call_later(self, delay, callback, *args):
        raise AssertionError("the supervisor sets no timers")


class FakeProcess:
    def __init__(self, args, env=None):
        self.args, self.returncode, self.signals = args, None, []

    def poll(self):
        return self.returncode

    def terminate(self):
        self.signals.append("TERM")
        self.returncode = -15

    def kill(self):
        self.returncode = -9

    def wait(self, timeout=None):
        return self.returncode


class CompactingHub:
    """One ConfigMap on a hub whose log window is `window` revisions behind the head. Other clients
    write all the time (the head moves `churn` revisions a minute); a watch from before the window
    gets HTTP 200 and one ERROR 410 event; any other watch stays open for its timeoutSeconds,
    sending a bookmark each minute. Every request is recorded with the time it was made."""

    def __init__(self, clock: FakeTime, *, head: int = 900, window: int = 50, churn: int = 30):
        self.clock, self.head, self.window, self.churn = clock, head, window, churn
        self.requests: list[tuple[str, str, float]] = []
        self.data = {"scheduler": "running"}
        self.started = clock.now()

    def current(self) -> int:
        return self.head + int((self.clock.now() - self.started) / 60 * self.churn)

    def handler(self, request: httpx.Request) -> httpx.Response:
        query = {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}
        if query.get("watch"):
            since = query.get("resourceVersion", "")
            self.requests.append(("watch", since, self.clock.now()))
            assert query.get("allowWatchBookmarks") == "true"
            if not since or int(since) < self.current() - self.window:
                status = {"kind": "Status", "status": "Failure", "reason": "Expired", "code": 410,
                          "message": f"too old resource version: {since}"}
                return httpx.Response(200, content=json.dumps({"type": "ERROR", "object": status}).encode() + b"\n")
            return httpx.Response(200, content=self._held_open(int(query.get("timeoutSeconds", "300"))))
        self.requests.append(("list", "", self.clock.now()))
        assert query.get("fieldSelector") == f"metadata.name={NAME}"
        item = {"metadata": {"name": NAME, "namespace": "kube-system", "resourceVersion": "7"}, "data": self.data}
        return httpx.Response(200, json={"kind": "ConfigMapList", "metadata": {"resourceVersion": str(self.current())},
                                         "items": [item]})

    async def _held_open(self, seconds: int):
        for _ in range(seconds // 60):
            await self.clock.sleep(60)  # the stream is quiet for a minute
            mark = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.current())}}
            yield json.dumps({"type": "BOOKMARK", "object": mark}).encode() + b"\n"


def supervisor_on(hub_handler, clock: FakeTime, spokes=None, **options) -> Supervisor:
    return Supervisor("http://hub", ["runcomponent"], {}, spokes if spokes is not None else {"scheduler": ["scheduler"]},
                      clock=clock, transport=httpx.MockTransport(hub_handler), popen=FakeProcess,
                      backoff=Backoff(random=lambda: 0.0), **options)


def run_for(supervisor: Supervisor, clock: FakeTime, seconds: float, *, rounds: int = 200) -> int:
    """Drive the reflector loop for `seconds` of fake time (at most `rounds` rounds: a storm
    would never move the clock); the number of rounds it took."""
    end = clock.now() + seconds
    for done in range(rounds):
        if clock.now() >= end:
            return done
        supervisor.run_once()
    return rounds


def test_a_compacted_log_costs_one_relist_then_bookmarks_keep_it_inside_the_window():
    clock = FakeTime()
    hub = CompactingHub(clock)
    supervisor = supervisor_on(hub.handler, clock)
    supervisor.resource_version = "7"  # the ConfigMap's own revision, long out of the window

    rounds = run_for(supervisor, clock, 60)
    assert [r[:2] for r in hub.requests] == [("watch", "7"), ("list", ""), ("watch", "900")]
    assert 0.8 <= hub.requests[1][2] < 1.6, "the relist waited the back-off"

    run_for(supervisor, clock, 20 * 60)  # twenty idle minutes while others write
    lists = [r for r in hub.requests if r[0] == "list"]
    assert len(lists) == 1, "never expired again: the bookmarks carried its revision along"
    assert len(hub.requests) <= 3 + 20 * 60 // 300, f"one watch per timeout, no storm ({len(hub.requests)} requests)"
    assert rounds < 200 and supervisor.backoff.current == 0.0


def test_the_list_not_the_object_gives_the_revision_to_watch_from():
    clock = FakeTime()
    hub = CompactingHub(clock)
    supervisor = supervisor_on(hub.handler, clock)
    supervisor.run_once()
    assert [r[:2] for r in hub.requests] == [("list", ""), ("watch", "900")]
    assert supervisor.desired == {"scheduler": "running"}


def test_an_unreachable_hub_is_retried_with_a_growing_back_off_then_it_starts_over():
    clock = FakeTime()
    hub = CompactingHub(clock)
    down = {"left": 4}

    def flaky(request: httpx.Request) -> httpx.Response:
        if down["left"]:
            down["left"] -= 1
            raise httpx.ConnectError("connection refused", request=request)
        return hub.handler(request)

    supervisor = supervisor_on(flaky, clock)
    for _ in range(5):
        supervisor.run_once()
    assert clock.sleeps[:4] == [0.8, 1.6, 3.2, 6.4]
    assert supervisor.backoff.current == 0.0, "a watch that delivered an event starts the back-off over"


def test_a_watch_that_ends_at_once_with_nothing_backs_off():
    clock = FakeTime()
    calls = []

    def empty(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.params.get("watch"))
        if request.url.params.get("watch"):
            return httpx.Response(200, content=b"")
        return httpx.Response(200, json={"metadata": {"resourceVersion": "5"}, "items": []})

    supervisor = supervisor_on(empty, clock)
    for _ in range(3):
        supervisor.run_once()
    assert clock.sleeps == [0.8, 1.6, 3.2]
    assert calls == [None, "1", "1", "1"]


def test_a_crashed_spoke_is_restarted_at_most_once_per_restart_after():
    clock = FakeTime()
    supervisor = supervisor_on(lambda r: httpx.Response(500), clock, restart_after=5.0)
    supervisor.tick()
    first = supervisor.processes["scheduler"]
    first.returncode = 1
    clock.t += 1
    assert supervisor.tick() == ["scheduler"] and supervisor.processes["scheduler"] is first, "too soon"
    clock.t += 4
    supervisor.tick()
    assert supervisor.processes["scheduler"] is not first


def test_once_stopping_nothing_is_started_again():
    clock = FakeTime()
    supervisor = supervisor_on(lambda r: httpx.Response(500), clock,
                               spokes={"scheduler": ["scheduler"], "kubelet/node-1": ["kubelet"]})
    supervisor.tick()
    started = dict(supervisor.processes)
    started["scheduler"].returncode = -2  # the terminal's Ctrl-C reached the spoke first
    clock.t += 60
    supervisor.stop()
    supervisor.tick()
    supervisor.reconcile({"scheduler": "running"})
    assert supervisor.processes == started, "no spoke restarted while stopping"
    assert started["kubelet/node-1"].signals == ["TERM"]


# --- against a real hub whose log window is two seconds ------------------------------------------

class CountingTransport(httpx.AsyncBaseTransport):
    """Counts the requests; the real transport under it is made per event loop (the supervisor
    runs each session on its own loop) and closed with its session's client."""

    def __init__(self):
        self.requests: list[str] = []
        self._inner: dict[asyncio.AbstractEventLoop, httpx.AsyncHTTPTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(f"{request.method} {request.url.path}?{request.url.query.decode()}")
        inner = self._inner.setdefault(asyncio.get_running_loop(), httpx.AsyncHTTPTransport())
        return await inner.handle_async_request(request)

    async def aclose(self) -> None:
        inner = self._inner.pop(asyncio.get_running_loop(), None)
        if inner is not None:
            await inner.aclose()


@pytest.mark.e2e
def test_against_a_hub_that_keeps_two_seconds_of_log_the_supervisor_stays_quiet(fast_compacting_hub):
    """Others keep writing, the log keeps only the last two seconds, each watch lasts one second: every
    re-watch must start from a revision the bookmarks kept fresh. (Before: it re-watched from the
    ConfigMap's own revision, got ERROR 410, ignored it and came straight back: ~1,700 requests in
    four seconds with a one-second log.)"""
    hub = fast_compacting_hub
    transport = CountingTransport()
    supervisor = Supervisor(hub.url, ["true"], {"KK_DATA_DIR": str(hub.dir)}, {}, transport=transport, watch_seconds=1)
    supervisor.publish_desired()
    writer = httpx.Client(base_url=hub.url, headers=hub.auth, timeout=10)
    follower = threading.Thread(target=supervisor.watch_forever, daemon=True)
    follower.start()
    try:
        for i in range(50):  # five seconds of other clients writing, ten writes a second
            writer.post("/api/v1/namespaces/default/configmaps",
                        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "churn-"}})
            time.sleep(0.1)
    finally:
        supervisor.stop()
        writer.close()
    watches = [r for r in transport.requests if "watch=1" in r]
    lists = [r for r in transport.requests if r.startswith("GET") and "watch=1" not in r]
    assert len(lists) == 1, f"only the first list: no 410 ever ({transport.requests})"
    assert 3 <= len(watches) <= 8, transport.requests


def test_stopping_also_waits_for_a_spoke_that_was_already_told_to_stop():
    clock = FakeTime()
    supervisor = supervisor_on(lambda r: httpx.Response(500), clock)
    supervisor.tick()
    scheduler = supervisor.processes["scheduler"]
    scheduler.terminate = lambda: scheduler.signals.append("TERM")  # it takes its time to go
    supervisor.reconcile({"scheduler": "stopped"})
    assert supervisor.processes == {} and supervisor.retired == [scheduler]
    supervisor.stop()
    assert scheduler.signals == ["TERM", "TERM"], "terminated again and waited for by stop"


def test_an_unexpected_failure_does_not_end_the_follower():
    clock = FakeTime()
    answers = iter([RuntimeError("a bug"), None])

    def hub(request: httpx.Request) -> httpx.Response:
        failure = next(answers, None)
        if failure is not None:
            raise failure
        clock.t += 1000
        supervisor.begin_stop()
        return httpx.Response(200, json={"metadata": {"resourceVersion": "3"}, "items": []})

    supervisor = supervisor_on(hub, clock)
    supervisor.watch_forever()
    assert clock.sleeps[0] == 0.8, "backed off, then carried on"


def test_publishing_waits_out_a_busy_or_not_yet_listening_hub():
    """A hub that has only just come up may answer 429 or 503, or not accept the connection yet:
    the supervisor retries with its back-off rather than failing `runcluster`'s start."""
    clock = FakeTime()
    answers = iter([httpx.ConnectError("refused"), httpx.Response(429), httpx.Response(503), httpx.Response(404),
                    httpx.Response(201, json={})])
    seen: list[str] = []

    def hub(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    supervisor = supervisor_on(hub, clock)
    supervisor.publish_desired()
    assert seen == ["PUT", "PUT", "PUT", "PUT", "POST"]
    assert clock.sleeps == [0.8, 1.6, 3.2]


def test_publishing_gives_up_on_a_refusal_at_once_and_on_a_failing_hub_in_time():
    clock = FakeTime()
    with pytest.raises(RuntimeError, match="403"):
        supervisor_on(lambda r: httpx.Response(403, text="forbidden"), clock).publish_desired()
    assert clock.sleeps == []
    with pytest.raises(RuntimeError, match="within 60 s: 500"):
        supervisor_on(lambda r: httpx.Response(500), clock).publish_desired(within=60)
    assert 55 <= sum(clock.sleeps) <= 60 + 30


class StubbornProcess(FakeProcess):
    """Ignores SIGTERM: only SIGKILL ends it; `wait` says how long it was given."""

    def __init__(self, args=(), env=None):
        super().__init__(args, env)
        self.waited: list[float] = []

    def terminate(self):
        self.signals.append("TERM")

    def kill(self):
        self.signals.append("KILL")
        self.returncode = -9

    def wait(self, timeout=None):
        if self.returncode is None:
            self.waited.append(timeout)
            if timeout is not None:
                raise subprocess.TimeoutExpired("spoke", timeout)
        return self.returncode


def test_stop_terminates_the_spokes_and_the_hub_together_and_kills_the_stubborn_after_one_grace():
    supervisor = Supervisor("http://hub", ["runcomponent"], {}, {"scheduler": ["scheduler"], "kubelet/node-1": ["kubelet"]},
                            clock=FakeTime(), transport=httpx.MockTransport(lambda r: httpx.Response(500)),
                            popen=StubbornProcess)
    supervisor.tick()
    assert len(supervisor.processes) == 2
    hub = StubbornProcess()
    supervisor.stop(also=[hub], grace=0.0)
    everyone = [*supervisor.processes.values(), hub]
    assert all(p.signals == ["TERM", "KILL"] for p in everyone), "each was told, then killed"
    assert all(p.waited == [0.0] for p in everyone), "one shared deadline, not one grace per process"


def test_stop_ends_a_quiet_watch_at_once_from_another_thread():
    """The follower thread sits in a watch that sends nothing; `stop` (runcluster's main thread)
    cancels it without waiting for the watch's timeout."""
    watching = threading.Event()

    async def quiet():
        await asyncio.Event().wait()  # never ends on its own
        yield b""

    def hub(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("watch"):
            watching.set()
            return httpx.Response(200, content=quiet())
        return httpx.Response(200, json={"metadata": {"resourceVersion": "3"}, "items": []})

    supervisor = Supervisor("http://hub", ["runcomponent"], {}, {}, transport=httpx.MockTransport(hub), popen=FakeProcess)
    follower = threading.Thread(target=supervisor.watch_forever, daemon=True)
    follower.start()
    assert watching.wait(10)
    supervisor.stop()
    follower.join(5)
    assert not follower.is_alive()
