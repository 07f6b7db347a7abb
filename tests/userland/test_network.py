"""Connections a NetworkPolicy dropped, as the container's programs live them: they hang on the
shell's (fake) clock for as long as the program waits, then fail with its words and exit code;
`wget --spider` and `nc` against an answering pod."""

from __future__ import annotations

import asyncio

import pytest

from control.clock import FakeClock
from control.kinds.pod_servers import REASONS
from control.kubelet.filesystem import Filesystem
from control.userland.network import Response
from control.userland.shell import Shell, Streams

DROPPED = {"seq": 0, "code": 0, "error": "connection timed out (dropped by NetworkPolicy)",
           "dropped": {"direction": "ingress", "policies": ["default/deny"], "from": "default/box",
                       "to": "default/web-1", "port": 80, "protocol": "TCP"}}
ANSWERED = {"seq": 0, "code": 200, "endpoint": "10.244.1.7:80", "pod": "web-1", "service": "default/web"}


class FakeNetwork:
    def __init__(self, line, dns=None):
        self.line, self.dns = line, dns

    async def resolve(self, name):
        return self.dns

    async def send(self, target, port):
        return self.line

    def answer(self, line, path, now):
        status = 200 if path == "/" else 404
        return Response(status, REASONS.get(status, b""), [(b"server", b"nginx")], b"hello\n")


def run(command, network, *, until=None):
    """Run `command`; advance the fake clock step by step until it ends: (exit, out, err, seconds)."""
    clock = FakeClock()
    shell = Shell(Filesystem.for_container(pod_name="box", namespace="default", pod_ip="10.244.0.5"), clock=clock,
                  hostname="box")
    shell.network = network
    out, err = bytearray(), bytearray()

    async def scenario():
        started = clock.now()
        task = asyncio.ensure_future(shell.run_argv(["sh", "-c", command], Streams(out.extend, err.extend)))
        while not task.done():
            await clock.advance(0.5)
            assert clock.now() - started < 1000, "the command never ended"
        return task.result(), clock.now() - started

    code, took = asyncio.run(scenario())
    return code, out.decode(), err.decode(), took


def test_wget_with_a_timeout_times_out_as_busybox_says():
    code, _, err, took = run("wget --spider --timeout=1 nginx", FakeNetwork(DROPPED))
    assert (code, err) == (1, "Connecting to nginx\nwget: download timed out\n")
    assert 1 <= took <= 1.5
    code, _, err, took = run("wget -q -T 3 -O- web", FakeNetwork(DROPPED))
    assert (code, err) == (1, "wget: download timed out\n") and 3 <= took <= 3.5


def test_wget_without_a_timeout_waits_for_the_kernels_syn_retries():
    code, _, err, took = run("wget -qO- web", FakeNetwork(DROPPED))
    assert code == 1 and err == "wget: can't connect to remote host (web): Connection timed out\n"
    assert 130 <= took <= 131


def test_wget_spider_checks_without_saving():
    code, out, err, _ = run("wget --spider --timeout=1 nginx; ls", FakeNetwork(ANSWERED))
    assert code == 0 and err == "Connecting to nginx\nremote file exists\n" and "index.html" not in out
    assert run("wget -q --spider nginx/missing", FakeNetwork(ANSWERED))[0] == 1


@pytest.mark.parametrize("options,seconds,message", [
    ("--connect-timeout 2", 2, "Failed to connect to web port 80 after 2000 ms: Timeout was reached"),
    ("-m 1", 1, "Connection timed out after 1000 milliseconds"),
    ("--max-time=5 --connect-timeout=3", 3, "Failed to connect to web port 80 after 3000 ms: Timeout was reached"),
    ("", 130, "Failed to connect to web port 80 after 130000 ms: Timeout was reached"),
])
def test_curl_times_out_with_exit_28(options, seconds, message):
    code, out, err, took = run(f"curl {options} web", FakeNetwork(DROPPED))
    assert (code, out, err) == (28, "", f"curl: (28) {message}\n")
    assert seconds <= took <= seconds + 0.5
    assert run(f"curl -s {options} web", FakeNetwork(DROPPED))[:3] == (28, "", "")


def test_nslookup_and_dig_time_out_when_dns_is_dropped():
    code, out, _, took = run("nslookup web", FakeNetwork(DROPPED, dns={"dropped": DROPPED["dropped"]}))
    assert (code, out) == (1, ";; connection timed out; no servers could be reached\n") and 10 <= took <= 10.5
    code, _, _, took = run("nslookup -timeout=1 -retry=1 web", FakeNetwork(DROPPED, dns={"dropped": {"x": 1}}))
    assert code == 1 and 1 <= took <= 1.5
    code, out, _, took = run("dig +time=1 +tries=2 web", FakeNetwork(DROPPED, dns={"dropped": {"x": 1}}))
    assert (code, out) == (9, ";; connection timed out; no servers could be reached\n") and 2 <= took <= 2.5


def test_nc_connects_reports_and_times_out():
    assert run("nc -z -w 1 web 80", FakeNetwork(ANSWERED))[:3] == (0, "", "")
    assert run("nc -zv web 80", FakeNetwork(ANSWERED))[2] == "web (10.244.1.7:80) open\n"
    code, _, err, took = run("nc -z -w 2 web 80", FakeNetwork(DROPPED))
    assert (code, err) == (1, "nc: timeout\n") and 2 <= took <= 2.5
    assert run("nc -z web 81", FakeNetwork({"code": 503, "error": "no port"}))[:3] == (
        1, "", "nc: can't connect to remote host (web): Connection refused\n")
    assert run("nc -z nope 80", FakeNetwork({"code": 503, "error": "NXDOMAIN: nope"}))[2] == "nc: bad address 'nope'\n"
    assert run("nc web", FakeNetwork(ANSWERED))[0] == 1
