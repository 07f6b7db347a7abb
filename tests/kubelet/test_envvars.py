"""A container's env, command and args as the kubelet makes them: `$(VAR)` expansion as upstream's
expansion package (its test table), valueFrom, envFrom, and Kubernetes' errors."""

from __future__ import annotations

import base64

import pytest

from control.kubelet.envvars import ConfigError, NodeFacts, expand, format_map, mapping_for, resolve

FACTS = NodeFacts(host_ip="127.0.1.1", pod_ip="10.244.1.5", cpu="4", memory="8Gi")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class Sources:
    def __init__(self, configmaps=None, secrets=None, services=()):
        self.configmaps, self.secrets, self.service_list = configmaps or {}, secrets or {}, list(services)

    def services(self, namespace):
        return [s for s in self.service_list if s["metadata"]["namespace"] == namespace]

    def configmap(self, namespace, name):
        return self.configmaps.get((namespace, name))

    def secret(self, namespace, name):
        return self.secrets.get((namespace, name))


SOURCES = Sources(
    configmaps={("default", "app"): {"data": {"color": "blue", "size": "L", "bad key": "x", "1st": "y"}}},
    secrets={("default", "db"): {"data": {"password": b64("s3cret"), "user": b64("admin")}}},
)


def pod(*containers, **meta):
    return {"metadata": {"name": "web", "namespace": "default", "uid": "u-1", "labels": {"app": "web", "tier": "fe"},
                         "annotations": {"note": "hi"}, **meta},
            "spec": {"nodeName": "node-1", "serviceAccountName": "robot", "containers": list(containers)}}


@pytest.mark.parametrize("text, expected", [
    ("$(VAR_A)", "A"), ("___$(VAR_B)___", "___B___"), ("$(VAR_A)-$(VAR_A)", "A-A"),
    ("$$(VAR_B)", "$(VAR_B)"), ("$$$(VAR_A)", "$A"), ("$(VAR_DNE)", "$(VAR_DNE)"), ("$(VAR_A", "$(VAR_A"),
    ("$VAR_A", "$VAR_A"), ("$", "$"), ("$$", "$"), ("$$$$", "$$"), ("${VAR_A}", "${VAR_A}"), ("$()", "$()"),
    ("f$(VAR_EMPTY)g", "fg"), ("$(VAR_A)$(VAR_B)", "AB"), ("plain", "plain"), ("x$", "x$"),
])
def test_expansion_follows_upstream(text, expected):
    assert expand(text, mapping_for({"VAR_A": "A", "VAR_B": "B", "VAR_EMPTY": ""})) == expected


def test_values_expand_earlier_variables_only_and_value_from_is_never_expanded():
    container = {"name": "app", "env": [
        {"name": "LATER_REF", "value": "$(NAME)!"},
        {"name": "NAME", "value": "kube"},
        {"name": "GREETING", "value": "hello $(NAME), $$(NAME) stays"},
        {"name": "FROM_MAP", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "color"}}},
    ]}
    made = resolve(pod(container), container, Sources(configmaps={("default", "app"): {"data": {"color": "$(NAME)"}}}),
                   FACTS)
    assert made.env == {"LATER_REF": "$(NAME)!", "NAME": "kube", "GREETING": "hello kube, $(NAME) stays",
                        "FROM_MAP": "$(NAME)"}


def test_command_and_args_expand_against_the_finished_environment():
    container = {"name": "app", "command": ["echo", "$(GREETING)"], "args": ["$(HONORIFIC) $(NAME)", "$$(NAME)", "$(NOPE)"],
                 "env": [{"name": "GREETING", "value": "Warm greetings to"}, {"name": "HONORIFIC", "value": "The Most Honorable"},
                         {"name": "NAME", "value": "Kubernetes"}]}
    made = resolve(pod(container), container, SOURCES, FACTS)
    assert made.command == ("echo", "Warm greetings to")
    assert made.args == ("The Most Honorable Kubernetes", "$(NAME)", "$(NOPE)")


def test_value_from_config_maps_secrets_fields_and_resources():
    container = {"name": "app", "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "250m"}},
                 "env": [
                     {"name": "COLOR", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "color"}}},
                     {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                     {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                     {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                     {"name": "UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
                     {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                     {"name": "NOTE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['note']"}}},
                     {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                     {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
                     {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                     {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
                     {"name": "CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                     {"name": "CPU_MILLI", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": "1m"}}},
                     {"name": "MEM_MI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
                     {"name": "MEM_REQ", "valueFrom": {"resourceFieldRef": {"resource": "requests.memory"}}},
                 ]}
    env = resolve(pod(container), container, SOURCES, FACTS).env
    assert env == {"COLOR": "blue", "PASSWORD": "s3cret", "POD": "web", "NS": "default", "UID": "u-1", "APP": "web",
                   "NOTE": "hi", "NODE": "node-1", "SA": "robot", "POD_IP": "10.244.1.5", "HOST_IP": "127.0.1.1",
                   "CPU_LIMIT": "1", "CPU_MILLI": "250", "MEM_MI": "128", "MEM_REQ": str(128 * 2**20)}


def test_an_unset_limit_is_the_nodes_capacity():
    container = {"name": "app", "env": [{"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                                        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}}]}
    assert resolve(pod(container), container, SOURCES, FACTS).env == {"CPU": "4", "MEM": str(8 * 2**30)}


def test_all_labels_are_formatted_as_the_downward_api_does():
    assert format_map({"tier": "fe", "app": 'we"b'}) == 'app="we\\"b"\ntier="fe"'


def test_env_from_with_prefix_skips_invalid_names_and_env_wins():
    container = {"name": "app", "envFrom": [{"configMapRef": {"name": "app"}, "prefix": "CFG_"},
                                            {"secretRef": {"name": "db"}}, {"configMapRef": {"name": "app"}}],
                 "env": [{"name": "user", "value": "override"}]}
    made = resolve(pod(container), container, SOURCES, FACTS)
    assert made.env == {"CFG_color": "blue", "CFG_size": "L", "CFG_1st": "y", "password": "s3cret", "user": "override",
                        "color": "blue", "size": "L"}
    assert made.skipped == (
        "Keys [CFG_bad key] from the EnvFrom configMap default/app were skipped since they are considered invalid "
        "environment variable names.",
        "Keys [1st, bad key] from the EnvFrom configMap default/app were skipped since they are considered invalid "
        "environment variable names.")


@pytest.mark.parametrize("env, message", [
    ([{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "k"}}}], 'configmap "nope" not found'),
    ([{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "k"}}}],
     "couldn't find key k in ConfigMap default/app"),
    ([{"name": "X", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k"}}}], 'secret "nope" not found'),
    ([{"name": "X", "valueFrom": {"secretKeyRef": {"name": "db", "key": "k"}}}], "couldn't find key k in Secret default/db"),
])
def test_missing_objects_and_keys_give_kubernetes_messages(env, message):
    container = {"name": "app", "env": env}
    with pytest.raises(ConfigError) as caught:
        resolve(pod(container), container, SOURCES, FACTS)
    assert str(caught.value) == message


def test_missing_env_from_sources_fail_unless_optional():
    container = {"name": "app", "envFrom": [{"configMapRef": {"name": "gone"}}]}
    with pytest.raises(ConfigError, match='^configmap "gone" not found$'):
        resolve(pod(container), container, SOURCES, FACTS)
    container = {"name": "app", "envFrom": [{"secretRef": {"name": "gone"}}]}
    with pytest.raises(ConfigError, match='^secret "gone" not found$'):
        resolve(pod(container), container, SOURCES, FACTS)


def test_optional_references_leave_the_variable_unset():
    container = {"name": "app", "envFrom": [{"configMapRef": {"name": "gone", "optional": True}}], "env": [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "gone", "key": "k", "optional": True}}},
        {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "k", "optional": True}}},
        {"name": "C", "valueFrom": {"secretKeyRef": {"name": "db", "key": "k", "optional": True}}},
        {"name": "D", "value": "kept"}]}
    assert resolve(pod(container), container, SOURCES, FACTS).env == {"D": "kept"}


def service(name, namespace, ip, *ports):
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"clusterIP": ip, "ports": list(ports)}}


def test_service_links_are_added_last_and_serve_expansion():
    sources = Sources(services=[
        service("kubernetes", "default", "10.96.0.1", {"name": "https", "port": 443, "protocol": "TCP"}),
        service("my-db", "default", "10.96.0.20", {"port": 5432}),
        service("other", "shop", "10.96.0.30", {"port": 80}),
        service("headless", "default", "None", {"port": 80})])
    container = {"name": "app", "env": [{"name": "DB", "value": "$(MY_DB_SERVICE_HOST):$(MY_DB_SERVICE_PORT)"},
                                        {"name": "MY_DB_SERVICE_PORT", "value": "mine"}]}
    env = resolve(pod(container), container, sources, FACTS).env
    assert env["DB"] == "10.96.0.20:5432" and env["MY_DB_SERVICE_PORT"] == "mine"
    assert {k: v for k, v in env.items() if k.startswith("KUBERNETES_")} == {
        "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
        "KUBERNETES_SERVICE_PORT_HTTPS": "443", "KUBERNETES_PORT": "tcp://10.96.0.1:443",
        "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
        "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1"}
    assert env["MY_DB_PORT"] == "tcp://10.96.0.20:5432" and not any(k.startswith(("OTHER_", "HEADLESS_")) for k in env)
    unlinked = pod(container)
    unlinked["spec"]["enableServiceLinks"] = False
    env = resolve(unlinked, container, sources, FACTS).env
    assert "KUBERNETES_SERVICE_HOST" in env and "MY_DB_SERVICE_HOST" not in env and env["DB"] == (
        "$(MY_DB_SERVICE_HOST):$(MY_DB_SERVICE_PORT)")
