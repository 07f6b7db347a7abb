"""What the kubelet writes into a ConfigMap, Secret, downward API or projected volume (upstream
pkg/volume/configmap, secret, downwardapi, projected and their shared `MakePayload`).

Guarantees (pure functions of the pod, the volume and what `Sources` answers):
- Without `items` every key is a file named after it; with `items` only those keys, at their
  `path`; a file's mode is its item's `mode`, else the volume's `defaultMode` (default 0644).
- A missing ConfigMap/Secret raises `MountError` with Kubernetes' message (`configmap "x" not
  found`), a missing item key `configmap references non-existent config key: k`, unless the
  source is `optional` (then the volume, or that source of a projected one, is empty).
- ConfigMap `data` is written as UTF-8, `binaryData` and Secret `data` are base64-decoded.
- downwardAPI items read pod fields (metadata.name/namespace/uid, labels and annotations, one or
  all) and container resources (`resourceFieldRef` with `containerName`).
- A projected volume merges its sources in order; a `serviceAccountToken` source is the token
  `tokens(audience, expirationSeconds)` answers (fetched by the kubelet through TokenRequest).
- The admission's `kube-api-access-*` volume does not wait for `kube-root-ca.crt` or a token
  (with the hub alone, no controller-manager makes them): those files appear at a later sync.
- An item path that is absolute or climbs (`..`) is refused, whatever validation let through.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Callable

from control.kinds.serviceaccounts import ROOT_CA_CONFIGMAP, TOKEN_VOLUME_PREFIX
from control.kubelet.envvars import ConfigError, NodeFacts, Sources, field_value, resource_value

Obj = dict[str, Any]
Contents = dict[str, tuple[bytes, int]]  # relative path -> (bytes, mode)
Tokens = Callable[[str, int], str]  # raises MountError when no token could be had
DEFAULT_MODE = 0o644
PROJECTED_KINDS = ("configMap", "secret", "downwardAPI", "projected")


class MountError(Exception):
    """A volume cannot be set up yet (FailedMount); the message is Kubernetes'."""


def _decode(value: Any) -> bytes:
    try:
        return base64.b64decode(str(value))
    except (binascii.Error, ValueError):
        return b""


def _mode(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0o777 else default


def safe_path(path: Any) -> str:
    """An item's relative path, or MountError when it is absolute, empty or climbs out."""
    text = str(path or "")
    parts = text.split("/")
    if not text or text.startswith("/") or ".." in parts or any(not p for p in parts):
        raise MountError(f"invalid path {text!r}: must be a relative path without '..'")
    return text


def make_payload(data: dict[str, bytes], items: Any, default_mode: int, optional: bool, what: str) -> Contents:
    """upstream MakePayload: keys (or the listed items) as files with their modes."""
    if not isinstance(items, list) or not items:
        return {safe_path(key): (value, default_mode) for key, value in data.items()}
    out: Contents = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        key = str(item.get("key") or "")
        if key not in data:
            if optional:
                continue
            raise MountError(f"{what} references non-existent {'config' if what == 'configmap' else 'secret'} "
                             f"key: {key}")
        out[safe_path(item.get("path") or key)] = (data[key], _mode(item.get("mode"), default_mode))
    return out


def configmap_data(configmap: Obj) -> dict[str, bytes]:
    data = {str(k): str(v).encode() for k, v in (configmap.get("data") or {}).items()}
    data.update({str(k): _decode(v) for k, v in (configmap.get("binaryData") or {}).items()})
    return data


def _configmap(pod: Obj, source: Obj, sources: Sources, default_mode: int) -> Contents:
    name, optional = str(source.get("name") or ""), bool(source.get("optional"))
    found = sources.configmap((pod.get("metadata") or {}).get("namespace") or "", name)
    if found is None:
        if optional:
            return {}
        raise MountError(f'configmap "{name}" not found')
    return make_payload(configmap_data(found), source.get("items"), default_mode, optional, "configmap")


def _secret(pod: Obj, source: Obj, sources: Sources, default_mode: int, name_key: str) -> Contents:
    name, optional = str(source.get(name_key) or ""), bool(source.get("optional"))
    found = sources.secret((pod.get("metadata") or {}).get("namespace") or "", name)
    if found is None:
        if optional:
            return {}
        raise MountError(f'secret "{name}" not found')
    data = {str(k): _decode(v) for k, v in (found.get("data") or {}).items()}
    return make_payload(data, source.get("items"), default_mode, optional, "secret")


def _downward(pod: Obj, source: Obj, facts: NodeFacts, default_mode: int) -> Contents:
    out: Contents = {}
    containers = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)}
    for item in source.get("items") or []:
        if not isinstance(item, dict):
            continue
        try:
            if isinstance(item.get("fieldRef"), dict):
                value = field_value(pod, str(item["fieldRef"].get("fieldPath") or ""), facts)
            elif isinstance(item.get("resourceFieldRef"), dict):
                ref = item["resourceFieldRef"]
                value = resource_value(containers.get(ref.get("containerName")) or {}, ref, facts)
            else:
                continue
        except ConfigError as exc:
            raise MountError(str(exc)) from None
        out[safe_path(item.get("path"))] = (value.encode(), _mode(item.get("mode"), default_mode))
    return out


def _projected(pod: Obj, name: str, source: Obj, sources: Sources, facts: NodeFacts, tokens: Tokens) -> Contents:
    default_mode = _mode(source.get("defaultMode"), DEFAULT_MODE)
    out: Contents = {}
    for part in source.get("sources") or []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("configMap"), dict):
            ref = part["configMap"]
            if name.startswith(TOKEN_VOLUME_PREFIX) and ref.get("name") == ROOT_CA_CONFIGMAP:
                # Upstream waits for kube-root-ca.crt (made by the controller-manager); like the
                # admission's leniency for `default`, the hub alone must run pods: ca.crt appears
                # at the sync after the ConfigMap does.
                ref = {**ref, "optional": True}
            out.update(_configmap(pod, ref, sources, default_mode))
        elif isinstance(part.get("secret"), dict):
            out.update(_secret(pod, part["secret"], sources, default_mode, "name"))
        elif isinstance(part.get("downwardAPI"), dict):
            out.update(_downward(pod, part["downwardAPI"], facts, default_mode))
        elif isinstance(part.get("serviceAccountToken"), dict):
            spec = part["serviceAccountToken"]
            try:
                token = tokens(str(spec.get("audience") or ""), int(spec.get("expirationSeconds") or 3600))
            except MountError:
                if name.startswith(TOKEN_VOLUME_PREFIX):
                    continue  # the `default` account may not be made yet (hub alone): retried at the next sync
                raise
            out[safe_path(spec.get("path") or "token")] = (token.encode(), _mode(spec.get("mode"), default_mode))
    return out


def volume_contents(pod: Obj, volume: Obj, sources: Sources, facts: NodeFacts, tokens: Tokens) -> Contents | None:
    """The files of a ConfigMap/Secret/downwardAPI/projected volume; None for other kinds."""
    if isinstance(volume.get("configMap"), dict):
        source = volume["configMap"]
        return _configmap(pod, source, sources, _mode(source.get("defaultMode"), DEFAULT_MODE))
    if isinstance(volume.get("secret"), dict):
        source = volume["secret"]
        return _secret(pod, source, sources, _mode(source.get("defaultMode"), DEFAULT_MODE), "secretName")
    if isinstance(volume.get("downwardAPI"), dict):
        source = volume["downwardAPI"]
        return _downward(pod, source, facts, _mode(source.get("defaultMode"), DEFAULT_MODE))
    if isinstance(volume.get("projected"), dict):
        return _projected(pod, str(volume.get("name") or ""), volume["projected"], sources, facts, tokens)
    return None


def token_sources(pod: Obj) -> list[tuple[str, int]]:
    """(audience, expirationSeconds) of every serviceAccountToken source the pod's volumes have."""
    out = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        projected = volume.get("projected") if isinstance(volume, dict) else None
        for part in (projected or {}).get("sources") or [] if isinstance(projected, dict) else []:
            spec = part.get("serviceAccountToken") if isinstance(part, dict) else None
            if isinstance(spec, dict):
                out.append((str(spec.get("audience") or ""), int(spec.get("expirationSeconds") or 3600)))
    return out


def referenced(pod: Obj, kind: str) -> set[str]:
    """The names of the ConfigMaps (`kind="configmap"`) or Secrets a pod's env and volumes use
    (the kubelet re-syncs the pod when one of them changes)."""
    names: set[str] = set()
    spec = pod.get("spec") or {}
    ref_key, env_key = ("configMapRef", "configMapKeyRef") if kind == "configmap" else ("secretRef", "secretKeyRef")
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        if not isinstance(container, dict):
            continue
        for source in container.get("envFrom") or []:
            if isinstance(source, dict) and isinstance(source.get(ref_key), dict):
                names.add(str(source[ref_key].get("name") or ""))
        for item in container.get("env") or []:
            value_from = item.get("valueFrom") if isinstance(item, dict) else None
            if isinstance(value_from, dict) and isinstance(value_from.get(env_key), dict):
                names.add(str(value_from[env_key].get("name") or ""))
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if kind == "configmap" and isinstance(volume.get("configMap"), dict):
            names.add(str(volume["configMap"].get("name") or ""))
        if kind == "secret" and isinstance(volume.get("secret"), dict):
            names.add(str(volume["secret"].get("secretName") or ""))
        projected = volume.get("projected")
        for part in (projected.get("sources") or []) if isinstance(projected, dict) else []:
            inner = part.get("configMap" if kind == "configmap" else "secret") if isinstance(part, dict) else None
            if isinstance(inner, dict):
                names.add(str(inner.get("name") or ""))
    names.discard("")
    return names
