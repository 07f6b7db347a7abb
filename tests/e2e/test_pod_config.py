"""Config in env and files, seen from inside the container with the real kubectl: a real hub and
kubelet; ConfigMap/Secret env and volumes, the downward API, the ServiceAccount token, a changed
ConfigMap reaching the mounted file but not env or subPath, and CreateContainerConfigError until a
missing ConfigMap is created."""

from __future__ import annotations

import json
from functools import partial

import pytest

from tests.conftest import Hub, hub_with_kubelet, wait_for

pytestmark = pytest.mark.e2e

NODE = "node-1"
KUBELET_ENV = {"KK_PACE": "workshop", "KK_START_DELAY": "0.1", "KK_TERMINATION_SECONDS": "0.5", "KK_SYNC_PERIOD": "1"}
eventually = partial(wait_for, timeout=20)
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
       "spec": {"nodeName": NODE, "containers": [{
           "name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "echo $(GREETING) && sleep infinity"],
           "env": [{"name": "NAME", "value": "kitchen"}, {"name": "GREETING", "value": "hello $(NAME)"},
                   {"name": "COLOR", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "color"}}},
                   {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                   {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                   {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
           "envFrom": [{"configMapRef": {"name": "app"}, "prefix": "CFG_"}],
           "volumeMounts": [{"name": "config", "mountPath": "/etc/config"},
                            {"name": "config", "mountPath": "/etc/motd", "subPath": "motd"},
                            {"name": "db", "mountPath": "/etc/db", "readOnly": True},
                            {"name": "info", "mountPath": "/etc/info"},
                            {"name": "scratch", "mountPath": "/scratch"}]}],
           "volumes": [{"name": "config", "configMap": {"name": "app"}},
                       {"name": "db", "secret": {"secretName": "db", "defaultMode": 0o400}},
                       {"name": "info", "downwardAPI": {"items": [{"path": "labels",
                                                                  "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                       {"name": "scratch", "emptyDir": {}}]}}


@pytest.fixture(scope="module")
def hub():
    with hub_with_kubelet(NODE, KUBELET_ENV) as server:
        server.kubectl("create", "serviceaccount", "default")  # no controller-manager here to make it
        server.kubectl("create", "configmap", "app", "--from-literal=color=blue", "--from-literal=motd=hello")
        server.kubectl("create", "secret", "generic", "db", "--from-literal=password=s3cret")
        server.kubectl("apply", "-f", "-", input=json.dumps(POD))
        eventually(lambda: " Running " in server.kubectl("get", "pod", "web").stdout, what="web Running")
        yield server


def sh(hub: Hub, *command: str, pod: str = "web") -> str:
    return hub.kubectl("exec", pod, "--", *command).stdout


def test_env_comes_from_values_config_maps_secrets_and_the_pod(hub):
    env = dict(line.split("=", 1) for line in sh(hub, "env").splitlines())
    pod_ip = json.loads(hub.kubectl("get", "pod", "web", "-o", "json").stdout)["status"]["podIP"]
    assert {k: env.get(k) for k in ("GREETING", "COLOR", "PASSWORD", "POD_NAME", "POD_IP", "CFG_color", "CFG_motd")} == {
        "GREETING": "hello kitchen", "COLOR": "blue", "PASSWORD": "s3cret", "POD_NAME": "web", "POD_IP": pod_ip,
        "CFG_color": "blue", "CFG_motd": "hello"}
    assert sh(hub, "printenv", "COLOR") == "blue\n"
    service = json.loads(hub.kubectl("get", "service", "kubernetes", "-o", "json").stdout)
    assert env["KUBERNETES_SERVICE_HOST"] == service["spec"]["clusterIP"] and env["KUBERNETES_SERVICE_PORT"] == "443"
    assert sh(hub, "sh", "-c", "echo $GREETING from $POD_NAME") == "hello kitchen from web\n"
    assert "hello kitchen" in hub.kubectl("logs", "web").stdout.splitlines()


def test_files_from_config_maps_secrets_the_downward_api_and_the_kubelet(hub):
    assert sh(hub, "cat", "/etc/config/color") == "blue"
    assert sh(hub, "cat", "/etc/motd") == "hello"
    assert sh(hub, "cat", "/etc/db/password") == "s3cret"
    assert sh(hub, "ls", "-l", "/etc/db").startswith("-r--------")
    assert sh(hub, "cat", "/etc/info/labels") == 'app="web"'
    assert sh(hub, "cat", f"{TOKEN_DIR}/namespace") == "default"
    pod_ip = json.loads(hub.kubectl("get", "pod", "web", "-o", "json").stdout)["status"]["podIP"]
    assert f"{pod_ip}\tweb" in sh(hub, "cat", "/etc/hosts") and sh(hub, "hostname") == "web\n"
    assert "search default.svc.cluster.local svc.cluster.local cluster.local" in sh(hub, "cat", "/etc/resolv.conf")
    refused = hub.kubectl("exec", "web", "--", "sh", "-c", "echo x > /etc/config/color", check=False)
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr
    hub.kubectl("exec", "web", "--", "sh", "-c", "echo kept > /scratch/note")
    assert sh(hub, "cat", "/scratch/note") == "kept\n"


def test_the_service_account_token_is_mounted(hub):
    eventually(lambda: "token" in sh(hub, "ls", TOKEN_DIR).split(), what="the token file")
    token = sh(hub, "cat", f"{TOKEN_DIR}/token")
    assert token.count(".") == 2, "a JWT"


def test_a_changed_config_map_reaches_the_file_but_not_env_or_sub_path(hub):
    hub.kubectl("patch", "configmap", "app", "-p", json.dumps({"data": {"color": "green", "motd": "bye"}}))
    eventually(lambda: sh(hub, "cat", "/etc/config/color") == "green", what="the updated file")
    assert sh(hub, "cat", "/etc/motd") == "hello"
    assert sh(hub, "printenv", "COLOR") == "blue\n"


def test_a_missing_config_map_is_create_container_config_error_until_created(hub):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late"},
           "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "nginx:1.25", "env": [
               {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "later", "key": "mode"}}}]}]}}
    hub.kubectl("apply", "-f", "-", input=json.dumps(pod))
    eventually(lambda: "CreateContainerConfigError" in hub.kubectl("get", "pod", "late").stdout, what="config error")
    waiting = json.loads(hub.kubectl("get", "pod", "late", "-o", "json").stdout)["status"]["containerStatuses"][0]
    assert waiting["state"]["waiting"]["message"] == 'configmap "later" not found'
    assert 'Error: configmap "later" not found' in hub.kubectl("get", "events").stdout
    hub.kubectl("create", "configmap", "later", "--from-literal=mode=fast")
    eventually(lambda: " Running " in hub.kubectl("get", "pod", "late").stdout, what="late Running")
    assert sh(hub, "printenv", "MODE", pod="late") == "fast\n"
