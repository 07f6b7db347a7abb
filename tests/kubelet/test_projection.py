"""What the kubelet writes into ConfigMap, Secret, downward API and projected volumes: keys, items,
modes, base64, Kubernetes' errors, `optional`, and paths that may not climb out."""

from __future__ import annotations

import base64

import pytest

from control.kubelet.envvars import NodeFacts
from control.kubelet.projection import MountError, referenced, safe_path, token_sources, volume_contents
from tests.kubelet.test_envvars import Sources

FACTS = NodeFacts(pod_ip="10.244.1.5")
SOURCES = Sources(
    configmaps={("default", "app"): {"data": {"game.properties": "lives=3\n", "ui": "dark"},
                                     "binaryData": {"logo.bin": base64.b64encode(b"\x00\x01").decode()}},
                ("default", "kube-root-ca.crt"): {"data": {"ca.crt": "PEM"}}},
    secrets={("default", "db"): {"data": {"password": base64.b64encode(b"s3cret").decode()}}},
)
POD = {"metadata": {"name": "web", "namespace": "default", "uid": "u-1", "labels": {"app": "web", "tier": "fe"}},
       "spec": {"serviceAccountName": "default",
                "containers": [{"name": "app", "resources": {"limits": {"memory": "64Mi"}}}]}}


def tokens(audience: str, seconds: int) -> str:
    return f"jwt-for-{audience or 'hub'}-{seconds}"


def contents(volume, sources=SOURCES):
    return volume_contents(POD, volume, sources, FACTS, tokens)


def test_a_config_map_volume_has_every_key_as_a_file_with_the_default_mode():
    assert contents({"name": "v", "configMap": {"name": "app"}}) == {
        "game.properties": (b"lives=3\n", 0o644), "ui": (b"dark", 0o644), "logo.bin": (b"\x00\x01", 0o644)}


def test_items_choose_keys_paths_and_modes():
    volume = {"name": "v", "configMap": {"name": "app", "defaultMode": 0o400, "items": [
        {"key": "ui", "path": "theme/ui.conf"}, {"key": "game.properties", "path": "game", "mode": 0o755}]}}
    assert contents(volume) == {"theme/ui.conf": (b"dark", 0o400), "game": (b"lives=3\n", 0o755)}


def test_a_secret_volume_is_decoded():
    assert contents({"name": "v", "secret": {"secretName": "db", "defaultMode": 0o600}}) == {
        "password": (b"s3cret", 0o600)}


@pytest.mark.parametrize("volume, message", [
    ({"configMap": {"name": "nope"}}, 'configmap "nope" not found'),
    ({"secret": {"secretName": "nope"}}, 'secret "nope" not found'),
    ({"configMap": {"name": "app", "items": [{"key": "k", "path": "k"}]}}, "configmap references non-existent config key: k"),
    ({"secret": {"secretName": "db", "items": [{"key": "k", "path": "k"}]}}, "secret references non-existent secret key: k"),
])
def test_missing_objects_and_keys_are_kubernetes_errors(volume, message):
    with pytest.raises(MountError) as caught:
        contents({"name": "v", **volume})
    assert str(caught.value) == message


def test_optional_sources_give_an_empty_volume_or_skip_the_item():
    assert contents({"name": "v", "configMap": {"name": "nope", "optional": True}}) == {}
    volume = {"name": "v", "configMap": {"name": "app", "optional": True, "items": [{"key": "k", "path": "k"},
                                                                                   {"key": "ui", "path": "ui"}]}}
    assert contents(volume) == {"ui": (b"dark", 0o644)}


@pytest.mark.parametrize("path", ["/etc/passwd", "../escape", "a/../../b", "", "a//b"])
def test_paths_that_climb_out_are_refused(path):
    with pytest.raises(MountError):
        safe_path(path)
    if path:  # an empty item path means the key's own name
        with pytest.raises(MountError):
            contents({"name": "v", "configMap": {"name": "app", "items": [{"key": "ui", "path": path}]}})


def test_downward_api_volume_items():
    volume = {"name": "info", "downwardAPI": {"items": [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
        {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
        {"path": "mem", "resourceFieldRef": {"containerName": "app", "resource": "limits.memory", "divisor": "1Mi"}}]}}
    assert contents(volume) == {"labels": (b'app="web"\ntier="fe"', 0o644), "name": (b"web", 0o644),
                                "mem": (b"64", 0o644)}


def test_the_service_account_volume_has_token_ca_and_namespace():
    volume = {"name": "kube-api-access-x2z4q", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}]}}
    assert contents(volume) == {"token": (b"jwt-for-hub-3607", 0o644), "ca.crt": (b"PEM", 0o644),
                                "namespace": (b"default", 0o644)}
    assert token_sources({"spec": {"volumes": [volume]}}) == [("", 3607)]
    # with the hub alone (no controller-manager yet) it does not wait for the CA or a token
    without = Sources()

    def no_token(audience, seconds):
        raise MountError('failed to fetch token: serviceaccounts "default" not found')
    assert volume_contents(POD, volume, without, FACTS, no_token) == {"namespace": (b"default", 0o644)}
    mine = {"name": "mine", "projected": {"sources": [{"serviceAccountToken": {"path": "t", "audience": "vault"}}]}}
    with pytest.raises(MountError, match="failed to fetch token"):
        volume_contents(POD, mine, without, FACTS, no_token)


def test_other_kinds_are_not_projected_and_references_are_found():
    assert contents({"name": "scratch", "emptyDir": {}}) is None
    pod = {"spec": {"containers": [{"envFrom": [{"configMapRef": {"name": "a"}}, {"secretRef": {"name": "s1"}}],
                                    "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "b", "key": "k"}}}]}],
                    "volumes": [{"name": "v", "configMap": {"name": "c"}}, {"name": "w", "secret": {"secretName": "s2"}},
                                {"name": "p", "projected": {"sources": [{"configMap": {"name": "d"}},
                                                                        {"secret": {"name": "s3"}}]}}]}}
    assert referenced(pod, "configmap") == {"a", "b", "c", "d"}
    assert referenced(pod, "secret") == {"s1", "s2", "s3"}
