"""kubeadm's two addons in kube-system: the `kube-proxy` DaemonSet, whose pods are each node's real
kube-proxy process (cmd/kubeadm/app/phases/addons/proxy), and the `coredns` Deployment behind the
`kube-dns` Service at 10.96.0.10, whose pods stand for the hub's cluster DNS (addons/dns).

Guarantees:
- `install` creates the ServiceAccounts, the DaemonSet, the Deployment and the Service when
  missing, never resetting them; the controllers make `kube-proxy-<hash>` per node and two
  `coredns-<hash>-<hash>` pods as for any DaemonSet and Deployment, the endpoints controller fills
  kube-dns's Endpoints from the ready ones.
- CoreDNS pods show the hub's process (the hub answers the cluster's names, `control.kinds.dns`):
  Running while it runs; they have no log of their own.
- Its pods carry the `kubekitchen.dev/host-process` annotation: the node's kubelet does not run
  them; `sync` writes each one's status as its node (`system:node:<node>`) from the node's
  kube-proxy spoke: Running while the process runs, restarts counted, `Completed` when stopped from
  the dashboard, CrashLoopBackOff while a crashed one waits to be started again. A pod being
  deleted is finished at once (the kubelet's part), and the DaemonSet controller makes a new one.
- Each kube-proxy's output goes to a file of the kubelets' folder, and each pod's container log is
  a link to its node's (`kubectl logs -n kube-system kube-proxy-<hash>`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import httpx

from control.kinds.network import CLUSTER_DNS
from control.kinds.staticpods import HOST_PROCESS, log_path
from control.staticpods.manifests import VERSION
from control.staticpods.mirror import ContainerView, pod_status, same_status

NAMESPACE, NAME = "kube-system", "kube-proxy"
LABELS = {"k8s-app": "kube-proxy"}


def kube_proxy_objects() -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) of what kubeadm's addon phase creates for kube-proxy."""
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": NAME, "namespace": NAMESPACE}}
    container = {"name": NAME, "image": f"registry.k8s.io/kube-proxy:{VERSION}", "imagePullPolicy": "IfNotPresent",
                 "command": ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                             "--hostname-override=$(NODE_NAME)"],
                 "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                 "securityContext": {"privileged": True}}
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet",
                 "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
                 "spec": {"selector": {"matchLabels": dict(LABELS)},
                          "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                          "template": {"metadata": {"labels": dict(LABELS), "annotations": {HOST_PROCESS: NAME}},
                                       "spec": {"containers": [container], "hostNetwork": True,
                                                "priorityClassName": "system-node-critical",
                                                "serviceAccountName": NAME,
                                                "nodeSelector": {"kubernetes.io/os": "linux"},
                                                "tolerations": [{"operator": "Exists"}]}}}}
    return [(f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", account),
            (f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets", daemonset)]


DNS_LABELS = {"k8s-app": "kube-dns"}
COREDNS = "coredns"
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.11.3"


def coredns_objects() -> list[tuple[str, dict[str, Any]]]:
    """kubeadm's CoreDNS addon: the `coredns` Deployment behind the `kube-dns` Service at the
    cluster DNS address every pod's resolv.conf names (cmd/kubeadm/app/phases/addons/dns)."""
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": COREDNS, "namespace": NAMESPACE}}
    ports = [{"name": "dns", "containerPort": 53, "protocol": "UDP"},
             {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
             {"name": "metrics", "containerPort": 9153, "protocol": "TCP"}]
    container = {"name": COREDNS, "image": COREDNS_IMAGE, "imagePullPolicy": "IfNotPresent",
                 "args": ["-conf", "/etc/coredns/Corefile"], "ports": ports,
                 "resources": {"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": COREDNS, "namespace": NAMESPACE, "labels": dict(DNS_LABELS)},
                  "spec": {"replicas": 2, "selector": {"matchLabels": dict(DNS_LABELS)},
                           "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                           "template": {"metadata": {"labels": dict(DNS_LABELS), "annotations": {HOST_PROCESS: COREDNS}},
                                        "spec": {"containers": [container], "serviceAccountName": COREDNS,
                                                 "priorityClassName": "system-cluster-critical",
                                                 "nodeSelector": {"kubernetes.io/os": "linux"}}}}}
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "kube-dns", "namespace": NAMESPACE,
                            "labels": {**DNS_LABELS, "kubernetes.io/cluster-service": "true",
                                       "kubernetes.io/name": "CoreDNS"},
                            "annotations": {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}},
               "spec": {"clusterIP": CLUSTER_DNS, "selector": dict(DNS_LABELS),
                        "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                                  {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                                  {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}}
    return [(f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", account),
            (f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments", deployment),
            (f"/api/v1/namespaces/{NAMESPACE}/services", service)]


def install(http: httpx.Client) -> list[str]:
    """Create what is missing (an admin's client); the problems met, for the operator to read."""
    problems = []
    for path, obj in [*kube_proxy_objects(), *coredns_objects()]:
        answer = http.post(path, json=obj)
        if answer.status_code not in (201, 409):
            problems.append(f"{obj['kind']} {obj['metadata']['name']}: {answer.status_code} {answer.text[:200]}")
    return problems


class KubeProxyPods:
    """The addons' pods' status: each kube-proxy pod from its node's kube-proxy process, CoreDNS from the hub."""

    def __init__(self, url: str, token_of: Callable[[str], str], supervisor: Any, node_ip: Callable[[str], str],
                 now: Callable[[], float], kubelet_dir: Path, *, hub_running: Callable[[], bool] = lambda: True,
                 hub_started: float = 0.0, transport: httpx.BaseTransport | None = None):
        self.url, self.token_of, self.supervisor, self.node_ip, self.now = url, token_of, supervisor, node_ip, now
        self.hub_running, self.hub_started = hub_running, hub_started
        self.kubelet_dir, self.transport = Path(kubelet_dir), transport
        self.clients: dict[str, httpx.Client] = {}
        for spoke in supervisor.spokes:  # each kube-proxy's output is its pod's container log
            if spoke.startswith(f"{NAME}/"):
                supervisor.log_files[spoke] = self.kubelet_dir / "host-processes" / f"{spoke.replace('/', '.')}.log"

    def _link_log(self, spoke: str, pod: str) -> None:
        """The pod's log names its node's kube-proxy output (as /var/log/containers links into /var/log/pods)."""
        target = self.supervisor.log_files.get(spoke)
        link = log_path(self.kubelet_dir, NAMESPACE, pod, NAME)
        if target is None or link.is_symlink():
            return
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        link.with_suffix(".previous").symlink_to(target.with_suffix(".previous"))

    def _as(self, node: str) -> httpx.Client:
        if node not in self.clients:
            self.clients[node] = httpx.Client(base_url=self.url, timeout=5, transport=self.transport, headers={
                "Authorization": f"Bearer {self.token_of(node)}", "User-Agent": f"kubelet/{node} (host processes)"})
        return self.clients[node]

    def view(self, spoke: str) -> ContainerView:
        runs = self.supervisor.runs_of(spoke)
        restarts = max(0, runs.starts - 1)
        if self.supervisor.desired.get(spoke) == "stopped":
            return ContainerView("stopped", restarts, last_started_at=runs.started_wall, last_finished_at=runs.finished_wall)
        last = dict(last_exit_code=runs.exit_code, last_reason="Error" if runs.exit_code else "Completed",
                    last_started_at=runs.previous_started_wall if runs.running else runs.started_wall,
                    last_finished_at=runs.finished_wall) if runs.exit_code is not None else {}
        if runs.running:
            return ContainerView("running", restarts, started_at=runs.started_wall, **last)
        if runs.starts == 0:
            return ContainerView("waiting", 0, reason="ContainerCreating")
        return ContainerView("waiting", restarts, reason="CrashLoopBackOff",
                             message="back-off restarting failed container", **last)

    def sync(self, pods: list[dict[str, Any]]) -> None:
        """`pods`: the kube-system pods, as listed; those of the two addons are written."""
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            process = (pod["metadata"].get("annotations") or {}).get(HOST_PROCESS)
            spoke = f"kube-proxy/{node}"
            if not node or (process == NAME and spoke not in self.supervisor.spokes) or process not in (NAME, COREDNS):
                continue
            path = f"/api/v1/namespaces/{NAMESPACE}/pods/{pod['metadata']['name']}"
            if pod["metadata"].get("deletionTimestamp"):
                self._as(node).request("DELETE", path, json={"kind": "DeleteOptions", "apiVersion": "v1",
                                                             "gracePeriodSeconds": 0})
                continue
            created = pod["metadata"].get("creationTimestamp")
            start = _parse(created) if created else self.now()
            if process == NAME:
                self._link_log(spoke, pod["metadata"]["name"])
                view = self.view(spoke)
            else:  # the cluster's names are answered by the hub (control.kinds.dns): CoreDNS runs with it
                view = ContainerView("running", 0, started_at=max(start, self.hub_started)) if self.hub_running() \
                    else ContainerView("waiting", 0, reason="CrashLoopBackOff")
            status = pod_status(pod, view, start, self.node_ip(node), self.now())
            if not same_status(pod.get("status") or {}, status):
                self._as(node).put(f"{path}/status", json={**pod, "status": status})


def _parse(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
