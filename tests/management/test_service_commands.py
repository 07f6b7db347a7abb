"""`manage.py resolve` and `manage.py traffic` against a real hub (the traffic through a fake
kube-proxy, registered as node-1's): what they print, and that refusals exit with the hub's words."""

from __future__ import annotations

import io
import json
import urllib.request

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.api.extras.test_services import FakeKubeProxy

pytestmark = pytest.mark.e2e


def hub_request(hub, method: str, path: str, body: dict, content_type: str = "application/json") -> dict:
    request = urllib.request.Request(f"{hub.url}{path}", data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": content_type, **hub.auth})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def run(*args: str, token: str = "") -> str:
    """A command in this process, as the operator whose token is `token` (the hub's admin)."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KK_TOKEN", token)
        call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_resolve_prints_the_cluster_ip_and_refuses_an_unknown_name(hub):
    svc = hub_request(hub, "POST", "/api/v1/namespaces/default/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "cmd-web"},
        "spec": {"selector": {"app": "cmd-web"}, "ports": [{"port": 80}]}})
    out = run("resolve", "cmd-web.default.svc", "--server", hub.url, token=hub.token)
    assert "Name:    cmd-web.default.svc.cluster.local" in out
    assert f"Address: {svc['spec']['clusterIP']}" in out
    with pytest.raises(CommandError, match=r"server can't find nowhere: nowhere.default.svc.cluster.local: no such Service \(NXDOMAIN\)"):
        run("resolve", "nowhere", "-n", "default", "--server", hub.url, token=hub.token)


def test_traffic_prints_each_answer_then_who_answered(hub):
    proxy = FakeKubeProxy()
    try:
        hub_request(hub, "POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "cmd-node", "annotations": {"kubekitchen.dev/kube-proxy-port": str(proxy.port)}}})
        hub_request(hub, "PATCH", "/api/v1/nodes/cmd-node/status",
                    {"status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]}},
                    "application/merge-patch+json")
        out = run("traffic", "web", "--from", "cmd-node", "-n", "3", "--interval", "5", "--server", hub.url, token=hub.token)
        assert proxy.asked[-1][2] == {"target": "web", "namespace": "default", "count": "3", "interval": "5"}
    finally:
        proxy.stop()
    lines = out.splitlines()
    assert lines[0].startswith("#0") and "200  web-0 on node-2 (10.244.1.2:8080, endpoints rv 42)" in lines[0]
    assert lines[3] == "3 sent, 3 answered, 0 failed"
    assert [line.split()[0] for line in lines[4:]] == ["web-0", "web-1", "web-2"]
    with pytest.raises(CommandError, match='nodes "elsewhere" not found'):
        run("traffic", "web", "--from", "elsewhere", "--server", hub.url, token=hub.token)
