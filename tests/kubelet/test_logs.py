"""Simulated logs: request parsing, the lines a run prints, the errors Kubernetes words, and the
HTTP server itself (plain and follow) on a loopback port with a FakeClock."""

from __future__ import annotations

import asyncio

import pytest

from control.client import nodeaccess
from control.clock import FakeClock
from control.kubelet.behaviour import Script
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import advance, new_container, stop
from control.kubelet.logs import LogError, LogRequest, LogServer, LogTarget, parse_request, render_log, run_lines

AUTH = f"Authorization: Bearer {nodeaccess.token()}\r\n"  # the hub's proof, as node servers require it

T0 = 1_800_000_000.0
BACKOFF = BackoffPolicy(10, 300, 600)


def test_parse_request():
    r = parse_request("GET", "/containerLogs/default/web/app?tailLines=5&follow=true&timestamps=1&previous=false")
    assert r == LogRequest("default", "web", "app", follow=True, timestamps=True, tail_lines=5)
    assert parse_request("GET", "/healthz") is None
    assert parse_request("GET", "/containerLogs/ns/p%2Dx/c?sinceSeconds=10").pod == "p-x"
    for method, target, status in (("POST", "/containerLogs/a/b/c", 405), ("GET", "/containerLogs/a/b", 404),
                                   ("GET", "/other", 404), ("GET", "/containerLogs/a/b/c?tailLines=x", 400),
                                   ("GET", "/containerLogs/a/b/c?follow=maybe", 400),
                                   ("GET", "/containerLogs/a/b/c?tailLines=-1", 400)):
        with pytest.raises(LogError) as caught:
            parse_request(method, target)
        assert caught.value.status == status, target


def running(script=Script(), at=T0 + 0.0):
    c, _ = advance(new_container("app", "nginx", "uid", T0, 0), script, "Always", at, BACKOFF)
    return c


def test_a_runs_log_is_what_its_command_printed_and_nothing_else():
    script = Script(exit_after=5, exit_code=1, ready_after=1.5)
    c = running(script, T0 + 6)  # crashed at 5, backing off
    printed = [(T0, "0: Fri Jan 15 08:00:00 UTC 2027"), (T0 + 1, "1: Fri Jan 15 08:00:01 UTC 2027"),
               (T0 + 7, "after the end")]
    lines = run_lines("app", "busybox", c.previous, script, T0 + 6, 2, printed)
    assert [(line.at, line.text) for line in lines] == printed[:2], "no narration, nothing past the run's end"
    assert run_lines("app", "busybox", c.previous, script, T0 + 0.5, 2, printed)[-1].text.startswith("0: ")


def test_a_narrating_run_prints_start_output_ready_ticks_and_its_end():
    script = Script(exit_after=5, exit_code=1, ready_after=1.5, narrate=True)
    c = running(script, T0 + 6)  # crashed at 5, backing off
    lines = [line.text for line in run_lines("app", "nginx", c.previous, script, T0 + 6, 2, [(T0, "hello")])]
    assert lines == ["kitchen: starting container app from image nginx (run 0)", "hello",
                     "kitchen: app is ready to serve", "kitchen: app is cooking (tick 1)",
                     "kitchen: app is cooking (tick 2)", "kitchen: app crashed: exiting with code 1"]
    early = run_lines("app", "nginx", c.previous, script, T0 + 1, 2, [(T0, "hello")])
    assert [line.text for line in early] == lines[:2], "the log only grows with time"


def test_a_stopped_run_says_sigterm():
    c, _ = stop(running(), T0 + 3)
    assert run_lines("app", "nginx", c.current, Script(narrate=True), T0 + 10, 2)[-1].text.endswith("received SIGTERM, shutting down gracefully")


def test_render_tail_timestamps_and_kubernetes_errors():
    target = LogTarget(running(), Script(narrate=True), "nginx")
    text = render_log(target, LogRequest("d", "web", "app", tail_lines=2, timestamps=True), T0 + 10, 2)
    assert text.splitlines() == ["2027-01-15T08:00:08.000000000Z kitchen: app is cooking (tick 4)",
                                 "2027-01-15T08:00:10.000000000Z kitchen: app is cooking (tick 5)"]
    assert render_log(target, LogRequest("d", "web", "app", since_seconds=3), T0 + 10, 2).count("\n") == 2
    with pytest.raises(LogError, match='previous terminated container "app" in pod "web" not found') as caught:
        render_log(target, LogRequest("d", "web", "app", previous=True), T0 + 10, 2)
    assert caught.value.status == 400
    creating = LogTarget(new_container("app", "nginx", "uid", T0, 5), Script(), "nginx")
    with pytest.raises(LogError, match="is waiting to start: ContainerCreating"):
        render_log(creating, LogRequest("d", "web", "app"), T0 + 1, 2)
    with pytest.raises(LogError) as caught:
        render_log(None, LogRequest("d", "web", "app"), T0, 2)
    assert caught.value.status == 404


async def fetch(port: int, target: str) -> tuple[str, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: x\r\n{AUTH}\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return head.decode(), body


def test_the_server_answers_plain_requests():
    clock = FakeClock(T0 + 4)
    targets = {("default", "web", "app"): LogTarget(running(), Script(narrate=True), "nginx")}
    server = LogServer(lambda ns, pod, c: targets.get((ns, pod, c)), clock=clock, interval=2)

    async def scenario():
        port = await server.start("127.0.0.1")
        head, body = await fetch(port, "/containerLogs/default/web/app?tailLines=1")
        assert head.startswith("HTTP/1.1 200") and "text/plain" in head
        assert body == b"kitchen: app is cooking (tick 2)\n"
        head, body = await fetch(port, "/containerLogs/default/nope/app")
        assert head.startswith("HTTP/1.1 404") and b"not found" in body
        head, body = await fetch(port, "/healthz")
        assert body == b"ok\n"
        await server.close()

    asyncio.run(scenario())


def test_follow_streams_what_the_command_prints_as_it_prints_it_and_ends_with_the_run():
    clock = FakeClock(T0 + 1)
    script = Script(exit_after=5, exit_code=1)
    state = {"now": running(script, T0 + 1)}
    said = [(T0 + n, f"{n}: counting") for n in range(0, 8, 2)]  # 0, 2, 4 within the run; 6 after its end

    def target(ns, pod, c):
        return LogTarget(state["now"], script, "busybox", lambda run, until: [x for x in said if x[0] <= until])
    server = LogServer(target, clock=clock, interval=2, poll=1)

    async def scenario():
        port = await server.start("127.0.0.1")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET /containerLogs/default/web/app?follow=true HTTP/1.1\r\nHost: x\r\n{AUTH}\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        assert b"Transfer-Encoding: chunked" in head
        first = await reader.readuntil(b"0: counting\n\r\n")  # the first chunk: the lines so far
        assert b"kitchen" not in first
        for second in range(2, 7):
            state["now"], _ = advance(state["now"], script, "Always", T0 + second, BACKOFF)
            await clock.advance(1)
        rest = await asyncio.wait_for(reader.read(), timeout=5)
        assert b"2: counting" in rest and b"4: counting" in rest and b"6: counting" not in rest
        assert rest.endswith(b"0\r\n\r\n"), "the stream ends when the run ends"
        writer.close()
        await server.close()

    asyncio.run(scenario())


def test_a_static_pods_log_is_its_file_and_the_previous_run_beside_it(tmp_path):
    current = tmp_path / "kube-scheduler.log"
    current.write_text("Starting\nbound web\nbound api\n")
    files = {("kube-system", "kube-scheduler-node-1", "kube-scheduler"): current}
    server = LogServer(lambda ns, pod, c: None, clock=FakeClock(T0), interval=2,
                       static_log=lambda ns, pod, c: files.get((ns, pod, c)))

    async def scenario():
        port = await server.start("127.0.0.1")
        head, body = await fetch(port, "/containerLogs/kube-system/kube-scheduler-node-1/kube-scheduler?tailLines=2")
        assert head.startswith("HTTP/1.1 200") and body == b"bound web\nbound api\n"
        head, body = await fetch(port, "/containerLogs/kube-system/kube-scheduler-node-1/kube-scheduler?previous=true")
        assert head.startswith("HTTP/1.1 400") and b"previous terminated container" in body
        current.with_suffix(".previous").write_text("Error: unknown flag: --turbo\n")
        head, body = await fetch(port, "/containerLogs/kube-system/kube-scheduler-node-1/kube-scheduler?previous=true")
        assert body == b"Error: unknown flag: --turbo\n"
        head, body = await fetch(port, "/containerLogs/kube-system/other/kube-scheduler")
        assert head.startswith("HTTP/1.1 404")
        await server.close()

    asyncio.run(scenario())
