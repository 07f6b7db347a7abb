"""Authentication and RBAC with the real kubectl against a real hub: a user bound to `edit` in one
namespace works there and gets Kubernetes' exact 403 in another; `kubectl auth can-i [--list]`
and `kubectl auth whoami` answer; a kubelet's identity cannot touch another node's pods."""

from __future__ import annotations

import json
import re

import pytest

from control.auth import tokenfile
from tests.conftest import KUBECTL, Hub

pytestmark = pytest.mark.e2e


class As:
    """kubectl with the hub's kubeconfig but another user's token."""

    def __init__(self, hub: Hub, user: str, groups: tuple[str, ...] = ()):
        self.hub, self.user = hub, user
        token = tokenfile.token_of(hub.dir, user, groups)
        self.kubeconfig = hub.dir / f"kubeconfig-{user.replace(':', '-')}"
        self.kubeconfig.write_text(re.sub(r"token: .*", f"token: {token}", hub.kubeconfig.read_text()))

    def __call__(self, *args: str, input: str | None = None):
        import subprocess

        return subprocess.run([KUBECTL, "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                               str(self.hub.dir / f"cache-{self.user.replace(':', '-')}"), *args],
                              input=input, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def secured():
    """A hub of its own with authentication on (the default is off until the dashboard can log in)."""
    server = Hub(env={"KK_AUTHENTICATION": "on"}).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def room(secured):
    hub = secured
    for ns in ("rbac-alice", "rbac-bob"):
        hub.kubectl("create", "namespace", ns)
    hub.kubectl("create", "rolebinding", "alice-edit", "--clusterrole=edit", "--user=alice", "-n", "rbac-alice")
    return hub, As(hub, "alice")


def test_edit_works_in_its_namespace_and_is_refused_elsewhere_with_the_exact_message(room):
    hub, alice = room
    made = alice("run", "web", "--image=nginx", "-n", "rbac-alice")
    assert made.returncode == 0, made.stderr
    assert "web" in alice("get", "pods", "-n", "rbac-alice").stdout
    refused = alice("get", "pods", "-n", "rbac-bob")
    assert refused.returncode == 1
    assert refused.stderr.strip() == ('Error from server (Forbidden): pods is forbidden: User "alice" cannot list '
                                      'resource "pods" in API group "" in the namespace "rbac-bob"')
    cluster_wide = alice("get", "pods", "-A")
    assert 'cannot list resource "pods" in API group "" at the cluster scope' in cluster_wide.stderr
    escalate = alice("create", "clusterrolebinding", "mine", "--clusterrole=cluster-admin", "--user=alice")
    assert escalate.returncode == 1 and "clusterrolebindings.rbac.authorization.k8s.io is forbidden" in escalate.stderr


def test_can_i_and_whoami_answer(room):
    hub, alice = room
    assert alice("auth", "can-i", "create", "pods", "-n", "rbac-alice").stdout.strip() == "yes"
    assert alice("auth", "can-i", "create", "pods", "-n", "rbac-bob").stdout.strip() == "no"
    assert alice("auth", "can-i", "get", "pods/log", "-n", "rbac-alice").stdout.strip() == "yes"
    listed = alice("auth", "can-i", "--list", "-n", "rbac-alice")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:] if line.strip()}
    assert "create" in rows["pods"] and "deployments.apps" in rows
    assert "selfsubjectaccessreviews.authorization.k8s.io" in rows
    whoami = alice("auth", "whoami", "-o", "json")
    assert json.loads(whoami.stdout)["status"]["userInfo"] == {"username": "alice", "uid": "alice",
                                                               "groups": ["system:authenticated"]}
    admin = json.loads(hub.kubectl("auth", "whoami", "-o", "json").stdout)["status"]["userInfo"]
    assert admin["username"] == "kubernetes-admin" and "system:masters" in admin["groups"]
    impersonated = hub.kubectl("auth", "can-i", "list", "pods", "-n", "rbac-bob", "--as", "alice", check=False)
    assert impersonated.stdout.strip() == "no"


def test_a_kubelet_cannot_patch_another_nodes_pod(room):
    hub, _ = room
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "elsewhere", "namespace": "rbac-bob"},
           "spec": {"nodeName": "node-2", "containers": [{"name": "c", "image": "nginx"}]}}
    hub.kubectl("create", "-f", "-", input=json.dumps(pod))
    kubelet = As(hub, "system:node:node-1", ("system:nodes",))
    # kubectl's patch reads pods/status first, which upstream's system:node does not allow either
    patched = kubelet("patch", "pod", "elsewhere", "-n", "rbac-bob", "--subresource=status", "--type=merge",
                      "-p", '{"status":{"message":"mine now"}}')
    assert patched.returncode == 1 and "Forbidden" in patched.stderr
    deleted = kubelet("delete", "pod", "elsewhere", "-n", "rbac-bob", "--wait=false")
    assert deleted.returncode == 1
    assert ('pods "elsewhere" is forbidden: node "node-1" can only delete pods with spec.nodeName set to itself'
            in deleted.stderr)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"}}
    hub.kubectl("apply", "-f", "-", input=json.dumps(node))
    labelled = kubelet("label", "node", "node-2", "stolen=yes")
    assert 'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"' in labelled.stderr
    assert "mine now" not in hub.kubectl("get", "pod", "elsewhere", "-n", "rbac-bob", "-o", "json").stdout
