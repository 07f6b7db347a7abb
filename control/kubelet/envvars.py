"""A container's environment, command and args as the kubelet makes them (upstream
`makeEnvironmentVariables` in pkg/kubelet/kubelet_pods.go, `ExpandContainerCommandAndArgs` and
third_party/forked/golang/expansion).

Guarantees (all pure functions of the pod, the container and what `Sources` answers):
- `envFrom` comes first (each key with its `prefix`; keys that are not valid variable names are
  skipped and reported), then `env` in order, a later name replacing an earlier one.
- `value` is expanded: `$(NAME)` is NAME's value if defined earlier (else left as `$(NAME)`),
  `$$` is a literal `$`; `valueFrom` values are never expanded. Command and args are expanded
  against the finished environment in the same way.
- `valueFrom`: configMapKeyRef, secretKeyRef, fieldRef (metadata.name/namespace/uid,
  metadata.labels['k'], metadata.annotations['k'], metadata.labels, spec.nodeName,
  spec.serviceAccountName, status.podIP(s), status.hostIP(s)), resourceFieldRef (limits/requests of
  cpu, memory, ephemeral-storage rounded up to the divisor; an unset limit is the node's capacity).
- Service links (upstream `getServiceEnvVarMap`, envvars.FromServices): `<NAME>_SERVICE_HOST`,
  `_SERVICE_PORT`, `_PORT_<port>_<PROTO>...` of every Service with a ClusterIP in the pod's
  namespace (unless `enableServiceLinks: false`) and always of `kubernetes` in `default`; they
  serve `$(VAR)` expansion and are added last, never replacing a declared variable.
- A missing ConfigMap/Secret or key raises `ConfigError` with Kubernetes' message (`configmap "x"
  not found`, `couldn't find key k in ConfigMap default/x`), unless the reference is `optional`.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from control.kinds.quantity import parse_quantity

Obj = dict[str, Any]
ENV_VAR_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")  # upstream's validation.IsEnvVarName
_SUBSCRIPT = re.compile(r"^metadata\.(labels|annotations)\['(.*)'\]$")


class ConfigError(Exception):
    """A container cannot be configured (CreateContainerConfigError); the message is Kubernetes'."""


class Sources(Protocol):
    """Where ConfigMaps and Secrets are read from (the kubelet's informer caches)."""

    def configmap(self, namespace: str, name: str) -> Obj | None: ...

    def secret(self, namespace: str, name: str) -> Obj | None: ...

    def services(self, namespace: str) -> list[Obj]: ...


@dataclass(frozen=True)
class NodeFacts:
    """What fieldRef/resourceFieldRef read that is not in the pod: the node's capacity and IPs."""

    host_ip: str = ""
    pod_ip: str = ""
    cpu: str = "4"
    memory: str = "8Gi"
    ephemeral_storage: str = "100Gi"


@dataclass(frozen=True)
class ContainerEnv:
    env: dict[str, str]
    command: tuple[str, ...]
    args: tuple[str, ...]
    skipped: tuple[str, ...] = field(default=())  # warnings (invalid envFrom keys), as Event messages


# --- $(VAR) expansion ----------------------------------------------------------------------------

def expand(text: str, mapping: Callable[[str], str]) -> str:
    """third_party/forked/golang/expansion.Expand: `$(NAME)` through `mapping`, `$$` -> `$`."""
    out, checkpoint, cursor = [], 0, 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            rest = text[cursor + 1:]
            if rest[0] == "$":
                out.append("$")
                advance = 1
            elif rest[0] == "(":
                close = rest.find(")", 1)
                if close > 0:
                    out.append(mapping(rest[1:close]))
                    advance = close + 1
                else:  # an unclosed reference stays as it is
                    out.append("$(")
                    advance = 1
            else:
                out.append("$" + rest[0])
                advance = 1
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


def mapping_for(*contexts: dict[str, str]) -> Callable[[str], str]:
    """expansion.MappingFuncFor: the first context defining a name wins; undefined stays `$(NAME)`."""
    def look(name: str) -> str:
        for context in contexts:
            if name in context:
                return context[name]
        return f"$({name})"
    return look


# --- valueFrom -----------------------------------------------------------------------------------

def format_map(values: dict[str, str]) -> str:
    """fieldpath.FormatMap: `key="value"` lines sorted by key, no final newline."""
    return "\n".join(f'{key}={_go_quote(values[key])}' for key in sorted(values))


def _go_quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def field_value(pod: Obj, path: str, facts: NodeFacts) -> str:
    """A pod field as fieldRef reads it (upstream podFieldSelectorRuntimeValue)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    simple = {
        "metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.podIP": facts.pod_ip, "status.podIPs": facts.pod_ip,
        "status.hostIP": facts.host_ip, "status.hostIPs": facts.host_ip,
    }
    if path in simple:
        return str(simple[path] or "")
    if path in ("metadata.labels", "metadata.annotations"):
        return format_map({str(k): str(v) for k, v in (meta.get(path.split(".")[1]) or {}).items()})
    subscript = _SUBSCRIPT.match(path)
    if subscript:
        return str((meta.get(subscript.group(1)) or {}).get(subscript.group(2), ""))
    raise ConfigError(f"unsupported fieldPath: {path}")


def resource_value(container: Obj, ref: Obj, facts: NodeFacts) -> str:
    """A container's limit or request as resourceFieldRef reads it, rounded up to the divisor
    (upstream ExtractContainerResourceValue; a missing limit is the node's allocatable)."""
    resource = str(ref.get("resource") or "")
    kind, _, name = resource.partition(".")
    capacity = {"cpu": facts.cpu, "memory": facts.memory, "ephemeral-storage": facts.ephemeral_storage}
    if kind not in ("limits", "requests") or name not in capacity:
        raise ConfigError(f"unsupported container resource : {resource}")
    resources = container.get("resources") or {}
    raw = (resources.get(kind) or {}).get(name)
    if raw is None and kind == "requests":
        raw = (resources.get("limits") or {}).get(name)  # a request defaults to its limit
    try:
        amount = parse_quantity(raw) if raw is not None else (parse_quantity(capacity[name]) if kind == "limits" else 0.0)
        divisor = parse_quantity(ref.get("divisor") or "1")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if divisor <= 0:
        raise ConfigError("divisor must be greater than zero")
    if name == "cpu":  # ConvertResourceCPUToString works in millicores
        return str(int(math.ceil(round(amount * 1000) / round(divisor * 1000)))) if round(divisor * 1000) else "0"
    return str(int(math.ceil(amount / divisor)))


def _config_map_value(sources: Sources, namespace: str, ref: Obj) -> str | None:
    name, key, optional = str(ref.get("name") or ""), str(ref.get("key") or ""), bool(ref.get("optional"))
    found = sources.configmap(namespace, name)
    if found is None:
        if optional:
            return None
        raise ConfigError(f'configmap "{name}" not found')
    data = found.get("data") or {}
    if key not in data:
        if optional:
            return None
        raise ConfigError(f"couldn't find key {key} in ConfigMap {namespace}/{name}")
    return str(data[key])


def _secret_value(sources: Sources, namespace: str, ref: Obj) -> str | None:
    name, key, optional = str(ref.get("name") or ""), str(ref.get("key") or ""), bool(ref.get("optional"))
    found = sources.secret(namespace, name)
    if found is None:
        if optional:
            return None
        raise ConfigError(f'secret "{name}" not found')
    data = found.get("data") or {}
    if key not in data:
        if optional:
            return None
        raise ConfigError(f"couldn't find key {key} in Secret {namespace}/{name}")
    return secret_text(data[key])


def secret_text(encoded: Any) -> str:
    """A Secret's `data` value (base64 as stored) as the process sees it."""
    try:
        return base64.b64decode(str(encoded)).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return ""


def _env_from(pod: Obj, container: Obj, sources: Sources, into: dict[str, str]) -> list[str]:
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    warnings = []
    for source in container.get("envFrom") or []:
        if not isinstance(source, dict):
            continue
        prefix = str(source.get("prefix") or "")
        for kind, read, decode in (("configMapRef", sources.configmap, str), ("secretRef", sources.secret, secret_text)):
            ref = source.get(kind)
            if not isinstance(ref, dict):
                continue
            name = str(ref.get("name") or "")
            found = read(namespace, name)
            if found is None:
                if ref.get("optional"):
                    continue
                raise ConfigError(f'{"configmap" if kind == "configMapRef" else "secret"} "{name}" not found')
            invalid = []
            for key, value in (found.get("data") or {}).items():
                full = prefix + str(key)
                if not ENV_VAR_NAME.match(full):
                    invalid.append(full)
                    continue
                into[full] = decode(value)
            if invalid:
                what = "configMap" if kind == "configMapRef" else "secret"
                warnings.append(f"Keys [{', '.join(sorted(invalid))}] from the EnvFrom {what} {namespace}/{name} "
                                "were skipped since they are considered invalid environment variable names.")
    return warnings


def _service_vars(service: Obj) -> dict[str, str]:
    spec = service.get("spec") or {}
    ip, ports = spec.get("clusterIP"), [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    if not ip or ip == "None" or not ports:
        return {}
    name = str((service.get("metadata") or {}).get("name") or "").upper().replace("-", "_")
    first = ports[0]
    out = {f"{name}_SERVICE_HOST": ip, f"{name}_SERVICE_PORT": str(first.get("port"))}
    for port in ports:
        if port.get("name"):
            out[f"{name}_SERVICE_PORT_{str(port['name']).upper().replace('-', '_')}"] = str(port.get("port"))
    out[f"{name}_PORT"] = f"{str(first.get('protocol') or 'TCP').lower()}://{ip}:{first.get('port')}"
    for port in ports:
        protocol = str(port.get("protocol") or "TCP")
        prefix = f"{name}_PORT_{port.get('port')}_{protocol.upper()}"
        out.update({prefix: f"{protocol.lower()}://{ip}:{port.get('port')}", f"{prefix}_PROTO": protocol.lower(),
                    f"{prefix}_PORT": str(port.get("port")), f"{prefix}_ADDR": ip})
    return out


def service_env(pod: Obj, sources: Sources) -> dict[str, str]:
    """The service-link variables a pod's containers get."""
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    links = (pod.get("spec") or {}).get("enableServiceLinks") is not False
    chosen = {}
    for service in sources.services("default"):
        if (service.get("metadata") or {}).get("name") == "kubernetes":
            chosen["kubernetes"] = service
    if links:
        for service in sources.services(namespace):
            chosen.setdefault(str((service.get("metadata") or {}).get("name")), service)
    out: dict[str, str] = {}
    for name in sorted(chosen):
        out.update(_service_vars(chosen[name]))
    return out


def resolve(pod: Obj, container: Obj, sources: Sources, facts: NodeFacts) -> ContainerEnv:
    """The environment, command and args of `container` (raises ConfigError)."""
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    services = service_env(pod, sources)
    env: dict[str, str] = {}
    skipped = _env_from(pod, container, sources, env)
    for item in container.get("env") or []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        name, value_from = item["name"], item.get("valueFrom")
        if isinstance(value_from, dict):
            value: str | None
            if isinstance(value_from.get("configMapKeyRef"), dict):
                value = _config_map_value(sources, namespace, value_from["configMapKeyRef"])
            elif isinstance(value_from.get("secretKeyRef"), dict):
                value = _secret_value(sources, namespace, value_from["secretKeyRef"])
            elif isinstance(value_from.get("fieldRef"), dict):
                value = field_value(pod, str(value_from["fieldRef"].get("fieldPath") or ""), facts)
            elif isinstance(value_from.get("resourceFieldRef"), dict):
                value = resource_value(container, value_from["resourceFieldRef"], facts)
            else:
                value = ""
            if value is None:
                continue  # an optional reference that is not there: the variable is not set
        else:
            value = expand(str(item.get("value") or ""), mapping_for(env, services))
        env[name] = value
    env.update({k: v for k, v in services.items() if k not in env})
    look = mapping_for(env)
    command = tuple(expand(str(part), look) for part in container.get("command") or [])
    args = tuple(expand(str(part), look) for part in container.get("args") or [])
    return ContainerEnv(env, command, args, tuple(skipped))
