"""Legacy (JSON) discovery: /api, /apis, /api/v1, /apis/<group>/<version>, /version.

Guarantees: the documents list exactly the kinds in the registry with their verbs, short names,
categories and subresources (`kubectl scale` needs `*/scale`, the scheduler `pods/binding`).
Aggregated discovery is not offered; kubectl falls back to these because they are served as
plain `application/json`.
"""

from __future__ import annotations

from typing import Any

from control import kinds as registry
from control.api.extras import metrics
from control.kinds.base import Kind

ITEM_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

_SUBRESOURCE = {
    "status": lambda k: {"kind": k.kind, "verbs": ["get", "patch", "update"]},
    "scale": lambda k: {"group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]},
    "binding": lambda k: {"kind": "Binding", "verbs": ["create"]},
    "log": lambda k: {"kind": k.kind, "verbs": ["get"]},
    "finalize": lambda k: {"kind": k.kind, "verbs": ["update"]},
}

VERSION = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.0", "gitCommit": "kube-kitchen",
    "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0",
    "compiler": "gc", "platform": "linux/amd64",
}


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": listed, "preferredVersion": listed[0]}


def api_group_list() -> dict[str, Any]:
    groups = [_group_entry(g, vs) for g, vs in registry.group_versions().items() if g]
    groups.append(_group_entry(metrics.GROUP, [metrics.VERSION]))  # served by control.api.extras.metrics
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(group: str) -> dict[str, Any] | None:
    versions = registry.group_versions().get(group) or ([metrics.VERSION] if group == metrics.GROUP else None)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def _resources(kind: Kind) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": kind.plural, "singularName": kind.singular, "namespaced": kind.namespaced,
        "kind": kind.kind, "verbs": ITEM_VERBS,
    }
    if kind.short_names:
        main["shortNames"] = list(kind.short_names)
    if kind.categories:
        main["categories"] = list(kind.categories)
    out = [main]
    for sub in kind.subresources:
        out.append({"name": f"{kind.plural}/{sub}", "singularName": "", "namespaced": kind.namespaced,
                    **_SUBRESOURCE[sub](kind)})
    return out


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    if (group, version) == (metrics.GROUP, metrics.VERSION):
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": metrics.API_VERSION,
                "resources": metrics.RESOURCES}
    served = registry.kinds_in(group, version)
    if not served:
        return None
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": [entry for kind in served for entry in _resources(kind)]}
