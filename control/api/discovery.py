"""Legacy (JSON) discovery: /api, /apis, /apis/<group>, /api/v1, /apis/<group>/<version>, /version.

Guarantees:
- The documents list every version the hub serves: the kinds in the registry with their verbs, short
  names, categories and subresources (`kubectl scale` needs `*/scale`, the scheduler
  `pods/binding`), and the views served beside them (`VIEWS`: metrics.k8s.io, the
  events.k8s.io/v1 Event), each with the verbs it really answers.
- A group's preferred version is the registry's first (autoscaling stays v2 with v1, the HPA's
  other served version, listed after).
- Every resource entry of a stored kind carries `storageVersionHash` as kube-apiserver computes it
  (discovery/storageversionhash.go: base64 of the first 8 bytes of sha256("group/version/kind") of
  the version the objects are stored in), so clients that watch for storage migrations see it.
- Aggregated discovery is not offered; kubectl falls back to these because they are served as
  plain `application/json`.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from control import kinds as registry
from control.kinds.base import Kind

ITEM_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

_SUBRESOURCE = {
    "status": lambda k: {"kind": k.kind, "verbs": ["get", "patch", "update"]},
    "scale": lambda k: {"group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]},
    "binding": lambda k: {"kind": "Binding", "verbs": ["create"]},
    "log": lambda k: {"kind": k.kind, "verbs": ["get"]},
    "finalize": lambda k: {"kind": k.kind, "verbs": ["update"]},
    "approval": lambda k: {"kind": k.kind, "verbs": ["get", "patch", "update"]},
    "exec": lambda k: {"kind": f"{k.kind}ExecOptions", "verbs": ["create", "get"]},
    "attach": lambda k: {"kind": f"{k.kind}AttachOptions", "verbs": ["create", "get"]},
    "portforward": lambda k: {"kind": f"{k.kind}PortForwardOptions", "verbs": ["create", "get"]},
}

VERSION = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.0", "gitCommit": "kube-kitchen",
    "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0",
    "compiler": "gc", "platform": "linux/amd64",
}


@dataclass(frozen=True)
class View:
    """A group-version served beside the registry (by `control.api.extras`): its resource entries,
    computed when asked (they may depend on the registry), and for OpenAPI the kinds it shows and
    the component schemas they need that `control.kinds.schemas` does not hold."""

    group: str
    version: str
    resources: Callable[[], list[dict[str, Any]]]
    kinds: tuple[Kind, ...] = ()
    schemas: Mapping[str, dict[str, Any]] = field(default_factory=dict)


def views() -> tuple[View, ...]:
    """Every view the extras serve (for discovery and OpenAPI)."""
    return _views()


def _views() -> tuple[View, ...]:
    from control.api.extras import VIEWS  # the extras serve them; discovery only lists them

    return VIEWS


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """kube-apiserver's StorageVersionHash of the kind as it is stored."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _served_versions() -> dict[str, list[str]]:
    """{group: [versions]}, preferred first: the registry's, then each view's version after them."""
    out = {group: list(versions) for group, versions in registry.group_versions().items()}
    for view in _views():
        versions = out.setdefault(view.group, [])
        if view.version not in versions:
            versions.append(view.version)
    return out


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": listed, "preferredVersion": listed[0]}


def api_group_list() -> dict[str, Any]:
    groups = [_group_entry(g, vs) for g, vs in _served_versions().items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(group: str) -> dict[str, Any] | None:
    versions = _served_versions().get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def _action_entry(kind: Kind, sub: str) -> dict[str, Any]:
    """A subresource the kind answers itself: the type it takes and gives, POST only."""
    action = kind.actions[sub]
    return {"group": action.group, "version": action.version, "kind": action.kind, "verbs": ["create"]}


def resource_entries(kind: Kind, *, verbs: tuple[str, ...] = ITEM_VERBS, stored_as: Kind | None = None,
                     subresources: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The APIResource entries of one kind: the main resource, then its subresources. `stored_as`
    is the kind whose version the objects are kept in, when this entry is a view of another version."""
    storage = stored_as or kind.stored_as or kind
    main: dict[str, Any] = {
        "name": kind.plural, "singularName": kind.singular, "namespaced": kind.namespaced,
        "kind": kind.kind, "verbs": list(verbs),
    }
    if kind.short_names:
        main["shortNames"] = list(kind.short_names)
    if kind.categories:
        main["categories"] = list(kind.categories)
    main["storageVersionHash"] = storage_version_hash(storage.group, storage.version, storage.kind)
    out = [main]
    for sub in kind.subresources if subresources is None else subresources:
        out.append({"name": f"{kind.plural}/{sub}", "singularName": "", "namespaced": kind.namespaced,
                    **(_SUBRESOURCE[sub](kind) if sub in _SUBRESOURCE else _action_entry(kind, sub))})
    return out


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    served = registry.kinds_in(group, version)
    resources = [entry for kind in served for entry in resource_entries(kind)]
    for view in _views():
        if (view.group, view.version) == (group, version):
            resources += view.resources()
    if not served and not any((v.group, v.version) == (group, version) for v in _views()):
        return None
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version, "resources": resources}
