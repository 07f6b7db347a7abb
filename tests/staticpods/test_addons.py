"""kubeadm's kube-proxy addon: the DaemonSet's pods show each node's own kube-proxy process."""

from __future__ import annotations

import json

import httpx

from control.kinds.staticpods import HOST_PROCESS, log_path
from control.staticpods.addons import KubeProxyPods, install, kube_proxy_objects
from control.supervisor import Supervisor
from tests.staticpods.test_runner import popen
from tests.test_supervisor import FakeTime


def test_the_addon_is_a_service_account_and_a_daemonset_whose_pods_the_kubelet_leaves_alone():
    (account_path, account), (ds_path, daemonset) = kube_proxy_objects()
    assert account_path.endswith("/kube-system/serviceaccounts") and account["metadata"]["name"] == "kube-proxy"
    assert ds_path == "/apis/apps/v1/namespaces/kube-system/daemonsets"
    template = daemonset["spec"]["template"]
    assert template["metadata"]["labels"] == daemonset["spec"]["selector"]["matchLabels"] == {"k8s-app": "kube-proxy"}
    assert template["metadata"]["annotations"] == {HOST_PROCESS: "kube-proxy"}
    assert template["spec"]["hostNetwork"] and template["spec"]["priorityClassName"] == "system-node-critical"


def test_install_keeps_what_exists_and_reports_a_refusal():
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/daemonsets"):
            return httpx.Response(403, text="forbidden")
        return httpx.Response(409 if request.url.path.endswith("/serviceaccounts") else 201, json={})

    with httpx.Client(base_url="http://hub", transport=httpx.MockTransport(answer)) as http:
        problems = install(http)
    assert problems == ["DaemonSet kube-proxy: 403 forbidden"]


def pod(name: str, node: str, **meta) -> dict:
    return {"metadata": {"name": name, "namespace": "kube-system", "annotations": {HOST_PROCESS: "kube-proxy"},
                         "creationTimestamp": "2023-11-14T22:13:20Z", **meta},
            "spec": {"nodeName": node, "containers": [{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v1"}]},
            "status": {"phase": "Pending"}}


def test_each_pod_shows_its_nodes_process_written_as_that_node(tmp_path):
    clock, sent = FakeTime(), []
    clock.t = 1_700_000_100.0

    def hub(request: httpx.Request) -> httpx.Response:
        sent.append((request.method, request.url.path, request.headers["Authorization"],
                     json.loads(request.content) if request.content else None))
        return httpx.Response(200, json={})

    supervisor = Supervisor("http://hub", ["runcomponent"], {"KK_DATA_DIR": str(tmp_path)},
                            {"kube-proxy/node-1": ["kube-proxy"], "kube-proxy/node-2": ["kube-proxy"]},
                            clock=clock, transport=httpx.MockTransport(lambda r: httpx.Response(500)), popen=popen)
    pods = KubeProxyPods("http://hub", lambda node: f"token-{node}", supervisor, lambda node: f"ip-of-{node}",
                         clock.now, tmp_path / "kubelet", transport=httpx.MockTransport(hub))
    assert supervisor.log_files["kube-proxy/node-2"].name == "kube-proxy.node-2.log"
    supervisor.tick()
    supervisor.reconcile({"kube-proxy.node-2": "stopped"})
    pods.sync([pod("kube-proxy-abcde", "node-1"), pod("kube-proxy-fghij", "node-2"),
               pod("kube-proxy-gone1", "node-1", deletionTimestamp="2023-11-14T22:14:00Z"),
               {**pod("stranger", "node-1"), "metadata": {"name": "stranger", "annotations": {}}}])
    by_path = {path: (method, token, body) for method, path, token, body in sent}
    method, token, body = by_path["/api/v1/namespaces/kube-system/pods/kube-proxy-abcde/status"]
    assert method == "PUT" and token == "Bearer token-node-1"
    status = body["status"]
    assert status["containerStatuses"][0]["ready"] and status["hostIP"] == "ip-of-node-1"
    _, token, body = by_path["/api/v1/namespaces/kube-system/pods/kube-proxy-fghij/status"]
    assert token == "Bearer token-node-2"
    assert body["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    assert by_path["/api/v1/namespaces/kube-system/pods/kube-proxy-gone1"][0] == "DELETE"
    assert not any("stranger" in path for path in by_path)
    link = log_path(tmp_path / "kubelet", "kube-system", "kube-proxy-abcde", "kube-proxy")
    assert link.is_symlink() and link.resolve() == supervisor.log_files["kube-proxy/node-1"].resolve()


def test_coredns_stands_behind_kube_dns_at_the_address_every_pod_resolves_with():
    from control.kinds.network import CLUSTER_DNS
    from control.staticpods.addons import coredns_objects

    (_, account), (_, deployment), (_, service) = coredns_objects()
    assert account["metadata"]["name"] == "coredns" and deployment["spec"]["replicas"] == 2
    assert service["metadata"]["name"] == "kube-dns" and service["spec"]["clusterIP"] == CLUSTER_DNS == "10.96.0.10"
    assert service["spec"]["selector"] == deployment["spec"]["template"]["metadata"]["labels"] == {"k8s-app": "kube-dns"}
    assert [(p["port"], p["protocol"]) for p in service["spec"]["ports"]] == [(53, "UDP"), (53, "TCP"), (9153, "TCP")]
    assert deployment["spec"]["template"]["metadata"]["annotations"] == {HOST_PROCESS: "coredns"}


def test_coredns_pods_show_the_hubs_process(tmp_path):
    clock, sent, hub_up = FakeTime(), [], [True]
    clock.t = 1_700_000_100.0

    def hub(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={})

    supervisor = Supervisor("http://hub", ["runcomponent"], {"KK_DATA_DIR": str(tmp_path)}, {}, clock=clock,
                            transport=httpx.MockTransport(lambda r: httpx.Response(500)), popen=popen)
    pods = KubeProxyPods("http://hub", lambda node: "t", supervisor, lambda node: "10.0.0.1", clock.now,
                         tmp_path / "kubelet", hub_running=lambda: hub_up[0], hub_started=clock.t - 50,
                         transport=httpx.MockTransport(hub))
    dns = pod("coredns-5b8f9cf496-abcde", "node-2")
    dns["metadata"]["annotations"] = {HOST_PROCESS: "coredns"}
    pods.sync([dns])
    assert sent[-1]["status"]["containerStatuses"][0]["ready"]
    hub_up[0] = False
    pods.sync([{**dns, "status": sent[-1]["status"]}])
    assert sent[-1]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
