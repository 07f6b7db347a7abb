"""nslookup, dig, wget and curl in the simulated container, against a fake of the hub's DNS and
traffic paths (`NetworkHandle`'s two calls): busybox's output for an answer, NXDOMAIN, a Service
without endpoints, and a shell with no network at all."""

from __future__ import annotations

import asyncio
import json

import pytest

from control import errors
from control.kubelet.filesystem import Filesystem
from control.kubelet.network import NetworkHandle
from control.userland.network import parse_url
from control.userland.shell import Shell, Streams
from control.clock import FakeClock

ANSWER = {"name": "web.default.svc.cluster.local", "type": "A", "records": ["10.96.3.4"], "service": "default/web"}
LINE = {"seq": 0, "from": "n1", "target": "web", "service": "default/web", "clusterIP": "10.96.3.4",
        "endpoint": "10.244.1.7:80", "pod": "web-1", "podNode": "n2", "code": 200}


class FakeHub:
    """The two hub paths a shell's network uses, recorded."""

    def __init__(self, line: dict | None = None):
        self.asked: list[tuple] = []
        self.line = line or LINE

    async def request(self, method, path, *, params=None, **_):
        self.asked.append((method, path, params))
        if params["name"] in ("web", "web.default.svc.cluster.local"):
            return ANSWER
        raise errors.NotFound(f"{params['name']} not found")

    async def stream_lines(self, method, path, *, params=None, read_timeout=None):
        self.asked.append((method, path, params))
        if params["target"] not in ("web", "10.96.3.4"):
            yield {"seq": 0, "code": 503, "error": f"NXDOMAIN: {params['target']} not found"}
        else:
            yield self.line
        yield {"done": True}


def sh(hub: FakeHub | None, command: str) -> tuple[int, str, str, Shell]:
    shell = Shell(Filesystem.for_container(pod_name="box", namespace="default", pod_ip="10.244.0.5"),
                  clock=FakeClock(), hostname="box")
    shell.network = NetworkHandle(hub, "n1", "default") if hub is not None else None
    out, err = bytearray(), bytearray()
    code = asyncio.run(shell.run_argv(["sh", "-c", command], Streams(out.extend, err.extend)))
    return code, out.decode(), err.decode(), shell


def test_urls():
    assert parse_url("web") == ("web", None, "/")
    assert parse_url("http://web:8000/x") == ("web", 8000, "/x")
    assert parse_url("10.96.3.4:80") == ("10.96.3.4", 80, "/")
    assert parse_url("web:99999")[1] == -1


def test_nslookup_asks_the_cluster_dns_for_the_pods_namespace():
    hub = FakeHub()
    code, out, _, _ = sh(hub, "nslookup web")
    assert code == 0
    assert out == ("Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n"
                   "Name:\tweb.default.svc.cluster.local\nAddress: 10.96.3.4\n\n")
    assert hub.asked == [("GET", "/kubekitchen/resolve", {"name": "web", "namespace": "default"})]
    code, out, _, _ = sh(hub, "nslookup nope")
    assert code == 1 and out.endswith("** server can't find nope: NXDOMAIN\n\n")
    assert sh(hub, "dig +short web")[1] == "10.96.3.4\n"
    assert "status: NXDOMAIN" in sh(hub, "dig nope")[1]


def test_wget_and_curl_print_what_the_pod_answered_through_kube_proxy():
    hub = FakeHub()
    code, out, err, _ = sh(hub, "wget -qO- http://web:8000")
    assert code == 0 and err == ""
    assert json.loads(out) == {"pod": "web-1", "namespace": "default", "node": "n2", "podIP": "10.244.1.7", "port": 80}
    assert hub.asked == [("POST", "/kubekitchen/traffic",
                          {"node": "n1", "target": "web", "namespace": "default", "count": 1, "port": 8000})]
    code, out, _, _ = sh(hub, "curl -s 10.96.3.4")
    assert code == 0 and json.loads(out)["pod"] == "web-1"
    code, out, err, shell = sh(hub, "wget web; cat index.html")
    assert code == 0 and json.loads(out)["pod"] == "web-1" and "saving to 'index.html'" in err


@pytest.mark.parametrize("command, code, message", [
    ("wget -qO- nope", 1, "wget: bad address 'nope'\n"),
    ("curl nope", 6, "curl: (6) Could not resolve host: nope\n"),
    ("curl -s nope", 6, ""),
    ("wget", 1, "Usage: wget"),
])
def test_names_that_do_not_resolve(command, code, message):
    got, _, err, _ = sh(FakeHub(), command)
    assert got == code and message in err


def test_a_service_without_endpoints_refuses_the_connection():
    hub = FakeHub({"seq": 0, "code": 503, "error": "default/web has no ready endpoints"})
    code, _, err, _ = sh(hub, "wget -qO- web")
    assert code == 1 and err == "wget: can't connect to remote host (web): Connection refused\n"
    code, _, err, _ = sh(hub, "curl web:8000")
    assert code == 7 and "Failed to connect to web port 8000" in err


def test_without_a_network_nothing_resolves():
    code, out, _, _ = sh(None, "nslookup web")
    assert code == 1 and "NXDOMAIN" in out
    assert sh(None, "curl -sS web")[:1] == (6,)


NGINX_LINE = {**LINE, "server": "nginx"}


def test_an_nginx_pod_answers_its_welcome_page_as_port_forward_does():
    hub = FakeHub(NGINX_LINE)
    code, out, err, _ = sh(hub, "wget -qO- web")
    assert code == 0 and err == "" and "<title>Welcome to nginx!</title>" in out
    code, out, _, _ = sh(hub, "curl -s http://web/")
    assert code == 0 and out.startswith("<!DOCTYPE html>") and "Welcome to nginx!" in out


def test_curl_i_and_wget_S_show_the_headers_naming_the_answering_pod():
    hub = FakeHub(NGINX_LINE)
    code, out, _, _ = sh(hub, "curl -si web")
    head, _, body = out.partition("\r\n\r\n")
    assert code == 0 and head.startswith("HTTP/1.1 200 OK\r\n") and "server: nginx/" in head
    assert "x-kubekitchen-pod: default/web-1" in head and "Welcome to nginx!" in body
    code, out, err, _ = sh(hub, "wget -S -O- web")
    assert code == 0 and "  HTTP/1.1 200 OK\n" in err and "x-kubekitchen-pod: default/web-1" in err
    assert "x-kubekitchen" not in out


def test_a_missing_page_is_printed_by_curl_and_refused_by_wget():
    hub = FakeHub(NGINX_LINE)
    code, out, _, _ = sh(hub, "curl -s web/nothing")
    assert code == 0 and "<title>404 Not Found</title>" in out
    code, out, err, _ = sh(hub, "wget -qO- web/nothing")
    assert code == 1 and out == "" and "wget: server returned error: HTTP/1.1 404 Not Found" in err


def test_a_pod_ip_is_sent_as_the_target_and_its_pod_named_from_the_answer():
    line = {"seq": 0, "from": "n1", "target": "10.244.2.9", "service": "", "clusterIP": "",
            "endpoint": "10.244.2.9:80", "pod": "solo", "podNamespace": "other", "podNode": "n2", "code": 200,
            "server": "httpd"}

    class PodHub(FakeHub):
        async def stream_lines(self, method, path, *, params=None, read_timeout=None):
            self.asked.append((method, path, params))
            yield line
            yield {"done": True}

    hub = PodHub()
    code, out, _, _ = sh(hub, "curl -si 10.244.2.9")
    assert code == 0 and "It works!" in out and "x-kubekitchen-pod: other/solo" in out
    assert hub.asked[0][2]["target"] == "10.244.2.9"


def test_curl_I_prints_only_the_headers():
    code, out, _, _ = sh(FakeHub(NGINX_LINE), "curl -sI web")
    assert code == 0 and out.startswith("HTTP/1.1 200 OK\r\n") and out.endswith("\r\n\r\n") and "nginx!" not in out


FRONT_DOOR_LINE = {"seq": 0, "from": "n1", "target": "10.96.3.4", "service": "", "endpoint": "10.96.3.4:80",
                   "pod": "soup-1", "podNamespace": "default", "podNode": "node-1", "code": 200,
                   "via": "ingress-controller",
                   "response": {"status": 404, "headers": [["server", "nginx"], ["content-type", "text/html"]],
                                "body": "<html>404 Not Found</html>\r\n"}}


def test_curl_sends_the_host_header_and_path_and_prints_a_listeners_own_answer():
    hub = FakeHub(FRONT_DOOR_LINE)
    code, out, err, _ = sh(hub, "curl -i -H 'Host: menu.example' http://10.96.3.4/soup?x=1")
    assert code == 0 and err == ""
    assert out.startswith("HTTP/1.1 404 Not Found\r\nserver: nginx\r\n") and out.endswith("<html>404 Not Found</html>\r\n")
    assert hub.asked[-1][2] == {"node": "n1", "target": "10.96.3.4", "namespace": "default", "count": 1,
                                "path": "/soup?x=1", "host": "menu.example"}
    code, _, err, _ = sh(hub, "wget -q --header 'Host: menu.example' -O- http://10.96.3.4/soup")
    assert code == 1 and "404 Not Found" in err  # wget refuses a 404, as busybox's
    assert hub.asked[-1][2]["host"] == "menu.example"
    sh(hub, "curl -H 'Accept: x' http://10.96.3.4/")
    assert "host" not in hub.asked[-1][2] and "path" not in hub.asked[-1][2]  # only Host is sent
