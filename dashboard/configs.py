"""ConfigMaps and Secrets as the page draws them, and which of them a pod uses.

Guarantees:
- `secret_vm` carries a Secret's key NAMES and never a value: neither `data` nor `stringData`
  values leave the server (the browser's snapshot, changes and recordings are made of these view
  models). A ConfigMap's view model carries its key names too (values can be megabytes; the page
  names keys only), plus the keys of `binaryData`.
- `pod_uses(pod)` lists every ConfigMap and Secret a pod's spec names, with how: "volume" (a
  configMap/secret volume), "projected" (a source of a projected volume), "env" (a container's
  env valueFrom configMapKeyRef/secretKeyRef) and "envFrom"; from app, init and ephemeral
  containers alike, each (kind, name, via) once, in a stable order. A pod's imagePullSecrets are
  listed as "imagePull". Pure functions of one object: no I/O.
"""

from __future__ import annotations

from typing import Any

from control.kinds.meta import metadata as _meta

Obj = dict[str, Any]


def _base(obj: Obj) -> Obj:
    meta = _meta(obj)
    return {"key": f"{meta.get('namespace', '')}/{meta.get('name', '')}", "ns": meta.get("namespace", ""),
            "name": meta.get("name", "")}


def _keys(*maps: Any) -> list[str]:
    keys: set[str] = set()
    for values in maps:
        if isinstance(values, dict):
            keys.update(str(k) for k in values)
    return sorted(keys)


def configmap_vm(configmap: Obj) -> Obj:
    """A ConfigMap's key names (data and binaryData) and whether it is immutable."""
    return {**_base(configmap), "keys": _keys(configmap.get("data")),
            "binaryKeys": _keys(configmap.get("binaryData")), "immutable": bool(configmap.get("immutable"))}


def secret_vm(secret: Obj) -> Obj:
    """A Secret's type and key names: its values are never part of what the page receives."""
    return {**_base(secret), "type": str(secret.get("type") or "Opaque"),
            "keys": _keys(secret.get("data"), secret.get("stringData")), "immutable": bool(secret.get("immutable"))}


def _containers(spec: Obj) -> list[Obj]:
    out: list[Obj] = []
    for field in ("initContainers", "containers", "ephemeralContainers"):
        out += [c for c in spec.get(field) or [] if isinstance(c, dict)]
    return out


def _volume_uses(volume: Obj) -> list[tuple[str, str, str]]:
    uses = []
    if isinstance(volume.get("configMap"), dict) and volume["configMap"].get("name"):
        uses.append(("ConfigMap", str(volume["configMap"]["name"]), "volume"))
    if isinstance(volume.get("secret"), dict) and volume["secret"].get("secretName"):
        uses.append(("Secret", str(volume["secret"]["secretName"]), "volume"))
    projected = volume.get("projected") if isinstance(volume.get("projected"), dict) else {}
    for source in projected.get("sources") or []:
        if not isinstance(source, dict):
            continue
        for field, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
            ref = source.get(field)
            if isinstance(ref, dict) and ref.get("name"):
                uses.append((kind, str(ref["name"]), "projected"))
    return uses


def _container_uses(container: Obj) -> list[tuple[str, str, str]]:
    uses = []
    for env in container.get("env") or []:
        source = (env or {}).get("valueFrom") if isinstance(env, dict) else None
        if not isinstance(source, dict):
            continue
        for field, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
            ref = source.get(field)
            if isinstance(ref, dict) and ref.get("name"):
                uses.append((kind, str(ref["name"]), "env"))
    for source in container.get("envFrom") or []:
        if not isinstance(source, dict):
            continue
        for field, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = source.get(field)
            if isinstance(ref, dict) and ref.get("name"):
                uses.append((kind, str(ref["name"]), "envFrom"))
    return uses


def pod_uses(pod: Obj) -> list[Obj]:
    """Every ConfigMap and Secret the pod names, as {"kind", "name", "via"}, each once."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    found: list[tuple[str, str, str]] = []
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            found += _volume_uses(volume)
    for container in _containers(spec):
        found += _container_uses(container)
    for ref in spec.get("imagePullSecrets") or []:
        if isinstance(ref, dict) and ref.get("name"):
            found.append(("Secret", str(ref["name"]), "imagePull"))
    unique = list(dict.fromkeys(found))
    return [{"kind": kind, "name": name, "via": via} for kind, name, via in unique]
