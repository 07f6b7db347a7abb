"""A shell in the pod, end to end: a real hub, kubelet and scheduler, driven by the real kubectl
(WebSocket v5.channel.k8s.io: exec with stdin and a TTY on a pty, `run -i` attaching) and the
official Python client (v4)."""

from __future__ import annotations

import json
import os
import pty
import select
import time
from functools import partial

import pytest
import websocket
from kubernetes import client
from kubernetes.stream import stream

from tests.conftest import KUBECTL, hub_with_kubelet, wait_for

pytestmark = pytest.mark.e2e

NODE = "node-1"
KUBELET_ENV = {"KK_PACE": "workshop", "KK_START_DELAY": "0.1", "KK_TERMINATION_SECONDS": "0.5"}
eventually = partial(wait_for, timeout=20)


@pytest.fixture(scope="module")
def hub():
    with hub_with_kubelet(NODE, KUBELET_ENV, scheduler=True) as server:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
               "spec": {"nodeName": NODE, "containers": [
                   {"name": "app", "image": "busybox:1.36", "env": [{"name": "COLOR", "value": "blue"}]}]}}
        server.kubectl("apply", "-f", "-", input=json.dumps(pod))
        eventually(lambda: " Running " in server.kubectl("get", "pod", "box").stdout, what="box Running")
        yield server


def test_exec_prints_the_output_and_returns_the_exit_code(hub):
    assert hub.kubectl("exec", "box", "--", "echo", "hi").stdout == "hi\n"
    assert hub.kubectl("exec", "box", "--", "sh", "-c", "echo $COLOR $HOSTNAME").stdout == "blue box\n"
    failed = hub.kubectl("exec", "box", "--", "sh", "-c", "exit 3", check=False)
    assert failed.returncode == 3 and "command terminated with exit code 3" in failed.stderr
    missing = hub.kubectl("exec", "box", "--", "nosuch", check=False)
    assert missing.returncode == 127 and "sh: nosuch: not found" in missing.stderr


def test_stdin_runs_through_the_shell_and_files_persist(hub):
    piped = hub.kubectl("exec", "-i", "box", "--", "sh", input="echo hello > /tmp/f; cat /tmp/f\n")
    assert piped.stdout == "hello\n"
    assert hub.kubectl("exec", "box", "--", "cat", "/tmp/f").stdout == "hello\n"
    assert hub.kubectl("exec", "-i", "box", "--", "cat", input="piped\n").stdout == "piped\n"
    assert hub.kubectl("exec", "-i", "box", "--", "sh", "-c", "cat", input="hi\n").stdout == "hi\n", "sh -c reads it too"
    counted = hub.kubectl("exec", "-i", "box", "--", "sh", "-c", "grep -c x | tr -d ' '", input="x\ny\nx\n")
    assert counted.stdout == "2\n"
    assert hub.kubectl("exec", "box", "--", "sh", "-c", "echo $((6*7)); seq -s ' ' 3; echo hi | gzip | zcat").stdout \
        == "42\n1 2 3\nhi\n"
    assert "search default.svc.cluster.local" in hub.kubectl("exec", "box", "--", "cat", "/etc/resolv.conf").stdout


def test_errors_are_kubernetes_statuses(hub):
    gone = hub.kubectl("exec", "nope", "--", "ls", check=False)
    assert gone.returncode == 1 and 'Error from server (NotFound): pods "nope" not found' in gone.stderr
    wrong = hub.kubectl("exec", "box", "-c", "ghost", "--", "ls", check=False)
    assert wrong.returncode == 1 and "container ghost is not valid for pod box" in wrong.stderr


def test_a_tty_session_on_a_pty(hub):
    pid, fd = pty.fork()
    if pid == 0:  # the child: kubectl with a terminal
        os.execv(KUBECTL, [KUBECTL, "--kubeconfig", str(hub.kubeconfig), "--cache-dir", str(hub.dir / "kube-cache"),
                           "exec", "-it", "box", "--", "sh"])
    seen = bytearray()

    def until(text: bytes, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while text not in seen:
            assert time.monotonic() < deadline, f"never saw {text!r} in {bytes(seen)!r}"
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    seen.extend(os.read(fd, 4096))
                except OSError:
                    break

    try:
        until(b"/ # ")
        os.write(fd, b"echo $HOSTNAME\r")
        until(b"box\r\n")
        os.write(fd, b"exit 4\r")
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 4
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.close(fd)


def test_kubectl_run_attaches_to_the_shell_it_started(hub):
    ran = hub.kubectl("run", "-i", "--rm", "t", "--image=busybox", "--", "sh", input="echo hi from run\nexit\n")
    assert ran.stdout == 'hi from run\npod "t" deleted\n'


def test_the_python_client_streams_over_v4(hub):
    with hub.python_client() as api:
        core = client.CoreV1Api(api)
        out = stream(core.connect_get_namespaced_pod_exec, "box", "default", command=["sh", "-c", "echo py; hostname"],
                     stderr=True, stdin=False, stdout=True, tty=False)
    assert out == "py\nbox\n"


def test_an_unknown_subprotocol_is_refused_with_a_403(hub):
    url = hub.url.replace("http", "ws") + "/api/v1/namespaces/default/pods/box/exec?command=ls&stdout=1"
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        websocket.create_connection(url, subprotocols=["v9.channel.k8s.io"], timeout=10,
                                    header=[f"Authorization: Bearer {hub.token}"])
    assert refused.value.status_code == 403
    assert b"requested protocol(s) are not supported" in refused.value.resp_body
