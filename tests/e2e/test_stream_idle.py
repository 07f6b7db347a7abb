"""A stream left open with nothing on it ends after the hub's idle timeout (KK_STREAM_IDLE_SECONDS,
the kubelet's streaming-connection-idle-timeout), end to end with the real kubectl: exec and attach
end with the reason printed and exit 1, port-forward over WebSocket and over SPDY (which pings
every 5 s) loses its connection; the hub goes on serving."""

from __future__ import annotations

import json
import os
import subprocess
from functools import partial

import httpx
import pytest

from tests.conftest import KUBECTL, Hub, hub_with_kubelet, wait_for
from tests.e2e.test_kubectl_portforward import Forward

pytestmark = pytest.mark.e2e

NODE = "node-1"
IDLE = "2"
KUBELET_ENV = {"KK_PACE": "workshop", "KK_START_DELAY": "0.1", "KK_TERMINATION_SECONDS": "0.5"}
REASON = "error: stream closed: nothing was sent or received for 2s (the streaming connection idle timeout"
GUARD = 60  # only a guard against a hang: the stream must end long before
eventually = partial(wait_for, timeout=20)


@pytest.fixture(scope="module")
def hub():
    with hub_with_kubelet(NODE, KUBELET_ENV, hub_env={"KK_STREAM_IDLE_SECONDS": IDLE}) as server:
        for name, image, args in (("box", "busybox:1.36", ["sleep", "100000"]), ("web", "nginx:1.27", None)):
            container = {"name": "app", "image": image, **({"args": args} if args else {})}
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                   "spec": {"nodeName": NODE, "containers": [container]}}
            server.kubectl("apply", "-f", "-", input=json.dumps(pod))
            eventually(lambda: " Running " in server.kubectl("get", "pod", name).stdout, what=f"{name} Running")
        yield server


def kubectl(hub: Hub, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([KUBECTL, "--kubeconfig", str(hub.kubeconfig), "--cache-dir", str(hub.dir / "kube-cache"),
                           *args], capture_output=True, text=True, timeout=GUARD, env={**os.environ, **(env or {})})


def test_an_idle_exec_ends_with_the_reason_and_the_hub_goes_on(hub):
    idle = kubectl(hub, "exec", "box", "--", "sleep", "100000")
    assert idle.returncode == 1 and REASON in idle.stderr, idle.stderr
    assert hub.kubectl("exec", "box", "--", "echo", "still here").stdout == "still here\n"


def test_an_idle_attach_ends_with_the_reason(hub):
    idle = kubectl(hub, "attach", "box")
    assert idle.returncode == 1 and REASON in idle.stderr, idle.stderr


@pytest.mark.parametrize("env", [{}, {"KUBECTL_PORT_FORWARD_WEBSOCKETS": "false"}], ids=["websocket", "spdy"])
def test_an_idle_port_forward_loses_its_connection(hub, env):
    with Forward(hub, "pod/web", "0:80", env=env) as forward:
        port = forward.local_port()
        assert "Welcome to nginx!" in httpx.get(f"http://127.0.0.1:{port}/", timeout=10).text
        assert forward.process.wait(timeout=GUARD) == 1  # then nothing: the tunnel is idle
        assert "error: lost connection to pod" in forward.process.stderr.read().decode()
    with Forward(hub, "pod/web", "0:80", env=env) as forward:  # the hub still serves
        assert "Welcome to nginx!" in httpx.get(f"http://127.0.0.1:{forward.local_port()}/", timeout=10).text
