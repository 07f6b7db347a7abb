"""ConfigMaps and Secrets on the page: key names only (a Secret's values never leave the server,
in the snapshot, a change or a recording), the supervisor's ConfigMap still the spokes' states,
and every way a pod uses one of them found; pod chips say what `kubectl get pods` says."""

from __future__ import annotations

import base64
import json

import pytest

from dashboard import configs, presenters

SECRET_VALUE = "hunter2-do-not-show"
SECRET = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
          "metadata": {"name": "db", "namespace": "default", "resourceVersion": "7"},
          "data": {"password": base64.b64encode(SECRET_VALUE.encode()).decode()},
          "stringData": {"user": SECRET_VALUE}}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"},
             "data": {"b.conf": "x=1", "a.conf": "y=2"}, "binaryData": {"logo.png": "AAAA"}}


def test_a_secret_view_model_has_its_key_names_and_no_value():
    vm = configs.secret_vm(SECRET)
    assert vm == {"key": "default/db", "ns": "default", "name": "db", "type": "Opaque",
                  "keys": ["password", "user"], "immutable": False}
    assert SECRET_VALUE not in json.dumps(vm) and SECRET["data"]["password"] not in json.dumps(vm)


def test_the_snapshot_and_a_change_carry_no_secret_value():
    body = {"revision": 9, "objects": {"secrets": [SECRET], "configmaps": [CONFIGMAP]}}
    sent = json.dumps(presenters.snapshot(body))
    assert "password" in sent and SECRET_VALUE not in sent and SECRET["data"]["password"] not in sent
    item = presenters.change_item({"revision": 10, "type": "MODIFIED", "resource": "secrets", "group": "",
                                   "namespace": "default", "name": "db", "object": SECRET})
    assert item["kind"] == "Secret" and item["vm"]["keys"] == ["password", "user"]
    assert SECRET_VALUE not in json.dumps(item) and SECRET["data"]["password"] not in json.dumps(item)


def test_a_configmap_shows_its_keys_sorted_and_its_binary_keys():
    vm = presenters.present("configmaps", CONFIGMAP)
    assert vm["keys"] == ["a.conf", "b.conf"] and vm["binaryKeys"] == ["logo.png"]
    assert "x=1" not in json.dumps(vm)


def test_the_supervisors_configmap_is_still_the_spokes_states():
    spokes = {"metadata": {"name": "kubekitchen-spokes", "namespace": "kube-system"}, "data": {"kubelet.node-2": "stopped"}}
    vm = presenters.present("configmaps", spokes)
    assert vm == {"key": "kube-system/kubekitchen-spokes", "states": {"kubelet/node-2": "stopped"}}


def test_every_way_a_pod_uses_a_configmap_or_a_secret_is_found_once():
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": {
        "volumes": [{"name": "cfg", "configMap": {"name": "settings"}}, {"name": "s", "secret": {"secretName": "db"}},
                    {"name": "again", "configMap": {"name": "settings"}},
                    {"name": "proj", "projected": {"sources": [{"configMap": {"name": "extra"}}, {"secret": {"name": "tls"}},
                                                               {"serviceAccountToken": {"path": "token"}}]}},
                    {"name": "tmp", "emptyDir": {}}],
        "initContainers": [{"name": "init", "envFrom": [{"configMapRef": {"name": "boot"}}]}],
        "containers": [{"name": "app", "env": [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                                              {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
                                              {"name": "PLAIN", "value": "1"}],
                        "envFrom": [{"secretRef": {"name": "api"}}]}],
        "imagePullSecrets": [{"name": "registry"}]}}
    assert configs.pod_uses(pod) == [
        {"kind": "ConfigMap", "name": "settings", "via": "volume"}, {"kind": "Secret", "name": "db", "via": "volume"},
        {"kind": "ConfigMap", "name": "extra", "via": "projected"}, {"kind": "Secret", "name": "tls", "via": "projected"},
        {"kind": "ConfigMap", "name": "boot", "via": "envFrom"}, {"kind": "Secret", "name": "db", "via": "env"},
        {"kind": "ConfigMap", "name": "settings", "via": "env"}, {"kind": "Secret", "name": "api", "via": "envFrom"},
        {"kind": "Secret", "name": "registry", "via": "imagePull"}]
    assert presenters.pod_vm(pod)["uses"] == configs.pod_uses(pod)


def _pod(status: dict, *, init: int = 0, deleting: bool = False) -> dict:
    meta = {"name": "p", "namespace": "default", **({"deletionTimestamp": "2026-01-01T00:00:00Z"} if deleting else {})}
    return {"metadata": meta, "spec": {"initContainers": [{"name": f"i{n}"} for n in range(init)],
                                       "containers": [{"name": "app"}]}, "status": status}


def _app(state: dict, restarts: int = 0) -> dict:
    return {"containerStatuses": [{"name": "app", "state": state, "restartCount": restarts}]}


@pytest.mark.parametrize("pod, word, restarts", [
    (_pod({"phase": "Pending", **_app({"waiting": {"reason": "ImagePullBackOff"}})}), "ImagePullBackOff", 0),
    (_pod({"phase": "Pending", **_app({"waiting": {"reason": "CreateContainerConfigError"}})}), "CreateContainerConfigError", 0),
    (_pod({"phase": "Running", **_app({"terminated": {"reason": "OOMKilled", "exitCode": 137}}, 3)}), "OOMKilled", 3),
    (_pod({"phase": "Running", **_app({"waiting": {"reason": "CrashLoopBackOff"}}, 5)}), "CrashLoopBackOff", 5),
    (_pod({"phase": "Succeeded", **_app({"terminated": {"reason": "Completed", "exitCode": 0}})}), "Completed", 0),
    (_pod({"phase": "Running", **_app({"running": {}})}, deleting=True), "Terminating", 0),
    (_pod({"phase": "Pending", "initContainerStatuses": [
        {"name": "i0", "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "i1", "restartCount": 2, "state": {"running": {}}}],
        **_app({"waiting": {"reason": "PodInitializing"}})}, init=2), "Init:1/2", 2),
])
def test_a_pod_chip_says_what_kubectl_get_pods_says(pod, word, restarts):
    vm = presenters.pod_vm(pod)
    assert (vm["status"], vm["restarts"]) == (word, restarts)
