"""Validation of a pod spec's volumes and volume mounts (upstream ValidateVolumes,
ValidateVolumeMounts and validateLocalDescendingPath), with Kubernetes' field errors.

Guarantees: `volume_causes(spec, path)` reports, for every container: a mount without mountPath
(`Required value`), a subPath that is absolute or climbs (`must be a relative path`, `must not
contain '..'`), subPath with subPathExpr; for the volumes: a name missing or given twice, and
ConfigMap/Secret/downward API/projected item paths that are absolute or climb. What it accepts is
what the kubelet may safely mount. `mount_name_causes(spec)` adds, for a pod itself, a mount
naming no volume (`Not found: "x"`): pod templates are spared it, because a StatefulSet's
template mounts volumes its claim templates provide (upstream skips that check for them too).
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import Cause, cause, required


def _dicts(value: Any) -> list[tuple[int, dict]]:
    return [(i, v) for i, v in enumerate(value) if isinstance(v, dict)] if isinstance(value, list) else []


def descending_path_causes(value: Any, field_path: str) -> list[Cause]:
    """A path that must stay inside its volume (validateLocalDescendingPath)."""
    text = str(value)
    out = []
    if text.startswith("/"):
        out.append(cause(field_path, f"Invalid value: {go_value(value)}: must be a relative path"))
    if ".." in text.replace("\\", "/").split("/"):
        out.append(cause(field_path, f"Invalid value: {go_value(value)}: must not contain '..'"))
    return out


def _item_causes(volume: dict, path: str) -> list[Cause]:
    out: list[Cause] = []
    sources = [(k, volume[k], f"{path}.{k}") for k in ("configMap", "secret", "downwardAPI") if isinstance(volume.get(k), dict)]
    projected = volume.get("projected")
    if isinstance(projected, dict):
        for i, part in _dicts(projected.get("sources")):
            sources += [(k, part[k], f"{path}.projected.sources[{i}].{k}") for k in ("configMap", "secret", "downwardAPI")
                        if isinstance(part.get(k), dict)]
            token = part.get("serviceAccountToken")
            if isinstance(token, dict) and token.get("path"):
                out += descending_path_causes(token["path"], f"{path}.projected.sources[{i}].serviceAccountToken.path")
    for _, source, where in sources:
        for j, item in _dicts(source.get("items")):
            if not item.get("path"):
                out.append(required(f"{where}.items[{j}].path"))
            else:
                out += descending_path_causes(item["path"], f"{where}.items[{j}].path")
    return out


def mount_name_causes(spec: dict, path: str = "spec") -> list[Cause]:
    """Mounts of a pod that name no volume of it."""
    names = {str(v.get("name")) for _, v in _dicts(spec.get("volumes"))}
    out = []
    for key in ("initContainers", "containers"):
        for i, container in _dicts(spec.get(key)):
            for j, mount in _dicts(container.get("volumeMounts")):
                if mount.get("name") and mount["name"] not in names:
                    out.append(cause(f"{path}.{key}[{i}].volumeMounts[{j}].name",
                                     f"Not found: {go_value(mount['name'])}", "FieldValueNotFound"))
    return out


def volume_causes(spec: dict, path: str = "spec") -> list[Cause]:
    out: list[Cause] = []
    names: set[str] = set()
    for i, volume in _dicts(spec.get("volumes")):
        name = volume.get("name")
        if not name:
            out.append(required(f"{path}.volumes[{i}].name"))
        elif name in names:
            out.append(cause(f"{path}.volumes[{i}].name", f"Duplicate value: {go_value(name)}", "FieldValueDuplicate"))
        else:
            names.add(str(name))
        out += _item_causes(volume, f"{path}.volumes[{i}]")
    for key in ("initContainers", "containers"):
        for i, container in _dicts(spec.get(key)):
            for j, mount in _dicts(container.get("volumeMounts")):
                where = f"{path}.{key}[{i}].volumeMounts[{j}]"
                if not mount.get("name"):
                    out.append(required(f"{where}.name"))
                if not mount.get("mountPath"):
                    out.append(required(f"{where}.mountPath"))
                if mount.get("subPath"):
                    out += descending_path_causes(mount["subPath"], f"{where}.subPath")
                    if mount.get("subPathExpr"):
                        out.append(cause(f"{where}.subPathExpr", f"Invalid value: {go_value(mount['subPathExpr'])}: "
                                         "subPathExpr and subPath are mutually exclusive"))
    return out
