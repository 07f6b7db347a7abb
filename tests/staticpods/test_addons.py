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
    answers = iter([httpx.Response(409, json={}), httpx.Response(403, text="forbidden")])
    with httpx.Client(base_url="http://hub", transport=httpx.MockTransport(lambda r: next(answers))) as http:
        problems = install(http)
    assert len(problems) == 1 and problems[0].startswith("DaemonSet kube-proxy: 403")


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
